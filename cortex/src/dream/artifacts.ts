import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";

/** Markdown files under the artifacts folder, by workspace-relative path (empty when the folder is missing). */
export async function readArtifacts(
  workspaceDir: string,
  artifactsDir: string,
): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const root = join(workspaceDir, artifactsDir);
  let entries: { name: string; parentPath: string; isFile(): boolean }[];
  try {
    entries = await readdir(root, { recursive: true, withFileTypes: true });
  } catch {
    return files;
  }
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith(".md")) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(workspaceDir, path), await readFile(path, "utf8"));
  }
  return files;
}
