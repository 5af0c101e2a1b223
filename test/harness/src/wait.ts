import { setTimeout as sleep } from "node:timers/promises";

export interface WaitOptions {
  /** What is being waited for, used in the timeout error. */
  what: string;
  timeoutMs: number;
  intervalMs?: number;
  /** Called between attempts; throw from it to give up early (e.g. the process died). */
  abortIf?: () => string | undefined;
}

/** Poll `check` until it returns a value other than undefined, or fail after `timeoutMs` with the last error. */
export async function waitFor<T>(check: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError = "";
  for (;;) {
    const abortReason = options.abortIf?.();
    if (abortReason !== undefined) throw new Error(`${options.what}: ${abortReason}`);
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${options.what} not ready after ${options.timeoutMs} ms${lastError ? `: ${lastError}` : ""}`,
      );
    }
    await sleep(options.intervalMs ?? 250);
  }
}

/** GET a URL and resolve to the response when `accept` likes it, else undefined (for waitFor). */
export async function httpReady(
  url: string,
  accept: (response: Response) => boolean = (response) => response.ok,
  init?: RequestInit,
): Promise<Response | undefined> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(5_000) });
  if (accept(response)) return response;
  await response.body?.cancel();
  return undefined;
}
