/**
 * Test support: a local stand-in for the Telegram Bot API (`channels.telegram.apiRoot`), so the gateway's real,
 * bundled Telegram channel runs against it. A test queues private-chat messages "from" Telegram users; the
 * channel long-polls them with getUpdates exactly as from api.telegram.org, derives the sender from `from.id`,
 * and routes the turn through OpenClaw's own session-key rules (dmScope, session.identityLinks). Replies the
 * channel sends back (sendMessage and friends) are recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface BotApiCall {
  /** The bot token the call was made with (the path's `bot<token>` segment). */
  token: string;
  method: string;
  params: Record<string, unknown>;
}

export interface TelegramBotApi {
  /** Bot API root for `channels.telegram.apiRoot` (no `/bot<token>`). */
  url: string;
  /** Queue a private-chat text message from a Telegram user to the bot with this token. */
  sendPrivateMessage(botToken: string, from: { id: number; firstName: string }, text: string): void;
  /** Every call the channel made, oldest first. */
  readonly calls: readonly BotApiCall[];
  /** Calls that sent text to a chat (sendMessage, editMessageText), for asserting on replies. */
  repliesTo(chatId: number): string[];
  stop(): Promise<void>;
}

interface Update {
  update_id: number;
  message: Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function readParams(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  const type = request.headers["content-type"] ?? "";
  const query = Object.fromEntries(new URL(request.url ?? "/", "http://stub").searchParams);
  if (raw === "") return query;
  if (type.includes("application/json")) {
    const parsed: unknown = JSON.parse(raw);
    return isRecord(parsed) ? { ...query, ...parsed } : query;
  }
  if (type.includes("application/x-www-form-urlencoded"))
    return { ...query, ...Object.fromEntries(new URLSearchParams(raw)) };
  // multipart (media uploads) is not needed by these tests; the call is still recorded.
  return query;
}

function reply(response: ServerResponse, result: unknown): void {
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, result }));
}

export async function startTelegramBotApi(): Promise<TelegramBotApi> {
  const calls: BotApiCall[] = [];
  const queues = new Map<string, Update[]>();
  const waiters = new Map<string, Set<() => void>>();
  let nextUpdateId = 1;
  let nextMessageId = 1;
  const sockets = new Set<Socket>();
  const queueOf = (token: string): Update[] => {
    let queue = queues.get(token);
    if (queue === undefined) {
      queue = [];
      queues.set(token, queue);
    }
    return queue;
  };
  const wake = (token: string) => {
    for (const waiter of waiters.get(token) ?? []) waiter();
    waiters.delete(token);
  };
  const botUser = (token: string) => {
    const id = Number(token.split(":")[0]) || 1;
    return {
      id,
      is_bot: true,
      first_name: `Remram test bot ${id}`,
      username: `remram_test_${id}_bot`,
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
    };
  };
  const sentMessage = (token: string, params: Record<string, unknown>) => ({
    message_id: nextMessageId++,
    date: Math.floor(Date.now() / 1000),
    chat: { id: Number(params.chat_id), type: "private" },
    from: botUser(token),
    text: typeof params.text === "string" ? params.text : "",
  });

  const getUpdates = async (token: string, params: Record<string, unknown>): Promise<Update[]> => {
    const queue = queueOf(token);
    const offset = Number(params.offset ?? 0);
    // Telegram forgets updates below the acknowledged offset.
    while (queue.length > 0 && (queue[0]?.update_id ?? 0) < offset) queue.shift();
    if (queue.length === 0) {
      const timeoutMs = Math.min(Number(params.timeout ?? 0), 2) * 1000;
      if (timeoutMs > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          const set = waiters.get(token) ?? new Set();
          set.add(() => {
            clearTimeout(timer);
            resolve();
          });
          waiters.set(token, set);
        });
      }
    }
    return [...queue];
  };

  const server = createServer((request, response) => {
    void (async () => {
      const match = /^\/bot([^/]+)\/([A-Za-z]+)/.exec(new URL(request.url ?? "/", "http://stub").pathname);
      if (match === null) {
        response.writeHead(404).end();
        return;
      }
      const [, token = "", method = ""] = match;
      const params = await readParams(request);
      calls.push({ token, method, params });
      switch (method) {
        case "getMe":
          return reply(response, botUser(token));
        case "getUpdates":
          return reply(response, await getUpdates(token, params));
        case "sendMessage":
        case "editMessageText":
        case "sendMessageDraft":
          return reply(response, sentMessage(token, params));
        case "getMyCommands":
          return reply(response, []);
        case "getChat":
          return reply(response, { id: Number(params.chat_id), type: "private" });
        case "getWebhookInfo":
          return reply(response, { url: "", has_custom_certificate: false, pending_update_count: 0 });
        default:
          // setMyCommands, deleteWebhook, sendChatAction, setMessageReaction, ...: all succeed.
          return reply(response, true);
      }
    })().catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    sendPrivateMessage(botToken, from, text) {
      const date = Math.floor(Date.now() / 1000);
      queueOf(botToken).push({
        update_id: nextUpdateId++,
        message: {
          message_id: nextMessageId++,
          date,
          chat: { id: from.id, type: "private", first_name: from.firstName },
          from: { id: from.id, is_bot: false, first_name: from.firstName, language_code: "en" },
          text,
        },
      });
      wake(botToken);
    },
    repliesTo(chatId) {
      return calls
        .filter(
          (call) =>
            (call.method === "sendMessage" || call.method === "editMessageText") &&
            Number(call.params.chat_id) === chatId,
        )
        .map((call) => String(call.params.text ?? ""));
    },
    async stop() {
      for (const set of waiters.values()) for (const waiter of set) waiter();
      waiters.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
