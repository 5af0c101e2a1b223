/**
 * Contact details (e-mail addresses, phone numbers). Unlike credentials a person may ask to remember them, so they
 * are kept, but only as private knowledge of their owner: a `user`-scope item that contains one is raised to at
 * least `private` and marked `contact`, which keeps it out of runs routed to a cloud model (policy.ts). Household
 * and shared items have no consent mechanism for another person's details, so there they are replaced.
 */
import type { PrivacyLevel, Scope } from "@remram/contract";
import type { RedactionRule } from "./secret-rules.js";

/** The sensitivity markers a stored item can carry (the `sensitivity` keyword field). */
export const sensitivityMarkers = ["contact"] as const;
export type SensitivityMarker = (typeof sensitivityMarkers)[number];

/** How redaction treats contact details: replaced with placeholders, or kept and counted. */
export type ContactHandling = "replace" | "keep";

/** Kept in a user's own items; replaced wherever someone other than the owner could read them. */
export function contactHandlingFor(scope: Scope): ContactHandling {
  return scope === "user" ? "keep" : "replace";
}

/** Plausible phone numbers have 7–15 digits (E.164's maximum) and no doubled separators (parentheses aside). */
function phoneShaped(candidate: string, minDigits: number): boolean {
  const digits = candidate.replace(/\D/g, "").length;
  return digits >= minDigits && digits <= 15 && !/[ ./-]{2}/.test(candidate.replace(/[()]/g, ""));
}

export const contactRules: readonly RedactionRule[] = [
  {
    name: "email",
    // Not the user part of an scp-style git remote (git@github.com:org/repo).
    pattern:
      /(?<![\w.%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-]|\.[A-Za-z0-9]|:[\w/~])/g,
    replace: "<EMAIL>",
  },
  {
    name: "phone",
    // International (+49 170 1234567, +1 (555) 123-4567), North American ((555) 123-4567, 555-123-4567) and
    // national numbers with a trunk 0 (0170 1234567, 030 1234 5678). Dates, versions, ISBNs and prices do not fit.
    pattern:
      /(?<![\w+.,/-])(?:\+\d[\d .()/-]{6,20}\d|(?:\(\d{3}\)\s?|\d{3}[.-])\d{3}[.-]\d{4}|0\d{2,4}[ /-]\d{3,4}(?:[ -]?\d{2,5})?)(?![\w/]|[.,-]\d)/g,
    replace: (match) => (phoneShaped(match, match.startsWith("+") ? 8 : 9) ? "<PHONE>" : match),
  },
  {
    name: "phone",
    // A number introduced as one: "phone: 5551234", "call me at 555 1234", "Tel. 12345678".
    pattern:
      /((?<![\w-])(?:phone|tel|telephone|mobile|cell|fax|whatsapp|signal|handy|telefon|call me (?:at|on)|text me (?:at|on))(?:\s{0,4}(?:no\.?|number|nr\.?|#))?\s{0,4}[:.]?\s{0,4})(\+?\d[\d .()/-]{5,18}\d)(?![\w/])/gi,
    replace: (match, lead, number) => (phoneShaped(number ?? "", 7) ? `${lead}<PHONE>` : match),
  },
];

const order: readonly PrivacyLevel[] = ["public", "household", "private", "secret"];

/** The privacy level of a user item holding contact details: at least `private`. */
export function privacyWithContacts(level: PrivacyLevel): PrivacyLevel {
  return order.indexOf(level) < order.indexOf("private") ? "private" : level;
}

/** Whether any of the texts holds a contact detail (stored items are marked by this). */
export function containsContact(...texts: readonly (string | undefined)[]): boolean {
  return texts.some(
    (text) =>
      text !== undefined &&
      contactRules.some((rule) => {
        rule.pattern.lastIndex = 0;
        for (const match of text.matchAll(rule.pattern)) {
          const replaced =
            typeof rule.replace === "string" ? rule.replace : rule.replace(match[0], ...match.slice(1));
          if (replaced !== match[0]) return true;
        }
        return false;
      }),
  );
}

/** The sensitivity markers of an item with these texts. */
export function sensitivityOf(...texts: readonly (string | undefined)[]): SensitivityMarker[] {
  return containsContact(...texts) ? ["contact"] : [];
}
