/**
 * Who is calling, as Fastify encapsulation. The API's routes are registered inside `authenticated`, whose
 * onRequest hook names the caller from its bearer credential (401 otherwise) and lets it through only to the routes
 * whose contract lists it (403 otherwise). Health, readiness, metrics and the API description sit outside.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { type CallerName, callerNames, callerRefusedError, type RouteContract } from "@remram/contract";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { errorBody, forbidden } from "./http-errors.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The authenticated caller; set by the authenticated scope before any of its routes runs. */
    caller: CallerName;
  }
  interface FastifyContextConfig {
    /** The callers that may call the route (the contract's `callers`); a route without it refuses everyone. */
    callers?: readonly CallerName[];
  }
}

export type CallerTokens = Partial<Record<CallerName, string>>;

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** The bearer value of an Authorization header, or undefined. */
export function bearerOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
  return match?.[1];
}

interface Accepted {
  digest: Buffer;
  /** When a replaced credential stops being accepted (undefined: the current one, no end). */
  until?: number;
}

export interface CallerCredentialsOptions {
  /** Reads the credentials in force now (a mounted Secret's files); called at start and on every refresh. */
  read: () => CallerTokens;
  /** How long a replaced credential is still accepted, unless its caller presents the new one sooner. */
  overlapMs: number;
  clock?: () => number;
  /** Told when a caller's credential changed (never the value). */
  onRotated?: (caller: CallerName) => void;
}

/**
 * The credentials of every caller, with rotation. A Secret's new value reaches Cortex's files and the callers'
 * files at different kubelet syncs, so the replaced value stays accepted for an overlap window; once the caller
 * presents the new value (it has reloaded) the old one is refused at once, and at the latest when the window ends.
 */
export class CallerCredentials {
  private readonly accepted = new Map<CallerName, Accepted[]>();
  private readonly clock: () => number;

  constructor(private readonly options: CallerCredentialsOptions) {
    this.clock = options.clock ?? Date.now;
    this.refresh();
  }

  /** Re-read the credentials; a changed one keeps its old value for the overlap window. */
  refresh(): void {
    const tokens = this.options.read();
    const now = this.clock();
    for (const caller of callerNames) {
      const token = tokens[caller];
      const entries = this.accepted.get(caller) ?? [];
      const current = entries.find((entry) => entry.until === undefined);
      if (token === undefined) {
        this.accepted.delete(caller);
        continue;
      }
      const next = digest(token);
      if (current?.digest.equals(next)) continue;
      const kept = entries.filter((entry) => entry.until !== undefined && entry.until > now);
      if (current !== undefined) {
        kept.push({ digest: current.digest, until: now + this.options.overlapMs });
        this.options.onRotated?.(caller);
      }
      this.accepted.set(caller, [{ digest: next }, ...kept]);
    }
  }

  /**
   * The caller a bearer value belongs to. Every accepted digest is compared, in constant time each. A value two
   * callers accept (one's old credential became another's new one) names no one: it cannot say who is calling.
   */
  identify(token: string | undefined): CallerName | undefined {
    if (token === undefined) return undefined;
    const presented = digest(token);
    const now = this.clock();
    const found: { caller: CallerName; entry: Accepted; entries: Accepted[] }[] = [];
    for (const [caller, entries] of this.accepted) {
      for (const entry of entries) {
        if (!timingSafeEqual(entry.digest, presented)) continue;
        if (entry.until !== undefined && entry.until <= now) continue;
        found.push({ caller, entry, entries });
      }
    }
    const [match, ...others] = found;
    if (match === undefined || others.length > 0) return undefined;
    // The caller uses its new credential: it has reloaded, so the replaced one is refused from now on.
    if (match.entry.until === undefined && match.entries.length > 1)
      this.accepted.set(match.caller, [match.entry]);
    return match.caller;
  }

  /** Which callers have a credential (for the start-up log). */
  callers(): CallerName[] {
    return [...this.accepted.keys()];
  }
}

function unauthorized() {
  return errorBody(401, "missing or unknown bearer credential", "Unauthorized");
}

/**
 * Register `plugins` in a scope where every request must carry a caller's credential (401 otherwise) and every
 * route names its callers in `config.callers` (checked when the route is added: a route without them could not be
 * reached by anyone, so it is a programming error). A caller outside the route's list gets 403.
 */
export async function authenticated(
  app: FastifyInstance,
  credentials: CallerCredentials,
  plugins: readonly FastifyPluginAsync[],
  binding: IdentityBinding = {},
): Promise<void> {
  await app.register(async (scope) => {
    scope.decorateRequest("caller", "gateway");
    scope.addHook("onRoute", (route) => {
      const callers = route.config?.callers;
      if (callers === undefined || callers.length === 0) {
        throw new Error(`route ${route.method} ${route.url} names no callers`);
      }
    });
    scope.addHook("onRequest", async (request, reply) => {
      const caller = credentials.identify(bearerOf(request.headers.authorization));
      if (caller === undefined) {
        await reply.code(401).header("WWW-Authenticate", 'Bearer realm="cortex"').send(unauthorized());
        return;
      }
      request.caller = caller;
      const allowed = request.routeOptions.config.callers ?? [];
      if (!allowed.includes(caller)) {
        await reply
          .code(403)
          .send(
            errorBody(
              403,
              `the ${caller} credential may not call ${request.method} ${request.routeOptions.url}`,
              callerRefusedError,
            ),
          );
      }
    });
    // After validation, so the walk sees only schema-shaped data.
    scope.addHook("preHandler", async (request) => {
      const { householdId } = binding;
      if (householdId === undefined) return;
      const foreign = [...householdIdsIn(request.body), ...householdIdsIn(request.query)].filter(
        (id) => id !== householdId,
      );
      if (foreign.length > 0) {
        throw forbidden(
          `householdId ${JSON.stringify(foreign[0])} is not this appliance's household; the caller may not name another`,
        );
      }
    });
    for (const plugin of plugins) await scope.register(plugin);
  });
}

export interface IdentityBinding {
  /** The appliance's household: every householdId a request names must be this one. */
  householdId?: string;
}

/**
 * Every `householdId` value anywhere in a request part. Household ids appear in principals, owners and archive
 * participants; checking them all in one place keeps a new route from forgetting the rule.
 */
export function householdIdsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const item of value) householdIdsIn(item, found);
  } else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === "householdId" && typeof item === "string") found.push(item);
      else householdIdsIn(item, found);
    }
  }
  return found;
}

/** A route's options from its contract: its schemas and the callers allowed to call it. */
export function routeOptions<Route extends RouteContract>(
  route: Route,
): { schema: Route["schema"]; config: { callers: readonly CallerName[] } } {
  return { schema: route.schema, config: { callers: route.callers ?? [] } };
}
