/**
 * Rebuilding the knowledge index when a template change cannot be made in place (a field's analyzer: OpenSearch
 * fixes it when the field is created). The new index is built beside the live one from the current template, the
 * live one keeps serving reads through the alias, and the alias moves in one step at the end. The old index stays,
 * write-blocked, until an admin confirms or the retention passes: a `helm rollback` finds its data where it left it.
 *
 * Writes are held while the copy runs (the old index is write-blocked, so nothing written meanwhile is left
 * behind); the app answers them 503 with the progress (migrations/). `_reindex` runs as an OpenSearch task, which
 * outlives the process that started it: the copy records its task in `_meta.rebuildTask`, so a Cortex restarted
 * halfway cancels it before copying again.
 */
import { type CortexStore, request } from "./client.js";
import { aliasedIndices, moveAlias, readMapping } from "./generations.js";
import { concreteIndex, knowledgeRebuiltBelow, templateVersion } from "./templates.js";

/** What `_meta` of a knowledge index records about its rebuild. */
interface RebuildMeta {
  templateVersion?: number;
  owner?: string;
  /** On a copy still being made: the `_reindex` task filling it. */
  rebuildTask?: string;
  /** On a finished copy: the index it was built from, and when the alias moved to it. */
  rebuiltFrom?: string;
  rebuiltAt?: string;
}

/** A rebuild to run: the index the alias names now and the one to build. */
export interface RebuildPlan {
  alias: string;
  from: string;
  to: string;
  fromTemplateVersion: number;
}

export interface RebuildProgress {
  total: number;
  copied: number;
}

/** A knowledge index kept after its rebuild, and when its replacement took over (unknown when nothing says). */
export interface KeptIndex {
  index: string;
  replacedBy?: string;
  replacedAt?: string;
}

/** Pure: whether an index built from `fromVersion` must be rebuilt, and into which index. */
export function rebuildTarget(alias: string, current: string, fromVersion: number): RebuildPlan | undefined {
  if (fromVersion >= knowledgeRebuiltBelow) return undefined;
  const to = concreteIndex(alias);
  if (to === current) return undefined;
  return { alias, from: current, to, fromTemplateVersion: fromVersion };
}

