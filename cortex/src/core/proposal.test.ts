import { describe, expect, it } from "vitest";
import { knowledgeObject } from "../testing/fixtures.js";
import { sha256Digest } from "./digest.js";
import {
  artifactPath,
  artifactSourceIds,
  draftProposal,
  generateProposals,
  maxDiffLength,
  qualifiesForArtifact,
  renderArtifact,
  unifiedDiff,
} from "./proposal.js";

const strong = (id: string, statement: string) =>
  knowledgeObject({
    id,
    type: "constraint",
    statement,
    confidence: 0.85,
    reinforcementCount: 3,
    validFrom: "2026-02-01T00:00:00.000Z",
  });

describe("artifact paths", () => {
  it("files knowledge by scope and type under the artifacts folder", () => {
    expect(artifactPath("artifacts", { kind: "household", ownerIds: ["h1"] }, "constraint")).toBe(
      "artifacts/households/h1/constraints.md",
    );
    expect(artifactPath("docs/memory/", { kind: "shared", ownerIds: ["bob", "alice"] }, "principle")).toBe(
      "docs/memory/shared/alice-bob/principles.md",
    );
    expect(artifactPath("artifacts", { kind: "shared", ownerIds: [] }, "fact")).toBe(
      "artifacts/shared/facts.md",
    );
  });

  it("never leaves the workspace, whatever the ids and folder contain", () => {
    const path = artifactPath("../../etc", { kind: "user", ownerIds: ["../../root"] }, "fact");
    expect(path).toBe("etc/users/root/facts.md");
    expect(path).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._ -]*(\/[A-Za-z0-9_][A-Za-z0-9._ -]*)*\.md$/);
  });
});

describe("promotion criteria", () => {
  it("promotes high-confidence recurring knowledge, principles and explicit user directives only", () => {
    expect(qualifiesForArtifact(strong("a", "x"))).toBe(true);
    expect(qualifiesForArtifact({ ...strong("a", "x"), reinforcementCount: 2 })).toBe(false);
    expect(qualifiesForArtifact({ ...strong("a", "x"), confidence: 0.79 })).toBe(false);
    expect(qualifiesForArtifact(knowledgeObject({ id: "p", type: "principle", confidence: 0.6 }))).toBe(true);
    expect(qualifiesForArtifact(knowledgeObject({ id: "u", userDirective: true }))).toBe(true);
    expect(qualifiesForArtifact({ ...strong("a", "x"), state: "demoted" })).toBe(false);
  });
});

