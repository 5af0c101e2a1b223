import { randomBytes } from "node:crypto";
import { mkdir, open, rename, unlink } from "node:fs/promises";
import { dirname } from "node:path";

/** Replace a file's content atomically (rename over it), syncing first so a crash leaves old or new bytes. */
export async function writeAtomically(path: string, content: Uint8Array | string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${randomBytes(6).toString("hex")}.remram-tmp`;
  const handle = await open(temporary, "wx");
  try {
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    // A full volume refuses the write part-way: the part that fitted goes too.
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}
