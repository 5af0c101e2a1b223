/**
 * The pure half of `kubectl remram knowledge`: what the assistant remembers about you (and your household), seen,
 * searched, corrected and forgotten through remram-app's API with your own credential. Parsing here;
 * knowledge-format.ts prints the app's answers, knowledge-app.ts does the I/O.
 */
import { lifecycleStatuses, personKnowledgeScopes } from "@remram/contract";
import { UsageError } from "./usage-error.js";

export const knowledgeActions = ["list", "search", "show", "correct", "forget"] as const;
export type KnowledgeAction = (typeof knowledgeActions)[number];

export const knowledgeOutputs = ["text", "json"] as const;
export type KnowledgeOutput = (typeof knowledgeOutputs)[number];

export type LifecycleStatus = (typeof lifecycleStatuses)[number];
export type KnowledgeScope = (typeof personKnowledgeScopes)[number];

/** How to reach remram-app: its URL, or a port-forward to the appliance's app pod. */
export interface AppTarget {
  /** --app-url, as given (http or https; a path prefix is kept). */
  appUrl?: string;
  /** --appliance: whose app pod to forward to (default: the only appliance with one in the namespace). */
  appliance?: string;
}

/** The listing filters, as remram-app's GET /api/knowledge takes them. */
export interface KnowledgeFilters {
  /** Another member's knowledge (the app refuses unless you are a household admin). */
  user?: string;
  status?: LifecycleStatus[];
  scope?: KnowledgeScope[];
  limit?: number;
  cursor?: string;
}

interface Base {
  verb: "knowledge";
  target: AppTarget;
  output: KnowledgeOutput;
}

export type KnowledgeCommand =
  | (Base & { action: "list"; filters: KnowledgeFilters })
  | (Base & { action: "search"; query: string; filters: KnowledgeFilters })
  | (Base & { action: "show"; id: string; user?: string })
  | (Base & { action: "correct"; id: string; statement: string; reason?: string })
  | (Base & { action: "forget"; ids: string[]; user?: string; reason?: string })
  | (Base & { action: "forget-all"; confirm: string; reason?: string });

/** The flags parseArgs hands a `knowledge` command. */
export interface KnowledgeFlags {
  "app-url"?: string;
  appliance?: string;
  output?: string;
  user?: string;
  status?: string;
  scope?: string;
  limit?: string;
  cursor?: string;
  all?: boolean;
  confirm?: string;
  reason?: string;
}

type Flag = keyof KnowledgeFlags;
const targetFlags: readonly Flag[] = ["app-url", "appliance", "output"];
/** The flags each action takes besides how to reach the app and -o. */
const actionFlags: Record<KnowledgeAction, readonly Flag[]> = {
  list: ["user", "status", "scope", "limit", "cursor"],
  search: ["user", "status", "scope", "limit", "cursor"],
  show: ["user"],
  correct: ["reason"],
  forget: ["user", "reason", "all", "confirm"],
};

/** Every flag of `knowledge`, for commands.ts's table. */
export const knowledgeFlags = [
  ...new Set([...targetFlags, ...Object.values(actionFlags).flat()]),
] as readonly Flag[];

/** remram-app's bounds (app/src/routes/knowledge.ts), checked here so a typo is a usage error, not a 400. */
export const knowledgeLimits = {
  query: 512,
  statement: 4000,
  reason: 1024,
  forgetIds: 100,
  pageSize: 200,
  id: 128,
  member: 63,
} as const;

const usage = (message: string) => new UsageError(message, "knowledge");

function commaList<T extends string>(flag: string, text: string, allowed: readonly T[]): T[] {
  const parts = text.split(",").filter((part) => part !== "");
  if (parts.length === 0) throw usage(`--${flag} needs a value: ${allowed.join(",")}`);
  for (const part of parts)
    if (!(allowed as readonly string[]).includes(part))
      throw usage(`--${flag} takes ${allowed.join(", ")} (comma-separated); got "${part}"`);
  return [...new Set(parts)] as T[];
}

