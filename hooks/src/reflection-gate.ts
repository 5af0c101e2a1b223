import { stemmer } from "stemmer";
import { eng } from "stopword";

/**
 * What keeps junk out of long-term memory before and after the reflection model (seed 001: "ephemeral chit-chat,
 * troubleshooting with no conclusion and off-topic content stay out"). Pure, and deliberately independent of the
 * model: a small local model writes a fact out of a greeting as readily as out of a fact, so the plugin decides
 * which turns are worth a reflection run and which of the model's statements the person actually said.
 *
 * - Before: a turn whose user part is only small talk, only questions or only a passing state is not reflected
 *   (no model run is spent on it either).
 * - After: an item must be grounded in the person's own words of the turn. Most of its content words, and at least
 *   one that carries new information, must come from what the user wrote, not from the assistant's reply (where
 *   the model's mistakes and echoed memory live) nor from the memory the run was shown.
 */

export type SkipReason = "empty" | "small_talk" | "question" | "request" | "transient";

const smallTalk =
  /^(?:(?:hi+|hey+|hello|hiya|yo|morning|good (?:morning|afternoon|evening|night)|night|gn|thanks?|thank you|thank u|thx|ty|cheers|ta|ok(?:ay)?|k|kk|sure|cool|nice|great|perfect|awesome|lovely|brilliant|yes|yeah|yep|yup|no|nope|nah|lol|lmao|haha+|hehe+|hah|ha|wow|oh|ah|hmm+|mm+|right|alright|got it|sounds good|fair enough|never ?mind|np|no problem|bye+|see (?:you|ya)|later|goodnight|sleep well|you too|same|indeed|exactly|true|ikr|omg|yay|oops|sorry|please|pls|that's (?:it|all|great|fine|perfect)|all good|will do|brb|be right back|back soon|gtg|got to go|gotta go|ttyl|talk (?:later|soon))(?:\s+(?:so much|a lot|again|then|too|mate|buddy|friend|there|everyone|all|you|assistant|bot))*[\s!.,?:;)(*~-]*)+$/iu;
const emojiOnly = /^[\p{Extended_Pictographic}\p{Emoji_Component}\s!?.,:;()*~#-]*$/u;
const questionStart =
  /^(?:who|what|when|where|why|how|which|whose|whom|is|are|am|was|were|do|does|did|can|could|would|will|shall|should|may|might|have|has|had|any|anything)\b/i;
/**
 * Words by which a sentence tells something of the person or the household ("my son", "our boiler", "I'm vegan"):
 * "how do I …" and "can we …" ask for help and tell nothing.
 */
const aboutThePerson = /\b(?:my|mine|our|ours|i'm|i am|im|i've|ive|i have|we have|we've|we're|we are)\b/i;
/** Words of what lasts: habits, preferences, health, relations, decisions, plans. */
const durableMarkers =
  /\b(?:always|never|every|usually|each|prefer|prefers|preferred|favou?rite|allergic|allergy|intolerant|vegan|vegetarian|hate|love|can't stand|don't like|born|birthday|anniversary|married|engaged|divorced|moved|moving|live|lives|work|works|job|started|starts|joined|retired|diagnosed|decided|decide|chose|we'll|plan|plans|going to|from now on|anymore|actually|instead|called|named|name is|remember|note|save)\b/i;
/** A request of the assistant: a one-off task, not something about the person. */
const requestStart =
  /^(?:(?:ok(?:ay)?|so|and|then|now|also|hey|pls|plz|please)[,!]?\s+)*(?:(?:can|could|would|will) (?:you|u)\b|(?:please|pls|plz)\b|let's\b|(?:remind|give|help|show|tell|get|find|send|book|order|add|list|check|set|make|write|draft|reply|redo|adjust|plan|translate|convert|summari[sz]e|explain|calculate|compare|suggest|recommend|create|update|schedule|put|play|read|open|run|sync|search|look|pay|call|text|email|message|print|fix|rewrite|shorten|format)\b)/i;
/** A state of the moment: the person's mood, body, activity or place now, or the weather. */
const passingMarkers =
  /\b(?:now|rn|right now|atm|at the moment|currently|today|tonight|this (?:morning|afternoon|evening|week)|just|finally|already|again|tired|knackered|exhausted|sleepy|nervous|excited|proud|bored|hungry|thirsty|stressed|hurts?|sore|freezing|sick|ugh|grr|omg|lol)\b/i;
const transientState =
  /^(?:i'?m|i am|im|we'?re|we are|it'?s|it is|(?:the )?user is|\p{Lu}[\p{L}'-]* is|(?:he|she) is|they are)\s+(?:so\s+|really\s+|very\s+|a bit\s+|kinda\s+|just\s+|currently\s+)*(?:tired|sleepy|exhausted|hungry|thirsty|bored|busy|sick|ill|cold|hot|warm|freezing|stressed|late|early|back|home|here|out|off|outside|at (?:the |work|home|the shop|the office|school)|in (?:the |a )?(?:car|train|bus|kitchen|garden|queue|meeting|shop|office)|on (?:my|the|our|their|his|her) way|raining|sunny|snowing|windy|cloudy|dark|quiet|noisy|ready|done|awake|up)\b[^.!?]*$/iu;
/** Words addressed to the assistant about itself ("you have been a great help", "ur a legend"). */
const aboutTheAssistant = /^(?:you|u|ur|you're|youre|your)\b/i;

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== "");
}

function words(sentence: string): string[] {
  return sentence.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word));
}

/** What one sentence of the person's is, or undefined when it tells something that may last. */
function sentenceKind(sentence: string): Exclude<SkipReason, "empty"> | undefined {
  const bare = sentence.replace(/[.!?]+$/, "");
  if (smallTalk.test(sentence) || emojiOnly.test(sentence)) return "small_talk";
  const lasting = durableMarkers.test(sentence);
  const personal = aboutThePerson.test(sentence);
  if (!lasting && !personal && aboutTheAssistant.test(sentence)) return "small_talk";
  // A few words with no I or we, no number and no lasting word: "heyyy", "ur a legend", "summer holsss".
  const short = words(sentence).length <= 4 && !/\p{N}/u.test(sentence) && !/\b(?:i|we)\b/i.test(sentence);
  if (!lasting && !personal && short) return "small_talk";
  if ((sentence.endsWith("?") || questionStart.test(sentence)) && !personal) return "question";
  // A request tells nothing of the person unless it says so: "make me a plan" is a task, "remind me, my train is
  // at 7" tells something.
  if (!personal && requestStart.test(sentence)) return "request";
  if (!lasting && (transientState.test(bare) || passingMarkers.test(sentence))) return "transient";
  return undefined;
}

/**
 * Whether the user's part of a turn holds anything a reflection could keep, and why not: a turn is reflected when
 * one of its sentences tells something that may last; otherwise the reason is its first sentence's kind (a
 * greeting before a request is a request).
 */
export function reflectionSkipReason(userText: string): SkipReason | undefined {
  const text = userText.trim();
  if (text === "") return "empty";
  const kinds = sentences(text).map(sentenceKind);
  if (kinds.some((kind) => kind === undefined)) return undefined;
  return kinds.find((kind) => kind !== "small_talk") ?? "small_talk";
}

const stopwords = new Set([
  ...eng,
  // Words a reflection adds around what was said: the person, the household, generic relation verbs.
  "user",
  "users",
  "person",
  "people",
  "household",
  "family",
  "home",
  "prefers",
  "likes",
  "has",
  "have",
  "is",
  "are",
  "was",
  "their",
  "they",
  "them",
  "called",
  "named",
  "name",
  "wants",
  "would",
  "like",
  "should",
  "always",
  "currently",
  "assistant",
  "said",
  "says",
  "told",
  "mentioned",
  "stated",
  // Light verbs: "the glass goes out", "we put the glass out" say the same thing.
  "go",
  "goes",
  "went",
  "gone",
  "get",
  "gets",
  "got",
  "put",
  "puts",
  "make",
  "makes",
  "made",
  "take",
  "takes",
  "took",
  "come",
  "comes",
  "came",
  "do",
  "does",
  "did",
  "done",
  "keep",
  "keeps",
  "kept",
]);

/** The content words of a text, as stems: lowercase, possessives dropped, stopwords and short tokens left out. */
export function contentStems(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu) ?? [];
  return words
    .map((word) => word.replace(/['’]s$/u, "").replace(/['’]/gu, ""))
    .filter((word) => word.length >= 2 && !stopwords.has(word))
    .map((word) => (/^\p{N}+$/u.test(word) ? word : stemmer(word)));
}

