/**
 * The live values the redaction suite writes (fixed, so a failure names the value), and how it looks for them in
 * what Cortex kept: stored JSON escapes quotes, the archive compresses warm files.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync, zstdDecompressSync } from "node:zlib";
import { expect } from "vitest";
import { sha256Digest } from "../../src/core/digest.js";
import type { ProposalRecordBody, StoredRecord } from "../../src/knowledge/records.js";

export const live = {
  password: "Tr0ub4dor&3x!",
  githubToken: "ghp_Q2x9LmN4pR7sT1vW3yZ5aB8cD0eF6gH2jK4m",
  apiKey: "a9f3k2m8q7w1e5r4t6y0u2i8o3p1z7x9",
  visa: "4111 1111 1111 1111",
  mastercard: "5555-5555-5555-4444",
  amex: "378282246310005",
  cookie: "Qx7vB2nM9kL4pR8sT3wZ",
  session: "9d8f7a6b5c4e3d2f1a0b",
  slackHook: "https://hooks.slack.com/services/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",
  discordHook: "https://discord.com/api/webhooks/112233445566778899/aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
  keyLine: "MIIEowIBAAKCAQEAx3qVb8mL2kP9sT4wZ7nR1yU6iO0pA5dF3gH8jK2lQ9cV4bN7",
  dbPassword: "s3cr3t-Db-Pa55",
  email: "meyer.praxis@example.com",
  phone: "+49 30 1234 5678",
};

/** The value as it would appear inside stored JSON (quotes and backslashes escaped). */
const forms = (value: string) => [value, JSON.stringify(value).slice(1, -1)];

export function expectAbsent(haystack: string, values: readonly string[]) {
  for (const value of values) {
    for (const form of forms(value)) expect(haystack.includes(form), `${value} was kept`).toBe(false);
  }
}

/** Every file under `root` as text, warm (compressed) archive files decompressed. */
export async function filesText(
  root: string,
  skip: (path: string) => boolean = () => false,
): Promise<string> {
  const parts: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!entry.isFile() || skip(path)) continue;
    const bytes = await readFile(path);
    if (path.endsWith(".gz")) parts.push(gunzipSync(bytes).toString("utf8"));
    else if (path.endsWith(".zst")) parts.push(zstdDecompressSync(bytes).toString("utf8"));
    else parts.push(bytes.toString("utf8"));
  }
  return parts.join("\n");
}

/** A pending proposal record for `content`, as dream drafts one (written with createRecord). */
export function pendingProposal(
  id: string,
  content: string,
): StoredRecord<ProposalRecordBody> & {
  artifactPath: string;
} {
  const now = new Date().toISOString();
  const artifactPath = `artifacts/shared/${id}.md`;
  return {
    kind: "proposal",
    id,
    state: "pending",
    artifactPath,
    createdAt: now,
    updatedAt: now,
    body: {
      id,
      artifactPath,
      title: "Facts",
      content,
      proposedDigest: sha256Digest(content),
      diff: "",
      sourceKnowledgeIds: [],
      confidence: 0.9,
      rationale: "legacy",
      scope: { kind: "shared", ownerIds: [] },
      privacy: "public",
      cycleId: "legacy",
    },
  };
}
