import { chunk, type IngestEvent, ingestEvent, knowledgeObject } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { dimensionTags, planIngest, provenanceKeyFor, splitSections } from "./ingest-plan.js";

const defaults = { privacy: "household" as const, now: "2026-11-22T10:00:00.000Z" };
const owner = { scope: "user" as const, owner: { userId: "ana" } };

function event(value: unknown): IngestEvent {
  return ingestEvent.parse(value);
}

describe("ingest planning", () => {
  it("gives the same statement from the same owner the same key and id, whatever its spacing or case", () => {
    const [a, b] = planIngest(
      [
        event({ kind: "knowledge", ...owner, statement: "Ana prefers tea.", type: "preference" }),
        event({ kind: "knowledge", ...owner, statement: "  ana PREFERS tea ", type: "preference" }),
      ],
      defaults,
    );
    expect(a?.provenanceKey).toBe(b?.provenanceKey);
    expect(a?.knowledge?.id).toBe(b?.knowledge?.id);
  });

  it("uses the caller's provenance key when given", () => {
    const planned = event({
      kind: "turn",
      ...owner,
      provenanceKey: "k-1",
      role: "user",
      turnId: "t1",
      text: "hi",
    });
    expect(provenanceKeyFor(planned, "hi")).toBe("k-1");
  });

  it("redacts before anything is stored and counts what it replaced", () => {
    const [item] = planIngest(
      [
        event({
          kind: "tool_result",
          ...owner,
          tool: "shell",
          output: "export DB_PASSWORD=hunter2; ping 10.1.2.3",
        }),
      ],
      defaults,
    );
    expect(item?.chunks[0]?.text).toBe("export DB_PASSWORD=<REDACTED>; ping <SERVER_IP>");
    expect(item?.redactions).toBe(2);
  });

  it("keeps contact details in a user's own item and makes it private; replaces them in a household's", () => {
    const statement = "Ana's dentist is reachable at praxis@example.com and +49 30 1234 5678";
    const [own, shared] = planIngest(
      [
        event({ kind: "knowledge", ...owner, statement, type: "fact" }),
        event({
          kind: "knowledge",
          scope: "household",
          owner: { householdId: "home" },
          statement,
          type: "fact",
        }),
      ],
      defaults,
    );
    expect(own?.knowledge).toMatchObject({ statement, privacy: "private" });
    expect(own?.redactions).toBe(0);
    expect(shared?.knowledge).toMatchObject({
      statement: "Ana's dentist is reachable at <EMAIL> and <PHONE>",
      privacy: "household",
    });
    expect(shared?.redactions).toBe(2);
  });

  it("redacts card numbers, cookies and webhook URLs in every scope, the owner's own included", () => {
    const [item] = planIngest(
      [
        event({
          kind: "turn",
          ...owner,
          role: "user",
          turnId: "t9",
          text: "card 4111 1111 1111 1111, Cookie: sid=abc123def456; https://hooks.slack.com/services/T1/B2/abcdefghijklmnopqrstuvwx",
        }),
      ],
      defaults,
    );
    expect(item?.chunks[0]?.text).toBe("card <CARD_NUMBER>, Cookie: <COOKIE>");
    expect(item?.chunks[0]?.privacy).toBe("household");
  });

  it("builds valid knowledge objects with policy-default privacy and consent for every agent", () => {
    const [item] = planIngest(
      [
        event({
          kind: "knowledge",
          ...owner,
          sessionId: "s1",
          statement: "The NAS is in the attic",
          type: "fact",
          dimensions: { topic: ["nas", " nas"] },
        }),
      ],
      defaults,
    );
    const stored = knowledgeObject.parse(item?.knowledge);
    expect(stored.privacy).toBe("household");
    expect(stored.consent).toEqual({ retrieval: true, agents: ["*"] });
    expect(stored.dimensions).toEqual({ topic: ["nas"] });
    expect(stored.sessionIds).toEqual(["s1"]);
    expect(stored.reinforcementCount).toBe(1);
  });

  it("splits a document into one L0 summary, L1 sections and linked L2 passages", () => {
    const paragraph = (n: number) => Array.from({ length: 100 }, (_, i) => `w${n}_${i}`).join(" ");
    const text = [1, 2, 3, 4, 5].map(paragraph).join("\n\n");
    const [item] = planIngest(
      [
        event({
          kind: "document",
          ...owner,
          sourceKind: "artifact",
          sourceId: "doc-1",
          path: "notes/a.md",
          text,
        }),
      ],
      defaults,
    );
    const chunks = (item?.chunks ?? []).map((value) => chunk.parse(value));
    const l0 = chunks.filter((value) => value.level === "L0");
    const l1 = chunks.filter((value) => value.level === "L1");
    const l2 = chunks.filter((value) => value.level === "L2");
    expect(l0).toHaveLength(1);
    expect(l1.length).toBe(2);
    expect(l1.every((section) => section.parentId === l0[0]?.id)).toBe(true);
    expect(l2.length).toBeGreaterThanOrEqual(5);
    expect(new Set(l2.map((passage) => passage.parentId))).toEqual(new Set(l1.map((section) => section.id)));
    l2.forEach((passage, index) => {
      expect(passage.prevId).toBe(index === 0 ? null : l2[index - 1]?.id);
      expect(passage.nextId).toBe(index === l2.length - 1 ? null : l2[index + 1]?.id);
    });
    expect(l0[0]?.text.split(" ")).toHaveLength(60);
  });

  it("cuts text without spaces into chunks the contract accepts, losing none of it", () => {
    const [item] = planIngest(
      [
        event({
          kind: "document",
          ...owner,
          sourceKind: "artifact",
          sourceId: "blob",
          text: "a".repeat(64_000),
        }),
      ],
      defaults,
    );
    const chunks = (item?.chunks ?? []).map((value) => chunk.parse(value));
    const passages = chunks.filter((value) => value.level === "L2").map((value) => value.text);
    expect(Math.max(...passages.map((text) => text.length))).toBeLessThanOrEqual(8_000);
    expect(passages.join("").replaceAll(" ", "").length).toBe(64_000);
  });

  it("packs paragraphs into sections without splitting a paragraph that fits", () => {
    expect(splitSections("a b\n\nc d\n\ne f g", 4)).toEqual(["a b\n\nc d", "e f g"]);
  });

  it("redacts dimension values (contacts too, even in a user's own item) and counts them", () => {
    const [item] = planIngest(
      [
        event({
          kind: "knowledge",
          ...owner,
          statement: "Ana's plumber comes on Monday",
          type: "fact",
          dimensions: {
            person: ["plumber", "+49 170 1234567"],
            topic: ["wifi token ghp_abcdefghijklmnopqrstuvwxyz0123"],
          },
        }),
      ],
      defaults,
    );
    expect(item?.knowledge?.dimensions).toEqual({
      person: ["<PHONE>", "plumber"],
      topic: ["wifi token <TOKEN>"],
    });
    // A contact in a dimension is replaced, not kept: the item stays at its privacy level.
    expect(item?.knowledge?.privacy).toBe("household");
    expect(item?.redactions).toBe(2);
  });

  it("redacts channel text and credentials in a caller's provenance key, source id and path", () => {
    const [turn, doc] = planIngest(
      [
        event({
          kind: "turn",
          ...owner,
          provenanceKey: "import:https://ana:hunter2@git.example.com/log:1",
          channel: "sms +49 170 1234567",
          role: "user",
          turnId: "t1",
          text: "hi",
        }),
        event({
          kind: "document",
          ...owner,
          sourceKind: "artifact",
          sourceId: "repo:https://bot:ghp_abcdefghijklmnopqrstuvwxyz0123@git.example.com/notes",
          path: "https://ana:hunter2@git.example.com/notes/boat.md",
          text: "The boat is in the north shed.",
        }),
      ],
      defaults,
    );
    expect(turn?.provenanceKey).toBe("import:https://<USER>:<PASSWORD>@git.example.com/log:1");
    expect(turn?.chunks[0]?.provenance.key).toBe(turn?.provenanceKey);
    expect(turn?.chunks[0]?.provenance.channel).toBe("sms <PHONE>");
    const sourceId = "repo:https://<USER>:<PASSWORD>@git.example.com/notes";
    expect(doc?.provenanceKey.startsWith(`document:artifact:${sourceId}:`)).toBe(true);
    expect(doc?.chunks.every((c) => c.sourceId === sourceId)).toBe(true);
    expect(doc?.chunks[0]?.path).toBe("https://<USER>:<PASSWORD>@git.example.com/notes/boat.md");
    expect(JSON.stringify([turn, doc])).not.toMatch(/hunter2|ghp_|1234567/);
    for (const c of doc?.chunks ?? []) expect(chunk.safeParse(c).success).toBe(true);
  });

  it("writes dimensions as sorted, lower-cased name:value tags", () => {
    expect(dimensionTags({ project: ["Remram"], person: ["Ana"] })).toEqual(["person:ana", "project:remram"]);
  });

  it("rejects a user-scoped event without an owning user, naming the field", () => {
    const result = ingestEvent.safeParse({
      kind: "turn",
      scope: "user",
      owner: {},
      role: "user",
      turnId: "t",
      text: "x",
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["owner"]);
  });
});
