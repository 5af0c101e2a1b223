import { bundleFixedSentences } from "@remram/contract";
import { blockBegin, blockEnd, type InjectedBlock } from "./injection.js";
import type { Principal } from "./principal.js";

/**
 * What the plugin injected must never reach Cortex again as new knowledge, or memory feeds on itself (security
 * issue 15, finding 6). Delimiters cannot promise that: a model echoing the block may alter or drop them. So the
 * plugin remembers the content it injected, per principal and bounded, and removes that content from everything
 * it captures (tool results, reflection input, reflection output) whatever surrounds it; the contract's delimiter
 * (the one Cortex renders), Cortex's earlier spelling and loose variants are stripped besides.
 */

/** What one principal was recently shown, oldest first: whole blocks and the item texts they held. */
export interface InjectedContent {
  blocks: string[];
  texts: string[];
}

/** Per principal (agent and user: a user's sessions on every channel share it), least recently injected first. */
export type InjectionLedger = Map<string, InjectedContent>;

const maxBlocksPerPrincipal = 4;
const maxTextsPerPrincipal = 256;
const maxPrincipals = 256;
/** Shorter item texts are not stripped: they would cut ordinary words out of unrelated output. */
const minTextChars = 12;

function ledgerKey(principal: Pick<Principal, "agentId" | "userId">): string {
  return `${principal.agentId}\u0000${principal.userId}`;
}

function pushBounded(list: string[], value: string, max: number): void {
  const index = list.indexOf(value);
  if (index >= 0) list.splice(index, 1);
  list.push(value);
  if (list.length > max) list.splice(0, list.length - max);
}

/** Record a block as injected for the principal (called where it is handed to the gateway). */
export function rememberInjection(
  ledger: InjectionLedger,
  principal: Pick<Principal, "agentId" | "userId">,
  block: Pick<InjectedBlock, "text" | "itemTexts">,
): void {
  const key = ledgerKey(principal);
  const entry = ledger.get(key) ?? { blocks: [], texts: [] };
  ledger.delete(key);
  ledger.set(key, entry);
  pushBounded(entry.blocks, block.text, maxBlocksPerPrincipal);
  for (const text of block.itemTexts) {
    if (text.trim().length >= minTextChars) pushBounded(entry.texts, text.trim(), maxTextsPerPrincipal);
  }
  while (ledger.size > maxPrincipals) {
    const oldest = ledger.keys().next().value;
    if (oldest === undefined) break;
    ledger.delete(oldest);
  }
}

export function injectedFor(
  ledger: InjectionLedger,
  principal: Pick<Principal, "agentId" | "userId">,
): InjectedContent | undefined {
  return ledger.get(ledgerKey(principal));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** One word of an item, matched with either kind of quote a model may turn it into. */
function wordPattern(word: string): string {
  return escapeRegExp(word).replace(/['‘’]/g, "['‘’]").replace(/["“”]/g, '["“”]');
}

const compiled = new Map<string, { pattern: RegExp; needle: string }>();
const maxCompiled = 2_048;

/**
 * The note the block puts after an item (renderBundleItem: "(confidence 0.80; learned 2026-05-03)", "(from read
 * output; archive <hash>)"), in either of the shapes a model may give it back.
 */
const itemNote = "(?:\\s*\\((?:confidence|from|archive|learned)\\b[^()\\n]{0,300}\\))?";

/**
 * An item text as it may come back: any whitespace between its words, any case, either quotes, its final
 * punctuation and the block's note optional, and never inside a longer word.
 */