describe("rendering and proposals", () => {
  it("renders front-matter with source ids and confidence, then entries by confidence", () => {
    const content = renderArtifact("Constraints", [
      strong("k2", "Never deploy on Fridays"),
      { ...strong("k1", "Keep backups for 30 days"), confidence: 0.9 },
    ]);
    expect(content).toBe(
      [
        "---",
        'title: "Constraints"',
        "generator: remram-cortex",
        "confidence: 0.88",
        "sources:",
        '  - id: "k1"',
        "    confidence: 0.90",
        '  - id: "k2"',
        "    confidence: 0.85",
        "---",
        "",
        "# Constraints",
        "",
        "- Keep backups for 30 days _(confidence 0.90, since 2026-02-01)_",
        "- Never deploy on Fridays _(confidence 0.85, since 2026-02-01)_",
        "",
      ].join("\n"),
    );
    expect(artifactSourceIds(content)).toEqual(["k1", "k2"]);
  });

  it("drafts a new file against /dev/null with no base digest", () => {
    const draft = draftProposal("artifacts/x.md", "X", [strong("k1", "A rule")], undefined);
    expect(draft.baseDigest).toBeUndefined();
    expect(draft.proposedDigest).toBe(sha256Digest(draft.content));
    expect(draft.diff).toContain("--- /dev/null");
    expect(draft.diff).toContain("+++ b/artifacts/x.md");
    expect(draft.diff).toContain("+- A rule");
    expect(draft.id).toMatch(/^prop-[0-9a-f]{16}$/);
  });

  it("diffs against the current file and names its digest as the base", () => {
    const current = renderArtifact("X", [strong("k1", "A rule")]);
    const draft = draftProposal(
      "artifacts/x.md",
      "X",
      [strong("k1", "A rule"), strong("k2", "Another rule")],
      current,
    );
    expect(draft.baseDigest).toBe(sha256Digest(current));
    expect(draft.diff).toContain("--- a/artifacts/x.md");
    expect(draft.diff).toContain("+- Another rule");
    expect(draft.diff).not.toContain("-- A rule");
    expect(draft.rationale).toBe("1 entry added, 0 retired: +k2");
  });

  it("gives the same proposal id for the same change and a different one for different bytes", () => {
    const a = draftProposal("artifacts/x.md", "X", [strong("k1", "A rule")], undefined);
    const b = draftProposal("artifacts/x.md", "X", [strong("k1", "A rule")], undefined);
    const c = draftProposal("artifacts/x.md", "X", [strong("k1", "A rule!")], undefined);
    expect(a.id).toBe(b.id);
    expect(c.id).not.toBe(a.id);
  });

  it("bounds the diff to what the CRD accepts", () => {
    const huge = "x".repeat(maxDiffLength * 2);
    const diff = unifiedDiff("a.md", undefined, huge);
    expect(diff.length).toBeLessThanOrEqual(maxDiffLength);
    expect(diff.endsWith("… diff truncated\n")).toBe(true);
  });

  it("proposes only artifacts whose qualifying entries changed, not for confidence drift", () => {
    const household = { kind: "household" as const, ownerIds: ["h1"] };
    const rule = { ...strong("k1", "A rule"), scope: household };
    const path = "artifacts/households/h1/constraints.md";
    const [first] = generateProposals([rule], new Map(), { artifactsDir: "artifacts", maxProposals: 10 });
    expect(first?.artifactPath).toBe(path);
    const files = new Map([[path, first?.content ?? ""]]);
    const drifted = { ...rule, confidence: 0.93 };
    expect(generateProposals([drifted], files, { artifactsDir: "artifacts", maxProposals: 10 })).toEqual([]);
  });

  it("proposes emptying an artifact whose entries all stopped qualifying", () => {
    const current = renderArtifact("Old", [strong("k1", "A rule")]);
    const [proposal] = generateProposals(
      [{ ...strong("k1", "A rule"), state: "demoted" }],
      new Map([["artifacts/old.md", current]]),
      {
        artifactsDir: "artifacts",
        maxProposals: 10,
      },
    );
    expect(proposal).toMatchObject({
      artifactPath: "artifacts/old.md",
      sourceKnowledgeIds: [],
      title: "Old",
    });
    expect(proposal?.diff).toContain("-- A rule");
  });

  it("caps the number of proposals per cycle", () => {
    const objects = ["a", "b", "c"].map((owner) => ({
      ...strong(owner, "r"),
      scope: { kind: "user" as const, ownerIds: [owner] },
    }));
    expect(
      generateProposals(objects, new Map(), { artifactsDir: "artifacts", maxProposals: 2 }),
    ).toHaveLength(2);
  });
});

describe("redacted proposals", () => {
  it("never puts a credential, card number or contact detail into an artifact, its title or its diff", () => {
    const leaky = strong("k9", "Backups go to s3 with AWS key AKIAABCDEFGHIJKLMNOP; owner bo@example.com");
    const current = '---\ntitle: "old"\n---\n\n- the admin password is Hunter2!\n';
    const draft = draftProposal("artifacts/a.md", "Constraints (user bo@example.com)", [leaky], current);
    for (const text of [draft.content, draft.title, draft.diff]) {
      expect(text).not.toContain("AKIAABCDEFGHIJKLMNOP");
      expect(text).not.toContain("bo@example.com");
      expect(text).not.toContain("Hunter2!");
    }
    expect(draft.content).toContain("AWS key <TOKEN>; owner <EMAIL>");
    expect(draft.proposedDigest).toBe(sha256Digest(draft.content));
    expect(draft.baseDigest).toBe(sha256Digest(current));
  });
});
