/**
 * Deciding whether a server-side apply is needed at all. The API server adds defaults and other managers' fields,
 * so a live object is converged when everything we would send is already there with the same value. Skipping the
 * apply then keeps an idle operator at zero writes.
 */

/** True when every field of `desired` is present in `live` with an equal value (lists compared element-wise). */
export function isSubset(desired: unknown, live: unknown): boolean {
  if (Array.isArray(desired)) {
    return (
      Array.isArray(live) &&
      desired.length === live.length &&
      desired.every((item, index) => isSubset(item, live[index]))
    );
  }
  if (typeof desired === "object" && desired !== null) {
    if (typeof live !== "object" || live === null || Array.isArray(live)) return false;
    const liveRecord = live as Record<string, unknown>;
    return Object.entries(desired as Record<string, unknown>).every(
      ([key, value]) => value === undefined || isSubset(value, liveRecord[key]),
    );
  }
  return desired === live;
}
