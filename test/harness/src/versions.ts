import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cacheDir, repoRoot } from "./paths.js";

/** hack/versions.env, the one place the installers and the harness take their pinned versions from. */
export const readVersionsEnv = (): string => readFileSync(join(repoRoot, "hack", "versions.env"), "utf8");

/** One KEY=value of versions.env; a clear error when the key is missing. */
export function pinned(key: string, versionsEnv: string = readVersionsEnv()): string {
  const match = new RegExp(`^${key}=(.+)$`, "m").exec(versionsEnv);
  if (!match?.[1]) throw new Error(`hack/versions.env has no ${key}`);
  return match[1].trim();
}

/** Cortex's in-process embedding model as hack/install-embedding-onnx.sh installs it (EMBED_ONNX_NAME). */
export function onnxEmbeddingModel(): { name: string; dir: string } {
  const name = pinned("EMBED_ONNX_NAME");
  return { name, dir: join(cacheDir, "embedding-onnx", name) };
}
