import { createHash } from "node:crypto";
import { type MemoryDocument, memoryDocumentSchema } from "@remram/contract";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../core/canonical-json.js";
import {
  canonicalise,
  clampAxis,
  coordinatesFor,
  dayOffset,
  decayScore,
  mayRecall,
  redactDocument,
} from "./document.js";

const document: MemoryDocument = memoryDocumentSchema.parse({
  createdAt: "2026-02-01T10:00:00.000Z",
  source: { sessionId: "agent:main:telegram:dm:alice", channel: "telegram" },
  messages: [
    { role: "user", content: "Plant the tomatoes in the north bed", turnId: "t1" },
    { role: "assistant", content: "Noted.", turnId: "t2" },
  ],
  consentScope: { ownerIds: ["alice"], privacy: "private", allowRecall: true },
});

function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, seed));
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    const rotated = entries.map((_, i) => entries[(i + seed) % entries.length] as [string, unknown]);
    return Object.fromEntries(rotated.map(([k, v]) => [k, shuffleKeys(v, seed)]));
  }
  return value;
}

describe("canonical JSON", () => {
  it("sorts keys and drops insignificant whitespace", () => {
    expect(canonicalJson({ b: 1, a: [true, null, "x"], c: { z: 0.5, y: -1 } })).toBe(
      '{"a":[true,null,"x"],"b":1,"c":{"y":-1,"z":0.5}}',
    );
  });

  it("matches RFC 8785's ordering by UTF-16 code units and its number forms", () => {
    expect(canonicalJson({ "\u20ac": 1, "\r": 2, "1": 3, "\ud83d\ude00": 4, "\u00f6": 5 })).toBe(
      '{"\\r":2,"1":3,"ö":5,"€":1,"😀":4}',
    );
    expect(canonicalJson([1e21, 1e-7, -0, 0.1 + 0.2])).toBe("[1e+21,1e-7,0,0.30000000000000004]");
  });

  it("refuses values JSON cannot represent", () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(/non-finite/);
    expect(() => canonicalJson({ f: () => 1 })).toThrow();
  });

  it("is independent of key order and round-trips through JSON.parse", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 7 }), (value, seed) => {
        const canonical = canonicalJson(value);
        expect(canonicalJson(shuffleKeys(value, seed))).toBe(canonical);
        expect(canonicalJson(JSON.parse(canonical))).toBe(canonical);
      }),
    );
  });
});

describe("document hash", () => {
  it("is the SHA-256 of the canonical bytes, including the hash algorithm", () => {
    const { bytes, hash } = canonicalise(document);
    expect(hash).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(bytes.toString("utf8").startsWith('{"attachments":[],"consentScope":')).toBe(true);
    expect(bytes.toString("utf8")).toContain('"hashAlgo":"sha256"');
  });

  it("is the same for the same content however it was written, and different for any change", () => {
    const reordered = memoryDocumentSchema.parse(shuffleKeys(document, 3));
    expect(canonicalise(reordered).hash).toBe(canonicalise(document).hash);
    const edited = { ...document, messages: [...document.messages, { role: "user" as const, content: "!" }] };
    expect(canonicalise(edited).hash).not.toBe(canonicalise(document).hash);
  });
});

describe("coordinates", () => {
  it("counts x in UTC days from today", () => {
    expect(dayOffset("2026-02-01T23:59:00Z", "2026-02-01T00:00:00Z")).toBe(0);
    expect(dayOffset("2026-01-31T23:59:00Z", "2026-02-01T00:00:00Z")).toBe(-1);
    expect(dayOffset("2026-02-02T00:00:00Z", "2026-02-01T12:00:00Z")).toBe(1);
  });

  it("places y by privacy unless the summariser did, and keeps y and z within −15..15", () => {
    expect(coordinatesFor(document, "2026-02-03T00:00:00Z")).toEqual({ x: -2, y: 8, z: 0 });
    expect(coordinatesFor(document, "2026-02-01T00:00:00Z", { y: -40, z: 3.6 })).toEqual({
      x: 0,
      y: -15,
      z: 4,
    });
    fc.assert(
      fc.property(fc.double(), (v) => {
        const c = clampAxis(v);
        return c >= -15 && c <= 15 && Number.isInteger(c);
      }),
    );
  });
});

