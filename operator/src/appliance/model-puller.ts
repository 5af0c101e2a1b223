/**
 * Model pulls as a reconciled step: ask Ollama what it has (/api/tags), start a streamed pull for each missing
 * model in the background (one per model and Ollama), and report the pulls' progress and failures; the reconciler
 * requeues until the tags list every model, and sooner when a pull publishes progress.
 *
 * Resume is Ollama's: it downloads a blob into `<blob>-partial` with a `-partial-<n>` record per part, and a new
 * pull of the same model picks the parts up where they stopped. A pull whose client goes away (the operator
 * restarted, or stop() here) is cancelled by Ollama once no one waits for it, which records each part's bytes;
 * the next reconcile's pull continues from there. A failed pull is reported and started again by the next
 * reconcile.
 */
import { Ollama } from "ollama";
import {
  applyPullEvent,
  initialPullState,
  type PullProgress,
  type PullState,
  pullProgress,
  shouldPublish,
} from "./pull-progress.js";

export interface ListedModel {
  name: string;
  digest?: string;
}

export interface ModelReport {
  listed?: ListedModel[];
  /** Why the models could not be checked at all (Ollama unreachable, not available yet). */
  pullError?: string;
  /** The last failure of each missing model's pull, by model name; kept until a retry gets past the manifest. */
  pullErrors?: ReadonlyMap<string, string>;
  /** The published progress of each missing model's pull, by model name. */
  pulls?: ReadonlyMap<string, PullProgress>;
}

export interface ModelPullerOptions {
  fetchImpl?: typeof fetch;
  now?: () => number;
  /** Least time between two published byte counts of one pull; phase changes are published at once. */
  progressIntervalMs?: number;
  /** Limit for /api/tags; pulls have none (a multi-GB pull takes as long as it takes). */
  tagsTimeoutMs?: number;
}

export interface EnsureOptions {
  /** Hosts pulled from over plain HTTP (Ollama's insecure flag), as spec.ollama.insecureRegistries lists them. */
  insecureRegistries?: readonly string[];
  /**
   * Called when a pull publishes progress, fails or succeeds (the reconciler requeues its appliance), with the
   * model and its published figure (undefined once it succeeded).
   */
  onChange?: PullListener;
}

/** The registry host of a model reference (`host[:port]/ns/name:tag`), or undefined for the default registry. */
export function modelRegistryHost(model: string): string | undefined {
  const slash = model.indexOf("/");
  if (slash === -1) return undefined;
  const first = model.slice(0, slash);
  // As Docker references: a first segment with a dot or a port, or localhost, names a registry.
  return first.includes(".") || first.includes(":") || first === "localhost" ? first : undefined;
}

export type PullListener = (model: string, progress: PullProgress | undefined) => void;

interface RunningPull {
  model: string;
  state: PullState;
  publishedAt: number;
  onChange?: PullListener;
  abort: () => void;
  aborted: boolean;
}

export const defaultProgressIntervalMs = 5_000;
const maxErrorLength = 512;

export class ModelPuller {
  private readonly running = new Map<string, RunningPull>();
  private readonly published = new Map<string, PullProgress>();
  private readonly failures = new Map<string, string>();
  private readonly fetchImpl: typeof fetch;
  private readonly now: () => number;
  private readonly progressIntervalMs: number;
  private readonly tagsTimeoutMs: number;

  constructor(options: ModelPullerOptions = {}) {
    this.fetchImpl = options.fetchImpl ?? fetch;
    this.now = options.now ?? Date.now;
    this.progressIntervalMs = options.progressIntervalMs ?? defaultProgressIntervalMs;
    this.tagsTimeoutMs = options.tagsTimeoutMs ?? 5_000;
  }

