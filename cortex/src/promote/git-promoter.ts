import { type Dirent, mkdirSync, realpathSync } from "node:fs";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { isAbsolute, join, normalize, resolve, sep } from "node:path";
import { type SimpleGit, simpleGit } from "simple-git";
import { sha256Digest } from "../core/digest.js";
import { type ErasedContent, scrubArtifact, scrubLines } from "../core/erasure.js";
import { redactText } from "../core/redaction.js";
import { writeAtomically } from "./atomic-write.js";
import { HistoryRewrite, type HistoryScrub, type RewriteResult } from "./history-rewrite.js";
import { type BundledRepository, bundleRepository, restoreRepository } from "./repository-bundle.js";
import { checkRepository, type RepositoryCheck } from "./repository-check.js";

/**
 * Promotion of an approved proposal into the workspace git repository (seed 000 §3.3.6, §6.2 /promote):
 * write the Markdown file, commit it, run the caller's follow-up (reindex, mark sources promoted) — all or
 * nothing. A journal in .git records how to undo each step before the step is taken, so a failure at any point,
 * including the process being killed, ends with the working tree, index and branch as they were and the
 * proposal still approvable (the next promoter to start rolls an interrupted promotion back).
 */

export interface GitIdentity {
  name: string;
  email: string;
}

export interface PromotableProposal {
  id: string;
  artifactPath: string;
  content: string;
  /** Digest of the file the proposal was drafted against; undefined when it creates the file. */
  baseDigest?: string | undefined;
  proposedDigest: string;
}

export interface PromotionRequest {
  proposal: PromotableProposal;
  approvedBy: string;
  /** The base the approver saw, when the caller sends one; it must be the proposal's. */
  baseDigest?: string | undefined;
  /** The proposed digest the approval was made on (the ArtifactProposal CRD records it); it must match. */
  expectedDigest?: string | undefined;
}

export interface PromotionResult {
  commitId: string;
  /** True when an earlier call already committed this proposal; nothing was written this time. */
  alreadyPromoted: boolean;
}

/** The request cannot be carried out as approved: the file or the proposal moved on (HTTP 409). */
export class PromotionConflictError extends Error {
  override readonly name = "PromotionConflictError";
}

interface Journal {
  proposalId: string;
  path: string;
  previousHead: string | null;
  /** Base64 of the file before promotion, null when it did not exist. */
  previousContent: string | null;
}

const proposalTrailer = "Remram-Proposal";

/** A workspace-relative Markdown path that cannot leave the repository or touch .git. */
export function safeArtifactPath(path: string): string {
  const normalised = normalize(path);
  if (
    isAbsolute(normalised) ||
    normalised.startsWith("..") ||
    normalised.split(sep).some((part) => part === ".git" || part === "..") ||
    !normalised.endsWith(".md")
  ) {
    throw new PromotionConflictError(
      `artifact path ${JSON.stringify(path)} is not a Markdown file inside the workspace`,
    );
  }
  return normalised;
}

async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Lock files git leaves when killed mid-command; under .git, besides any `*.lock` below .git/refs. */
const gitLockFiles = ["index.lock", "HEAD.lock", "ORIG_HEAD.lock", "config.lock", "packed-refs.lock"];

async function lockFilesUnder(directory: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const found: string[] = [];
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) found.push(...(await lockFilesUnder(path)));
    else if (entry.name.endsWith(".lock")) found.push(path);
  }
  return found;
}

/**
 * The repository's folder as given and as the kernel resolves it (git compares safe.directory with the latter
 * when the path runs through a symlink).
 */
function safeDirectories(repoDir: string): string[] {
  const absolute = resolve(repoDir);
  return [...new Set([absolute, realpathSync(absolute)])];
}

/** Files larger than this are not artifacts and are left to the history as they are. */
const maxScrubbedBytes = 4 * 1024 * 1024;

/** The erasure's scrub of blobs and messages: artifacts lose the person's entries, text files their statements. */
export function erasureScrub(erased: ErasedContent): HistoryScrub {
  return {
    blob(content) {
      if (content.length > maxScrubbedBytes) return undefined;
      const text = content.toString("utf8");
      if (!Buffer.from(text, "utf8").equals(content)) return undefined; // not UTF-8 text
      const scrubbed = scrubArtifact(text, erased);
      if (scrubbed.outcome === "unchanged") return undefined;
      return scrubbed.outcome === "deleted" ? "deleted" : Buffer.from(scrubbed.content, "utf8");
    },
    message: (message) => scrubLines(message, erased.phrases).text,
  };
}

