/**
 * The last query vectors, least recently used out first: the hooks ask the same question again on retries and
 * follow-ups, and a vector is the same for the same text and model.
 */
export class QueryVectorCache {
  // A Map's insertion order is the eviction order; a hit moves its entry to the end.
  private readonly vectors = new Map<string, number[]>();

  constructor(private readonly size: number) {}

  get(text: string): number[] | undefined {
    const vector = this.vectors.get(text);
    if (vector !== undefined) {
      this.vectors.delete(text);
      this.vectors.set(text, vector);
    }
    return vector;
  }

  set(text: string, vector: number[]): void {
    this.vectors.set(text, vector);
    if (this.vectors.size > this.size) {
      const oldest = this.vectors.keys().next().value;
      if (oldest !== undefined) this.vectors.delete(oldest);
    }
  }
}
