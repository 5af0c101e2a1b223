/** Bearer-token check in constant time. Health, readiness, metrics and the API description stay open. */
import { createHash, timingSafeEqual } from "node:crypto";

export const openPaths: ReadonlySet<string> = new Set(["/healthz", "/readyz", "/metrics", "/docs/json"]);

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/**
 * Whether an Authorization header carries the token. Both sides are hashed first so the comparison has a fixed
 * length and timingSafeEqual leaks neither the token nor its length.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (header === undefined) return false;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (match === null || match[1] === undefined) return false;
  return timingSafeEqual(digest(match[1]), digest(token));
}