/** --app-url: an http(s) URL without query or fragment. */
export function appUrlOf(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usage(`--app-url takes remram-app's address, such as https://remram.home.arpa; got "${text}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw usage(`--app-url takes an http or https address; got "${text}"`);
  if (url.search !== "" || url.hash !== "")
    throw usage(`--app-url takes the app's address without ?query or #fragment; got "${text}"`);
  if (url.username !== "" || url.password !== "")
    throw usage("--app-url takes no user name or password: your kubeconfig's token is your credential");
  return text;
}

function memberOf(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === "" || value.length > knowledgeLimits.member)
    throw usage(`--${flag} takes a household member id (spec.household.members[].id)`);
  return value;
}

function idOf(id: string): string {
  if (id.length > knowledgeLimits.id)
    throw usage(`"${id.slice(0, 40)}…" is not a knowledge id (at most ${knowledgeLimits.id} characters)`);
  return id;
}

function reasonOf(reason: string | undefined): { reason?: string } {
  if (reason === undefined) return {};
  if (reason.trim() === "") throw usage("--reason needs a value");
  if (reason.length > knowledgeLimits.reason)
    throw usage(`--reason is limited to ${knowledgeLimits.reason} characters`);
  return { reason };
}

function filtersOf(values: KnowledgeFlags): KnowledgeFilters {
  const filters: KnowledgeFilters = {};
  const user = memberOf("user", values.user);
  if (user !== undefined) filters.user = user;
  if (values.status !== undefined) filters.status = commaList("status", values.status, lifecycleStatuses);
  if (values.scope !== undefined) filters.scope = commaList("scope", values.scope, personKnowledgeScopes);
  if (values.limit !== undefined) {
    const limit = Number(values.limit);
    if (!/^\d+$/.test(values.limit) || limit < 1 || limit > knowledgeLimits.pageSize)
      throw usage(
        `--limit takes a whole number from 1 to ${knowledgeLimits.pageSize}; got "${values.limit}"`,
      );
    filters.limit = limit;
  }
  if (values.cursor !== undefined) {
    if (values.cursor === "") throw usage("--cursor needs a value (the one the previous page printed)");
    filters.cursor = values.cursor;
  }
  return filters;
}

/** Parse `knowledge ACTION ...` (the words after `knowledge`). */
export function knowledgeCommandOf(rest: readonly string[], values: KnowledgeFlags): KnowledgeCommand {
  const [action, ...args] = rest;
  if (action === undefined) throw usage(`knowledge needs what to do: ${knowledgeActions.join(", ")}`);
  if (!(knowledgeActions as readonly string[]).includes(action))
    throw usage(`knowledge takes ${knowledgeActions.join(", ")}; got ${action}`);
  const act = action as KnowledgeAction;
  for (const flag of knowledgeFlags)
    if (values[flag] !== undefined && !targetFlags.includes(flag) && !actionFlags[act].includes(flag))
      throw usage(`--${flag} does not apply to knowledge ${act}`);
  const output = values.output ?? "text";
  if (!(knowledgeOutputs as readonly string[]).includes(output))
    throw usage(`-o takes ${knowledgeOutputs.join(" or ")}, not "${output}"`);
  if (values.appliance === "") throw usage("--appliance needs a value");
  if (values["app-url"] !== undefined && values.appliance !== undefined)
    throw usage(
      "give --app-url or --appliance, not both: --appliance picks the app pod to forward a port to",
    );
  const target: AppTarget = {
    ...(values["app-url"] !== undefined ? { appUrl: appUrlOf(values["app-url"]) } : {}),
    ...(values.appliance !== undefined ? { appliance: values.appliance } : {}),
  };
  const base = { verb: "knowledge", target, output: output as KnowledgeOutput } as const;
  switch (act) {
    case "list":
      if (args.length > 0)
        throw usage(
          `knowledge list takes no arguments (knowledge search WORDS finds by words); got ${args.join(" ")}`,
        );
      return { ...base, action: act, filters: filtersOf(values) };
    case "search": {
      const query = args.join(" ").trim();
      if (query === "") throw usage("knowledge search needs the words to look for");
      if (query.length > knowledgeLimits.query)
        throw usage(`knowledge search takes at most ${knowledgeLimits.query} characters of words`);
      return { ...base, action: act, query, filters: filtersOf(values) };
    }
    case "show": {
      const [id, ...extra] = args;
      if (id === undefined) throw usage("knowledge show needs the id (knowledge list shows them)");
      if (extra.length > 0) throw usage(`knowledge show takes one id; got ${args.join(" ")}`);
      const user = memberOf("user", values.user);
      return { ...base, action: act, id: idOf(id), ...(user !== undefined ? { user } : {}) };
    }
    case "correct": {
      const [id, ...words] = args;
      const statement = words.join(" ").trim();
      if (id === undefined || statement === "")
        throw usage('knowledge correct needs the id and what is true instead: correct ID "NEW STATEMENT"');
      if (statement.length > knowledgeLimits.statement)
        throw usage(`the statement is limited to ${knowledgeLimits.statement} characters`);
      return { ...base, action: act, id: idOf(id), statement, ...reasonOf(values.reason) };
    }
    case "forget": {
      const reason = reasonOf(values.reason);
      if (values.all === true) {
        if (args.length > 0) throw usage("give ids to forget, or --all, not both");
        if (values.user !== undefined)
          throw usage("forget --all forgets your own data only; --user does not apply to it");
        const confirm = memberOf("confirm", values.confirm);
        if (confirm === undefined)
          throw usage(
            "forget --all removes everything the assistant remembers about you, for good: confirm with --confirm YOUR-MEMBER-ID",
          );
        return { ...base, action: "forget-all", confirm, ...reason };
      }
      if (values.confirm !== undefined) throw usage("--confirm goes with forget --all");
      if (args.length === 0)
        throw usage("knowledge forget needs the ids to forget (or --all --confirm YOUR-MEMBER-ID)");
      if (args.length > knowledgeLimits.forgetIds)
        throw usage(`knowledge forget takes at most ${knowledgeLimits.forgetIds} ids at a time`);
      const user = memberOf("user", values.user);
      return {
        ...base,
        action: act,
        ids: [...new Set(args.map(idOf))],
        ...(user !== undefined ? { user } : {}),
        ...reason,
      };
    }
  }
}

