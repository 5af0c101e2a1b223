/** What the archive store reports besides documents: a file that no longer matches its hash, a hash it lacks. */

export class ArchiveIntegrityError extends Error {
  override readonly name = "ArchiveIntegrityError";
  constructor(
    readonly hash: string,
    readonly location: string,
    readonly actualHash: string,
  ) {
    super(`archive file ${location} should hash to ${hash} but hashes to ${actualHash}`);
  }
}

export class ArchiveNotFoundError extends Error {
  override readonly name = "ArchiveNotFoundError";
  constructor(readonly hash: string) {
    super(`no archived document ${hash}`);
  }
}

export interface VerifyResult {
  hash: string;
  ok: boolean;
  location: string;
  problem?: string;
}

export function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}