/** The rebuild the knowledge index needs, if any (read at start-up, after the templates are in place). */
export async function knowledgeRebuildPlan(store: CortexStore): Promise<RebuildPlan | undefined> {
  const alias = store.indices.knowledge;
  const [current] = await aliasedIndices(store, alias);
  if (current === undefined) return undefined;
  const mapping = await readMapping(store, current);
  return rebuildTarget(alias, current, mapping._meta?.templateVersion ?? 0);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

async function writeMeta(store: CortexStore, index: string, meta: RebuildMeta): Promise<void> {
  await request(store, "PUT", `/${index}/_mapping`, {
    _meta: { templateVersion, owner: "remram-cortex", ...meta },
  });
}

async function count(store: CortexStore, index: string): Promise<number> {
  const { body } = await request<{ count: number }>(store, "GET", `/${index}/_count`);
  return body.count;
}

export interface TaskStatus {
  completed: boolean;
  task?: { status?: { created?: number; updated?: number } };
  response?: { failures?: unknown[] };
  error?: { reason?: string };
}

/**
 * Poll an OpenSearch task until it completes; `onPoll` sees each state (and may throw to stop waiting). Undefined
 * when the task is not known (already gone).
 */
export async function waitForTask(
  store: CortexStore,
  task: string,
  pollMs: number,
  onPoll?: (state: TaskStatus) => void,
): Promise<TaskStatus | undefined> {
  for (;;) {
    const { statusCode, body } = await request<TaskStatus>(store, "GET", `/_tasks/${task}`, undefined, {
      ignore: [404],
    });
    if (statusCode === 404) return undefined;
    onPoll?.(body);
    if (body.completed) return body;
    await sleep(pollMs);
  }
}

/**
 * Stop a copy an earlier run left: cancel its task (a role that may not cancel tasks waits for it to end instead),
 * then delete the partial index. A task already gone is fine.
 */
async function discardPartialCopy(store: CortexStore, index: string, pollMs: number): Promise<void> {
  const { statusCode, body } = await request<Record<string, { mappings?: { _meta?: RebuildMeta } }>>(
    store,
    "GET",
    `/${index}/_mapping`,
    undefined,
    { ignore: [404] },
  );
  if (statusCode === 404) return;
  const task = body[index]?.mappings?._meta?.rebuildTask;
  if (task !== undefined) {
    const cancel = await request(store, "POST", `/_tasks/${task}/_cancel`, undefined, { ignore: [403, 404] });
    if (cancel.statusCode !== 404) await waitForTask(store, task, pollMs);
  }
  await request(store, "DELETE", `/${index}`, undefined, { ignore: [404] });
}

export interface RebuildOptions {
  /** `_reindex`'s requests_per_second: documents a second; unthrottled when absent. */
  docsPerSecond?: number;
  pollMs?: number;
  onProgress?: (progress: RebuildProgress) => void;
  /** Asked between polls: a closing app stops waiting (the task is cancelled at the next start). */
  stopped?: () => boolean;
  now?: () => Date;
}

/**
 * Run the rebuild: block writes to the old index, copy it with `_reindex` as a task, check the copy holds every
 * document, record where it came from, move the alias. Idempotent: run again after a failure or a restart, it
 * discards a partial copy and starts over; the old index is never written to.
 */
export async function rebuildIndex(
  store: CortexStore,
  plan: RebuildPlan,
  options: RebuildOptions = {},
): Promise<RebuildProgress> {
  const pollMs = options.pollMs ?? 1_000;
  await request(store, "PUT", `/${plan.from}/_settings`, { "index.blocks.write": true });
  await discardPartialCopy(store, plan.to, pollMs);
  const total = await count(store, plan.from);
  const progress = { total, copied: 0 };
  options.onProgress?.(progress);
  // The index template for `<alias>-v*` gives the copy the current mappings and analyzers.
  await request(store, "PUT", `/${plan.to}`, undefined, { retries: 2 });
  const { docsPerSecond } = options;
  const throttle = docsPerSecond === undefined ? "" : `&requests_per_second=${docsPerSecond}`;
  // A throttled copy reads batches no bigger than a second's worth, so it moves evenly instead of in bursts.
  const batch = Math.min(1_000, docsPerSecond ?? 1_000);
  const { body: started } = await request<{ task: string }>(
    store,
    "POST",
    `/_reindex?wait_for_completion=false&slices=1${throttle}`,
    { source: { index: plan.from, size: batch }, dest: { index: plan.to, op_type: "create" } },
  );
  await writeMeta(store, plan.to, { rebuildTask: started.task });
  const state = await waitForTask(store, started.task, pollMs, (polled) => {
    if (options.stopped?.()) throw new Error(`rebuild of ${plan.from} stopped before it finished`);
    const status = polled.task?.status;
    progress.copied = (status?.created ?? 0) + (status?.updated ?? 0);
    options.onProgress?.(progress);
  });
  if (state === undefined) throw new Error(`the copy task of ${plan.from} is gone before it finished`);
  const failures = state.response?.failures ?? [];
  if (state.error !== undefined || failures.length > 0)
    throw new Error(
      `copying ${plan.from} into ${plan.to} failed: ${(state.error?.reason ?? JSON.stringify(failures[0])).slice(0, 500)}`,
    );
  await request(store, "POST", `/${plan.to}/_refresh`);
  const copied = await count(store, plan.to);
  if (copied !== total)
    throw new Error(
      `the copy ${plan.to} holds ${copied} documents of ${total} in ${plan.from}; not switching`,
    );
  progress.copied = copied;
  const rebuiltAt = (options.now?.() ?? new Date()).toISOString();
  await writeMeta(store, plan.to, { rebuiltFrom: plan.from, rebuiltAt });
  await moveAlias(store, plan.alias, plan.from, plan.to);
  return progress;
}

/**
 * Pure: the kept indices, from every `<alias>-v*` index and its `_meta`: those the alias does not name, with the
 * time their replacement took over when a rebuilt index names them in `rebuiltFrom`.
 */
export function keptFrom(
  live: readonly string[],
  metas: Readonly<Record<string, RebuildMeta | undefined>>,
): KeptIndex[] {
  const replacements = new Map<string, { index: string; at?: string }>();
  for (const [index, meta] of Object.entries(metas)) {
    if (meta?.rebuiltFrom !== undefined)
      replacements.set(meta.rebuiltFrom, { index, ...(meta.rebuiltAt ? { at: meta.rebuiltAt } : {}) });
  }
  return Object.keys(metas)
    .filter((index) => !live.includes(index) && metas[index]?.rebuildTask === undefined)
    .sort()
    .map((index) => {
      const replacement = replacements.get(index);
      return {
        index,
        ...(replacement ? { replacedBy: replacement.index } : {}),
        ...(replacement?.at ? { replacedAt: replacement.at } : {}),
      };
    });
}

/** Pure: the kept indices whose retention has passed; one whose replacement time is unknown waits for an admin. */
export function expiredKept(kept: readonly KeptIndex[], now: Date, keepDays: number): KeptIndex[] {
  const cutoff = now.getTime() - keepDays * 86_400_000;
  return kept.filter((entry) => entry.replacedAt !== undefined && Date.parse(entry.replacedAt) <= cutoff);
}

/** The knowledge indices kept after a rebuild (write-blocked, no longer behind the alias). */
export async function keptIndices(store: CortexStore): Promise<KeptIndex[]> {
  const alias = store.indices.knowledge;
  const { statusCode, body } = await request<Record<string, { mappings?: { _meta?: RebuildMeta } }>>(
    store,
    "GET",
    `/${alias}-v*/_mapping`,
    undefined,
    { ignore: [404] },
  );
  if (statusCode === 404) return [];
  const metas = Object.fromEntries(
    Object.entries(body).map(([index, mapping]) => [index, mapping.mappings?._meta]),
  );
  return keptFrom(await aliasedIndices(store, alias), metas);
}

/** Delete kept indices (never the one the alias names); returns the names deleted. */
export async function deleteKeptIndices(store: CortexStore, kept: readonly KeptIndex[]): Promise<string[]> {
  const live = await aliasedIndices(store, store.indices.knowledge);
  const deleted: string[] = [];
  for (const { index } of kept) {
    if (live.includes(index)) continue;
    await request(store, "DELETE", `/${index}`, undefined, { ignore: [404] });
    deleted.push(index);
  }
  return deleted;
}
