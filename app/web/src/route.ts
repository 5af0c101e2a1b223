/**
 * Hash routing: the server serves one index.html at /, and the page shown is the part after #. Pure, so the route
 * table is tested without a browser; useRoute (hooks.ts) follows location.hash.
 */

export type PageName = "memory" | "conversations" | "proposals" | "diagnostics" | "sign-in" | "not-found";

export interface Route {
  page: PageName;
  /** The item a page opens, e.g. an archived conversation's hash in #/conversations/<hash>. */
  id?: string;
}

const pages: readonly PageName[] = ["memory", "conversations", "proposals", "diagnostics", "sign-in"];

export const homeRoute: Route = { page: "memory" };

export function parseHash(hash: string): Route {
  const path = hash
    .replace(/^#/, "")
    .replace(/^\/+/, "")
    .replace(/[?].*$/, "");
  if (path === "") return homeRoute;
  const [first = "", second, ...rest] = path.split("/").map((part) => safeDecode(part));
  const page = pages.find((name) => name === first);
  if (page === undefined || rest.length > 0) return { page: "not-found" };
  if (second === undefined || second === "") return { page };
  // Only a conversation has a page of its own.
  return page === "conversations" ? { page, id: second } : { page: "not-found" };
}

export function hrefOf(route: Route): string {
  return route.id === undefined ? `#/${route.page}` : `#/${route.page}/${encodeURIComponent(route.id)}`;
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
