/**
 * Ollama's streamed model transfers (/api/pull, /api/push) from a registry, read line by line. Ollama answers a
 * failed transfer with HTTP 200 and a final `{"error": …}` line, and a server that dies mid-transfer just ends the
 * stream, so the only proof of success is the closing `{"status": "success"}` line.
 */

/** One line of a streamed /api/pull or /api/push response. */
export interface TransferLine {
  status?: string;
  /** The blob this line reports on ("sha256:…"), while one is transferred. */
  digest?: string;
  /** Bytes of that blob, and how many have been transferred so far. */
  total?: number;
  completed?: number;
  error?: string;
}

/** The complete lines in `buffer` (newline-delimited JSON), parsed, and the unfinished remainder. */
export function splitTransferLines(buffer: string): { lines: TransferLine[]; rest: string } {
  const parts = buffer.split("\n");
  const rest = parts.pop() ?? "";
  return { lines: parts.filter((part) => part.trim() !== "").map(parseTransferLine), rest };
}

function parseTransferLine(text: string): TransferLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`not a JSON line in Ollama's transfer stream: ${text.slice(0, 200)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`not a JSON object in Ollama's transfer stream: ${text.slice(0, 200)}`);
  }
  const record = value as Record<string, unknown>;
  const line: TransferLine = {};
  if (typeof record.status === "string") line.status = record.status;
  if (typeof record.digest === "string") line.digest = record.digest;
  if (typeof record.total === "number") line.total = record.total;
  if (typeof record.completed === "number") line.completed = record.completed;
  if (typeof record.error === "string") line.error = record.error;
  return line;
}

/** Why a finished stream is not a success (its error line, or that it ended early), or undefined for success. */
export function transferFailure(lines: readonly TransferLine[]): string | undefined {
  const error = lines.find((line) => line.error !== undefined)?.error;
  if (error !== undefined) return error;
  if (lines.at(-1)?.status === "success") return undefined;
  return `the stream ended without "success" (last status: ${lines.at(-1)?.status ?? "none"})`;
}

/** The last few statuses of a stream, one per line, for error messages (progress repeats are collapsed). */
export function transferTail(lines: readonly TransferLine[], count = 6): string {
  const statuses: string[] = [];
  for (const line of lines) {
    const text = line.error !== undefined ? `error: ${line.error}` : (line.status ?? JSON.stringify(line));
    if (statuses.at(-1) !== text) statuses.push(text);
  }
  return statuses.slice(-count).join("\n  ");
}

export interface TransferRequest {
  /** Ollama's native API root, e.g. http://127.0.0.1:41235 */
  ollamaUrl: string;
  /** A registry model reference, e.g. 127.0.0.1:41237/library/all-minilm-l6-v2:latest */
  model: string;
  timeoutMs?: number;
  /** Called with every line as it arrives (progress display, timing). */
  onLine?: (line: TransferLine) => void;
}

/** Pull `model` into the Ollama at `ollamaUrl` over plain HTTP; every streamed line, or a clear error. */
export function pullModel(request: TransferRequest): Promise<TransferLine[]> {
  return transfer("pull", request);
}

/** Push the local model `model` (named after its registry) from the Ollama at `ollamaUrl` over plain HTTP. */
export function pushModel(request: TransferRequest): Promise<TransferLine[]> {
  return transfer("push", request);
}

async function transfer(kind: "pull" | "push", request: TransferRequest): Promise<TransferLine[]> {
  const what = `ollama ${kind} of ${request.model} (Ollama at ${request.ollamaUrl})`;
  const response = await fetch(`${request.ollamaUrl}/api/${kind}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    // insecure: the test bed's registry speaks plain HTTP.
    body: JSON.stringify({ model: request.model, insecure: true, stream: true }),
    signal: AbortSignal.timeout(request.timeoutMs ?? 120_000),
  });
  if (!response.ok || response.body === null) {
    throw new Error(`${what} failed: HTTP ${response.status} ${(await response.text()).slice(0, 500)}`);
  }
  const lines: TransferLine[] = [];
  let buffer = "";
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    const split = splitTransferLines(buffer + decoder.decode(chunk, { stream: true }));
    buffer = split.rest;
    for (const line of split.lines) {
      lines.push(line);
      request.onLine?.(line);
    }
  }
  const last = splitTransferLines(`${buffer}${decoder.decode()}\n`).lines;
  lines.push(...last);
  for (const line of last) request.onLine?.(line);
  const failure = transferFailure(lines);
  if (failure !== undefined) {
    throw new Error(`${what} failed: ${failure}\n  last lines of the stream:\n  ${transferTail(lines)}`);
  }
  return lines;
}
