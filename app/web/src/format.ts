/** How the pages write times, numbers and counts: pure, locale-aware, and tolerant of missing or odd values. */

export interface FormatOptions {
  /** BCP 47 locale; the browser's when absent. */
  locale?: string;
  /** IANA time zone; the browser's when absent. */
  timeZone?: string;
}

function parsed(iso: string | null | undefined): Date | undefined {
  if (iso === undefined || iso === null || iso === "") return undefined;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** "3 May 2025, 14:05" in the reader's locale; "unknown" for a missing or unreadable time. */
export function formatDate(iso: string | null | undefined, options: FormatOptions = {}): string {
  const date = parsed(iso);
  if (date === undefined) return "unknown";
  return new Intl.DateTimeFormat(options.locale, {
    dateStyle: "medium",
    timeStyle: "short",
    ...(options.timeZone === undefined ? {} : { timeZone: options.timeZone }),
  }).format(date);
}

const units: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["week", 7 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];

/** "5 minutes ago", "in 3 hours", "yesterday": the largest whole unit; "unknown" for a missing time. */
export function relativeTime(
  iso: string | null | undefined,
  now: Date = new Date(),
  locale?: string,
): string {
  const date = parsed(iso);
  if (date === undefined) return "unknown";
  const seconds = Math.round((date.getTime() - now.getTime()) / 1000);
  const format = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size || unit === "second")
      return format.format(Math.trunc(seconds / size), unit);
  }
  return format.format(0, "second");
}

/** A confidence in [0, 1] as a whole percentage ("80%"); "unknown" when absent or not a number. */
export function percent(value: number | undefined, locale?: string): string {
  if (value === undefined || !Number.isFinite(value)) return "unknown";
  return new Intl.NumberFormat(locale, { style: "percent", maximumFractionDigits: 0 }).format(
    Math.min(1, Math.max(0, value)),
  );
}

/** "1.2 s", "3 min 5 s", "250 ms". */
export function duration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return "unknown";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}

/** The time between two timestamps, or undefined when either is missing. */
export function between(from: string | undefined, to: string | undefined): number | undefined {
  const start = parsed(from);
  const end = parsed(to);
  return start === undefined || end === undefined ? undefined : end.getTime() - start.getTime();
}

/** "1.5 GiB": binary units, one decimal above KiB. */
export function bytes(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value) || value < 0) return "unknown";
  const steps = ["B", "KiB", "MiB", "GiB", "TiB"];
  let amount = value;
  let step = 0;
  while (amount >= 1024 && step < steps.length - 1) {
    amount /= 1024;
    step += 1;
  }
  return step === 0 ? `${amount} B` : `${amount.toFixed(1)} ${steps[step]}`;
}

/** A camelCase or snake_case key as words: "knowledgeDeleted" → "Knowledge deleted", "GPUAvailable" → "GPU available". */
export function humanize(key: string): string {
  const words = key
    .replace(/[_-]+/g, " ")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .trim()
    .split(/\s+/)
    .filter((word) => word !== "")
    .map((word) => (/^[A-Z0-9]+$/.test(word) && word.length > 1 ? word : word.toLowerCase()));
  const sentence = words.join(" ");
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/**
 * The numeric fields of an answer made of counts, nested objects flattened ({counts: {a: 1}} → a), a key met twice
 * kept once (erasureResponse repeats three counts at its top level). Non-numbers are left out.
 */
export function countEntries(value: unknown): [string, number][] {
  const seen = new Map<string, number>();
  const walk = (node: unknown) => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return;
    for (const [key, item] of Object.entries(node)) {
      if (typeof item === "number" && Number.isFinite(item)) {
        if (!seen.has(key)) seen.set(key, item);
      } else walk(item);
    }
  };
  walk(value);
  return [...seen.entries()];
}

/** One line that says what a forget did, zeros and timings left out: "Forgotten: 1, vectors deleted: 1". */
export function countsSentence(value: unknown): string {
  const entries = countEntries(value).filter(([key, count]) => count !== 0 && !/ms$/i.test(key));
  if (entries.length === 0) return "";
  return entries
    .map(([key, count], index) => {
      const words = humanize(key);
      const keepCase = index === 0 || /^[A-Z0-9]{2}/.test(words);
      return `${keepCase ? words : words.charAt(0).toLowerCase() + words.slice(1)}: ${count}`;
    })
    .join(", ");
}

/** A long identifier shortened for reading ("sha256…"), the whole of it kept for a title attribute. */
export function shortId(id: string, keep = 12): string {
  return id.length <= keep + 1 ? id : `${id.slice(0, keep)}…`;
}
