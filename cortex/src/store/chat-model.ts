/**
 * A chat model served by Ollama, asked for a JSON reply its schema constrains (Ollama's `format`). Dream words its
 * principles with the appliance's reflection model through this; it reports whether the model could be reached,
 * so a caller can tell "the model is down" (stop asking this cycle) from "this reply was no good" (ask again).
 */
import { Ollama } from "ollama";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatOptions {
  /** 0: greedy, the same reply for the same request; a retry asks with some temperature and a fixed seed. */
  temperature: number;
  seed?: number | undefined;
  /** Upper bound on generated tokens. */
  maxTokens: number;
}

export interface ChatModel {
  readonly model: string;
  /** The reply's text, which the schema constrained (still to be parsed and checked by the caller). */
  completeJson(messages: readonly ChatMessage[], schema: object, options: ChatOptions): Promise<string>;
}

/** The model could not answer at all: Ollama unreachable, the model not pulled, a time-out or a server error. */
export class ModelUnavailableError extends Error {
  override readonly name = "ModelUnavailableError";
}

export interface ChatModelOptions {
  url: string;
  model: string;
  timeoutMs: number;
}

export function createOllamaChatModel(options: ChatModelOptions): ChatModel {
  const client = new Ollama({
    host: options.url,
    fetch: (input, init) => {
      const signals = [AbortSignal.timeout(options.timeoutMs), ...(init?.signal ? [init.signal] : [])];
      return fetch(input, { ...init, signal: AbortSignal.any(signals) });
    },
  });
  return {
    model: options.model,
    async completeJson(messages, schema, chat) {
      try {
        const response = await client.chat({
          model: options.model,
          messages: messages.map((m) => ({ role: m.role, content: m.content })),
          format: schema,
          stream: false,
          // A reasoning model would spend its tokens thinking; the reply is one short JSON object.
          think: false,
          options: {
            temperature: chat.temperature,
            num_predict: chat.maxTokens,
            ...(chat.seed === undefined ? {} : { seed: chat.seed }),
          },
        });
        return response.message.content;
      } catch (error) {
        throw new ModelUnavailableError(
          `reflection model ${options.model}: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
    },
  };
}
