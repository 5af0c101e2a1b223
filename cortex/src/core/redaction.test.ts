import { renderBundle } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { containsContact, privacyWithContacts } from "./contacts.js";
import { opaqueIdentifier, redact, redactDimensions, redactIdentifier, withinBound } from "./redaction.js";
import { isSecretWebhook, luhnValid } from "./secret-rules.js";

describe("redaction before storage", () => {
  it.each([
    ["password=hunter2 and more", "password=<REDACTED> and more", "secret-assignment"],
    ['{"api_key": "abc123def"}', '{"api_key": <REDACTED>}', "secret-assignment"],
    ["CLIENT_SECRET: s3cr3t-value", "CLIENT_SECRET: <REDACTED>", "secret-assignment"],
    ["connect to 192.168.1.20:9200 now", "connect to <SERVER_IP> now", "ipv4"],
    ["ssh admin@10.20.30.40", "ssh admin@<SERVER_IP>", "ipv4"],
    ["gateway at fe80::1ff:fe23:4567:890a", "gateway at <SERVER_IP>", "ipv6"],
    ["Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer <TOKEN>", "bearer-token"],
    ["token ghp_abcdefghijklmnopqrstuvwxyz0123", "token <TOKEN>", "vendor-token"],
    ["bot 123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQr", "bot <BOT_TOKEN>", "telegram-bot-token"],
    ["https://admin:pa55@db.example/x", "https://<USER>:<PASSWORD>@db.example/x", "url-credentials"],
    ["subject CN=moltbox-client, O=home", "subject CN=<CLIENT_CERT_CN>, O=home", "cert-cn"],
    ["key AKIAABCDEFGHIJKLMNOP here", "key <TOKEN> here", "vendor-token"],
    ["my password is hunter2.", "my password is <PASSWORD>.", "prose-secret"],
    [
      "the wifi password is 'correct horse battery staple'",
      "the wifi password is '<PASSWORD>'",
      "prose-secret",
    ],
    ["Das Passwort ist Sommer2024", "Das Passwort ist <PASSWORD>", "prose-secret"],
    ["my api key is abcd1234efgh5678", "my api key is <REDACTED>", "prose-secret"],
    ["Cookie: sessionid=abc123; csrftoken=xyz", "Cookie: <COOKIE>", "cookie"],
    ["Set-Cookie: id=a3fWa; Path=/; Secure", "Set-Cookie: <COOKIE>", "cookie"],
    ["PHPSESSID=298zf09hf012fh2", "PHPSESSID=<SESSION_ID>", "session-id"],
    ["https://shop.example/cart?sid=8f2a9c7d1e", "https://shop.example/cart?sid=<SESSION_ID>", "session-id"],
    ["card 4111 1111 1111 1111 exp 12/26", "card <CARD_NUMBER> exp 12/26", "card-number"],
    ["amex 3782-822463-10005.", "amex <CARD_NUMBER>.", "card-number"],
    ["pay 4111111111111111 now", "pay <CARD_NUMBER> now", "card-number"],
    [
      "post to https://hooks.slack.com/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX now",
      "post to <WEBHOOK_URL> now",
      "webhook-url",
    ],
    ["https://ci.example.com/hooks/a1b2c3d4e5f6g7h8i9j0", "<WEBHOOK_URL>", "webhook-url"],
    ["mail alice@example.com today", "mail <EMAIL> today", "email"],
    ["call +49 170 1234567 or (555) 123-4567", "call <PHONE> or <PHONE>", "phone"],
    ["phone: 5551234", "phone: <PHONE>", "phone"],
    ["token AIzaT5wFHYQFuoo_GsUBpvuYATaae-wGXbP0Gu- end", "token <TOKEN> end", "vendor-token"],
  ])("rewrites %j to %j", (input, expected, rule) => {
    const result = redact(input);
    expect(result.text).toBe(expected);
    expect(result.counts[rule]).toBeGreaterThanOrEqual(1);
  });

  it("keeps a referring id as it is, or makes one holding a secret or a phone number its stable hash", () => {
    expect(opaqueIdentifier("agent:main:telegram:direct:alice")).toBe("agent:main:telegram:direct:alice");
    const token = opaqueIdentifier("ghp_Q2x9LmN4pR7sT1vW3yZ5aB8cD0eF6gH2jK4m");
    expect(token).toMatch(/^h:[0-9a-f]{40}$/);
    expect(opaqueIdentifier("ghp_Q2x9LmN4pR7sT1vW3yZ5aB8cD0eF6gH2jK4m")).toBe(token);
    expect(opaqueIdentifier("agent:main:whatsapp:direct:+4712345678")).toMatch(/^h:[0-9a-f]{40}$/);
  });

  it("replaces a whole PEM private key block", () => {
    const text = "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----\nafter";
    expect(redact(text).text).toBe("before\n<PRIVATE_KEY>\nafter");
  });

  it("replaces JSON web tokens", () => {
    const jwt =
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    expect(redact(`cookie ${jwt}`).text).toBe("cookie <JWT>");
  });

  it("keeps versions, package specs and ordinary words that merely contain secret-like names", () => {
    const text = "Use v1.2.3.4 and build 1.2.3.4.5; max_tokens=500, tokenBudget: 300; the secretary came.";
    const result = redact(text);
    expect(result.text).toBe(text);
    expect(result.total).toBe(0);
  });

  it("is idempotent: redacting redacted text changes nothing and counts nothing", () => {
    const once = redact("password=x token: abc host 10.0.0.1 https://u:p@h/ Bearer abcdefghijkl").text;
    const twice = redact(once);
    expect(twice.text).toBe(once);
    expect(twice.total).toBe(0);
  });

  it("strips a re-injected Remram bundle so recalled memory is never stored again", () => {
    const text =
      "user said hi\n<<<REMRAM MEMORY v1>>>\n## facts\n- (0.90) x\n<<<END REMRAM MEMORY>>>\nthanks";
    const result = redact(text);
    expect(result.text).toBe("user said hi\n\nthanks");
    expect(result.counts["injected-bundle"]).toBe(1);
  });

  it("strips the block as Cortex renders it now, with the contract's renderer", () => {
    const block = renderBundle({
      items: [
        {
          kind: "fact",
          section: "facts",
          statement: "The attic fan is noisy",
          confidence: 0.9,
          learnedAt: "2026-05-03T00:00:00Z",
        },
      ],
      liveState: true,
      lowConfidence: false,
    });
    const result = redact(`user said hi\n${block}\nthanks`);
    expect(result.text).toBe("user said hi\n\nthanks");
    expect(result.counts["injected-bundle"]).toBe(1);
  });

  it.each([
    "The password is required and the token is expired.",
    "I baked a cookie: chocolate chip",
    "the card 4111 1111 1111 1112 fails its checksum",
    "ISBN 978-3-16-148410-0, order 112-3456789-1234567, at 1718000000000 ms",
    "logged at 2024-01-15T10:30:00.123456789+02:00 for $1,234.56",
    "clone git@github.com:org/repo.git; see https://github.com/org/repo/settings/hooks",
    "released 15.01.2024 at 12:30:45 as version 10.0.19045",
  ])("keeps ordinary text: %j", (text) => {
    expect(redact(text)).toEqual({ text, counts: {}, total: 0, contactsKept: 0 });
  });

  it("keeps contact details only when asked to, and counts them", () => {
    const text = "reach Ana at ana@example.com or +49 170 1234567";
    const kept = redact(text, { contacts: "keep" });
    expect(kept).toMatchObject({ text, total: 0, contactsKept: 2 });
    expect(redact(text).text).toBe("reach Ana at <EMAIL> or <PHONE>");
    expect(containsContact("no details here", text)).toBe(true);
    expect(containsContact("order 112-3456789-1234567")).toBe(false);
  });

  it("raises the privacy of an item holding contact details to at least private", () => {
    expect(privacyWithContacts("public")).toBe("private");
    expect(privacyWithContacts("household")).toBe("private");
    expect(privacyWithContacts("private")).toBe("private");
    expect(privacyWithContacts("secret")).toBe("secret");
  });

  it("checks card numbers with Luhn and webhooks by host or secret path part", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(isSecretWebhook("https://discord.com/api/webhooks/1/abc")).toBe(true);
    expect(isSecretWebhook("https://example.com/hooks/readme")).toBe(false);
  });
});

