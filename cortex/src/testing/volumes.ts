/**
 * Small real volumes for full-disk tests: a tmpfs of a given size mounted on a folder (root only, as the test
 * machine and CI run), and a filler that takes every byte left. Shared by the archive store's suite and
 * test/full-volumes.int.test.ts.
 */
import { execFile } from "node:child_process";
import { mkdir, open } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

export const canMount = process.getuid?.() === 0;

/** Mount a tmpfs of `size` (e.g. "2m") on `dir`, creating the folder first. */
export async function mountTmpfs(dir: string, size: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await run("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
}

export async function unmount(dir: string): Promise<void> {
  await run("umount", [dir]);
}

/** Write zeros to `path` until the volume refuses more. */
export async function fillVolume(path: string): Promise<void> {
  const handle = await open(path, "w");
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) await handle.write(block);
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOSPC") throw error;
  } finally {
    await handle.close();
  }
}
