import type { CortexContext } from "../context.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { request as storeRequest } from "../store/client.js";
import { scanDocuments } from "../store/reads.js";
import type { IndexEntry } from "./service.js";
import type { ArchiveStore } from "./store.js";
import { ArchiveNotFoundError } from "./store-errors.js";
import { planTiering, type TierCandidate, type TierRules } from "./tiering.js";

/**
 * One tiering pass (tiering.ts's rules, applied): the store lists what it holds and where, the summary index says
 * when each document was last recalled, and what the plan names moves down a tier. Run on demand
 * (POST /archive/tiering) and by the scheduler below after archiving; one pass at a time.
 */

export interface TieringOutcome {
  checked: number;
  movedToWarm: number;
  movedToCold: number;
  coldBundles: number;
  durationMs: number;
}

type Context = Pick<CortexContext, "store" | "clock">;

/** Last recall per hash, from the summary index (a document without an entry counts from its archiving). */
async function lastAccesses(context: Context, where: MaturationIndices): Promise<Map<string, string>> {
  const accessed = new Map<string, string>();
  // A recall a moment ago must count: its index update may not be searchable yet.
  await storeRequest(context.store, "POST", `/${where.archive}/_refresh`);
  for await (const page of scanDocuments<Pick<IndexEntry, "hash" | "lastAccessedAt">>(
    context.store,
    where.archive,
    { match_all: {} },
    { pageSize: 2000 },
  )) {
    for (const hit of page) {
      const { hash, lastAccessedAt } = hit._source;
      if (typeof hash === "string" && typeof lastAccessedAt === "string") accessed.set(hash, lastAccessedAt);
    }
  }
  return accessed;
}

export async function runTiering(
  context: Context,
  where: MaturationIndices,
  files: ArchiveStore,
  rules: TierRules,
): Promise<TieringOutcome> {
  const started = Date.now();
  const accessed = await lastAccesses(context, where);
  const candidates: TierCandidate[] = files.entries().map(({ hash, location, archivedAt }) => ({
    hash,
    tier: location.tier,
    size: location.size,
    archivedAt,
    lastAccessedAt: accessed.get(hash),
  }));
  const plan = planTiering(candidates, rules, context.clock().toISOString());
  let movedToWarm = 0;
  for (const hash of plan.toWarm) {
    try {
      await files.moveToWarm(hash);
      movedToWarm += 1;
    } catch (error) {
      // Erased since the plan was made.
      if (!(error instanceof ArchiveNotFoundError)) throw error;
    }
  }
  let movedToCold = 0;
  let coldBundles = 0;
  for (const bundle of plan.toCold) {
    const moved = await files.moveToCold(bundle);
    movedToCold += moved;
    if (moved > 0) coldBundles += 1;
  }
  return {
    checked: candidates.length,
    movedToWarm,
    movedToCold,
    coldBundles,
    durationMs: Date.now() - started,
  };
}

/**
 * Passes one at a time, and the opportunistic one (after an archive write) at most once per interval, so the
 * tiers follow the rules without a schedule of their own; an interval of 0 leaves tiering to the route alone.
 */
export function tieringScheduler(
  run: () => Promise<TieringOutcome>,
  intervalMs: number,
  now: () => number = Date.now,
): { runNow: () => Promise<TieringOutcome>; nudge: (onError: (error: unknown) => void) => void } {
  let running: Promise<TieringOutcome> | undefined;
  let lastStarted = Number.NEGATIVE_INFINITY;
  const runNow = (): Promise<TieringOutcome> => {
    if (running === undefined) {
      lastStarted = now();
      running = run().finally(() => {
        running = undefined;
      });
    }
    return running;
  };
  return {
    runNow,
    nudge: (onError) => {
      if (intervalMs <= 0 || running !== undefined || now() - lastStarted < intervalMs) return;
      runNow().catch(onError);
    },
  };
}
