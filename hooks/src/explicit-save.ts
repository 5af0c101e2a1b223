/**
 * Explicit saves, detected: "remember that …", "don't forget …", "save this", "#canon". A person's directive to keep
 * something is stored at once with their trust (seed 001's write rules; seed 000 §5.8) instead of waiting for
 * reflection. Pure: the message in, the directive (or nothing) out.
 *
 * Only the person's own words count: code (fenced or inline), quoted passages and quoted lines (`> …`) are masked
 * before the directive is looked for, so "he said \"remember that\"" or a pasted snippet saves nothing. The
 * directive must open a sentence (after a greeting, "please", or "can you"): "I can't remember", "do you remember",
 * "don't remember that" and "remember when …?" are not directives.
 */

export type SaveIntent = "remember" | "canon" | "page";
export type SaveType = "fact" | "preference" | "constraint" | "decision";
export type SaveScope = "user" | "household";

export interface ExplicitSaveDirective {
  /** What to keep, in the person's words, cleaned of the directive itself; empty when it refers back. */
  statement: string;
  intent: SaveIntent;
  /** household only when the person said so ("remember for the family …", "#household"). */
  scope: SaveScope;
  type: SaveType;
  /** "save this" with nothing of its own to save: what to keep is the person's previous message. */
  refersBack: boolean;
}

/** Cortex's bound on a saved statement (contract explicitSaveLimits). */
export const maxStatementChars = 2_000;

/** Replace every match with spaces of its length: positions stay, the text is no longer searched. */
function blank(text: string, pattern: RegExp): string {
  return text.replace(pattern, (match) => match.replace(/[^\n]/g, " "));
}