/** Two stems name the same word: equal, or (both long enough) sharing the first five letters (allergic, allergy). */
function sameWord(a: string, b: string): boolean {
  return a === b || (a.length >= 5 && b.length >= 5 && a.slice(0, 5) === b.slice(0, 5));
}

export interface GroundingSources {
  /** What the person wrote in the turn (the injected memory already removed). */
  userText: string;
  /** Words an item may borrow without them being new: the person's names, the statement it corrects. */
  context: readonly string[];
}

/** The least share of an item's content words that must come from the person's words or the allowed context. */
export const groundingShare = 0.6;

export type ItemDropReason = "not_a_statement" | "not_lasting" | "ungrounded";

/**
 * Why a reflected statement is not kept, or undefined when it is:
 * - not_a_statement: a question, or fewer than three words or two content words ("Onions", "Ha det bra!");
 * - not_lasting: small talk or a passing state, however it is worded ("The user is tired today");
 * - ungrounded: the person did not say it (isGrounded).
 */
export function itemDropReason(statement: string, sources: GroundingSources): ItemDropReason | undefined {
  const text = statement.trim();
  const words = text.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word));
  if (text.endsWith("?") || words.length < 3 || contentStems(text).length < 2) return "not_a_statement";
  if (reflectionSkipReason(text) !== undefined) return "not_lasting";
  return isGrounded(text, sources) ? undefined : "ungrounded";
}

/**
 * Whether the person said what a reflected statement claims: at least `groundingShare` of its content words come
 * from their words or the allowed context, and at least one from their own words. A statement with no content
 * word, or a question, claims nothing.
 */
export function isGrounded(statement: string, sources: GroundingSources): boolean {
  if (statement.trim().endsWith("?")) return false;
  const stems = contentStems(statement);
  if (stems.length === 0) return false;
  const said = contentStems(sources.userText);
  const context = sources.context.flatMap(contentStems);
  const fromUser = stems.filter((stem) => said.some((word) => sameWord(stem, word)));
  if (fromUser.length === 0) return false;
  const known = stems.filter(
    (stem) => said.some((word) => sameWord(stem, word)) || context.some((word) => sameWord(stem, word)),
  );
  return known.length / stems.length >= groundingShare;
}
