/**
 * The credential and payment-card rules of redaction (redaction.ts runs them). Every pattern is bounded: no
 * unbounded run that can be retried from many start positions (a lookbehind pins where a run may start, and
 * repeats have upper bounds), so a 64 KB request of any shape costs linear time. README "Redaction" lists them.
 */

export interface RedactionRule {
  readonly name: string;
  readonly pattern: RegExp;
  readonly replace: string | ((match: string, ...groups: (string | undefined)[]) => string);
}

const secretKeyNames =
  "password|passwd|passphrase|pwd|secret|client[_-]?secret|client[_-]?id|token|access[_-]?token|refresh[_-]?token|auth[_-]?token|bot[_-]?token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|account[_-]?key|signing[_-]?key|encryption[_-]?key|master[_-]?key|credentials?";

const sessionKeyNames =
  "session[_-]?(?:id|key|token|secret)|sessid|sid|phpsessid|jsessionid|aspsessionid|csrf[_-]?token|xsrf[_-]?token";

/**
 * A quoted value, or one running to the next space or , ; } ] (an & goes with it: a query string's later
 * parameters are lost rather than a password's tail kept); bounded so a missing quote costs little.
 */
const assignedValue = `(?:"[^"\\n]{0,512}"|'[^'\\n]{0,512}'|[^\\s,;}\\]]{1,512})`;

