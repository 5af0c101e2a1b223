/**
 * Pathological request text: one short unit repeated to the size a field accepts. Each unit aims at a kind of
 * regular expression that backtracks (a key-name prefix retried from every start, an e-mail or URL part with no
 * end, a PEM header without its footer, a long run of digits or separators, astral-plane characters). Shared by the
 * bad-input suite (test/adversarial/input.int.test.ts) and its bench (bench/bad-input.bench.ts).
 */
export const pathologicalUnits: Record<string, string> = {
  letters: "a",
  "letter-at": "a@",
  "digit-space": "1 ",
  colons: ":::",
  "word-dot": "aaaa.",
  equals: "=",
  "pem-header": "-----BEGIN ",
  unicode: "é中😀",
  "word-dash": "x-",
  "jwt-ish": "eyJsk-",
  "dotted-digits": "1.1.",
  "password-is": "password is ",
  "plus-digits": "+1 ",
  "url-start": "http://a:",
  cookie: "Cookie: a=",
  "key-name": "key=%token",
};

/** `unit` repeated and cut to exactly `length` characters (astral characters may be cut in half: still valid JSON). */
export function pathological(unit: string, length: number): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

/** The largest text each field takes, from the contract's limits. */
export const fieldLimits = {
  text: 64_000,
  statement: 4_000,
  reflectedStatement: 2_000,
  summary: 4_000,
  title: 512,
  requestText: 8_000,
} as const;

export interface PathologicalRequest {
  name: string;
  method: "POST";
  url: string;
  body: unknown;
}

/**
 * One request per write route (and retrieve, which takes text too) with every text field at its limit, filled
 * from `unit`; `tag` makes its ids unique, so each request writes rather than finding a duplicate. Bodies only: the
 * caller sends them with the route's credential.
 */
export function pathologicalRequests(unit: string, tag: string): PathologicalRequest[] {
  const fill = (length: number) => pathological(unit, length);
  const owner = { scope: "user", owner: { userId: "alice" }, sessionId: `s-${tag}` };
  const principal = { userId: "alice", householdId: "home", agentId: "main" };
  // The contract bounds claims differently for a stored object and a reflected item.
  const storedClaim = { subject: fill(256), predicate: fill(128), object: fill(1_024) };
  const claim = { subject: fill(200), predicate: fill(200), object: fill(500) };
  const text = fill(fieldLimits.text);
  return [
    {
      name: "ingest turn",
      method: "POST",
      url: "/ingest",
      body: { events: [{ kind: "turn", ...owner, role: "user", turnId: `t-${tag}`, text }] },
    },
    {
      name: "ingest tool_result",
      method: "POST",
      url: "/ingest",
      body: {
        events: [{ kind: "tool_result", ...owner, tool: "shell", toolCallId: `c-${tag}`, output: text }],
      },
    },
    {
      name: "ingest document",
      method: "POST",
      url: "/ingest",
      body: {
        events: [
          {
            kind: "document",
            ...owner,
            sourceKind: "artifact",
            sourceId: `doc-${tag}`,
            title: fill(fieldLimits.title),
            summary: fill(fieldLimits.summary),
            text,
          },
        ],
      },
    },
    {
      name: "ingest knowledge",
      method: "POST",
      url: "/ingest",
      body: {
        events: [
          {
            kind: "knowledge",
            ...owner,
            provenanceKey: `k-${tag}`,
            type: "fact",
            statement: fill(fieldLimits.statement),
            claim: storedClaim,
          },
        ],
      },
    },
    {
      name: "reflect",
      method: "POST",
      url: "/reflect",
      body: {
        principal,
        sessionId: `s-${tag}`,
        items: [
          {
            type: "fact",
            statement: fill(fieldLimits.reflectedStatement),
            claim,
            scope: { kind: "user", ownerIds: ["alice"] },
            sourceTurnIds: [`t-${tag}`],
          },
        ],
      },
    },
    {
      name: "archive",
      method: "POST",
      url: "/archive",
      body: {
        document: {
          createdAt: "2026-03-01T09:00:00Z",
          source: { sessionId: `s-${tag}`, channel: "telegram" },
          messages: [{ role: "user", content: text }],
          consentScope: { ownerIds: ["alice"], privacy: "private", allowRecall: true },
        },
        summary: fill(fieldLimits.summary),
      },
    },
    {
      name: "promote",
      method: "POST",
      url: "/promote",
      body: { proposalId: `prop-${tag}`, approvedBy: text },
    },
    {
      name: "retrieve",
      method: "POST",
      url: "/retrieve",
      body: { principal, requestText: fill(fieldLimits.requestText), tokenBudget: 500 },
    },
  ];
}
