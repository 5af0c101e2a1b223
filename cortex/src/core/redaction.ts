/**
 * Raw-layer redaction (seed 001): live values are replaced with placeholders before anything is stored or
 * embedded. Rules run in order; earlier, more specific rules win over the generic key=value rule.
 * The rule set is documented in cortex/README.md ("Redaction"); change both together.
 */
export interface RedactionRule {
  readonly name: string;
  readonly pattern: RegExp;
  readonly replace: string | ((match: string, ...groups: string[]) => string);
}

const secretKeyNames =
  "password|passwd|passphrase|pwd|secret|client[_-]?secret|client[_-]?id|token|access[_-]?token|refresh[_-]?token|auth[_-]?token|bot[_-]?token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|credentials?";

export const redactionRules: readonly RedactionRule[] = [
  {
    name: "private-key-block",
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
    replace: "<PRIVATE_KEY>",
  },
  {
    name: "url-credentials",
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)[^\s:/@]+:[^\s/@]+@/gi,
    replace: (_match, scheme) => `${scheme}<USER>:<PASSWORD>@`,
  },
  {
    name: "jwt",
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
    replace: "<JWT>",
  },
  {
    name: "bearer-token",
    pattern: /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g,
    replace: (_match, kind) => `${kind} <TOKEN>`,
  },
  {
    name: "vendor-token",
    // GitHub, GitLab, Slack, OpenAI/Anthropic-style, Stripe, AWS access key ids, Google API keys, npm, Hugging Face.
    pattern:
      /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,})\b/g,
    replace: "<TOKEN>",
  },
  { name: "telegram-bot-token", pattern: /\b\d{8,10}:[A-Za-z0-9_-]{35}\b/g, replace: "<BOT_TOKEN>" },
  {
    name: "secret-assignment",
    // key=value, key: value, "key": "value" where the key names a secret; the key is kept, the value replaced.
    pattern: new RegExp(
      `(["']?\\b[A-Za-z0-9_.-]*(?:${secretKeyNames})["']?\\s*[:=]\\s*)(?:"[^"\\n]*"|'[^'\\n]*'|[^\\s,;}\\]]+)`,
      "gi",
    ),
    replace: (_match, prefix) => `${prefix}<REDACTED>`,
  },
  { name: "cert-cn", pattern: /\bCN\s*=\s*[^,/\n]+/g, replace: "CN=<CLIENT_CERT_CN>" },
  {
    name: "ipv4",
    // Not inside a longer dotted number or right after a word character, so v1.2.3.4 and 1.2.3.4.5 are kept;
    // a bare four-part version such as "2.19.5.0" (or pkg@2.19.5.0) is indistinguishable and is redacted.
    pattern:
      /(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\w|\.\d)(?::\d{1,5})?/g,
    replace: "<SERVER_IP>",
  },
  {
    name: "ipv6",
    pattern:
      /(?<![\w:])(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}(?![\w:])|(?<![\w:])(?:[0-9a-f]{1,4}:){1,6}:(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,5})?(?![\w:])/gi,
    replace: "<SERVER_IP>",
  },
];

/**
 * A Remram bundle that came back inside a captured turn or tool output must not be stored again: recalled
 * context re-extracted as new memory is a feedback loop peers suffer from (memory-anchors.md, complaint 1).
 */
const injectedBundle = /<<<REMRAM MEMORY[\s\S]*?(?:<<<END REMRAM MEMORY>>>|$)/g;

export interface RedactionResult {
  text: string;
  /** How many values each rule replaced (rules with no match are absent). */
  counts: Record<string, number>;
  total: number;
}

/** Redact live values and strip re-injected memory bundles. Pure and idempotent. */
export function redact(text: string, rules: readonly RedactionRule[] = redactionRules): RedactionResult {
  const counts: Record<string, number> = {};
  let total = 0;
  let current = text.replace(injectedBundle, () => {
    counts["injected-bundle"] = (counts["injected-bundle"] ?? 0) + 1;
    total += 1;
    return "";
  });
  for (const rule of rules) {
    current = current.replace(rule.pattern, (...args: unknown[]) => {
      const match = args[0] as string;
      const groups = args.slice(1).filter((value): value is string => typeof value === "string");
      const replacement = typeof rule.replace === "string" ? rule.replace : rule.replace(match, ...groups);
      if (replacement === match) return match;
      counts[rule.name] = (counts[rule.name] ?? 0) + 1;
      total += 1;
      return replacement;
    });
  }
  return { text: current, counts, total };
}
