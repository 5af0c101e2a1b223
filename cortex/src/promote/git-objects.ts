import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { deflateSync } from "node:zlib";

/** The git binary as the history rewrite drives it: one command at a time, and one reader for every object. */

export class GitProcess {
  constructor(
    readonly repoDir: string,
    private readonly config: readonly string[],
  ) {}

  spawnArgs(args: readonly string[]): string[] {
    return [...this.config.flatMap((entry) => ["-c", entry]), ...args];
  }

  run(args: readonly string[], input?: Buffer | string, okCodes: readonly number[] = [0]): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const child = spawn("git", this.spawnArgs(args), {
        cwd: this.repoDir,
        stdio: ["pipe", "pipe", "pipe"],
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
      child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
      child.on("error", reject);
      child.on("close", (code) => {
        if (okCodes.includes(code ?? -1)) resolve(Buffer.concat(out));
        else
          reject(
            new Error(`git ${args.join(" ")}: ${Buffer.concat(err).toString().trim() || `exit ${code}`}`),
          );
      });
      // A command that reads no input may exit before it is written: its exit code tells, not the broken pipe.
      child.stdin.on("error", () => undefined);
      child.stdin.end(input ?? "");
    });
  }

  private store: { objects: string; algorithm: "sha1" | "sha256" } | undefined;

  /**
   * Store an object as git does (a loose object: the zlib-deflated `<type> <size>\0<content>`, named by its hash),
   * written here rather than by `git hash-object` per object: a rewrite makes several objects per commit, and a
   * process each made 1,000 commits take 19 s instead of 4. Written to a temporary name and renamed, so an
   * interrupted write leaves no half object; `git gc` packs them later.
   */
  async write(type: "blob" | "tree" | "commit" | "tag", content: Buffer): Promise<string> {
    this.store ??= {
      objects: resolve(
        this.repoDir,
        (await this.run(["rev-parse", "--git-path", "objects"])).toString().trim(),
      ),
      algorithm:
        (await this.run(["rev-parse", "--show-object-format"])).toString().trim() === "sha256"
          ? "sha256"
          : "sha1",
    };
    const full = Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]);
    const hash = createHash(this.store.algorithm).update(full).digest("hex");
    const path = join(this.store.objects, hash.slice(0, 2), hash.slice(2));
    if (existsSync(path)) return hash;
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(temporary, deflateSync(full), { flag: "wx", mode: 0o444 });
    await rename(temporary, path);
    return hash;
  }
}

/** One `git cat-file --batch` for every read: spawning git per object would dominate the rewrite. */
export class ObjectReader {
  private readonly child;
  private buffer = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  private failure: Error | undefined;

  constructor(git: GitProcess) {
    this.child = spawn("git", git.spawnArgs(["cat-file", "--batch"]), { cwd: git.repoDir });
    this.child.stdin.on("error", (error: Error) => {
      this.failure = error;
      this.wake?.();
    });
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake?.();
    });
    const fail = (error: Error) => {
      this.failure = error;
      this.wake?.();
    };
    this.child.on("error", fail);
    this.child.on("close", () => fail(new Error("git cat-file ended")));
  }

  async read(sha: string): Promise<{ type: string; content: Buffer }> {
    this.child.stdin.write(`${sha}\n`);
    for (;;) {
      const newline = this.buffer.indexOf(10);
      if (newline >= 0) {
        const [, type = "", size = ""] = this.buffer.subarray(0, newline).toString().split(" ");
        if (type === "missing") throw new Error(`git object ${sha} is missing`);
        const end = newline + 1 + Number(size);
        if (this.buffer.length > end) {
          const content = Buffer.from(this.buffer.subarray(newline + 1, end));
          this.buffer = this.buffer.subarray(end + 1);
          return { type, content };
        }
      }
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  close(): void {
    this.child.stdin.end();
  }
}