/** The query string of GET /api/knowledge for a listing or search. */
export function listingQuery(filters: KnowledgeFilters, query?: string): string {
  const params = new URLSearchParams();
  if (filters.user !== undefined) params.set("user", filters.user);
  if (query !== undefined) params.set("q", query);
  if (filters.status !== undefined) params.set("status", filters.status.join(","));
  if (filters.scope !== undefined) params.set("scope", filters.scope.join(","));
  if (filters.limit !== undefined) params.set("limit", String(filters.limit));
  if (filters.cursor !== undefined) params.set("cursor", filters.cursor);
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/** The next-page hint under a listing: the same command with --cursor. */
export function nextPageHint(shown: number, total: number, cursor: string): string {
  return `${shown} of ${total}; more with --cursor ${cursor}`;
}

/** The parts of a kubeconfig user that say how it authenticates (client-node's User). */
export interface KubeconfigUser {
  token?: string;
  certData?: string;
  certFile?: string;
  exec?: { command?: unknown } | null;
  authProvider?: { name?: unknown } | null;
  username?: string;
}

/**
 * Why the kubeconfig's current user has no bearer token to present to remram-app, or undefined when it has one.
 * The app signs people in with a member's ServiceAccount token only (what `user add -o kubeconfig` writes).
 */
export function credentialProblem(user: KubeconfigUser | null | undefined): string | undefined {
  if (user?.token !== undefined && user.token.trim() !== "") return undefined;
  const how =
    user?.certData !== undefined || user?.certFile !== undefined
      ? "a client certificate"
      : user?.exec
        ? `an exec plugin${typeof user.exec.command === "string" ? ` (${user.exec.command})` : ""}`
        : user?.authProvider
          ? `an auth provider${typeof user.authProvider.name === "string" ? ` (${user.authProvider.name})` : ""}`
          : user?.username !== undefined
            ? "a user name and password"
            : "nothing: it has no credential";
  return `knowledge needs a household member's credential: use the kubeconfig kubectl remram user add -o kubeconfig printed (the current user authenticates with ${how})`;
}

/** Whether `url` is on this machine (a local port-forward): plain http then carries the token nowhere else. */
export function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The URL of `path` (with its query) under the app's address, keeping a path prefix of the address. */
export function appRequestUrl(appUrl: string, path: string): URL {
  const base = new URL(appUrl);
  return new URL(`${base.origin}${base.pathname.replace(/\/+$/, "")}${path}`);
}
