import { describe, expect, it } from "vitest";
import { parsePluginConfig } from "./config.js";
import { derivePrincipal, isReflectionSession, reflectionSessionKey, toIdentifier } from "./principal.js";

const principals = parsePluginConfig({
  principals: {
    householdId: "home",
    identities: { "telegram:123": "alice", "openai-user:bob-http": "bob" },
    mainSessionUserId: "owner",
  },
}).principals;

describe("derivePrincipal", () => {
  it("maps a per-channel-peer session through the identity table", () => {
    expect(derivePrincipal({ sessionKey: "agent:main:telegram:direct:123" }, principals)).toEqual({
      ok: true,
      principal: { userId: "alice", householdId: "home", agentId: "main" },
    });
  });

  it("qualifies an unmapped peer with its channel so equal ids on two channels stay two people", () => {
    const result = derivePrincipal({ sessionKey: "agent:main:discord:direct:123" }, principals);
    expect(result).toMatchObject({ ok: true, principal: { userId: "discord:123" } });
  });

  it("reads per-account-channel-peer and per-peer keys and ignores a thread suffix", () => {
    expect(derivePrincipal({ sessionKey: "agent:main:telegram:acct1:direct:123" }, principals)).toMatchObject(
      {
        principal: { userId: "alice" },
      },
    );
    expect(derivePrincipal({ sessionKey: "agent:main:direct:carol:thread:99" }, principals)).toMatchObject({
      principal: { userId: "carol" },
    });
  });

  it("uses the HTTP API's user field and refuses anonymous HTTP sessions", () => {
    expect(derivePrincipal({ sessionKey: "agent:main:openai-user:bob-http" }, principals)).toMatchObject({
      principal: { userId: "bob" },
    });
    expect(derivePrincipal({ sessionKey: "agent:main:openai:8f2c" }, principals)).toEqual({
      ok: false,
      reason: "anonymous_http_session",
    });
  });

  it("gives the main session to its configured owner only", () => {
    expect(derivePrincipal({ sessionKey: "agent:main:main" }, principals)).toMatchObject({
      principal: { userId: "owner" },
    });
    const withoutOwner = parsePluginConfig({}).principals;
    expect(derivePrincipal({ sessionKey: "agent:main:main" }, withoutOwner)).toEqual({
      ok: false,
      reason: "main_session_without_owner",
    });
  });

  it("prefers the gateway's agent id from the context over the key", () => {
    expect(
      derivePrincipal({ sessionKey: "agent:main:direct:carol", agentId: "work" }, principals),
    ).toMatchObject({
      principal: { agentId: "work" },
    });
  });

  it("skips group sessions unless configured to read household knowledge there", () => {
    const key = { sessionKey: "agent:main:slack:group:C42" };
    expect(derivePrincipal(key, principals)).toEqual({ ok: false, reason: "group_session" });
    expect(derivePrincipal(key, principals, "household")).toMatchObject({
      principal: { userId: "slack:group:C42", householdId: "home" },
    });
  });

  it("gives subagent, cron and malformed sessions no principal", () => {
    expect(derivePrincipal({ sessionKey: "agent:main:subagent:x" }, principals)).toMatchObject({ ok: false });
    expect(derivePrincipal({ sessionKey: "agent:main:cron:j1:run:2" }, principals)).toMatchObject({
      ok: false,
    });
    expect(derivePrincipal({ sessionKey: "main" }, principals)).toEqual({
      ok: false,
      reason: "unrecognised_session_key",
    });
    expect(derivePrincipal({}, principals)).toEqual({ ok: false, reason: "no_session_key" });
  });
});

describe("derivePrincipal for a household (the operator's spec.household)", () => {
  // What the operator generates for members alice (telegram 123, whatsapp +4712345678) and bob (slack U0123ABC).
  const household = parsePluginConfig({
    principals: {
      householdId: "home",
      members: ["alice", "bob"],
      identities: {
        "telegram:123": "alice",
        "whatsapp:+4712345678": "alice",
        "slack:u0123abc": "bob",
      },
    },
  }).principals;
  const alice = { ok: true, principal: { userId: "alice", householdId: "home", agentId: "main" } };

  it("gives a member's linked sessions on every channel and every dmScope one user in the household", () => {
    // OpenClaw has put the member's id in place of the linked peer (session.identityLinks).
    for (const sessionKey of [
      "agent:main:direct:alice",
      "agent:main:telegram:direct:alice",
      "agent:main:whatsapp:direct:alice",
      "agent:main:whatsapp:default:direct:alice",
      "agent:main:telegram:direct:alice:thread:42",
    ]) {
      expect(derivePrincipal({ sessionKey }, household), sessionKey).toEqual(alice);
    }
  });

  it("maps raw peers through the identities case-insensitively, as OpenClaw lowercases them", () => {
    expect(derivePrincipal({ sessionKey: "agent:main:telegram:direct:123" }, household)).toEqual(alice);
    expect(derivePrincipal({ sessionKey: "agent:main:slack:direct:U0123ABC" }, household)).toMatchObject({
      principal: { userId: "bob", householdId: "home" },
    });
    expect(derivePrincipal({ sessionKey: "agent:main:openai-user:Alice" }, household)).toEqual(alice);
  });

  it("keeps household knowledge from a peer that is no member", () => {
    expect(derivePrincipal({ sessionKey: "agent:main:telegram:direct:999" }, household)).toEqual({
      ok: true,
      principal: { userId: "telegram:999", agentId: "main" },
    });
  });

  it("still gives everyone the household when no member roster is configured", () => {
    expect(derivePrincipal({ sessionKey: "agent:main:telegram:direct:999" }, principals)).toMatchObject({
      principal: { userId: "telegram:999", householdId: "home" },
    });
  });
});

describe("reflection session keys", () => {
  it("recognises the plugin's own reflection runs and nothing else", () => {
    expect(isReflectionSession(reflectionSessionKey("main", "abc"))).toBe(true);
    expect(isReflectionSession("agent:main:subagent:other")).toBe(false);
    expect(isReflectionSession("agent:main:telegram:direct:remram-reflect-x")).toBe(false);
    expect(isReflectionSession(undefined)).toBe(false);
  });
});

describe("toIdentifier", () => {
  it("keeps ids Cortex accepts and hashes the rest stably", () => {
    expect(toIdentifier("telegram:+4712345678")).toBe("telegram:+4712345678");
    const hashed = toIdentifier("whatsapp:Ærlig Navn");
    expect(hashed).toMatch(/^h:[0-9a-f]{40}$/);
    expect(toIdentifier("whatsapp:Ærlig Navn")).toBe(hashed);
    expect(toIdentifier("x".repeat(129))).toMatch(/^h:/);
  });
});