export class GitPromoter {
  private readonly git: SimpleGit;
  private readonly gitConfig: string[];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly repoDir: string,
    author: GitIdentity,
  ) {
    // simple-git needs an existing folder; on a fresh volume Cortex's repository folder is not there yet.
    mkdirSync(repoDir, { recursive: true });
    // Per-command config (git's "command" scope), never written to the repository:
    // - safe.directory: the folder may belong to another uid than Cortex's (a volume's subPath that kubelet
    //   created as root, a claim written by an earlier pod under another uid), and git refuses to work in a
    //   repository it deems of dubious ownership. safe.directory counts only in protected configuration
    //   (system, global, command); the command scope is the one Cortex owns without a writable HOME, and it
    //   trusts this repository only. (GIT_CONFIG_COUNT is the same scope, but simple-git refuses it.)
    // - the identity, the same for author and committer.
    this.gitConfig = [
      ...safeDirectories(repoDir).map((directory) => `safe.directory=${directory}`),
      `user.name=${author.name}`,
      `user.email=${author.email}`,
      "commit.gpgSign=false",
    ];
    this.git = simpleGit({
      baseDir: repoDir,
      config: this.gitConfig,
    });
  }

  private get journalPath(): string {
    return join(this.repoDir, ".git", "remram-promotion.json");
  }

  /** Promotions run one at a time: each reads the branch head the previous one left. */
  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Create the repository if the folder has none, remove the lock files a killed process left, and roll back a
   * promotion a crash interrupted. Call once at start, before any promotion: Cortex is the repository's only
   * writer (one replica, Recreate), so every lock file seen then is stale and would block every later commit.
   */
  async prepare(): Promise<{ rolledBack: string | undefined; staleLocks: string[] }> {
    await mkdir(this.repoDir, { recursive: true });
    if ((await readIfExists(join(this.repoDir, ".git", "HEAD"))) === undefined) {
      await this.git.raw(["init", "--quiet"]);
    }
    return this.serialised(async () => {
      const gitDir = join(this.repoDir, ".git");
      const staleLocks = [
        ...gitLockFiles.map((name) => join(gitDir, name)),
        ...(await lockFilesUnder(join(gitDir, "refs"))),
      ];
      const removed: string[] = [];
      for (const lock of staleLocks) {
        if ((await readIfExists(lock)) === undefined) continue;
        await rm(lock, { force: true });
        removed.push(lock.slice(this.repoDir.length + 1));
      }
      return { rolledBack: await this.recover(), staleLocks: removed };
    });
  }

  private async head(): Promise<string | null> {
    const out = await this.git.raw(["rev-parse", "--verify", "--quiet", "HEAD"]).catch(() => "");
    return out.trim() === "" ? null : out.trim();
  }

  /** git fsck and the proposals the history carries out, with this promoter's git config (consistency check). */
  check(): Promise<RepositoryCheck> {
    return checkRepository(this.repoDir, this.gitConfig, proposalTrailer);
  }

  /** The whole repository into a bundle file, between promotions (backup). */
  bundle(bundlePath: string): Promise<BundledRepository> {
    return this.serialised(() => bundleRepository(this.repoDir, this.gitConfig, bundlePath));
  }

  /** An empty repository (or one a cut-short restore of the same bundle filled) filled from a bundle (restore). */
  restore(bundlePath: string, overRestored = false): Promise<BundledRepository> {
    return this.serialised(() => restoreRepository(this.repoDir, this.gitConfig, bundlePath, overRestored));
  }

  /** The commit that promoted `proposalId` on the current branch, if any. */

  async findPromotionCommit(proposalId: string): Promise<string | undefined> {
    if ((await this.head()) === null) return undefined;
    const out = await this.git.raw([
      "log",
      "--format=%H",
      `--grep=^${proposalTrailer}: ${proposalId.replace(/[.*^$[\]\\]/g, "\\$&")}$`,
      "HEAD",
    ]);
    return out.trim().split("\n").filter(Boolean)[0];
  }

  private async recover(): Promise<string | undefined> {
    const raw = await readIfExists(this.journalPath);
    if (raw === undefined) return undefined;
    const journal = JSON.parse(raw.toString("utf8")) as Journal;
    await this.rollBack(journal);
    return journal.proposalId;
  }

  private async rollBack(journal: Journal): Promise<void> {
    const head = await this.head();
    if (head !== journal.previousHead) {
      if (journal.previousHead === null) await this.git.raw(["update-ref", "-d", "HEAD"]);
      else await this.git.raw(["update-ref", "HEAD", journal.previousHead]);
    }
    // Put the index entry back to what the previous head had for this path (or nothing).
    const trackedBefore =
      journal.previousHead !== null &&
      (await this.git.raw(["ls-tree", "--name-only", journal.previousHead, "--", journal.path])).trim() !==
        "";
    if (trackedBefore)
      await this.git.raw(["reset", "--quiet", journal.previousHead as string, "--", journal.path]);
    else await this.git.raw(["rm", "--cached", "--quiet", "--ignore-unmatch", "--", journal.path]);
    const file = join(this.repoDir, journal.path);
    if (journal.previousContent === null) await rm(file, { force: true });
    else await writeAtomically(file, Buffer.from(journal.previousContent, "base64"));
    await rm(this.journalPath, { force: true });
  }

  /**
   * Erase content from the repository: its whole history, index and working tree (history-rewrite.ts), between
   * promotions, after rolling back one a crash interrupted (its journal holds a file's old bytes).
   */
  erase(erased: ErasedContent): Promise<RewriteResult> {
    return this.serialised(async () => {
      await this.recover();
      if ((await readIfExists(join(this.repoDir, ".git", "HEAD"))) === undefined) {
        const nothing = { commitsRewritten: 0, commitsDropped: 0, blobsRewritten: 0, refsUpdated: 0 };
        return { ...nothing, workspace: new Map(), commits: new Map() };
      }
      return HistoryRewrite.run(this.repoDir, this.gitConfig, erasureScrub(erased));
    });
  }

  /**
   * Promote an approved proposal. Checks, in order: the approval matches the proposal (expectedDigest, base);
   * an earlier call already committed it (→ the same commit id, nothing written); the file still has the
   * proposal's base digest and no uncommitted edits (else conflict). Then writes, commits and runs
   * `afterCommit`; if anything throws, every step is undone before the error propagates.
   */
  promote(
    request: PromotionRequest,
    afterCommit: (commitId: string) => Promise<void> = async () => undefined,
  ): Promise<PromotionResult> {
    return this.serialised(async () => {
      await this.recover();
      const { proposal } = request;
      const path = safeArtifactPath(proposal.artifactPath);
      if (request.expectedDigest !== undefined && request.expectedDigest !== proposal.proposedDigest) {
        throw new PromotionConflictError(
          `approval was for ${request.expectedDigest}, the proposal now proposes ${proposal.proposedDigest}`,
        );
      }
      if (request.baseDigest !== undefined && request.baseDigest !== proposal.baseDigest) {
        throw new PromotionConflictError(
          `approval was against base ${request.baseDigest}, the proposal's base is ${proposal.baseDigest ?? "a new file"}`,
        );
      }
      if (sha256Digest(proposal.content) !== proposal.proposedDigest) {
        throw new PromotionConflictError(
          `proposal ${proposal.id} content does not match its proposed digest`,
        );
      }
      // Proposals are drafted redacted; one drafted before that (or tampered with) never reaches git.
      if (redactText(proposal.content) !== proposal.content) {
        throw new PromotionConflictError(
          `proposal ${proposal.id} holds credentials, card numbers or contact details; a new dream cycle drafts it redacted`,
        );
      }
      const earlier = await this.findPromotionCommit(proposal.id);
      if (earlier !== undefined) return { commitId: earlier, alreadyPromoted: true };

      const file = join(this.repoDir, path);
      const before = await readIfExists(file);
      const currentDigest = before === undefined ? undefined : sha256Digest(before);
      if (currentDigest !== proposal.baseDigest) {
        throw new PromotionConflictError(
          `${path} is ${currentDigest ?? "absent"} but the proposal was drafted against ${proposal.baseDigest ?? "no file"}`,
        );
      }
      const status = await this.git.raw(["status", "--porcelain", "--", path]);
      if (status.trim() !== "") {
        throw new PromotionConflictError(`${path} has uncommitted changes in the workspace`);
      }

      const journal: Journal = {
        proposalId: proposal.id,
        path,
        previousHead: await this.head(),
        previousContent: before === undefined ? null : before.toString("base64"),
      };
      await writeAtomically(this.journalPath, JSON.stringify(journal));
      try {
        await writeAtomically(file, proposal.content);
        await this.git.raw(["add", "--", path]);
        const message = [
          `Promote ${path}`,
          "",
          `Proposal ${proposal.id} approved by ${request.approvedBy}.`,
          "",
          `${proposalTrailer}: ${proposal.id}`,
          `Approved-by: ${request.approvedBy}`,
        ].join("\n");
        // --only commits this path alone, whatever else someone staged in the workspace.
        await this.git.raw(["commit", "--quiet", "--only", "-m", message, "--", path]);
        const commitId = (await this.head()) as string;
        await afterCommit(commitId);
        await rm(this.journalPath, { force: true });
        return { commitId, alreadyPromoted: false };
      } catch (error) {
        await this.rollBack(journal);
        throw error;
      }
    });
  }
}