/** The message with code, quotations and quoted lines blanked out: where a directive may be looked for. */
export function ownWords(message: string): string {
  let text = blank(message, /(```|~~~)[\s\S]*?(?:\1|$)/g);
  text = blank(text, /`[^`\n]*`/g);
  text = blank(text, /^[ \t]*>.*$/gm);
  text = blank(text, /"[^"\n]*"|“[^”\n]*”|«[^»\n]*»/g);
  return text;
}

/** A leading "[Sun 2026-03-01 09:00 UTC]" stamp some channels put before the message. */
const timestampPrefix = /^\s*\[[A-Z][a-z]{2}[^\]\n]{4,60}\]\s*/;

const sentenceStart = String.raw`(?:^|[.!?;\n]\s*|\s[-–—]\s+)`;
/** A polite request before the directive: "can you", "I'd like you to". Marks a question-shaped directive as one. */
const request = String.raw`(?:(?:can|could|would|will) you(?: please)?\s+|i (?:want|need|would like) you to\s+|i'd like you to\s+)`;
/** Greetings, fillers, a name with a comma, "please", then maybe a polite request. */
const lead = String.raw`(?:(?:(?:hey|hi|hello|ok|okay|oh|so|and|also|btw|by the way|now|please|pls|plz|kindly)[,!:]?|[A-Za-z][\w-]{1,20},|#\w+)\s+)*(${request})?(?:please\s+)?`;
/** Household qualifiers: "for the family", "for all of us". */
const householdPhrase = `for (?:the |our |my )?(?:household|family|home|house|whole family|whole household)|for (?:all of us|everyone|everybody|us all)`;
/** What may follow a bare "save this" in its sentence and still leave it a bare directive. */
const politeTail = /^(?:\s|[,.!?]|please|for me|for later|thanks|thank you|ok|okay)*$/i;

interface Verb {
  pattern: string;
  intent: SaveIntent;
  /**
   * The phrase names no content of its own ("save this", "write that down"): it takes the text before it, or the
   * previous message; anything else in its sentence ("save it as a PDF") means it is some other request.
   */
  bare?: boolean;
}

/** "remember to …" is a reminder, not knowledge, unless it is a standing rule ("remember to always …"). */
const notAReminder = String.raw`(?!\s+to\s+(?!always\b|never\b))`;
const hasMore = String.raw`(?=\s*[:,–—-]?\s*\S)`;

const verbs: readonly Verb[] = [
  {
    pattern: String.raw`(?:save|store|keep|note|record|write|jot)\s+(?:this|that|it)(?:\s+(?:down|for later|for me))?\s+as\s+(?:a\s+)?(?:wiki\s+)?page`,
    intent: "page",
    bare: true,
  },
  {
    pattern: String.raw`(?:make|create|write)\s+a\s+(?:wiki\s+)?page\s+(?:of|for|about)\s+(?:this|that|it)`,
    intent: "page",
    bare: true,
  },
  {
    pattern: String.raw`remember\b(?:\s+(?:${householdPhrase}))?(?:\s+(?:that|this))?${notAReminder}(?!\s+(?:when|how|what|who|where|why|if|whether|me|us|him|her|them)\b)${hasMore}`,
    intent: "remember",
  },
  {
    pattern: String.raw`(?:don't|do not|dont|never) forget\b(?:\s+(?:that|this))?${notAReminder}${hasMore}`,
    intent: "remember",
  },
  { pattern: String.raw`(?:keep|bear) in mind\b(?:\s+that)?${hasMore}`, intent: "remember" },
  { pattern: String.raw`memori[sz]e\b(?:\s+(?:that|this))?${hasMore}`, intent: "remember" },
  { pattern: String.raw`(?:make|take) a note(?:\s+of\s+(?:this|that|it))?(?:\s+that)?`, intent: "remember" },
  {
    pattern: String.raw`add\s+(?:this|that|it)\s+to\s+(?:your\s+|my\s+|the\s+)?(?:wiki|knowledge(?:\s+base)?|memory|notes)`,
    intent: "remember",
    bare: true,
  },
  {
    pattern: String.raw`(?:save|store)\s+(?:this|that|it)(?:\s+(?:for later|for me))?|(?:write|jot|note)\s+(?:this|that|it)\s+down|keep\s+(?:this|that)\s+for later`,
    intent: "remember",
    bare: true,
  },
];

const tagPattern = /(^|[^\w#&/])#(canon|remember|save|household|family)\b/gi;
const withoutTags = (text: string) => text.replace(tagPattern, "$1");

/** Type from the words: standing rules are constraints, choices decisions, likes preferences; the rest facts. */
export function classifySave(statement: string): SaveType {
  const text = statement.toLowerCase();
  if (
    /^(?:to\s+)?(?:always|never|don't|do not|dont|only|avoid|stop|no more)\b/.test(text) ||
    /\b(?:must not|mustn't|must never|should never|shall not)\b/.test(text)
  )
    return "constraint";
  if (
    /\b(?:we|i)(?:\s+have|'ve)?\s+(?:decided|chose|chosen|agreed|settled on|picked|went with|are going with|will go with)\b/.test(
      text,
    ) ||
    /^(?:decision|decided)\b/.test(text)
  )
    return "decision";
  if (
    /\b(?:i|we)\s+(?:really\s+|much\s+|usually\s+|always\s+|do(?:n't| not)\s+)?(?:like|love|prefer|enjoy|hate|dislike|adore|can't stand|cannot stand)\b/.test(
      text,
    ) ||
    /\bmy\s+favou?rite\b/.test(text) ||
    /\bi(?:'d| would) rather\b/.test(text)
  )
    return "preference";
  return "fact";
}

/** Trim a statement to what is worth keeping: no wrapping quotes, tag questions, stray leading "that". */
export function cleanStatement(raw: string): string {
  let text = raw
    .replace(/\s+/g, " ")
    .replace(/\s+([.,;:!?])/g, "$1")
    .trim();
  text = text
    .replace(/^[:,–—-]\s*/, "")
    .replace(/^that\s+/i, "")
    .replace(/^to\s+(?=(?:always|never)\b)/i, "");
  text = text.replace(
    /[,;]?\s*(?:ok|okay|please|thanks|thank you|will you|would you|alright|right)\s*[?!.]*$/i,
    "",
  );
  text = text
    .trim()
    .replace(/^(["“«'])(.*)(["”»'])$/s, "$2")
    .trim();
  // One sentence's final stop is not part of what it says; several sentences keep theirs.
  if (!/[.!?]\s/.test(text)) text = text.replace(/(?<!\.)[.!]+$/, "");
  if (text.length > maxStatementChars) {
    const cut = text.slice(0, maxStatementChars - 1);
    const space = cut.lastIndexOf(" ");
    text = `${space > maxStatementChars / 2 ? cut.slice(0, space) : cut}…`;
  }
  return text.length > 0 ? text.charAt(0).toUpperCase() + text.slice(1) : text;
}

function meaningful(text: string): boolean {
  return (text.match(/[\p{L}\p{N}]/gu) ?? []).length >= 3;
}

/** The end of the sentence from `from` (a stop before a space, or a newline), or of the paragraph, or the text. */
function sentenceEnd(own: string, from: number, paragraph: boolean): number {
  const rest = own.slice(from);
  const match = paragraph ? /\n\s*\n/.exec(rest) : /[.!?](?=\s|$)|\n/.exec(rest);
  return match === null ? own.length : from + match.index + (paragraph ? 0 : 1);
}

/**
 * The explicit-save directive in a user message, if there is one. A phrase saves what follows it in its sentence
 * (its paragraph after a colon); one that names no content ("save this", "remember this!") saves the text before
 * it in the message, else the previous message (`refersBack`). Tags (#canon, #remember, #save) save the message
 * without them. A question ("remember that?") is not a directive unless it is a polite request ("can you …").
 */
export function detectExplicitSave(message: string): ExplicitSaveDirective | undefined {
  const text = message.replace(timestampPrefix, "");
  const own = ownWords(text);
  const tags = [...own.matchAll(tagPattern)].map((m) => (m[2] ?? "").toLowerCase());
  const saveTags = tags.filter((tag) => tag === "canon" || tag === "remember" || tag === "save");
  const taggedHousehold = tags.includes("household") || tags.includes("family");
  const finish = (
    statement: string,
    intent: SaveIntent,
    refersBack: boolean,
    household: boolean,
  ): ExplicitSaveDirective => {
    const cleaned = cleanStatement(
      withoutTags(statement).replace(
        new RegExp(String.raw`(?:^|[,\s]+)(?:${householdPhrase})(?=[\s,.:;!?]|$)`, "gi"),
        " ",
      ),
    );
    return {
      statement: refersBack ? "" : cleaned,
      intent,
      scope: household || taggedHousehold ? "household" : "user",
      type: classifySave(cleaned),
      refersBack,
    };
  };

  for (const verb of verbs) {
    const match = new RegExp(`${sentenceStart}(${lead}(${verb.pattern}))`, "i").exec(own);
    if (match === null) continue;
    const phrase = match[3] ?? "";
    const end = match.index + match[0].length;
    const start = end - (match[1]?.length ?? 0);
    const colon = /^\s*:/.test(own.slice(end));
    const sentenceStop = sentenceEnd(own, end, colon);
    const rest = own.slice(end, sentenceStop);
    const household = new RegExp(householdPhrase, "i").test(`${phrase} ${rest}`);
    const intent: SaveIntent = saveTags.includes("canon") ? "canon" : verb.intent;
    const question = /\?\s*$/.test(rest) && match[2] === undefined;
    if (verb.bare && !colon && !politeTail.test(withoutTags(rest))) continue;
    const after = verb.bare && !colon ? "" : text.slice(end, sentenceStop);
    if (meaningful(withoutTags(after))) {
      if (question) continue;
      // "Can you remember that I prefer tea?" asks for a save; the question mark is not part of it.
      return finish(match[2] === undefined ? after : after.replace(/\?\s*$/, ""), intent, false, household);
    }
    if (question) continue;
    // "The code is 4711. Save this." — what came before it in the same message.
    const before = text.slice(0, start).replace(/[\s,–—-]+$/, "");
    if (meaningful(withoutTags(before))) return finish(before, intent, false, household);
    if (verb.bare || /\b(?:this|that)$/i.test(phrase)) return finish("", intent, true, household);
  }
  if (saveTags.length > 0) {
    const intent: SaveIntent = saveTags.includes("canon") ? "canon" : "remember";
    const body = withoutTags(text);
    return meaningful(body) ? finish(body, intent, false, false) : finish("", intent, true, false);
  }
  return undefined;
}

/** The text of a transcript message (string content or text parts), or undefined for other shapes. */
function messageText(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.flatMap((part) =>
    typeof part === "object" && part !== null && (part as { type?: unknown }).type === "text"
      ? [String((part as { text?: unknown }).text ?? "")]
      : [],
  );
  return texts.length > 0 ? texts.join("\n") : undefined;
}

/**
 * What "save this" refers to: the person's own previous message in the transcript (never the assistant's, whose
 * text may be a model's invention and would be stored with the person's trust). The current message, when the
 * transcript already holds it, is skipped.
 */
export function previousUserText(
  messages: readonly unknown[],
  current: string | undefined,
): string | undefined {
  let skippedCurrent = current === undefined;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (typeof message !== "object" || message === null) continue;
    if ((message as { role?: unknown }).role !== "user") continue;
    const text = messageText(message)?.replace(timestampPrefix, "").trim();
    if (text === undefined || text === "") continue;
    if (!skippedCurrent && current !== undefined && text === current.replace(timestampPrefix, "").trim()) {
      skippedCurrent = true;
      continue;
    }
    const cleaned = cleanStatement(text);
    return meaningful(cleaned) ? cleaned : undefined;
  }
  return undefined;
}
