/**
 * The workspace repository in and out of a backup: `git bundle` carries every ref and every object reachable from
 * them (the whole history, as erasure last left it) in one verifiable file. Called through GitPromoter, so a
 * bundle is taken between promotions, never during one, with the promoter's git config.
 */
import { simpleGit } from "simple-git";

export interface BundledRepository {
  /** HEAD's commit, or null for a repository without one (then no bundle is written). */
  head: string | null;
  commits: number;
}

export async function bundleRepository(
  repoDir: string,
  gitConfig: readonly string[],
  bundlePath: string,
): Promise<BundledRepository> {
  const git = simpleGit({ baseDir: repoDir, config: [...gitConfig] });
  const head = (await git.raw(["rev-parse", "--verify", "--quiet", "HEAD"]).catch(() => "")).trim();
  if (head === "") return { head: null, commits: 0 };
  await git.raw(["bundle", "create", "--quiet", bundlePath, "--all"]);
  const commits = Number.parseInt((await git.raw(["rev-list", "--all", "--count"])).trim(), 10);
  return { head, commits };
}

/**
 * Fill an empty repository from a bundle: its branches fetched, HEAD on the branch it was on, the working tree
 * checked out. Refuses a repository that already has a commit, unless `overRestored` (a cut-short restore of the
 * same bundle fetched them: the forced fetch and the hard reset give the same result again); verifies the bundle
 * first.
 */
export async function restoreRepository(
  repoDir: string,
  gitConfig: readonly string[],
  bundlePath: string,
  overRestored = false,
): Promise<BundledRepository> {
  const git = simpleGit({ baseDir: repoDir, config: [...gitConfig] });
  const existing = (await git.raw(["rev-parse", "--verify", "--quiet", "HEAD"]).catch(() => "")).trim();
  if (existing !== "" && !overRestored)
    throw new Error("the workspace repository already has commits; restore needs an empty one");
  await git.raw(["bundle", "verify", "--quiet", bundlePath]);
  const heads = (await git.raw(["bundle", "list-heads", bundlePath]))
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((parts): parts is [string, string] => parts.length === 2);
  const head = heads.find(([, ref]) => ref === "HEAD")?.[0];
  const branch = heads.find(([commit, ref]) => commit === head && ref.startsWith("refs/heads/"))?.[1];
  if (head === undefined || branch === undefined) throw new Error("the bundle names no HEAD branch");
  // The unborn branch of a fresh repository may be the one fetched into.
  await git.raw(["fetch", "--quiet", "--update-head-ok", bundlePath, "+refs/heads/*:refs/heads/*"]);
  await git.raw(["symbolic-ref", "HEAD", branch]);
  await git.raw(["reset", "--quiet", "--hard", "HEAD"]);
  const commits = Number.parseInt((await git.raw(["rev-list", "--all", "--count"])).trim(), 10);
  return { head, commits };
}