describe("redacting dimension values and identifiers", () => {
  it("replaces credentials, cards and contact details in dimension values, merging values that become equal", () => {
    const results: number[] = [];
    const clean = redactDimensions(
      {
        person: ["Ana", "+49 170 1234567", "0170 7654321", "ana@example.com"],
        topic: ["token ghp_abcdefghijklmnopqrstuvwxyz0123", "card 4111 1111 1111 1111"],
      },
      (result) => results.push(result.total),
    );
    expect(clean).toEqual({
      person: ["Ana", "<PHONE>", "<EMAIL>"],
      topic: ["token <TOKEN>", "card <CARD_NUMBER>"],
    });
    expect(results.reduce((a, b) => a + b, 0)).toBe(5);
  });

  it("keeps a redacted dimension value within the contract's 128 characters", () => {
    const value = `https://ana:${"p".repeat(40)}@example.com/${"x".repeat(70)}`;
    const [clean] = redactDimensions({ source: [value] }).source ?? [];
    expect(clean?.startsWith("https://<USER>:<PASSWORD>@example.com/")).toBe(true);
    expect(clean?.length).toBeLessThanOrEqual(128);
  });

  it("redacts credentials in an identifier but keeps what names the source", () => {
    expect(redactIdentifier("https://ana:hunter2@git.example.com/notes.md", 1024)).toMatchObject({
      text: "https://<USER>:<PASSWORD>@git.example.com/notes.md",
      total: 1,
      contactsKept: 0,
    });
    expect(redactIdentifier("import:ghp_abcdefghijklmnopqrstuvwxyz0123:1", 512).text).toBe(
      "import:<TOKEN>:1",
    );
    expect(redactIdentifier("mail/ana@example.com/inbox", 256).text).toBe("mail/ana@example.com/inbox");
    expect(redactIdentifier("notes/2026-03-01.md", 256)).toMatchObject({
      text: "notes/2026-03-01.md",
      total: 0,
    });
    expect(withinBound("abcdef", 4)).toBe("abcd");
  });
});