function itemMatcher(text: string): { pattern: RegExp; needle: string } {
  const cached = compiled.get(text);
  if (cached !== undefined) return cached;
  const core = text.replace(/[.!?;:,…]+$/u, "");
  const words = core.split(/\s+/).filter(Boolean);
  const body = words.map(wordPattern).join("\\s+");
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${body}[.!?;:,…]*${itemNote}(?![\\p{L}\\p{N}])`, "giu");
  // The longest word, lowercased: a cheap test that skips the regex for output that cannot hold the item.
  const needle = (core.match(/[\p{L}\p{N}]+/gu) ?? [""])
    .reduce((longest, word) => (word.length > longest.length ? word : longest), "")
    .toLowerCase();
  const matcher = { pattern, needle };
  if (compiled.size >= maxCompiled) compiled.clear();
  compiled.set(text, matcher);
  return matcher;
}

/** The fixed sentences of the block: never knowledge, whoever wrote them back. */
const fixedLines = bundleFixedSentences;

const blockSpans: readonly RegExp[] = [
  // The contract's delimiter (what Cortex renders) and Cortex's earlier spelling; unclosed runs to the end.
  new RegExp(`${escapeRegExp(blockBegin)}[\\s\\S]*?(?:${escapeRegExp(blockEnd)}|$)`, "g"),
  /<<<REMRAM MEMORY[\s\S]*?(?:<<<END REMRAM MEMORY>>>|$)/g,
  // Spellings a model echoing the block may write (<<< Remram Knowledge >>> … <<</remram knowledge>>>): only
  // a closed span, since a loose opening alone may be prose about the block.
  /<{2,}\s*remram[\s_-]*(?:knowledge|memory)\b[^\n>]*>*[\s\S]*?(?:<{2,}\s*(?:\/|end\b)[\s_-]*remram[\s_-]*(?:knowledge|memory)\b[^\n>]*>*|\bremram[\s_-]*(?:knowledge|memory)\s*>{2,})/giu,
];
/** A marker left alone (a cut-off block, a loose opening): the marker goes, the text around it stays. */
const loneMarkers =
  /<{2,}\s*(?:\/|end\b)?[\s_-]*remram[\s_-]*(?:knowledge|memory)\b[^\n>]*>*|\bremram[\s_-]*(?:knowledge|memory)\s*>{2,}/giu;

export interface Stripped {
  text: string;
  /** Pieces removed: blocks, markers, item texts, fixed sentences. */
  stripped: number;
}

/**
 * `text` without what was injected: remembered blocks verbatim, any delimited block, every remembered item
 * text and the block's fixed sentences wherever they appear, and stray markers. Pure; idempotent.
 */
export function stripInjected(text: string, injected: InjectedContent | undefined): Stripped {
  let current = text;
  let stripped = 0;
  const remove = (pattern: RegExp) => {
    current = current.replace(pattern, () => {
      stripped += 1;
      return "";
    });
  };
  for (const block of injected?.blocks ?? []) {
    const parts = current.split(block);
    stripped += parts.length - 1;
    current = parts.join("");
  }
  for (const span of blockSpans) remove(span);
  const lower = current.toLowerCase();
  for (const item of [...(injected?.texts ?? []), ...fixedLines]) {
    const matcher = itemMatcher(item);
    if (matcher.needle !== "" && lower.includes(matcher.needle)) remove(matcher.pattern);
  }
  remove(loneMarkers);
  if (stripped > 0) current = current.replace(/\n{3,}/g, "\n\n");
  return { text: current, stripped };
}

/** List markers left around a restated item ("[::6]", "2.", "(3)"), wherever they stand. */
const strayMarkers = /\[[:\s]*\d{0,2}[:\s]*\]|\(\d{1,2}\)|(?<![\p{L}\p{N}])\d{1,2}[.)](?=\s|$)/gu;

/**
 * Whether a statement is nothing but injected content (a reflection restating what it was shown). What is left,
 * without list markers, must hold a letter or a digit to count as new: "[::6]" around a restated item is furniture,
 * "+47 555 1234" after it is a new number.
 */
export function isInjectedStatement(statement: string, injected: InjectedContent | undefined): boolean {
  const { text, stripped } = stripInjected(statement, injected);
  return stripped > 0 && !/[\p{L}\p{N}]/u.test(text.replace(strayMarkers, ""));
}
