import { describe, expect, it } from "vitest";
import { redact } from "./redaction.js";

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
  ])("rewrites %j to %j", (input, expected, rule) => {
    const result = redact(input);
    expect(result.text).toBe(expected);
    expect(result.counts[rule]).toBeGreaterThanOrEqual(1);
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
});
