import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { erasedPhrases } from "../core/erasure.js";
import { renderArtifact } from "../core/proposal.js";
import { knowledgeObject } from "../testing/fixtures.js";
import { GitPromoter } from "./git-promoter.js";

const author = { name: "Remram Cortex", email: "cortex@remram.invalid" };
const secret = "Alice hides the spare key under the blue flowerpot";
const kept = "Bob waters the tomatoes every evening";
const entry = (id: string, statement: string) =>
  knowledgeObject({ id, statement, confidence: 0.9, validFrom: "2026-02-01T00:00:00.000Z" });
const household = renderArtifact("Facts (household h1)", [entry("ko_alice", secret), entry("ko_bob", kept)]);
const aliceOnly = renderArtifact("Facts (user alice)", [entry("ko_alice", secret)]);
const erased = { ids: new Set(["ko_alice"]), phrases: erasedPhrases([secret]) };

describe("erasing content from a repository's whole history", () => {
  let repo: string;
  // The git binary directly: simple-git refuses to pass GIT_*_DATE through the environment.
  const git = {
    raw: async (args: string[], env: Record<string, string> = {}) =>
      (
        await promisify(execFile)("git", args, {
          cwd: repo,
          env: { ...process.env, ...env },
          maxBuffer: 64 * 1024 * 1024,
        })
      ).stdout,
  };
  const commit = async (message: string, files: Record<string, string>, date = "2026-02-01T10:00:00Z") => {
    for (const [path, content] of Object.entries(files)) {
      await mkdir(join(repo, path, ".."), { recursive: true });
      await writeFile(join(repo, path), content);
      await git.raw(["add", "--", path]);
    }
    const identity = ["-c", "user.name=Someone", "-c", "user.email=someone@example.invalid"];
    await git.raw([...identity, "commit", "-q", "-m", message], {
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
    });
    return (await git.raw(["rev-parse", "HEAD"])).trim();
  };
  /** Every object in the store, reachable or not, as text. */
  const allObjects = async () => git.raw(["cat-file", "--batch-all-objects", "--batch"]);

  beforeEach(async () => {
    repo = await mkdtemp(join(tmpdir(), "remram-history-"));
    await git.raw(["init", "--quiet", "--initial-branch=main"]);
  });
  afterEach(async () => {
    await rm(repo, { recursive: true, force: true });
  });

  it("rewrites branches, merges, tags and the stash, drops emptied commits and purges the old objects", async () => {
    await commit("readme", { "README.md": "workspace\n" });
    await commit("Promote artifacts/users/alice/facts.md", { "artifacts/users/alice/facts.md": aliceOnly });
    await git.raw(["checkout", "-q", "-b", "side"]);
    await commit("household facts", { "artifacts/households/h1/facts.md": household });
    await git.raw(["tag", "-a", "v1", "-m", "household release"]);
    await git.raw(["tag", "light"]);
    await git.raw(["checkout", "-q", "main"]);
    await commit("notes", { "notes.md": `todo\n${secret}\nmore\n` }, "2026-02-02T10:00:00Z");
    await git.raw([
      "-c",
      "user.name=S",
      "-c",
      "user.email=s@x.invalid",
      "merge",
      "-q",
      "--no-ff",
      "side",
      "-m",
      "merge",
    ]);
    await writeFile(join(repo, "notes.md"), `stashed ${secret}\n`);
    await git.raw(["-c", "user.name=S", "-c", "user.email=s@x.invalid", "stash", "-q"]);
    await writeFile(join(repo, "scratch.txt"), `untracked copy: ${secret}\n`);
    const before = await git.raw(["log", "--all", "--format=%H %an %ad %s"]);
    expect(await allObjects()).toContain(secret);

    const promoter = new GitPromoter(repo, author);
    const result = await promoter.erase(erased);

    expect(result.commitsDropped).toBe(1); // the commit of alice's own file
    expect(result.commitsRewritten).toBeGreaterThanOrEqual(4);
    expect(await git.raw(["log", "-p", "--all"])).not.toContain(secret);
    expect(await allObjects()).not.toContain(secret);
    expect(await allObjects()).not.toContain("ko_alice");
    expect(await git.raw(["fsck", "--unreachable", "--no-reflogs", "--full"])).toBe("");
    expect(await git.raw(["reflog", "--all"])).toBe("");
    // What is not the person's stays, with its authors, dates and messages.
    expect(await git.raw(["show", "v1:artifacts/households/h1/facts.md"])).toContain(kept);
    expect(await git.raw(["show", "light:artifacts/households/h1/facts.md"])).toContain(kept);
    expect(await git.raw(["cat-file", "-t", "v1"])).toBe("tag\n");
    const after = await git.raw(["log", "--all", "--format=%H %an %ad %s"]);
    const subjects = (log: string) => log.split("\n").map((line) => line.split(" ").slice(1).join(" "));
    expect(subjects(after)).toEqual(
      subjects(before).filter((line) => !line.endsWith("Promote artifacts/users/alice/facts.md")),
    );
    // The newest stash is a ref and is rewritten; older ones lived only in its reflog, which the purge empties.
    expect(await git.raw(["log", "-1", "--format=%s", "refs/stash"])).toContain("WIP on main");
    // Index and working tree: same scrub, nothing left staged or dirty that was not before.
    expect(await readFile(join(repo, "notes.md"), "utf8")).toBe("todo\nmore\n");
    expect(await readFile(join(repo, "scratch.txt"), "utf8")).toBe("");
    expect(await readFile(join(repo, "artifacts/households/h1/facts.md"), "utf8")).not.toContain(secret);
    expect((await git.raw(["status", "--porcelain"])).trim()).toBe("?? scratch.txt");
    expect(result.workspace.get("artifacts/users/alice/facts.md")).toBeNull();
    expect(result.commits.size).toBeGreaterThan(0);
  });

  it("changes nothing, not even a commit id, when nothing in it is the person's", async () => {
    const first = await commit("readme", { "README.md": "workspace\n" });
    const second = await commit("facts", { "facts.md": `${kept}\n` });
    const result = await new GitPromoter(repo, author).erase(erased);
    expect(result).toMatchObject({
      commitsRewritten: 0,
      commitsDropped: 0,
      blobsRewritten: 0,
      refsUpdated: 0,
    });
    expect((await git.raw(["rev-list", "HEAD"])).trim().split("\n")).toEqual([second, first]);
  });
});
