// Comparing embedding vectors in tests and benchmarks. Test support only.

/** Cosine similarity of two vectors of the same length. */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((value, i) => {
    dot += value * (b[i] ?? 0);
    na += value * value;
    nb += (b[i] ?? 0) ** 2;
  });
  return dot / Math.sqrt(na * nb);
}
