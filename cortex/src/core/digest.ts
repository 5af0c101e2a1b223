import { createHash } from "node:crypto";

/** Digests in the form the ArtifactProposal CRD uses: "sha256:" + 64 hex digits. */
export function sha256Digest(content: string | Uint8Array): string {
  return `sha256:${createHash("sha256").update(content).digest("hex")}`;
}
