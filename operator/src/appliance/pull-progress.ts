/**
 * Pure parts of a streamed model pull: fold Ollama's /api/pull progress lines into one figure per model, decide
 * when a new figure is worth a status write, and word the ModelsReady message.
 *
 * Ollama 0.24 streams `{"status": "pulling manifest"}`, then for each layer (weights first, then the small
 * template/params/license layers and the config) about 16 lines a second of `{"status": "pulling <12 hex>",
 * "digest", "total", "completed"}`, then `verifying sha256 digest`, `writing manifest`, `success`. Layers are
 * downloaded one after another and each is announced only when its download starts, so the total grows as layers
 * appear; the weights come first and are nearly all of the bytes, so the percentage is meaningful from the start.
 */

/** One line of Ollama's pull stream (the fields it sends; digest, total and completed only on layer lines). */
export interface PullEvent {
  status: string;
  digest?: string;
  total?: number;
  completed?: number;
}

/** The aggregate of a pull so far. */
export interface PullProgress {
  /** Ollama's latest status line; every "pulling <digest>" layer line reads "downloading". */
  status: string;
  completedBytes: number;
  totalBytes: number;
  /** Whole percent of the announced bytes, floored: 100 only once every announced byte is there. */
  percent: number;
}

/** Per-layer byte counts, keyed by digest, and the latest status line. */
export interface PullState {
  status: string;
  layers: ReadonlyMap<string, { total: number; completed: number }>;
}

export const initialPullState: PullState = { status: "starting", layers: new Map() };

export const downloadingStatus = "downloading";

/** Fold one stream line into the state (a new state; the old one is left as it was). */
export function applyPullEvent(state: PullState, event: PullEvent): PullState {
  if (event.digest === undefined || event.digest === "") {
    return { status: event.status, layers: state.layers };
  }
  const layers = new Map(state.layers);
  // Ollama reports a layer's current count, which goes back when a failed part's bytes are rolled back: take it
  // as it is rather than a maximum, so the figure never claims bytes Ollama no longer has.
  layers.set(event.digest, {
    total: Math.max(0, event.total ?? 0),
    completed: Math.max(0, event.completed ?? 0),
  });
  return { status: downloadingStatus, layers };
}

export function pullProgress(state: PullState): PullProgress {
  let completedBytes = 0;
  let totalBytes = 0;
  for (const layer of state.layers.values()) {
    completedBytes += Math.min(layer.completed, layer.total);
    totalBytes += layer.total;
  }
  const percent = totalBytes > 0 ? Math.floor((completedBytes * 100) / totalBytes) : 0;
  return { status: state.status, completedBytes, totalBytes, percent };
}

/**
 * Whether a new figure should replace the published one (and so reach the appliance's status). A phase change
 * (manifest → downloading → verifying → writing manifest → success) always does; byte counts only once
 * `intervalMs` has passed since the last publication, so a pull writes status every few seconds, not per line.
 */
export function shouldPublish(
  published: PullProgress | undefined,
  next: PullProgress,
  msSincePublished: number,
  intervalMs: number,
): boolean {
  if (published === undefined || published.status !== next.status) return true;
  if (published.completedBytes === next.completedBytes && published.totalBytes === next.totalBytes) {
    return false;
  }
  return msSincePublished >= intervalMs;
}

/** Decimal units as Ollama prints them: "430 MB", "4.3 GB", "512 B". */
export function formatBytes(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  if (unit === 0) return `${bytes} B`;
  const shown = value < 10 ? value.toFixed(1) : Math.floor(value).toString();
  return `${shown} ${units[unit]}`;
}

/** One model's part of the message: "embed-model 42% (180 MB of 430 MB)", "qwen3:8b: pulling manifest". */
export function describePull(model: string, progress: PullProgress | undefined): string {
  if (progress === undefined) return model;
  if (progress.totalBytes === 0) return `${model}: ${progress.status}`;
  const figures = `${model} ${progress.percent}% (${formatBytes(progress.completedBytes)} of ${formatBytes(progress.totalBytes)})`;
  return progress.status === downloadingStatus ? figures : `${figures}, ${progress.status}`;
}

/** The ModelsReady message while pulls run: "pulling embed-model 42% (180 MB of 430 MB); qwen3:8b: …". */
export function pullingMessage(
  models: readonly string[],
  progress: ReadonlyMap<string, PullProgress> | undefined,
): string {
  return `pulling ${models.map((model) => describePull(model, progress?.get(model))).join("; ")}`;
}
