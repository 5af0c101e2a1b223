import { type Dirent, readdirSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { join, relative } from "node:path";
import { writeAtomically } from "./atomic-write.js";
import { GitProcess, ObjectReader } from "./git-objects.js";

/**
 * Rewriting a repository's whole history for an erasure, with git's plumbing only (the git of the Cortex image;
 * no filter-repo, no perl): every commit reachable from any ref (branches, tags, the stash, a detached HEAD) is
 * replayed in topological order with its blobs scrubbed. A commit object is re-made from its own bytes with only the
 * tree and parent lines replaced (author, committer, dates and message stay; a signature, now invalid, goes); a
 * commit the scrub leaves empty is dropped. Refs move in one transaction, the index and working tree get the same
 * scrub, then every reflog is expired and `gc --prune=now` deletes the old objects, so the erased bytes are gone from
 * the object store, not only from history.
 */

export interface HistoryScrub {
  /** New bytes for a blob, "deleted" to drop the file, undefined to keep it. Pure: called once per distinct blob. */
  blob(content: Buffer): Buffer | "deleted" | undefined;
  message(message: string): string;
}

export interface RewriteResult {
  commitsRewritten: number;
  commitsDropped: number;
  blobsRewritten: number;
  refsUpdated: number;
  /** Working-tree files changed, by repository-relative path: their new content, or null when deleted. */
  workspace: Map<string, string | null>;
  /** Old commit id → new one (null: dropped), for the commits that changed. */
  commits: Map<string, string | null>;
}

interface TreeEntry {
  mode: string;
  name: Buffer;
  sha: string;
}

export class HistoryRewrite {
  private readonly git: GitProcess;
  private readonly reader: ObjectReader;
  private hashBytes = 20;
  private emptyTree = "";
  private readonly blobs = new Map<string, string | null>();
  private readonly trees = new Map<string, string>();
  private readonly result: RewriteResult = {
    commitsRewritten: 0,
    commitsDropped: 0,
    blobsRewritten: 0,
    refsUpdated: 0,
    workspace: new Map(),
    commits: new Map(),
  };

  private constructor(
    repoDir: string,
    config: readonly string[],
    private readonly scrub: HistoryScrub,
  ) {
    this.git = new GitProcess(repoDir, config);
    this.reader = new ObjectReader(this.git);
  }

  /** Rewrite history, index and working tree of the repository at `repoDir`, then purge the old objects. */
  static async run(repoDir: string, config: readonly string[], scrub: HistoryScrub): Promise<RewriteResult> {
    const rewrite = new HistoryRewrite(repoDir, config, scrub);
    try {
      return await rewrite.rewrite();
    } finally {
      rewrite.reader.close();
    }
  }

  private async rewrite(): Promise<RewriteResult> {
    const format = (await this.git.run(["rev-parse", "--show-object-format"])).toString().trim();
    this.hashBytes = format === "sha256" ? 32 : 20;
    this.emptyTree = await this.git.write("tree", Buffer.alloc(0));
    const commits = (await this.git.run(["rev-list", "--topo-order", "--reverse", "--all"]))
      .toString()
      .split("\n")
      .filter(Boolean);
    const mapped = new Map<string, string | null>();
    const treeOf = new Map<string, string>();
    for (const commit of commits) await this.rewriteCommit(commit, mapped, treeOf);
    for (const [from, to] of mapped) if (from !== to) this.result.commits.set(from, to);
    await this.moveRefs(mapped);
    await this.rewriteIndex();
    await this.scrubWorkingTree();
    await this.purge();
    return this.result;
  }

  private async rewriteBlob(sha: string): Promise<string | null> {
    const known = this.blobs.get(sha);
    if (known !== undefined) return known;
    const { content } = await this.reader.read(sha);
    const scrubbed = this.scrub.blob(content);
    let next: string | null = sha;
    if (scrubbed === "deleted") next = null;
    else if (scrubbed !== undefined && !scrubbed.equals(content))
      next = await this.git.write("blob", scrubbed);
    if (next !== sha) this.result.blobsRewritten += 1;
    this.blobs.set(sha, next);
    return next;
  }

  private parseTree(content: Buffer): TreeEntry[] {
    const entries: TreeEntry[] = [];
    let at = 0;
    while (at < content.length) {
      const space = content.indexOf(32, at);
      const nul = content.indexOf(0, space);
      entries.push({
        mode: content.subarray(at, space).toString(),
        name: Buffer.from(content.subarray(space + 1, nul)),
        sha: content.subarray(nul + 1, nul + 1 + this.hashBytes).toString("hex"),
      });
      at = nul + 1 + this.hashBytes;
    }
    return entries;
  }

  /** The tree with every blob under it scrubbed; empty subtrees leave (git stores none). Same order as before. */
  private async rewriteTree(sha: string): Promise<string> {
    const known = this.trees.get(sha);
    if (known !== undefined) return known;
    const entries = this.parseTree((await this.reader.read(sha)).content);
    const kept: TreeEntry[] = [];
    for (const entry of entries) {
      let next: string | null = entry.sha;
      if (entry.mode === "40000") {
        next = await this.rewriteTree(entry.sha);
        if (next === this.emptyTree) next = null;
      } else if (entry.mode === "100644" || entry.mode === "100755") {
        next = await this.rewriteBlob(entry.sha);
      }
      if (next !== null) kept.push({ ...entry, sha: next });
    }
    const changed = kept.length !== entries.length || kept.some((e, i) => e.sha !== entries[i]?.sha);
    const next = changed
      ? await this.git.write(
          "tree",
          Buffer.concat(
            kept.flatMap((e) => [
              Buffer.from(`${e.mode} `),
              e.name,
              Buffer.from([0]),
              Buffer.from(e.sha, "hex"),
            ]),
          ),
        )
      : sha;
    this.trees.set(sha, next);
    return next;
  }

  private async rewriteCommit(
    commit: string,
    mapped: Map<string, string | null>,
    treeOf: Map<string, string>,
  ): Promise<void> {
    const raw = (await this.reader.read(commit)).content;
    const split = raw.indexOf("\n\n");
    const header = raw.subarray(0, split).toString("latin1").split("\n");
    const body = raw.subarray(split + 2);
    const tree = header[0]?.slice(5) ?? "";
    const parents = header.filter((line) => line.startsWith("parent ")).map((line) => line.slice(7));
    treeOf.set(commit, tree);
    const newTree = await this.rewriteTree(tree);
    const newParents = [
      ...new Set(parents.map((p) => mapped.get(p)).filter((p): p is string => typeof p === "string")),
    ];
    // A message is scrubbed only when it is UTF-8 that survives a round trip; other bytes are kept as they are.
    const text = body.toString("utf8");
    const message = Buffer.from(text, "utf8").equals(body) ? Buffer.from(this.scrub.message(text)) : body;
    if (
      newTree === tree &&
      message.equals(body) &&
      newParents.length === parents.length &&
      newParents.every((p, i) => p === parents[i])
    ) {
      mapped.set(commit, commit);
      treeOf.set(commit, tree);
      return;
    }
    if (parents.length <= 1) {
      const parentTree = newParents[0] === undefined ? this.emptyTree : treeOf.get(newParents[0]);
      const originalParentTree = parents[0] === undefined ? this.emptyTree : treeOf.get(parents[0]);
      // It changed something, and all it changed was erased: nothing is left to commit.
      if (newTree === parentTree && tree !== originalParentTree) {
        mapped.set(commit, newParents[0] ?? null);
        this.result.commitsDropped += 1;
        return;
      }
    }
    const kept: string[] = [];
    let continuation = false;
    for (const line of header.slice(1)) {
      if (line.startsWith(" ") && continuation) continue;
      continuation = /^(gpgsig|gpgsig-sha256|mergetag) /.test(line);
      if (continuation || line.startsWith("parent ")) continue;
      kept.push(line);
    }
    const rebuilt = Buffer.concat([
      Buffer.from([`tree ${newTree}`, ...newParents.map((p) => `parent ${p}`), ...kept].join("\n"), "latin1"),
      Buffer.from("\n\n"),
      message,
    ]);
    const next = await this.git.write("commit", rebuilt);
    mapped.set(commit, next);
    treeOf.set(next, newTree);
    this.result.commitsRewritten += 1;
  }

  private async rewriteObject(
    sha: string,
    type: string,
    mapped: Map<string, string | null>,
  ): Promise<string | null> {
    if (type === "commit") return mapped.has(sha) ? (mapped.get(sha) ?? null) : sha;
    if (type === "tree") return this.rewriteTree(sha);
    if (type === "blob") return this.rewriteBlob(sha);
    if (type !== "tag") return sha;
    const raw = (await this.reader.read(sha)).content.toString("latin1");
    const [, target = "", targetType = ""] = /^object (\S+)\ntype (\S+)\n/.exec(raw) ?? [];
    const next = await this.rewriteObject(target, targetType, mapped);
    if (next === null) return null;
    if (next === target) return sha;
    // A signature over the old object no longer holds.
    const unsigned = raw.replace(/-----BEGIN (PGP|SSH) SIGNATURE-----[\s\S]*$/, "");
    return this.git.write(
      "tag",
      Buffer.from(unsigned.replace(`object ${target}\n`, `object ${next}\n`), "latin1"),
    );
  }

  private async moveRefs(mapped: Map<string, string | null>): Promise<void> {
    const refs = (await this.git.run(["for-each-ref", "--format=%(objectname) %(objecttype) %(refname)"]))
      .toString()
      .split("\n")
      .filter(Boolean);
    const commands: string[] = [];
    for (const line of refs) {
      const [sha = "", type = "", ref = ""] = line.split(" ");
      const next = await this.rewriteObject(sha, type, mapped);
      if (next === sha) continue;
      commands.push(next === null ? `delete ${ref} ${sha}` : `update ${ref} ${next} ${sha}`);
    }
    const detached = await this.git.run(["symbolic-ref", "-q", "HEAD"], undefined, [0, 1]);
    if (detached.length === 0) {
      const head = (await this.git.run(["rev-parse", "--verify", "-q", "HEAD"], undefined, [0, 1]))
        .toString()
        .trim();
      const next = head === "" ? head : mapped.get(head);
      if (head !== "" && next !== head) {
        commands.push(
          next ? `option no-deref\nupdate HEAD ${next} ${head}` : `option no-deref\ndelete HEAD ${head}`,
        );
      }
    }
    if (commands.length === 0) return;
    await this.git.run(["update-ref", "--stdin"], `start\n${commands.join("\n")}\nprepare\ncommit\n`);
    this.result.refsUpdated = commands.length;
  }

  /** Staged entries get the same scrub (an index entry keeps its blob alive through gc). */
  private async rewriteIndex(): Promise<void> {
    const entries = (await this.git.run(["ls-files", "-s", "-z"]))
      .toString("latin1")
      .split("\0")
      .filter(Boolean);
    const zero = "0".repeat(this.hashBytes * 2);
    const lines: string[] = [];
    for (const entry of entries) {
      const [meta = "", path = ""] = entry.split("\t");
      const [mode = "", sha = "", stage = "0"] = meta.split(" ");
      if (mode !== "100644" && mode !== "100755") continue;
      const next = await this.rewriteBlob(sha);
      if (next === sha) continue;
      lines.push(next === null ? `0 ${zero}\t${path}` : `${mode} ${next} ${stage}\t${path}`);
    }
    if (lines.length > 0)
      await this.git.run(
        ["update-index", "-z", "--index-info"],
        Buffer.from(`${lines.join("\0")}\0`, "latin1"),
      );
  }

  /** Every file of the working tree, tracked or not (a leftover temporary file is a copy too). */
  private async scrubWorkingTree(): Promise<void> {
    const root = this.git.repoDir;
    const files = readdirSync(root, { recursive: true, withFileTypes: true }).filter(
      (entry: Dirent) =>
        entry.isFile() && !relative(root, join(entry.parentPath, entry.name)).split("/").includes(".git"),
    );
    for (const entry of files) {
      const path = join(entry.parentPath, entry.name);
      const content = await readFile(path);
      const scrubbed = this.scrub.blob(content);
      if (scrubbed === undefined || (scrubbed !== "deleted" && scrubbed.equals(content))) continue;
      const name = relative(root, path);
      if (scrubbed === "deleted") {
        await rm(path, { force: true });
        this.result.workspace.set(name, null);
      } else {
        await writeAtomically(path, scrubbed);
        this.result.workspace.set(name, scrubbed.toString("utf8"));
      }
    }
    await this.git.run(["update-index", "-q", "--refresh"], undefined, [0, 1]);
  }

  /** Old objects stay reachable through reflogs and ORIG_HEAD-style files until these go; then gc deletes them. */
  private async purge(): Promise<void> {
    for (const file of ["ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "COMMIT_EDITMSG"]) {
      await rm(join(this.git.repoDir, ".git", file), { force: true });
    }
    await this.git.run(["reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all"]);
    await this.git.run(["gc", "--prune=now", "--quiet"]);
  }
}
