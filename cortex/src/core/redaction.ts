/**
 * Raw-layer redaction (seed 001): live values are replaced with placeholders before anything is stored or
 * embedded, on every write path (ingest, reflect, archive, dream's proposals and promotion). Rules run in order;
 * earlier, more specific rules win over the generic key=value rule. Credentials and card numbers always go;
 * contact details go unless the caller keeps them for their owner (contacts.ts).
 * The rule set is documented in cortex/README.md ("Redaction"); change both together.
 */
import { createHash } from "node:crypto";
import { bundleClose, bundleOpen } from "@remram/contract";
import { type ContactHandling, contactRules } from "./contacts.js";
import { type RedactionRule, secretRules } from "./secret-rules.js";

export type { ContactHandling } from "./contacts.js";
export type { RedactionRule } from "./secret-rules.js";

/** Credentials, keys, cookies, session ids, webhook URLs, card numbers and server addresses. */
export const redactionRules: readonly RedactionRule[] = secretRules;

/**
 * A Remram bundle that came back inside a captured turn or tool output must not be stored again: recalled
 * context re-extracted as new memory is a feedback loop peers suffer from (memory-anchors.md, complaint 1).
 */
const injectedBundle = /<<<REMRAM MEMORY[\s\S]*?(?:<<<END REMRAM MEMORY>>>|$)/g;
/** The block as Cortex renders it now (the contract's bundleOpen … bundleClose); the line above is its old spelling. */
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const injectedKnowledgeBlock = new RegExp(
  `${escaped(bundleOpen)}[\\s\\S]*?(?:${escaped(bundleClose)}|$)`,
  "g",
);

export interface RedactOptions {
  /** Contact details are replaced unless the caller keeps them (a user's own item). Default: replace. */
  contacts?: ContactHandling;
}

export interface RedactionResult {
  text: string;
  /** How many values each rule replaced (rules with no match are absent). */
  counts: Record<string, number>;
  total: number;
  /** Contact details kept in the text (only with `contacts: "keep"`); the item holding them is private. */
  contactsKept: number;
}

/** The capture groups of a String.replace callback: everything between the match and the numeric offset. */
function groupsOf(args: readonly unknown[]): (string | undefined)[] {
  const end = args.findIndex((value, index) => index > 0 && typeof value === "number");
  return args.slice(1, end) as (string | undefined)[];
}

function applyRule(
  text: string,
  rule: RedactionRule,
  onReplaced: (rule: string) => void,
  keep = false,
): string {
  return text.replace(rule.pattern, (...args: unknown[]) => {
    const match = args[0] as string;
    const replacement =
      typeof rule.replace === "string" ? rule.replace : rule.replace(match, ...groupsOf(args));
    if (replacement === match) return match;
    onReplaced(rule.name);
    return keep ? match : replacement;
  });
}

/** Redact live values and strip re-injected memory bundles. Pure and idempotent. */
export function redact(text: string, options: RedactOptions = {}): RedactionResult {
  const counts: Record<string, number> = {};
  let total = 0;
  let contactsKept = 0;
  const replaced = (name: string) => {
    counts[name] = (counts[name] ?? 0) + 1;
    total += 1;
  };
  let current = text.replace(injectedBundle, () => {
    replaced("injected-bundle");
    return "";
  });
  current = current.replace(injectedKnowledgeBlock, () => {
    replaced("injected-bundle");
    return "";
  });
  for (const rule of redactionRules) current = applyRule(current, rule, replaced);
  const keep = options.contacts === "keep";
  for (const rule of contactRules) {
    current = applyRule(current, rule, keep ? () => (contactsKept += 1) : replaced, keep);
  }
  return { text: current, counts, total, contactsKept };
}

/** Redacted text only, for callers that need no counts. */
export function redactText(text: string, options: RedactOptions = {}): string {
  return redact(text, options).text;
}

/** At most `max` characters: a placeholder may be longer than the value it replaced, the contract's bound holds. */
export function withinBound(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max);
}

const dimensionValueChars = 128;

/**
 * Dimension values: credentials and card numbers, and contact details too whatever the item's scope. Values are
 * aggregated across owners (the candidate-dimension samples, facets), and unlike an item's text they are not
 * marked `contact`, so no owner's consent can cover them. Redacted values still fit the contract's 128 characters;
 * values that become equal are one. `onRedacted` hears each value's result (the caller's counts).
 */
export function redactDimensions(
  dimensions: Readonly<Record<string, readonly string[]>>,
  onRedacted: (result: RedactionResult) => void = () => {},
): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(dimensions).map(([name, values]) => [
      name,
      [
        ...new Set(
          values.map((value) => {
            const result = redact(value, { contacts: "replace" });
            onRedacted(result);
            return withinBound(result.text, dimensionValueChars);
          }),
        ),
      ],
    ]),
  );
}
/**
 * An id that only refers (a session, agent, tool, turn or tool call): kept as it is, unless it holds anything
 * redaction removes from text (a credential, a card number, a contact detail such as the phone number in a
 * WhatsApp session key), then replaced by a stable hash of it. Such ids have a strict character set and are
 * compared, not read, so a placeholder would not fit and a hash still matches every other copy of the same id.
 */
export function opaqueIdentifier(text: string): string {
  if (redact(text).total === 0) return text;
  return `h:${createHash("sha256").update(text).digest("hex").slice(0, 40)}`;
}

/**
 * Identifiers (a caller's provenance key, a document's source id or path): credentials, card numbers and server
 * addresses only. They name a source, so contact details in them stay (an address may be what names a mailbox);
 * a credential never names anything (`https://user:token@host/doc` in a path). `max` is the field's bound.
 */
export function redactIdentifier(text: string, max: number): RedactionResult {
  const counts: Record<string, number> = {};
  let total = 0;
  let current = text;
  for (const rule of redactionRules) {
    current = applyRule(current, rule, (name) => {
      counts[name] = (counts[name] ?? 0) + 1;
      total += 1;
    });
  }
  return { text: withinBound(current, max), counts, total, contactsKept: 0 };
}
