/**
 * Polarity of a statement: the same content words with opposite negation ("likes jazz" / "does not like jazz").
 * Sentence embeddings put such pairs very close (MiniLM: 0.91 for that pair, 0.96 for "the garage door is
 * (not) locked at night"), so similarity alone would call them duplicates; reflection and dream read polarity
 * with these rules before trusting a near neighbour.
 */

/** Share of content words two statements must have in common to count as the same statement. */
export const defaultOppositeOverlap = 0.8;

const negators = new Set(["not", "no", "never", "nothing", "nobody", "nowhere", "neither", "nor", "without"]);
/** Negative member → positive member; either side of a pair flips polarity relative to the other. */
const antonyms: Record<string, string> = {
  dislike: "like",
  disliked: "liked",
  hate: "love",
  hated: "loved",
  avoid: "prefer",
  avoided: "preferred",
  disable: "enable",
  disabled: "enabled",
  forbid: "allow",
  forbidden: "allowed",
  disallow: "allow",
  disallowed: "allowed",
  ban: "allow",
  banned: "allowed",
  exclude: "include",
  excluded: "included",
  reject: "accept",
  rejected: "accepted",
  false: "true",
  off: "on",
  stop: "start",
};
/** Words that carry neither content nor polarity here ("always" is only the positive of the negator "never"). */
const fillers = new Set([
  "always",
  "a",
  "an",
  "the",
  "do",
  "does",
  "did",
  "is",
  "are",
  "was",
  "were",
  "am",
  "be",
  "to",
  "should",
]);

function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** A statement's content words (stemmed, antonyms folded onto one side) and its polarity (true = negated). */
export function polarityReading(statement: string): { words: Set<string>; negated: boolean } {
  const tokens = statement
    .toLowerCase()
    .replace(/n['’]t\b/g, " not")
    .replace(/\bcannot\b/g, "can not")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
  let negated = false;
  const words = new Set<string>();
  for (const token of tokens) {
    if (negators.has(token)) {
      negated = !negated;
      continue;
    }
    if (fillers.has(token)) continue;
    const word = stem(token);
    const positive = antonyms[word];
    if (positive !== undefined) {
      negated = !negated;
      words.add(positive);
    } else if (!fillers.has(word)) {
      words.add(word);
    }
  }
  return { words, negated };
}

/** Whether two statements say the same thing with opposite polarity ("likes X" vs "does not like X"). */
export function areOpposites(a: string, b: string, minOverlap = defaultOppositeOverlap): boolean {
  const ra = polarityReading(a);
  const rb = polarityReading(b);
  if (ra.negated === rb.negated || ra.words.size === 0 || rb.words.size === 0) return false;
  const shared = [...ra.words].filter((w) => rb.words.has(w)).length;
  const union = new Set([...ra.words, ...rb.words]).size;
  return shared / union >= minOverlap;
}
