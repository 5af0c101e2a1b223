/**
 * Rate limiting as client-go's DefaultControllerRateLimiter does it: the larger of a per-key exponential backoff
 * and a global token bucket. Pure functions over plain state so tests need no timers.
 */

export interface BackoffConfig {
  baseDelayMs: number;
  maxDelayMs: number;
}

/** client-go: 5 ms → 1000 s. An appliance prefers seconds to minutes: 1 s → 5 min. */
export const applianceBackoff: BackoffConfig = { baseDelayMs: 1_000, maxDelayMs: 300_000 };

/** Delay before retry number `failures` (0 for the first retry): base · 2^failures, capped. */
export function exponentialDelay(failures: number, config: BackoffConfig): number {
  // 2^40 ms is ~35 years: past any cap, and it keeps the arithmetic finite.
  const exponent = Math.min(failures, 40);
  return Math.min(config.baseDelayMs * 2 ** exponent, config.maxDelayMs);
}

export interface TokenBucketConfig {
  /** Tokens added per second. */
  qps: number;
  /** Bucket size. */
  burst: number;
}

export const defaultTokenBucket: TokenBucketConfig = { qps: 10, burst: 100 };

export interface TokenBucketState {
  tokens: number;
  updatedAtMs: number;
}

export function fullBucket(config: TokenBucketConfig, nowMs: number): TokenBucketState {
  return { tokens: config.burst, updatedAtMs: nowMs };
}

/**
 * Reserve one token: the new state and how long the caller must wait for it (like golang.org/x/time/rate's
 * Reserve: tokens may go negative, which is the queue of waiting reservations).
 */
export function reserveToken(
  state: TokenBucketState,
  config: TokenBucketConfig,
  nowMs: number,
): { state: TokenBucketState; delayMs: number } {
  const elapsedMs = Math.max(0, nowMs - state.updatedAtMs);
  const refilled = Math.min(config.burst, state.tokens + (elapsedMs * config.qps) / 1000);
  const tokens = refilled - 1;
  const delayMs = tokens >= 0 ? 0 : Math.ceil((-tokens * 1000) / config.qps);
  return { state: { tokens, updatedAtMs: nowMs }, delayMs };
}