describe("decay score", () => {
  const now = "2026-03-01T00:00:00.000Z";

  it("is 1 when just accessed and halves after a half-life without reinforcement", () => {
    expect(decayScore({ lastAccessedAt: now, reinforcementCount: 0, now })).toBe(1);
    expect(
      decayScore({ lastAccessedAt: "2026-01-30T00:00:00.000Z", reinforcementCount: 0, now }),
    ).toBeCloseTo(0.5, 10);
  });

  it("decays more slowly the more a summary was reinforced, and stays in (0, 1]", () => {
    const idle = { lastAccessedAt: "2025-06-01T00:00:00.000Z", now };
    expect(decayScore({ ...idle, reinforcementCount: 3 })).toBeGreaterThan(
      decayScore({ ...idle, reinforcementCount: 0 }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3650 }), fc.integer({ min: 0, max: 1000 }), (days, count) => {
        const score = decayScore({
          lastAccessedAt: new Date(Date.parse(now) - days * 86_400_000).toISOString(),
          reinforcementCount: count,
          now,
        });
        return score > 0 && score <= 1;
      }),
    );
  });
});

describe("recall policy", () => {
  const alice = { userId: "alice", householdId: "h1" };
  const levels = ["public", "household", "private"] as const;

  it("lets an owner recall a document whose consent allows it", () => {
    expect(mayRecall(document.consentScope, alice, levels)).toEqual({ allowed: true });
  });

  it("refuses with a reason: another principal, no consent, secret, or a level the policy withholds", () => {
    const consent = document.consentScope;
    expect(mayRecall(consent, { userId: "bob" }, levels)).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("owners"),
    });
    expect(mayRecall({ ...consent, allowRecall: false }, alice, levels)).toMatchObject({ allowed: false });
    expect(mayRecall({ ...consent, privacy: "secret" }, alice, [...levels, "secret"])).toMatchObject({
      allowed: false,
    });
    expect(mayRecall(consent, alice, ["public"])).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("private"),
    });
  });

  it("lets household members recall a household-owned document", () => {
    const consent = { ownerIds: ["h1"], privacy: "household" as const, allowRecall: true };
    expect(mayRecall(consent, alice, levels)).toEqual({ allowed: true });
  });
});

describe("redacting an archived document", () => {
  it("replaces credentials, card numbers and contact details in messages, tags and attachment names", () => {
    const leaky = memoryDocumentSchema.parse({
      ...document,
      messages: [
        { role: "user", content: "the alarm PIN is 4711 and my card 4111-1111-1111-1111", turnId: "t1" },
        { role: "tool", content: "Set-Cookie: session=abc123xyz; Path=/ — mail ops@example.com" },
      ],
      tags: ["ghp_abcdefghijklmnopqrstuvwxyz0123"],
      attachments: [
        { name: "call +44 20 7946 0958.txt", mediaType: "text/plain", digest: `sha256:${"a".repeat(64)}` },
      ],
    });
    const clean = redactDocument(leaky);
    expect(clean.messages.map((m) => m.content)).toEqual([
      "the alarm PIN is <PASSWORD> and my card <CARD_NUMBER>",
      "Set-Cookie: <COOKIE>",
    ]);
    expect(clean.tags).toEqual(["<TOKEN>"]);
    expect(clean.attachments[0]?.name).toBe("call <PHONE>.txt");
    expect(redactDocument(document)).toEqual(document);
  });
  it("redacts the free-text source channel, within its 64 characters", () => {
    const channel = "sms +49 170 1234567 Bearer abcdefghijklmnopqrstuvwxyz";
    const clean = redactDocument({ ...document, source: { ...document.source, channel } });
    expect(clean.source.channel).toBe("sms <PHONE> Bearer <TOKEN>");
    const long = `https://a:x@${"h".repeat(40)}.example.com`;
    expect(
      memoryDocumentSchema.safeParse({ ...document, source: { ...document.source, channel: long } }).success,
    ).toBe(true);
    const bounded = redactDocument({ ...document, source: { ...document.source, channel: long } });
    expect(memoryDocumentSchema.safeParse(bounded).success).toBe(true);
  });
});
