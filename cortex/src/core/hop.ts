/**
 * The second hop of retrieval: names the first hop's best items carry that the question does not. "What does my
 * sister do?" finds "My sister Ingrid is visiting"; the job was said in another session as "Ingrid started as a
 * nurse", which shares no word with the question. A BM25 search for "Ingrid" finds it. Pure: texts in, terms out.
 */

/** How many of the first hop's best items lend their names, and how many names the second hop searches for. */
export const hopSourceItems = 3;
export const maxHopTerms = 4;
/** Hits the second hop's searches return: its list counts at ranks where reciprocal rank fusion still adds much. */
export const hopCandidates = 10;

// Capitalised words that are not names: sentence openers, pronouns, days and months (a date is no entity to follow).
const notNames = new Set(
  (
    "a an and are as at be but by can could did do does for from had has have he her here his how i i'd i'll i'm " +
    "i've if in is it it's its just let me my no not now of oh ok okay on or our she so that that's the their them " +
    "then there these they this those to too um was we we're well were what when where which who why will with " +
    "would yeah yes you you're your user assistant system tool thanks thank hi hello hey sure great good nice " +
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august " +
    "september october november december today tomorrow yesterday don't didn't doesn't isn't wasn't can't " +
    "won't couldn't wouldn't shouldn't haven't hasn't aren't weren't"
  ).split(" "),
);

/** A word (apostrophes and hyphens inside) that starts with a capital: "Ingrid", not the "Phone" of "iPhone". */
const capitalised = /(?<![\p{L}\p{N}\p{M}])\p{Lu}(?:[\p{L}\p{M}'-]*[\p{L}\p{M}])?/gu;
const wordPattern = /[\p{L}\p{N}\p{M}'-]+/gu;
/** "Caroline: " or "[8 May 2023] Mary Ann: " at the start of a line (a name of up to three words): who speaks. */
const speakerLabel = /^\s*(?:\[[^\]]{1,40}\]\s*)?\p{Lu}[\p{L}.'-]*(?: \p{Lu}[\p{L}.'-]*){0,2}:\s/u;
/** What ends a sentence or opens a list item, a quote or an aside: a capital after it proves nothing. */
const opensSentence = /[.!?:;"“”‘(…—–*•-]$/u;

/** One spelling: composed accents, straight apostrophes. */
function normalised(text: string): string {
  return text.normalize("NFC").replace(/’/gu, "'");
}

/**
 * Names in `texts` (best first) that the question lacks: capitalised words that are not common words, not a speaker
 * label ("Caroline: …" names who speaks, not what is spoken of), and not only ever the first word of a sentence
 * (where any word is capitalised); at most `max`, in the order they first appear.
 */
export function hopTerms(question: string, texts: readonly string[], max = maxHopTerms): string[] {
  const asked = new Set(
    (normalised(question).match(wordPattern) ?? []).map((word) => word.replace(/'s$/u, "").toLowerCase()),
  );
  const found: { word: string; key: string; opensSentence: boolean }[] = [];
  for (const text of texts) {
    for (const line of text.split("\n")) {
      const body = normalised(line).replace(speakerLabel, "");
      for (const match of body.matchAll(capitalised)) {
        const word = match[0].replace(/'s$/u, "");
        const key = word.toLowerCase();
        if (word.length < 2 || notNames.has(key) || asked.has(key)) continue;
        const before = body.slice(0, match.index).trimEnd();
        found.push({ word, key, opensSentence: before === "" || opensSentence.test(before) });
      }
    }
  }
  const midSentence = new Set(found.filter((item) => !item.opensSentence).map((item) => item.key));
  const terms: string[] = [];
  const seen = new Set<string>();
  for (const { word, key } of found) {
    if (seen.has(key) || !midSentence.has(key)) continue;
    seen.add(key);
    terms.push(word);
    if (terms.length === max) break;
  }
  return terms;
}
