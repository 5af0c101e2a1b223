/**
 * Generated secrets inside ordinary prose, and ordinary prose that must survive redaction untouched: the shared
 * inputs of the redaction property tests (core/redaction.property.test.ts) and the recall / false-positive bench
 * (bench/redaction.bench.ts). Seeded, so a failing case is reproduced from its seed alone.
 */

export type Rng = () => number;

/** mulberry32: small, fast and good enough to spread test inputs. */
export function seededRng(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
const int = (rng: Rng, min: number, max: number) => min + Math.floor(rng() * (max - min + 1));

const lower = "abcdefghijklmnopqrstuvwxyz";
const upper = lower.toUpperCase();
const digits = "0123456789";
const alnum = lower + upper + digits;
const base64 = `${alnum}+/`;
const urlSafe = `${alnum}_-`;

function chars(rng: Rng, alphabet: string, length: number): string {
  let out = "";
  for (let i = 0; i < length; i += 1) out += alphabet[Math.floor(rng() * alphabet.length)];
  return out;
}

/** Mixed letters and digits, with at least one of each (a made-up value, not a word). */
function randomToken(rng: Rng, alphabet: string, length: number): string {
  return `${chars(rng, lower, 1)}${chars(rng, alphabet, length - 2)}${chars(rng, digits, 1)}`;
}

/** A password as people pick them: letters with digits or symbols somewhere (never , ; } ] & or quotes). */
function password(rng: Rng): string {
  const symbols = "!#$%*+-=?@^_~";
  const word = pick(rng, ["hunter", "Sommer", "dragon", "Tr0ub4dor", "monkey", "Passw", "letmein", "Kaffee"]);
  return `${word}${chars(rng, digits, int(rng, 1, 4))}${chars(rng, symbols, int(rng, 0, 2))}${chars(rng, alnum, int(rng, 0, 6))}`;
}

function luhnCheckDigit(partial: string): string {
  let sum = 0;
  for (let i = 0; i < partial.length; i += 1) {
    let digit = Number(partial[partial.length - 1 - i]);
    if (i % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return String((10 - (sum % 10)) % 10);
}

function cardNumber(rng: Rng): string {
  const [prefix, length] = pick(rng, [
    ["4", 16],
    ["4", 13],
    ["51", 16],
    ["55", 16],
    ["2221", 16],
    ["34", 15],
    ["37", 15],
    ["6011", 16],
    ["65", 19],
    ["3530", 16],
  ] as const);
  const body = `${prefix}${chars(rng, digits, length - prefix.length - 1)}`;
  const number = `${body}${luhnCheckDigit(body)}`;
  const separator = pick(rng, ["", " ", "-"]);
  if (separator === "") return number;
  if (length === 15) return [number.slice(0, 4), number.slice(4, 10), number.slice(10)].join(separator);
  return (number.match(/.{1,4}/g) ?? []).join(separator);
}

function pemBlock(rng: Rng): string {
  const kind = pick(rng, ["RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY"]);
  const lines = Array.from({ length: int(rng, 2, 5) }, () => chars(rng, base64, 64));
  return `-----BEGIN ${kind}-----\n${lines.join("\n")}\n-----END ${kind}-----`;
}

export const secretClasses = [
  "password",
  "token",
  "private-key",
  "cookie",
  "session-id",
  "webhook-url",
  "card-number",
  "url-credentials",
  "email",
  "phone",
] as const;
export type SecretClass = (typeof secretClasses)[number];

/** Contact details: replaced by default, kept (and the item made private) in a user's own items. */
export const contactClasses: readonly SecretClass[] = ["email", "phone"];

export interface SecretSample {
  secretClass: SecretClass;
  /** The live value: it must not survive redaction. */
  secret: string;
  /** The value as written in context (`password=…`, `Cookie: …`). */
  snippet: string;
}

function secretSnippet(secretClass: SecretClass, rng: Rng): { secret: string; snippet: string } {
  switch (secretClass) {
    case "password": {
      if (rng() < 0.1) {
        const pin = chars(rng, digits, int(rng, 4, 6));
        return { secret: pin, snippet: pick(rng, [`my PIN is ${pin}`, `the PIN code is ${pin}`]) };
      }
      const secret = password(rng);
      const snippet = pick(rng, [
        `password=${secret}`,
        `"password": "${secret}"`,
        `DB_PASSWORD=${secret}`,
        `pwd: ${secret}`,
        `my password is ${secret}`,
        `the wifi password is "${secret}"`,
        `the password for the router is ${secret}`,
        `Passwort: ${secret}`,
        `das Kennwort lautet ${secret}`,
      ]);
      return { secret, snippet };
    }
    case "token": {
      const secret = pick(rng, [
        `ghp_${chars(rng, alnum, 36)}`,
        `github_pat_${chars(rng, `${alnum}_`, 60)}`,
        `glpat-${chars(rng, urlSafe, 20)}`,
        `xoxb-${chars(rng, digits, 12)}-${chars(rng, alnum, 24)}`,
        `sk-${chars(rng, urlSafe, 48)}`,
        `sk_live_${chars(rng, alnum, 24)}`,
        `AKIA${chars(rng, upper + digits, 16)}`,
        `AIza${chars(rng, urlSafe, 35)}`,
        `hf_${chars(rng, alnum, 34)}`,
        `eyJ${chars(rng, urlSafe, 20)}.eyJ${chars(rng, urlSafe, 30)}.${chars(rng, urlSafe, 43)}`,
        randomToken(rng, alnum, 32),
      ]);
      const snippet = /^[a-z][A-Za-z0-9]{30}\d$/.test(secret)
        ? pick(rng, [`api_key=${secret}`, `"access_token": "${secret}"`, `Authorization: Bearer ${secret}`])
        : pick(rng, [
            secret,
            `token: ${secret}`,
            `Authorization: Bearer ${secret}`,
            `export API_KEY=${secret}`,
          ]);
      return { secret, snippet };
    }
    case "private-key": {
      const secret = pemBlock(rng);
      return { secret: secret.split("\n")[1] ?? secret, snippet: secret };
    }
    case "cookie": {
      const secret = randomToken(rng, urlSafe, int(rng, 16, 40));
      const name = pick(rng, ["auth", "remember_me", "_ga", "user_token", "id"]);
      const snippet = pick(rng, [
        `Cookie: ${name}=${secret}; theme=dark`,
        `Set-Cookie: ${name}=${secret}; Path=/; HttpOnly; Secure`,
        `"cookie": "${name}=${secret}"`,
        `cookie: ${name}=${secret}`,
      ]);
      return { secret, snippet };
    }
    case "session-id": {
      const secret = randomToken(rng, alnum, int(rng, 16, 32));
      const snippet = pick(rng, [
        `PHPSESSID=${secret}`,
        `JSESSIONID=${secret}`,
        `session_id: ${secret}`,
        `"sessionToken": "${secret}"`,
        `https://shop.example/cart?sid=${secret}`,
        `connect.sid=${secret}`,
        `csrf_token=${secret}`,
      ]);
      return { secret, snippet };
    }
    case "webhook-url": {
      const secret = pick(rng, [
        `https://hooks.slack.com/services/T${chars(rng, upper + digits, 8)}/B${chars(rng, upper + digits, 8)}/${chars(rng, alnum, 24)}`,
        `https://discord.com/api/webhooks/${chars(rng, digits, 18)}/${chars(rng, urlSafe, 68)}`,
        `https://example.webhook.office.com/webhookb2/${chars(rng, lower + digits, 8)}-${chars(rng, lower + digits, 4)}/IncomingWebhook/${chars(rng, alnum, 32)}`,
        `https://hooks.zapier.com/hooks/catch/${chars(rng, digits, 7)}/${chars(rng, lower + digits, 6)}/`,
        `https://chat.example.org/hooks/${randomToken(rng, lower + digits, 26)}`,
        `https://ci.example.com/api/webhook/${randomToken(rng, alnum, 24)}`,
      ]);
      return { secret, snippet: pick(rng, [secret, `webhook: ${secret}`, `POST to ${secret} when done`]) };
    }
    case "card-number": {
      const secret = cardNumber(rng);
      return { secret, snippet: pick(rng, [secret, `card ${secret} exp 12/27`, `Kreditkarte: ${secret}`]) };
    }
    case "url-credentials": {
      const secret = password(rng).replace(/[@#?/]/g, "x");
      const scheme = pick(rng, ["https", "postgres", "redis", "amqp", "ftp"]);
      return { secret, snippet: `${scheme}://admin:${secret}@db.internal.example:5432/app` };
    }
    case "email": {
      const secret = `${pick(rng, ["alice", "bob.smith", "k.mueller", "ops+alerts", "jane_doe"])}${int(rng, 1, 99)}@${pick(rng, ["example.com", "mail.example.org", "firma.de", "uni-bonn.de"])}`;
      return { secret, snippet: pick(rng, [secret, `mail me at ${secret}`, `<${secret}>`]) };
    }
    case "phone": {
      const secret = pick(rng, [
        `+49 ${int(rng, 151, 179)} ${chars(rng, digits, 7)}`,
        `+1 (${int(rng, 201, 989)}) ${int(rng, 200, 999)}-${chars(rng, digits, 4)}`,
        `+44 20 ${chars(rng, digits, 4)} ${chars(rng, digits, 4)}`,
        `(${int(rng, 201, 989)}) ${int(rng, 200, 999)}-${chars(rng, digits, 4)}`,
        `${int(rng, 201, 989)}-${int(rng, 200, 999)}-${chars(rng, digits, 4)}`,
        `0${int(rng, 151, 179)} ${chars(rng, digits, 7)}`,
        `030 ${chars(rng, digits, 4)} ${chars(rng, digits, 4)}`,
      ]);
      return { secret, snippet: pick(rng, [secret, `call me at ${secret}`, `Tel. ${secret}`]) };
    }
  }
}

const subjects = ["Alice", "Bob", "The team", "Our landlord", "Mum", "The build", "The new laptop", "Jens"];
const verbs = ["mentioned", "noted", "wrote", "said", "confirmed", "asked whether", "decided that"];

/** An ordinary sentence of the kind redaction must leave alone: numbers, dates, prices, versions, ids. */
export function ordinarySentence(rng: Rng): string {
  const isbn13 = () => {
    const body = `978${chars(rng, digits, 9)}`;
    const sum = [...body].reduce((total, digit, i) => total + Number(digit) * (i % 2 === 0 ? 1 : 3), 0);
    const full = `${body}${(10 - (sum % 10)) % 10}`;
    return `${full.slice(0, 3)}-${full.slice(3, 4)}-${full.slice(4, 7)}-${full.slice(7, 12)}-${full.slice(12)}`;
  };
  const year = int(rng, 1990, 2030);
  const month = String(int(rng, 1, 12)).padStart(2, "0");
  const day = String(int(rng, 1, 28)).padStart(2, "0");
  const time = `${String(int(rng, 0, 23)).padStart(2, "0")}:${String(int(rng, 0, 59)).padStart(2, "0")}`;
  const fact = pick(rng, [
    `version ${int(rng, 0, 30)}.${int(rng, 0, 40)}.${int(rng, 0, 99)} ships on ${year}-${month}-${day}`,
    `we upgraded to v${int(rng, 1, 9)}.${int(rng, 0, 20)}.${int(rng, 0, 20)}.${int(rng, 0, 300)} yesterday`,
    `Windows build 10.0.${int(rng, 19000, 26100)}.${int(rng, 1000, 4000)} is installed`,
    `the invoice of ${day}.${month}.${year} came to €${int(rng, 1, 9)},${chars(rng, digits, 3)}.${chars(rng, digits, 2)}`,
    `it cost $${int(rng, 1, 999)}.${chars(rng, digits, 2)} including tax`,
    `order #${chars(rng, upper, 1)}-${chars(rng, digits, 5)} arrives at ${time}`,
    `order ${int(rng, 100, 999)}-${chars(rng, digits, 7)}-${chars(rng, digits, 7)} was shipped`,
    `order number ORD-${year}-${chars(rng, digits, 6)} is pending`,
    `the ISBN is ${isbn13()}`,
    `ISBN ${chars(rng, digits, 1)}-${chars(rng, digits, 3)}-${chars(rng, digits, 5)}-${chars(rng, digits, 1)} is out of print`,
    `the log line at ${year}-${month}-${day}T${time}:${chars(rng, "012345", 1)}${chars(rng, digits, 1)}.${chars(rng, digits, int(rng, 1, 9))}Z shows the restart`,
    `the event happened at epoch ${int(rng, 1_600_000_000, 1_800_000_000)}${chars(rng, digits, 3)} ms`,
    `the meeting moved to ${time} on ${month}/${day}/${year}`,
    `the flight LH ${int(rng, 100, 999)} leaves from gate B${int(rng, 1, 60)}`,
    `room ${int(rng, 1, 5)}.${chars(rng, digits, 2)} seats ${int(rng, 4, 40)} people`,
    `the recipe needs ${int(rng, 50, 500)} g flour and ${int(rng, 1, 4)} eggs`,
    `the parcel weighs ${int(rng, 1, 30)}.${int(rng, 0, 9)} kg and measures ${int(rng, 10, 90)} x ${int(rng, 10, 90)} cm`,
    `the password policy now asks for ${int(rng, 8, 16)} characters`,
    `the password is required and the token is expired`,
    `the session starts at ${time} and the cookie jar is empty`,
    `I baked a cookie: chocolate chip`,
    `the token budget is ${int(rng, 100, 2000)} tokens`,
    `the secret is patience`,
    `the PR #${int(rng, 1, 9999)} fixes issue ${int(rng, 1, 9999)} in git@github.com:org/repo.git`,
    `see https://example.com/docs/webhooks-guide and https://github.com/org/repo/settings/hooks`,
    `temperature was ${int(rng, -10, 35)}.${int(rng, 0, 9)} °C at ${time}`,
    `the loan runs ${int(rng, 5, 30)} years at ${int(rng, 1, 9)}.${int(rng, 0, 99)} %`,
    `the score was ${int(rng, 0, 9)}-${int(rng, 0, 9)} after ${int(rng, 45, 120)} minutes`,
    `the customer number is ${int(rng, 10_000_000, 99_999_999)}`,
  ]);
  return `${pick(rng, subjects)} ${pick(rng, verbs)} ${fact}.`;
}

/** A few ordinary sentences. */
export function ordinaryText(rng: Rng): string {
  return Array.from({ length: int(rng, 1, 4) }, () => ordinarySentence(rng)).join(" ");
}

/** A secret of the class inside ordinary sentences. */
export function secretInProse(secretClass: SecretClass, rng: Rng): SecretSample & { text: string } {
  const { secret, snippet } = secretSnippet(secretClass, rng);
  const before = rng() < 0.7 ? `${ordinarySentence(rng)} ` : "";
  const lead = pick(rng, ["", "Note: ", "FYI ", "- ", "> "]);
  const after = rng() < 0.7 ? ` ${ordinarySentence(rng)}` : "";
  return { secretClass, secret, snippet, text: `${before}${lead}${snippet}${after}` };
}