/** A value an earlier rule already replaced (quoted or not): replacing it again would make redaction churn. */
const placeholder = /^["'`]?<[A-Z_]+>["'`]?$/;

/** The replacement of an assignment's value, unless an earlier rule already put a placeholder there. */
const assignment =
  (value: string) =>
  (match: string, prefix?: string): string =>
    placeholder.test(match.slice((prefix ?? "").length)) ? match : `${prefix ?? ""}${value}`;

/** Luhn checksum over the digits of a candidate card number. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** Hosts whose webhook URLs are secrets by themselves (the path is the credential). */
const webhookHosts =
  /^(?:hooks\.slack\.com|(?:[\w-]+\.)?discord(?:app)?\.com|[\w-]+\.webhook\.office\.com|hooks\.zapier\.com|maker\.ifttt\.com|chat\.googleapis\.com)$/i;

/** A path part or query value long and random enough to be a secret: 16+ characters mixing letters and digits. */
function secretPart(part: string): boolean {
  if (part.length < 16) return false;
  if (part.length >= 32 && /^[A-Za-z0-9_-]+$/.test(part)) return true;
  return /^[A-Za-z0-9_-]+$/.test(part) && /\d/.test(part) && /[A-Za-z]/.test(part);
}

/** Whether a URL is a webhook with a secret in it: a known webhook host, or a hook path with a secret part. */
export function isSecretWebhook(url: string): boolean {
  const match = /^https?:\/\/([^/?#\s]+)([^?#\s]*)(?:\?([^#\s]*))?/i.exec(url);
  if (match === null) return false;
  const host = (match[1] ?? "").replace(/^[^@]*@/, "").replace(/:\d+$/, "");
  const path = match[2] ?? "";
  const parts = [
    ...path.split("/"),
    ...(match[3] ?? "").split("&").map((pair) => pair.slice(pair.indexOf("=") + 1)),
  ];
  if (webhookHosts.test(host)) {
    return (
      /\/(?:services|api\/webhooks|webhookb2|hooks|trigger|v1\/spaces)\//i.test(path) ||
      parts.some(secretPart)
    );
  }
  return /hook/i.test(host + path) && parts.some(secretPart);
}

/**
 * A value said to be a password in prose is redacted when quoted, or when it looks made up rather than a word:
 * a digit, a symbol or a capital inside it. "the password is required" keeps its word.
 */
export function looksLikeSecret(value: string): boolean {
  if (value.length < 4 || placeholder.test(value)) return false;
  // Brackets and backticks open prose or markup ("(mounted", "`name`"), not a password.
  if (/[()[\]{}<>`]/.test(value)) return false;
  return /[\d\W_]/.test(value) || /.[A-Z]/.test(value);
}

const passwordKeys = "pass(?:word|wd|phrase|code)|passwort|kennwort|pin(?: code)?";
const proseKeys = `${passwordKeys}|api[ _-]?key|access[ _-]?key|secret[ _-]?key|(?:auth|access|bearer|bot)[ _-]?token|token|secret`;
/** "for the router", "to the NAS": what the secret is for, between the key and the value. */
const proseFor =
  "(?:\\s{1,4}(?:for|to|of|on|at|f[üu]r)\\s{1,4}(?:the\\s|my\\s|our\\s|your\\s|die\\s|den\\s|das\\s)?[\\w.@-]{1,40})?";
const proseLinks = "is|was|is now|remains|will be|became|changed to|set to|reset to|ist|lautet|war|=|:|->";

function redactProseSecret(
  match: string,
  lead: string,
  key: string,
  doubled: string | undefined,
  single: string | undefined,
  ticked: string | undefined,
  bare: string | undefined,
): string {
  const placeholder = /^pass|^passw|^kennw|^pin/i.test(key) ? "<PASSWORD>" : "<REDACTED>";
  if (doubled !== undefined) return `${lead}"${placeholder}"`;
  if (single !== undefined) return `${lead}'${placeholder}'`;
  if (ticked !== undefined) return `${lead}\`${placeholder}\``;
  const value = bare ?? "";
  // A full stop, comma or bracket after the value ends the sentence; "!" and "?" may be the password's own.
  const trimmed = value.replace(/[.,;:)]+$/, "");
  if (!looksLikeSecret(trimmed)) return match;
  return `${lead}${placeholder}${value.slice(trimmed.length)}`;
}

export const secretRules: readonly RedactionRule[] = [
  {
    name: "private-key-block",
    pattern:
      /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replace: "<PRIVATE_KEY>",
  },
  {
    name: "webhook-url",
    pattern: /(?<![\w.+-])https?:\/\/[^\s<>"'`)\]}]{1,2048}/gi,
    replace: (match) => (isSecretWebhook(match) ? "<WEBHOOK_URL>" : match),
  },
  {
    name: "url-credentials",
    pattern: /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s:/@]{1,256}:[^\s/@]{1,256}@/gi,
    replace: (_match, scheme) => `${scheme}<USER>:<PASSWORD>@`,
  },
  {
    name: "jwt",
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
    replace: "<JWT>",
  },
  {
    name: "bearer-token",
    pattern: /\b(Bearer|Basic)\s{1,16}[A-Za-z0-9._~+/=-]{8,}/g,
    replace: (_match, kind) => `${kind} <TOKEN>`,
  },
  {
    name: "vendor-token",
    // GitHub, GitLab, Slack, OpenAI/Anthropic-style, Stripe (keys, webhook secrets), AWS access key ids, Google
    // API keys, npm, Hugging Face, SendGrid, Shopify, DigitalOcean, PyPI.
    pattern:
      /(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|dop_v1_[a-f0-9]{64}|pypi-[A-Za-z0-9_-]{50,})(?![\w-])/g,
    replace: "<TOKEN>",
  },
  { name: "telegram-bot-token", pattern: /\b\d{8,10}:[A-Za-z0-9_-]{35}\b/g, replace: "<BOT_TOKEN>" },
  {
    name: "cookie",
    // A Cookie or Set-Cookie header (or JSON member) whose value is name=value pairs: the whole value goes.
    pattern:
      /(?<![\w-])((?:set-)?cookie["']?\s{0,16}[:=]\s{0,16}["']?)(?=[^\s=;"']{1,128}=)[^\r\n"']{1,8192}/gi,
    replace: (_match, prefix) => `${prefix}<COOKIE>`,
  },
  {
    name: "session-id",
    pattern: new RegExp(
      `(["']?(?<![A-Za-z0-9_.-])(?:[A-Za-z0-9_.-]{0,64}[_.-])?(?:${sessionKeyNames})["']?\\s{0,16}[:=]\\s{0,16})${assignedValue}`,
      "gi",
    ),
    replace: assignment("<SESSION_ID>"),
  },
  {
    name: "secret-assignment",
    // key=value, key: value, "key": "value" where the key names a secret; the key is kept, the value replaced.
    pattern: new RegExp(
      `(["']?(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]{0,64}(?:${secretKeyNames})["']?\\s{0,16}[:=]\\s{0,16})${assignedValue}`,
      "gi",
    ),
    replace: assignment("<REDACTED>"),
  },
  {
    name: "prose-secret",
    // "my wifi password is hunter2!", "the API key for staging was 'abc…'": the value after the key and a verb.
    pattern: new RegExp(
      `((?<![\\w-])(${proseKeys})${proseFor}\\s{0,4}(?:${proseLinks})\\s{1,4})(?:"([^"\\n]{1,128})"|'([^'\\n]{1,128})'|\`([^\`\\n]{1,128})\`|([^\\s"'\`]{1,128}))`,
      "gi",
    ),
    replace: (match, lead, key, doubled, single, ticked, bare) =>
      redactProseSecret(match, lead ?? "", key ?? "", doubled, single, ticked, bare),
  },
  {
    name: "prose-secret",
    // "wifi password Sommer2024": a password word right before a value that looks made up (never a quoted one:
    // "the Secret `name`" in docs names a Kubernetes object, not its content).
    pattern: new RegExp(`((?<![\\w-])(${passwordKeys})${proseFor}\\s{1,4})([^\\s"'\`]{1,128})`, "gi"),
    replace: (match, lead, key, bare) =>
      redactProseSecret(match, lead ?? "", key ?? "", undefined, undefined, undefined, bare),
  },
  { name: "cert-cn", pattern: /\bCN\s{0,16}=\s{0,16}[^,/\n]{1,256}/g, replace: "CN=<CLIENT_CERT_CN>" },
  {
    name: "card-number",
    // 13–19 digits, contiguous or in the printed groups (4-4-4-4[-3], Amex 4-6-5, Diners 4-6-4), with a major
    // industry digit of 2–6 and a valid Luhn checksum; ISBNs, timestamps and order numbers do not fit.
    pattern:
      /(?<![\w+.,/-])(?:[2-6]\d{12,18}|[2-6]\d{3}([ -])\d{4}\1\d{4}\1\d{1,4}(?:\1\d{1,3})?|3\d{3}([ -])\d{6}\2\d{4,5})(?![\w/:]|[.,-]\d)/g,
    replace: (match) => {
      const digits = match.replace(/[ -]/g, "");
      return digits.length >= 13 && digits.length <= 19 && luhnValid(digits) ? "<CARD_NUMBER>" : match;
    },
  },
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
