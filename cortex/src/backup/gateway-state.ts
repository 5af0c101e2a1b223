/**
 * The gateway's own state in every backup: OpenClaw's folder (its sessions in its SQLite stores, its device
 * pairings and their credentials, its config, the hooks plugin's durable queue) as a gzipped tar encrypted with age
 * to the household's keys, since it holds secrets that must not sit in clear in a backup. SQLite files (and their
 * write-ahead logs) are copied as they are, not through SQLite's backup API: a write landing during the copy can
 * leave the copy needing SQLite's own recovery when opened. Cortex reads it through a read-only mount of the folder (the
 * gateway and Cortex share one claim); files are read as they are at that moment, up to the size they had when the
 * tar reached them, so a session the gateway appends to meanwhile is taken as far as it was written. Restore by
 * hand (docs/operator.md): `age -d -i household.key … | tar xz` into the gateway's folder before it starts.
 */
import { join, sep } from "node:path";
import { Readable } from "node:stream";
import type { ReadableStream } from "node:stream/web";
import { createGzip } from "node:zlib";
import { Encrypter } from "age-encryption";
import { pack } from "tar-fs";

/**
 * The folder as an encrypted tarball, streamed (a long-used gateway's sessions may be large). OpenClaw's `tmp` (its
 * copies of the plugins it loaded) and `cache` (the control UI's unpacked assets, 28 MB of the 28 MB measured on
 * the real node) are made again at every start and left out.
 */
export async function sealedGatewayState(dir: string, recipients: readonly string[]): Promise<Readable> {
  const encrypter = new Encrypter();
  for (const recipient of recipients) encrypter.addRecipient(recipient);
  const remade = ["tmp", "cache"].map((folder) => join(dir, folder));
  const ignore = (name: string) =>
    remade.some((folder) => name === folder || name.startsWith(`${folder}${sep}`));
  const tarball = pack(dir, { strict: false, ignore }).pipe(createGzip());
  const sealed = await encrypter.encrypt(Readable.toWeb(tarball) as globalThis.ReadableStream<Uint8Array>);
  return Readable.fromWeb(sealed as unknown as ReadableStream<Uint8Array>);
}
