import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { simpleGit } from "simple-git";
import { fsckProblems } from "../core/consistency.js";

export interface RepositoryCheck {
  problems: { id: string; detail: string }[];
  /** Ids of the proposals a commit in HEAD's history names (its Remram-Proposal trailer). */
  promotedProposalIds: Set<string>;
  commits: number;
}

/**
 * How sound the workspace repository is: `git fsck --full` (every object read and hashed) and which proposals its
 * history carries out. Commit ids are not compared with the proposals' records: erasure rewrites history, so a
 * promotion commit is found by its trailer, as promotion itself finds it.
 */
export async function checkRepository(
  repoDir: string,
  /** The promoter's per-command git config (safe.directory for a folder another uid owns). */
  gitConfig: readonly string[],
  proposalTrailer: string,
): Promise<RepositoryCheck> {
  const git = simpleGit({ baseDir: repoDir, config: [...gitConfig] });
  const fsck = fsckProblems(await fsckOutput(repoDir, gitConfig));
  const head = await git.raw(["rev-parse", "--verify", "--quiet", "HEAD"]).catch(() => "");
  if (head.trim() === "") return { problems: fsck, promotedProposalIds: new Set(), commits: 0 };
  let log: string;
  try {
    log = await git.raw([
      "log",
      `--format=%H %(trailers:key=${proposalTrailer},valueonly,separator=%x20)`,
      "HEAD",
    ]);
  } catch (error) {
    const detail = `git log of HEAD failed: ${error instanceof Error ? error.message : String(error)}`;
    return {
      problems: [...fsck, { id: "HEAD", detail: detail.slice(0, 512) }],
      promotedProposalIds: new Set(),
      commits: 0,
    };
  }
  const promotedProposalIds = new Set<string>();
  let commits = 0;
  for (const line of log.split("\n")) {
    const [commit, ...ids] = line.trim().split(" ");
    if (!commit) continue;
    commits++;
    for (const id of ids) if (id !== "") promotedProposalIds.add(id);
  }
  return { problems: fsck, promotedProposalIds, commits };
}

/** Both of fsck's streams, whatever its exit status: it names missing objects on stdout, errors on stderr. */
async function fsckOutput(repoDir: string, gitConfig: readonly string[]): Promise<string> {
  const config = gitConfig.flatMap((entry) => ["-c", entry]);
  try {
    const { stdout, stderr } = await run(
      "git",
      [...config, "fsck", "--full", "--no-progress", "--no-dangling"],
      {
        cwd: repoDir,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return `${stdout}\n${stderr}`;
  } catch (error) {
    const {
      stdout = "",
      stderr = "",
      message,
    } = error as { stdout?: string; stderr?: string; message: string };
    return stdout === "" && stderr === "" ? message : `${stdout}\n${stderr}`;
  }
}

const run = promisify(execFile);