  async ensure(
    ollamaUrl: string,
    models: readonly string[],
    options: EnsureOptions = {},
  ): Promise<ModelReport> {
    let listed: ListedModel[];
    try {
      const { models: tags } = await this.client(ollamaUrl).list();
      listed = tags.map((model) => ({ name: model.name, ...(model.digest ? { digest: model.digest } : {}) }));
    } catch (error) {
      return { pullError: `Ollama unreachable: ${errorText(error)}` };
    }
    const names = new Set(listed.flatMap((model) => [model.name, model.name.replace(/:latest$/, "")]));
    const missing = [...new Set(models.filter((model) => !names.has(model)))];
    const insecureRegistries = options.insecureRegistries ?? [];
    const pulls = new Map<string, PullProgress>();
    const pullErrors = new Map<string, string>();
    for (const model of missing) {
      const host = modelRegistryHost(model);
      const insecure = host !== undefined && insecureRegistries.includes(host);
      this.startPull(ollamaUrl, model, insecure, options.onChange);
      const key = pullKey(ollamaUrl, model);
      const progress = this.published.get(key);
      if (progress !== undefined) pulls.set(model, progress);
      const failure = this.failures.get(key);
      if (failure !== undefined) pullErrors.set(model, failure);
    }
    return {
      listed,
      ...(pulls.size > 0 ? { pulls } : {}),
      ...(pullErrors.size > 0 ? { pullErrors } : {}),
    };
  }

  /** Abort every running pull without recording failures (shutdown; Ollama keeps the partial blobs). */
  stop(): void {
    for (const pull of this.running.values()) {
      pull.aborted = true;
      pull.abort();
    }
    this.running.clear();
  }

  /** Whether a pull of `model` into `ollamaUrl` is running now. */
  isPulling(ollamaUrl: string, model: string): boolean {
    return this.running.has(pullKey(ollamaUrl, model));
  }

  /** A client per call: its streamed requests carry their own abort signal; everything else gets the tags limit. */
  private client(ollamaUrl: string): Ollama {
    const fetchImpl = this.fetchImpl;
    const timeoutMs = this.tagsTimeoutMs;
    return new Ollama({
      host: ollamaUrl,
      fetch: (input, init) =>
        fetchImpl(input, init?.signal ? init : { ...init, signal: AbortSignal.timeout(timeoutMs) }),
    });
  }

  private startPull(ollamaUrl: string, model: string, insecure: boolean, onChange?: PullListener): void {
    const key = pullKey(ollamaUrl, model);
    const existing = this.running.get(key);
    if (existing !== undefined) {
      // The latest reconcile's callback: it is the one whose appliance still wants the model.
      if (onChange !== undefined) existing.onChange = onChange;
      return;
    }
    const client = this.client(ollamaUrl);
    const pull: RunningPull = {
      model,
      state: initialPullState,
      publishedAt: this.now(),
      ...(onChange ? { onChange } : {}),
      abort: () => client.abort(),
      aborted: false,
    };
    this.running.set(key, pull);
    void this.runPull(key, client, model, insecure, pull);
  }

  private async runPull(
    key: string,
    client: Ollama,
    model: string,
    insecure: boolean,
    pull: RunningPull,
  ): Promise<void> {
    try {
      const stream = await client.pull({ model, stream: true, ...(insecure ? { insecure: true } : {}) });
      // stop() may have come while the request was being answered, before the stream could be aborted.
      if (pull.aborted) stream.abort();
      // The iterator throws on an `{"error"}` line and when the stream ends without `success`.
      for await (const event of stream) {
        pull.state = applyPullEvent(pull.state, event);
        // A layer line means the retry got past the manifest: the previous failure is history.
        if (event.digest) this.failures.delete(key);
        this.publish(key, pull);
      }
      if (pull.aborted) return;
      this.failures.delete(key);
      this.published.delete(key);
      this.finish(key, pull);
    } catch (error) {
      if (pull.aborted) return;
      this.failures.set(key, `pull failed: ${errorText(error)}`.slice(0, maxErrorLength));
      // Where it stopped stays beside the error (finish() calls back).
      this.published.set(key, pullProgress(pull.state));
      this.finish(key, pull);
    }
  }

  private publish(key: string, pull: RunningPull): void {
    const next = pullProgress(pull.state);
    const now = this.now();
    if (!shouldPublish(this.published.get(key), next, now - pull.publishedAt, this.progressIntervalMs))
      return;
    this.published.set(key, next);
    pull.publishedAt = now;
    pull.onChange?.(pull.model, next);
  }

  private finish(key: string, pull: RunningPull): void {
    if (this.running.get(key) === pull) this.running.delete(key);
    pull.onChange?.(pull.model, this.published.get(key));
  }
}

const pullKey = (ollamaUrl: string, model: string): string => `${ollamaUrl} ${model}`;

/** The error's message with its cause (undici's "terminated" says little without "other side closed"). */
function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && cause !== error.message ? `${error.message} (${cause})` : error.message;
}
