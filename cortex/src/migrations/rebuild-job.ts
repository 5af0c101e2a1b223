/**
 * The knowledge index rebuild after an upgrade (store/rebuild.ts), run in the background once the indices are set
 * up: Cortex is ready and answers reads from the old index meanwhile. A failure leaves the old index serving and is
 * tried again after `retryMs`; a restart starts over. The kept indices are swept at start and every few hours:
 * one whose retention passed is deleted; an admin's confirmation deletes them all sooner.
 */
import type { MigrationStatus } from "@remram/contract";
import type { CortexStore } from "../store/client.js";
import {
  deleteKeptIndices,
  expiredKept,
  type KeptIndex,
  keptIndices,
  knowledgeRebuildPlan,
  type RebuildPlan,
  rebuildIndex,
} from "../store/rebuild.js";
import { templateVersion } from "../store/templates.js";

export interface RebuildJobOptions {
  retryMs: number;
  keepDays: number;
  docsPerSecond?: number;
  clock: () => Date;
  onError: (error: unknown) => void;
  onRebuilt: (plan: RebuildPlan, documents: number) => void;
  onDeleted: (indices: string[]) => void;
}

const sixHoursMs = 6 * 3_600_000;
const describe = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500);

export class RebuildBusyError extends Error {
  override readonly name = "RebuildBusyError";
}

export class KnowledgeRebuild {
  private state: MigrationStatus["state"] = "starting";
  private rebuild: MigrationStatus["rebuild"];
  private waiting: string | undefined;
  private kept: KeptIndex[] = [];
  private stopped = false;
  private running: Promise<void> | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private plan: RebuildPlan | undefined;

  constructor(
    private readonly store: CortexStore,
    private readonly options: RebuildJobOptions,
  ) {}

  /** Whether writes must wait: the old index is write-blocked until the alias moves. */
  get rebuilding(): boolean {
    return this.state === "rebuilding" || this.state === "waiting";
  }

  /** The sentence a held write's 503 carries. */
  holdMessage(): string {
    const progress =
      this.rebuild === undefined ? "" : ` (${this.rebuild.copied} of ${this.rebuild.total} copied)`;
    return `Cortex is rebuilding its knowledge index after an upgrade${progress}; reads go on, writes are accepted again when it finishes: retry shortly`;
  }

  status(): MigrationStatus {
    const { keepDays } = this.options;
    return {
      templateVersion,
      state: this.state,
      ...(this.rebuild ? { rebuild: { ...this.rebuild } } : {}),
      ...(this.waiting ? { waiting: this.waiting } : {}),
      kept: this.kept.map((entry) => ({
        ...entry,
        ...(entry.replacedAt
          ? { deleteAfter: new Date(Date.parse(entry.replacedAt) + keepDays * 86_400_000).toISOString() }
          : {}),
      })),
      keepDays,
    };
  }

  /**
   * Find whether a rebuild is due: part of Cortex's set-up (it may throw, and set-up is tried again), so no write
   * slips past a rebuild that is due.
   */
  async prepare(): Promise<void> {
    this.plan = await knowledgeRebuildPlan(this.store);
    if (this.plan !== undefined) this.state = "rebuilding";
  }

  /** Run what `prepare` found, and the retention sweep, in the background. */
  start(): void {
    this.running = this.run(this.plan);
    this.sweeper = setInterval(() => void this.sweep().catch(this.options.onError), sixHoursMs);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweeper);
    await this.running;
  }

  /** An admin's confirmation: the kept indices go now (a rollback past the migration is no longer possible). */
  async confirm(): Promise<string[]> {
    if (this.rebuilding) throw new RebuildBusyError(this.holdMessage());
    const kept = await keptIndices(this.store);
    const deleted = await deleteKeptIndices(this.store, kept);
    this.kept = kept.filter((entry) => !deleted.includes(entry.index));
    if (deleted.length > 0) this.options.onDeleted(deleted);
    return deleted;
  }

  private async run(first: RebuildPlan | undefined): Promise<void> {
    let plan = first;
    while (!this.stopped) {
      try {
        if (plan !== undefined) await this.rebuildOnce(plan);
        // What is kept is known when the state turns current; the sweep may delete some of it just after.
        this.kept = await keptIndices(this.store).catch(() => this.kept);
        this.state = "current";
        this.waiting = undefined;
        break;
      } catch (error) {
        if (this.stopped) return;
        this.options.onError(error);
        if (this.rebuild !== undefined) this.state = "waiting";
        this.waiting = describe(error);
        await new Promise((resolve) => setTimeout(resolve, this.options.retryMs).unref());
        plan = await knowledgeRebuildPlan(this.store).catch(() => plan);
      }
    }
    // A failed sweep holds nothing up: the next one runs in a few hours.
    if (!this.stopped) await this.sweep().catch(this.options.onError);
  }

  private async rebuildOnce(plan: RebuildPlan): Promise<void> {
    const { clock, docsPerSecond } = this.options;
    this.state = "rebuilding";
    this.rebuild = {
      from: plan.from,
      to: plan.to,
      fromTemplateVersion: plan.fromTemplateVersion,
      startedAt: clock().toISOString(),
      total: 0,
      copied: 0,
    };
    const rebuild = this.rebuild;
    const done = await rebuildIndex(this.store, plan, {
      ...(docsPerSecond === undefined ? {} : { docsPerSecond }),
      now: clock,
      stopped: () => this.stopped,
      onProgress: ({ total, copied }) => {
        rebuild.total = total;
        rebuild.copied = copied;
      },
    });
    rebuild.finishedAt = clock().toISOString();
    this.options.onRebuilt(plan, done.copied);
  }

  private async sweep(): Promise<void> {
    const kept = await keptIndices(this.store);
    const expired = expiredKept(kept, this.options.clock(), this.options.keepDays);
    const deleted = expired.length > 0 ? await deleteKeptIndices(this.store, expired) : [];
    this.kept = kept.filter((entry) => !deleted.includes(entry.index));
    if (deleted.length > 0) this.options.onDeleted(deleted);
  }
}
