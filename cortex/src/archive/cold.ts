/**
 * The cold tier's bundle format (seed 004: "bundled archives with a manifest mapping hash to storage location"): a
 * bundle is the zstd-compressed canonical bytes of several documents one after another, named by the SHA-256 of its
 * own bytes; the manifest records each document's offset and length in it. No index inside the file: a bundle is
 * only ever read through the manifest, and a member is verified against its hash after decompression. Pure.
 */

export interface BundleMember {
  hash: string;
  /** The member's compressed bytes. */
  compressed: Uint8Array;
  /** Size of its canonical (uncompressed) bytes. */
  size: number;
}

export interface BundleSlice {
  hash: string;
  offset: number;
  length: number;
  size: number;
}

/** Members in the order given, each at the offset where the previous one ended. */
export function packBundle(members: readonly BundleMember[]): { bytes: Buffer; slices: BundleSlice[] } {
  const slices: BundleSlice[] = [];
  let offset = 0;
  for (const member of members) {
    slices.push({ hash: member.hash, offset, length: member.compressed.length, size: member.size });
    offset += member.compressed.length;
  }
  return { bytes: Buffer.concat(members.map((member) => member.compressed)), slices };
}

/** One member's compressed bytes out of a bundle read whole; an out-of-range slice is an integrity problem. */
export function sliceBundle(bundle: Uint8Array, slice: Pick<BundleSlice, "offset" | "length">): Buffer {
  if (slice.offset < 0 || slice.length < 0 || slice.offset + slice.length > bundle.length) {
    throw new RangeError(
      `bundle slice ${slice.offset}+${slice.length} lies outside a bundle of ${bundle.length} bytes`,
    );
  }
  return Buffer.from(bundle.subarray(slice.offset, slice.offset + slice.length));
}

export function bundlePath(bundleHash: string): string {
  return `cold/${bundleHash.slice(0, 2)}/${bundleHash}.bundle`;
}
