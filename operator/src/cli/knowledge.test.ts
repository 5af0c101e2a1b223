import { describe, expect, it } from "vitest";
import { parseInvocation } from "./commands.js";
import { completionRequest } from "./completion.js";
import { grantHint } from "./errors.js";
import { helpFor } from "./help.js";
import {
  appRequestUrl,
  credentialProblem,
  isLoopback,
  type KnowledgeCommand,
  listingQuery,
} from "./knowledge.js";

const parse = (...argv: string[]) => parseInvocation(argv).command as KnowledgeCommand;

describe("kubectl remram knowledge arguments", () => {
  it("parse list with its filters, text and a port-forward by default", () => {
    expect(parse("knowledge", "list")).toEqual({
      verb: "knowledge",
      action: "list",
      target: {},
      output: "text",
      filters: {},
    });
    expect(
      parse(
        "knowledge",
        "list",
        "--user=bob",
        "--status",
        "active,invalidated",
        "--scope",
        "household",
        "--limit",
        "20",
        "--cursor",
        "abc",
        "--app-url",
        "https://remram.home.arpa/app/",
        "-o",
        "json",
      ),
    ).toEqual({
      verb: "knowledge",
      action: "list",
      target: { appUrl: "https://remram.home.arpa/app/" },
      output: "json",
      filters: {
        user: "bob",
        status: ["active", "invalidated"],
        scope: ["household"],
        limit: 20,
        cursor: "abc",
      },
    });
    expect(parseInvocation(["knowledge", "list", "-n", "home", "--appliance", "box"])).toEqual({
      command: {
        verb: "knowledge",
        action: "list",
        target: { appliance: "box" },
        output: "text",
        filters: {},
      },
      connection: { namespace: "home" },
    });
  });

  it("parse search's words as one query, show's id, correct's statement and forget's ids", () => {
    expect(parse("knowledge", "search", "bicycle", "garage", "--scope", "user")).toMatchObject({
      action: "search",
      query: "bicycle garage",
      filters: { scope: ["user"] },
    });
    expect(parse("knowledge", "show", "ko_1", "--user", "bob")).toMatchObject({
      action: "show",
      id: "ko_1",
      user: "bob",
    });
    expect(parse("knowledge", "correct", "ko_1", "Alice likes blue", "--reason", "it changed")).toMatchObject(
      { action: "correct", id: "ko_1", statement: "Alice likes blue", reason: "it changed" },
    );
    expect(parse("knowledge", "correct", "ko_1", "Alice", "likes", "blue")).toMatchObject({
      statement: "Alice likes blue",
    });
    expect(parse("knowledge", "forget", "ko_1", "ko_2", "ko_1", "--user", "bob")).toMatchObject({
      action: "forget",
      ids: ["ko_1", "ko_2"],
      user: "bob",
    });
    expect(parse("knowledge", "forget", "--all", "--confirm", "alice", "--reason", "moving out")).toEqual({
      verb: "knowledge",
      action: "forget-all",
      target: {},
      output: "text",
      confirm: "alice",
      reason: "moving out",
    });
  });

  it("refuse what the app would refuse, and flags of another action", () => {
    const refused: [string[], string][] = [
      [[], "knowledge needs what to do: list, search, show, correct, forget"],
      [["remember"], "knowledge takes list, search, show, correct, forget; got remember"],
      [["list", "bike"], "knowledge list takes no arguments"],
      [
        ["list", "--status", "gone"],
        '--status takes active, demoted, invalidated (comma-separated); got "gone"',
      ],
      [["list", "--scope", "shared"], '--scope takes user, household (comma-separated); got "shared"'],
      [["list", "--limit", "0"], '--limit takes a whole number from 1 to 200; got "0"'],
      [["list", "--limit", "2.5"], '--limit takes a whole number from 1 to 200; got "2.5"'],
      [["list", "-o", "yaml"], '-o takes text or json, not "yaml"'],
      [["list", "--reason", "x"], "--reason does not apply to knowledge list"],
      [["list", "--app-url", "ftp://x"], "--app-url takes an http or https address"],
      [["list", "--app-url", "remram.home"], "--app-url takes remram-app's address"],
      [["list", "--app-url", "https://a:b@x/"], "--app-url takes no user name or password"],
      [["list", "--app-url", "https://x", "--appliance", "box"], "give --app-url or --appliance, not both"],
      [["search"], "knowledge search needs the words to look for"],
      [["search", "x".repeat(513)], "knowledge search takes at most 512 characters"],
      [["show"], "knowledge show needs the id"],
      [["show", "a", "b"], "knowledge show takes one id; got a b"],
      [["show", "a", "--status", "active"], "--status does not apply to knowledge show"],
      [
        ["correct", "ko_1"],
        'knowledge correct needs the id and what is true instead: correct ID "NEW STATEMENT"',
      ],
      [["correct", "ko_1", "x", "--user", "bob"], "--user does not apply to knowledge correct"],
      [["forget"], "knowledge forget needs the ids to forget (or --all --confirm YOUR-MEMBER-ID)"],
      [["forget", "--all"], "confirm with --confirm YOUR-MEMBER-ID"],
      [["forget", "--all", "ko_1", "--confirm", "alice"], "give ids to forget, or --all, not both"],
      [["forget", "--all", "--confirm", "bob", "--user", "bob"], "--user does not apply to it"],
      [["forget", "ko_1", "--confirm", "alice"], "--confirm goes with forget --all"],
      [["forget", ...Array.from({ length: 101 }, (_, i) => `ko_${i}`)], "at most 100 ids at a time"],
    ];
    for (const [args, message] of refused)
      expect(() => parseInvocation(["knowledge", ...args]), args.join(" ")).toThrow(message);
    expect(() => parseInvocation(["status", "--user", "bob"])).toThrow("--user does not apply to status");
  });

  it("build the app's query string and URLs, keeping an address's path prefix", () => {
    expect(listingQuery({})).toBe("");
    expect(
      listingQuery(
        { user: "bob", status: ["active", "demoted"], scope: ["user"], limit: 5, cursor: "c/1" },
        "tea & cake",
      ),
    ).toBe("?user=bob&q=tea+%26+cake&status=active%2Cdemoted&scope=user&limit=5&cursor=c%2F1");
    expect(appRequestUrl("https://box.home/app/", "/api/knowledge?limit=1").href).toBe(
      "https://box.home/app/api/knowledge?limit=1",
    );
    expect(appRequestUrl("http://127.0.0.1:8080", "/api/knowledge/forget").href).toBe(
      "http://127.0.0.1:8080/api/knowledge/forget",
    );
    expect(isLoopback(new URL("http://127.0.0.1:8080"))).toBe(true);
    expect(isLoopback(new URL("http://[::1]:8080"))).toBe(true);
    expect(isLoopback(new URL("http://localhost"))).toBe(true);
    expect(isLoopback(new URL("http://box.home.arpa"))).toBe(false);
  });

  it("need a bearer token, naming how the current user authenticates instead", () => {
    expect(credentialProblem({ token: "abc" })).toBeUndefined();
    const head =
      "knowledge needs a household member's credential: use the kubeconfig kubectl remram user add -o kubeconfig printed (the current user authenticates with";
    expect(credentialProblem({ certData: "x", keyData: "y" } as never)).toBe(`${head} a client certificate)`);
    expect(credentialProblem({ exec: { command: "gke-gcloud-auth-plugin" } })).toBe(
      `${head} an exec plugin (gke-gcloud-auth-plugin))`,
    );
    expect(credentialProblem({ authProvider: { name: "oidc" } })).toBe(`${head} an auth provider (oidc))`);
    expect(credentialProblem({ username: "admin" })).toBe(`${head} a user name and password)`);
    expect(credentialProblem(null)).toBe(`${head} nothing: it has no credential)`);
    expect(credentialProblem({ token: "  " })).toContain("nothing: it has no credential");
  });

  it("complete the actions, members for --user and --confirm, the statuses and scopes", () => {
    const source = (...words: string[]) => completionRequest(words).source;
    expect(source("knowledge", "")).toMatchObject({
      kind: "words",
      candidates: [
        { value: "list" },
        { value: "search" },
        { value: "show" },
        { value: "correct" },
        { value: "forget" },
      ],
    });
    expect(source("knowledge", "list", "--user", "")).toEqual({ kind: "members" });
    expect(source("knowledge", "forget", "--all", "--confirm", "")).toEqual({ kind: "members" });
    expect(source("knowledge", "list", "--status", "")).toMatchObject({
      candidates: [{ value: "active" }, { value: "demoted" }, { value: "invalidated" }],
    });
    expect(source("knowledge", "list", "--scope=")).toMatchObject({
      candidates: [{ value: "user" }, { value: "household" }],
    });
    expect(source("knowledge", "list", "-o", "")).toMatchObject({
      candidates: [{ value: "text" }, { value: "json" }],
    });
    expect(source("knowledge", "list", "--app-url", "")).toEqual({ kind: "nothing" });
    const flags = source("knowledge", "list", "--");
    expect(flags.kind === "words" && flags.candidates.map((c) => c.value)).toContain("--app-url");
  });

  it("say how to reach the app without the pod rights, and document every action", () => {
    expect(grantHint({ verb: "knowledge" }, "home")).toContain("--app-url https://HOST/remram/");
    const help = helpFor("knowledge");
    for (const action of ["list", "search", "show ID", "correct ID", "forget ID...", "forget --all"])
      expect(help).toContain(`knowledge ${action}`);
  });
});
