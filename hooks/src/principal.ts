import { createHash } from "node:crypto";
import type { PluginConfig } from "./config.js";

/**
 * Who a retrieval or capture is for. Derived only from the gateway's session context (the session key the
 * gateway computed from dmScope/identityLinks, and the agent id), never from prompt text or tool arguments,
 * which a model can steer.
 */
export interface Principal {
  userId: string;
  householdId?: string;
  agentId: string;
}

/** Why a session has no principal: such sessions get no injection, no capture and no reflection. */
export type NoPrincipalReason =
  | "no_session_key"
  | "main_session_without_owner"
  | "group_session"
  | "anonymous_http_session"
  | "subagent_session"
  | "cron_session"
  | "unrecognised_session_key";

export type PrincipalResult = { ok: true; principal: Principal } | { ok: false; reason: NoPrincipalReason };

/** derivePrincipal with the plugin's config applied: what a hook asks about its session. */
export type PrincipalLookup = (context: { sessionKey?: string; agentId?: string }) => PrincipalResult;

/** Session keys of the reflection runs this plugin starts; recognised so it never reflects on itself. */
export const reflectionSessionMarker = "remram-reflect-";

export function reflectionSessionKey(agentId: string, jobId: string): string {
  return `agent:${agentId}:subagent:${reflectionSessionMarker}${jobId}`;
}

export function isReflectionSession(sessionKey: string | undefined): boolean {
  return sessionKey?.includes(`:subagent:${reflectionSessionMarker}`) === true;
}

const identifierPattern = /^[A-Za-z0-9._:@/+-]{1,128}$/;

/**
 * Cortex accepts ids of letters, digits and `._:@/+-` up to 128 characters. A peer id outside that (spaces,
 * other scripts, very long) becomes a stable hash, so the same person always maps to the same id.
 */
export function toIdentifier(raw: string): string {
  return identifierPattern.test(raw)
    ? raw
    : `h:${createHash("sha256").update(raw).digest("hex").slice(0, 40)}`;
}

interface SessionIdentity {
  agentId: string;
  /** The part of the key after `agent:<agentId>:`, without a trailing `:thread:<id>`. */
  rest: string[];
}

function splitSessionKey(sessionKey: string): SessionIdentity | undefined {
  const parts = sessionKey.split(":");
  if (parts.length < 3 || parts[0] !== "agent" || !parts[1]) return undefined;
  const rest = parts.slice(2);
  const threadAt = rest.indexOf("thread");
  return { agentId: parts[1], rest: threadAt >= 0 ? rest.slice(0, threadAt) : rest };
}

/** The principals config in lookup form: lowercased keys (OpenClaw lowercases peers in session keys). */
interface PrincipalIndex {
  identities: Map<string, string>;
  members: Map<string, string>;
  /** Users the config names; undefined when no member roster is configured (everyone reads the household). */
  named: Set<string> | undefined;
}

const indexes = new WeakMap<PluginConfig["principals"], PrincipalIndex>();

function indexOf(principals: PluginConfig["principals"]): PrincipalIndex {
  let index = indexes.get(principals);
  if (index === undefined) {
    const identities = new Map(
      Object.entries(principals.identities).map(([key, user]) => [key.toLowerCase(), user]),
    );
    const members = new Map(principals.members.map((member) => [member.toLowerCase(), member]));
    index = {
      identities,
      members,
      named:
        principals.members.length === 0
          ? undefined
          : new Set([
              ...principals.members,
              ...identities.values(),
              ...(principals.mainSessionUserId === undefined ? [] : [principals.mainSessionUserId]),
            ]),
    };
    indexes.set(principals, index);
  }
  return index;
}

/**
 * Map a session to a principal. Key shapes (openclaw 2026.9.6 `buildAgentPeerSessionKey`):
 * `main`, `direct:<peer>` (per-peer), `<channel>:direct:<peer>` (per-channel-peer),
 * `<channel>:<account>:direct:<peer>` (per-account-channel-peer), `<channel>:group|channel:<id>`,
 * `openai-user:<user>` (HTTP API with a `user`), `openai:<uuid>` (anonymous HTTP), `subagent:…`, `cron:…`.
 * With session.identityLinks, OpenClaw has already replaced a linked peer by the member's id (lowercased), so a
 * peer that is a member's id is that member whatever the channel.
 */
export function derivePrincipal(
  context: { sessionKey?: string; agentId?: string },
  principals: PluginConfig["principals"],
  groupSessions: PluginConfig["injection"]["groupSessions"] = "skip",
): PrincipalResult {
  if (!context.sessionKey) return { ok: false, reason: "no_session_key" };
  const identity = splitSessionKey(context.sessionKey);
  if (!identity) return { ok: false, reason: "unrecognised_session_key" };
  const agentId = toIdentifier(context.agentId ?? identity.agentId);
  const index = indexOf(principals);
  /** `readsHousehold`: a user the config names, or any user when no member roster is configured. */
  const forUser = (userId: string, readsHousehold: boolean): PrincipalResult => ({
    ok: true,
    principal: {
      userId: toIdentifier(userId),
      agentId,
      ...(principals.householdId === undefined || !readsHousehold
        ? {}
        : { householdId: toIdentifier(principals.householdId) }),
    },
  });
  const forPeer = (channel: string | undefined, peer: string): PrincipalResult => {
    const key = peer.toLowerCase();
    const named =
      (channel === undefined ? undefined : index.identities.get(`${channel.toLowerCase()}:${key}`)) ??
      index.identities.get(key) ??
      index.members.get(key);
    if (named !== undefined) return forUser(named, true);
    const unnamed = channel === undefined ? peer : `${channel}:${peer}`;
    return forUser(unnamed, index.named === undefined || index.named.has(unnamed));
  };

  const [first, second, third, fourth] = identity.rest;
  if (first === "main" && identity.rest.length === 1) {
    return principals.mainSessionUserId === undefined
      ? { ok: false, reason: "main_session_without_owner" }
      : forUser(principals.mainSessionUserId, true);
  }
  if (first === "subagent") return { ok: false, reason: "subagent_session" };
  if (first === "cron") return { ok: false, reason: "cron_session" };
  if (first === "openai") return { ok: false, reason: "anonymous_http_session" };
  if (first === "openai-user" && second && identity.rest.length === 2) return forPeer("openai-user", second);
  if (first === "direct" && second && identity.rest.length === 2) return forPeer(undefined, second);
  if (first && second === "direct" && third && identity.rest.length === 3) return forPeer(first, third);
  if (first && second && third === "direct" && fourth && identity.rest.length === 4) {
    return forPeer(first, fourth);
  }
  if (first && (second === "group" || second === "channel") && third) {
    // Several people read a group: only a principal that owns nothing private, so only household and
    // shared knowledge passes Cortex's policy gate.
    return groupSessions === "household"
      ? forUser(`${first}:${second}:${third}`, true)
      : { ok: false, reason: "group_session" };
  }
  return { ok: false, reason: "unrecognised_session_key" };
}
