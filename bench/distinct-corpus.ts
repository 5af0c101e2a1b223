/**
 * A retrieval corpus of distinct, real sentences for the latency bench: the household's own template statements
 * (a few thousand), then sentences of the State of the Union addresses 1790-2018 (about 48,000 of 6 to 40 words;
 * hack/install-bench-corpus.sh fetches them). The generated corpus alone repeats a few hundred statements, and the
 * k-NN leg over thousands of identical vectors behaves nothing like one over distinct ones.
 *
 * Splitting and picking are pure functions; reading the folder is the shell.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cacheDir, repoRoot } from "@remram/test-harness";

/** Shorter sentences are mostly salutations and fragments; longer ones are not the length of a remembered fact. */
const minWords = 6;
const maxWords = 40;

const segmenter = new Intl.Segmenter("en", { granularity: "sentence" });

/** The sentences of `text` (ICU's sentence boundaries) of 6 to 40 words, whitespace collapsed. */
export function sentencesOf(text: string): string[] {
  const sentences: string[] = [];
  for (const { segment } of segmenter.segment(text)) {
    const sentence = segment.replace(/\s+/g, " ").trim();
    const words = sentence.split(" ").length;
    if (words >= minWords && words <= maxWords) sentences.push(sentence);
  }
  return sentences;
}

/**
 * `size` distinct statements: `first` in order, then the sentences of `texts` in order, each once (compared
 * without case). Fails, naming how many there are, when they hold fewer.
 */
export function distinctStatements(
  first: readonly string[],
  texts: readonly string[],
  size: number,
): string[] {
  const seen = new Set<string>();
  const picked: string[] = [];
  const take = (statement: string) => {
    const key = statement.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    picked.push(statement);
  };
  for (const statement of first) {
    if (picked.length === size) return picked;
    take(statement);
  }
  for (const text of texts)
    for (const sentence of sentencesOf(text)) {
      if (picked.length === size) return picked;
      take(sentence);
    }
  if (picked.length < size)
    throw new Error(
      `the distinct corpus holds ${picked.length} statements, fewer than the ${size} asked for`,
    );
  return picked;
}

/** The addresses' texts, oldest first; fetched into the cache first when they are not there. */
export function sotuTexts(): string[] {
  execFileSync("bash", [join(repoRoot, "hack", "install-bench-corpus.sh")], { stdio: "inherit" });
  const dir = join(cacheDir, "bench-corpus", "sotu");
  return readdirSync(dir)
    .filter((name) => name.endsWith(".txt"))
    .sort()
    .map((name) => readFileSync(join(dir, name), "utf8"));
}
