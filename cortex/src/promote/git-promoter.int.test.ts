import { execFile, spawn } from "node:child_process";
import { chmod, chown, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { simpleGit } from "simple-git";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256Digest } from "../core/digest.js";
import { GitPromoter, type PromotableProposal, PromotionConflictError } from "./git-promoter.js";

const author = { name: "Remram Cortex", email: "cortex@remram.invalid" };
const path = "artifacts/households/h1/constraints.md";

function proposal(content: string, base?: string, id = "prop-0000000000000001"): PromotableProposal {
  return {
    id,
    artifactPath: path,
    content,
    baseDigest: base === undefined ? undefined : sha256Digest(base),
    proposedDigest: sha256Digest(content),
  };
}

describe("promotion into a real git repository", () => {
  let repo: string;
  let git: ReturnType<typeof simpleGit>;

  beforeEach(async () => {
    repo = await mkdtemp(join(tmpdir(), "remram-promote-"));
    git = simpleGit(repo);
    await git.raw(["init", "--quiet", "--initial-branch=main"]);
    await git.raw([
      "-c",
      "user.name=Setup",
      "-c",
      "user.email=setup@example.invalid",
      "commit",
      "--quiet",
      "--allow-empty",
      "-m",
      "workspace",
    ]);
  });
  afterEach(async () => {
    await rm(repo, { recursive: true, force: true });
  });

  const head = async () => (await git.raw(["rev-parse", "HEAD"])).trim();
  const commitCount = async () => Number((await git.raw(["rev-list", "--count", "HEAD"])).trim());
  const fileAt = async () => readFile(join(repo, path), "utf8").catch(() => undefined);
  const status = async () => (await git.raw(["status", "--porcelain"])).trim();

  it("writes the file and commits it with the configured author, naming proposal and approver", async () => {
    const promoter = new GitPromoter(repo, author);
    await promoter.prepare();
    const seen: string[] = [];
    const result = await promoter.promote(
      { proposal: proposal("# Rules\n"), approvedBy: "alice" },
      async (id) => {
        seen.push(id);
      },
    );
    expect(result.alreadyPromoted).toBe(false);
    expect(result.commitId).toBe(await head());
    expect(seen).toEqual([result.commitId]);
    expect(await fileAt()).toBe("# Rules\n");
    const [authorLine, message] = (await git.raw(["log", "-1", "--format=%an <%ae>%n%B"])).split("\n", 2);
    expect(authorLine).toBe("Remram Cortex <cortex@remram.invalid>");
    expect(message).toBe(`Promote ${path}`);
    const body = await git.raw(["log", "-1", "--format=%B"]);
    expect(body).toContain("Proposal prop-0000000000000001 approved by alice.");
    expect(body).toContain("Remram-Proposal: prop-0000000000000001");
    expect(await status()).toBe("");
  });

  it("returns the same commit id when the same proposal is promoted twice, committing nothing more", async () => {
    const promoter = new GitPromoter(repo, author);
    const first = await promoter.promote({ proposal: proposal("# Rules\n"), approvedBy: "alice" });
    const count = await commitCount();
    const second = await promoter.promote({ proposal: proposal("# Rules\n"), approvedBy: "alice" });
    expect(second).toEqual({ commitId: first.commitId, alreadyPromoted: true });
    expect(await commitCount()).toBe(count);
  });

  it("refuses a stale base with a conflict and changes nothing", async () => {
    const promoter = new GitPromoter(repo, author);
    await promoter.promote({ proposal: proposal("v1\n", undefined, "prop-a"), approvedBy: "alice" });
    const before = await head();
    const stale = proposal("v2 from an old draft\n", "something else\n", "prop-b");
    await expect(promoter.promote({ proposal: stale, approvedBy: "alice" })).rejects.toBeInstanceOf(
      PromotionConflictError,
    );
    expect(await head()).toBe(before);
    expect(await fileAt()).toBe("v1\n");
  });

  it("refuses an approval made on other bytes or another base", async () => {
    const promoter = new GitPromoter(repo, author);
    const p = proposal("x\n");
    await expect(
      promoter.promote({ proposal: p, approvedBy: "a", expectedDigest: sha256Digest("y\n") }),
    ).rejects.toBeInstanceOf(PromotionConflictError);
    await expect(
      promoter.promote({ proposal: p, approvedBy: "a", baseDigest: sha256Digest("old\n") }),
    ).rejects.toBeInstanceOf(PromotionConflictError);
    expect(await fileAt()).toBeUndefined();
  });

  it("refuses to overwrite uncommitted edits in the workspace", async () => {
    const promoter = new GitPromoter(repo, author);
    await promoter.promote({ proposal: proposal("v1\n", undefined, "prop-a"), approvedBy: "alice" });
    await writeFile(join(repo, path), "hand edit\n");
    await expect(
      promoter.promote({ proposal: proposal("v2\n", "hand edit\n", "prop-b"), approvedBy: "alice" }),
    ).rejects.toThrow(/uncommitted/);
    expect(await fileAt()).toBe("hand edit\n");
  });

  it("leaves no partial file and no commit when git fails, and the proposal stays approvable", async () => {
    const promoter = new GitPromoter(repo, author);
    await promoter.promote({ proposal: proposal("v1\n", undefined, "prop-a"), approvedBy: "alice" });
    const before = await head();
    const hook = join(repo, ".git", "hooks", "pre-commit");
    await writeFile(hook, "#!/bin/sh\necho 'refusing' >&2\nexit 1\n");
    await chmod(hook, 0o755);
    const next = proposal("v2\n", "v1\n", "prop-b");
    await expect(promoter.promote({ proposal: next, approvedBy: "bob" })).rejects.toThrow(/refusing/);
    expect({ head: await head(), file: await fileAt(), status: await status() }).toEqual({
      head: before,
      file: "v1\n",
      status: "",
    });
    await rm(hook);
    const retried = await promoter.promote({ proposal: next, approvedBy: "bob" });
    expect(await fileAt()).toBe("v2\n");
    expect(retried.alreadyPromoted).toBe(false);
  });

  it("undoes the commit when the follow-up (reindex, marking) fails", async () => {
    const promoter = new GitPromoter(repo, author);
    const before = await head();
    await expect(
      promoter.promote({ proposal: proposal("new\n"), approvedBy: "alice" }, async () => {
        throw new Error("reindex failed");
      }),
    ).rejects.toThrow("reindex failed");
    expect({ head: await head(), file: await fileAt(), status: await status() }).toEqual({
      head: before,
      file: undefined,
      status: "",
    });
    expect(await git.raw(["log", "--all", "--format=%s"])).not.toContain("Promote");
  });

  it("commits only the artifact, never what someone else staged", async () => {
    await writeFile(join(repo, "notes.txt"), "staged by a person\n");
    await git.raw(["add", "notes.txt"]);
    const promoter = new GitPromoter(repo, author);
    const { commitId } = await promoter.promote({ proposal: proposal("x\n"), approvedBy: "alice" });
    expect((await git.raw(["show", "--name-only", "--format=", commitId])).trim()).toBe(path);
    expect(await status()).toBe("A  notes.txt");
  });

  it("rejects a path that would leave the workspace", async () => {
    const promoter = new GitPromoter(repo, author);
    const outside = { ...proposal("x\n"), artifactPath: "../outside.md" };
    await expect(promoter.promote({ proposal: outside, approvedBy: "a" })).rejects.toBeInstanceOf(
      PromotionConflictError,
    );
  });

  it("rolls back a promotion whose process was killed after committing, on the next start", async () => {
    const seed = new GitPromoter(repo, author);
    await seed.promote({ proposal: proposal("v1\n", undefined, "prop-a"), approvedBy: "alice" });
    const before = await head();
    const next = proposal("v2\n", "v1\n", "prop-b");
    const module = fileURLToPath(new URL("./git-promoter.ts", import.meta.url));
    const script = `
      import { GitPromoter } from ${JSON.stringify(module)};
      const promoter = new GitPromoter(${JSON.stringify(repo)}, ${JSON.stringify(author)});
      await promoter.promote({ proposal: ${JSON.stringify(next)}, approvedBy: "bob" }, async () => {
        process.stdout.write("committed\\n");
        await new Promise(() => {});
      });`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: fileURLToPath(new URL("../../..", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("committed")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`child exited early with ${code}`)));
    });
    expect(await fileAt()).toBe("v2\n"); // mid-promotion: committed, follow-up not done
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));

    const restarted = new GitPromoter(repo, author);
    expect(await restarted.prepare()).toEqual({ rolledBack: "prop-b", staleLocks: [] });
    expect({ head: await head(), file: await fileAt(), status: await status() }).toEqual({
      head: before,
      file: "v1\n",
      status: "",
    });
    const retried = await restarted.promote({ proposal: next, approvedBy: "bob" });
    expect(retried.alreadyPromoted).toBe(false);
    expect(await fileAt()).toBe("v2\n");
  });

  it("creates its repository in a folder that does not exist yet (a fresh volume)", async () => {
    const fresh = join(repo, "cortex", "repo");
    const promoter = new GitPromoter(fresh, author);
    await promoter.prepare();
    const result = await promoter.promote({ proposal: proposal("# Rules\n"), approvedBy: "alice" });
    expect(await readFile(join(fresh, path), "utf8")).toBe("# Rules\n");
    expect((await simpleGit(fresh).raw(["rev-parse", "HEAD"])).trim()).toBe(result.commitId);
  });

  it("writes again after a pod was killed inside git: the stale lock files go at start", async () => {
    const promoter = new GitPromoter(repo, author);
    await promoter.promote({ proposal: proposal("v1\n", undefined, "prop-a"), approvedBy: "alice" });
    // What a SIGKILL inside `git add` / `git commit` leaves behind.
    await writeFile(join(repo, ".git", "index.lock"), "");
    await mkdir(join(repo, ".git", "refs", "heads"), { recursive: true });
    await writeFile(join(repo, ".git", "refs", "heads", "main.lock"), "");
    const blocked = new GitPromoter(repo, author);
    await expect(
      blocked.promote({ proposal: proposal("v2\n", "v1\n", "prop-b"), approvedBy: "bob" }),
    ).rejects.toThrow(/index\.lock/);

    const restarted = new GitPromoter(repo, author);
    // The blocked attempt could not even undo itself (git needs the index): its journal is rolled back too.
    expect(await restarted.prepare()).toEqual({
      rolledBack: "prop-b",
      staleLocks: [".git/index.lock", ".git/refs/heads/main.lock"],
    });
    await restarted.promote({ proposal: proposal("v2\n", "v1\n", "prop-b"), approvedBy: "bob" });
    expect(await fileAt()).toBe("v2\n");
    expect(await status()).toBe("");
  });

  // git refuses a repository owned by another uid ("dubious ownership"), root included; a volume's folder can
  // belong to another uid than the pod's (kubelet creates subPath folders as root; another pod wrote the claim).
  it.skipIf(process.getuid?.() !== 0)(
    "promotes into a repository another uid owns, reached through a symlink, without touching git's global config",
    async () => {
      const promoter = new GitPromoter(repo, author);
      await promoter.promote({ proposal: proposal("v1\n", undefined, "prop-a"), approvedBy: "alice" });
      await chownRepositoryTo1234();
      const home = await mkdtemp(join(tmpdir(), "remram-home-"));
      const link = `${repo}-link`;
      await symlink(repo, link);
      try {
        // Plain git, as Cortex would run it without safe.directory: refused.
        const plain = await promisify(execFile)("git", ["status"], {
          cwd: repo,
          env: { ...process.env, HOME: home },
        })
          .then(() => "ok")
          .catch((error: Error) => error.message);
        expect(plain).toContain("dubious ownership");
        const direct = new GitPromoter(repo, author);
        await direct.prepare();
        await direct.promote({ proposal: proposal("v2\n", "v1\n", "prop-b"), approvedBy: "bob" });
        const throughLink = new GitPromoter(link, author);
        await throughLink.prepare();
        await throughLink.promote({ proposal: proposal("v3\n", "v2\n", "prop-c"), approvedBy: "carol" });
        expect(await fileAt()).toBe("v3\n");
        // The consistency check reads it with the same trust.
        const checked = await direct.check();
        expect(checked.problems).toEqual([]);
        expect([...checked.promotedProposalIds].sort()).toEqual(["prop-a", "prop-b", "prop-c"]);
        expect(checked.commits).toBe(4); // the suite's first commit and the three promotions
        // Nothing was written to a global config: the exception lives only on Cortex's command lines.
        expect(await readFile(join(home, ".gitconfig"), "utf8").catch(() => "absent")).toBe("absent");
      } finally {
        await rm(link, { force: true });
        await rm(home, { recursive: true, force: true });
      }
    },
  );

  /** Hand the whole repository to uid 1234, as a folder another pod or kubelet created. */
  async function chownRepositoryTo1234(): Promise<void> {
    const files = (await promisify(execFile)("find", [repo])).stdout.trim().split("\n");
    for (const file of files) await chown(file, 1234, 1234);
  }
});
