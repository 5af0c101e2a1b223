/**
 * Recall on a fetched long-conversation dev set (LoCoMo: ten conversations of 19–32 sessions, 5,882 turns,
 * 1,531 questions with turn-level evidence; CC BY-NC 4.0, so it stays in a scratch folder outside the repository),
 * scored through a real Cortex by bench/conversation-cortex.ts.
 *
 *   npx tsx bench/devset-recall.ts /path/to/locomo   (a folder of conversation files or locomo10.json)
 *
 * BENCH_DEVSET_TURNS: plain | speaker | dated (default speaker; conversation-recall.ts renderTurn), several
 * separated by commas to compare them in one run; BENCH_DEVSET_MODES (default "standard"); BENCH_DEVSET_CONVERSATIONS
 * to take the first N; BENCH_EMBED_RUNTIME=ollama embeds through Ollama instead of Cortex's in-process MiniLM;
 * BENCH_DEVSET_TRACES=<file> also writes each question's candidates (turn ids, signal ranks and scores, the feature
 * multiplier; JSON lines) for bench/devset-fusion.ts. Writes bench/results/devset-recall.json (scores only; no text
 * of the set).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { conversationRecall, recallOptionsFromEnv } from "./conversation-cortex.js";
import { loadLocomo, setSize } from "./conversation-recall.js";

const setPath = process.argv[2] ?? process.env.BENCH_DEVSET;
if (setPath === undefined) {
  console.error("usage: npx tsx bench/devset-recall.ts <LoCoMo folder or locomo10.json>");
  process.exit(2);
}
const conversations = loadLocomo(setPath).slice(
  0,
  Number(process.env.BENCH_DEVSET_CONVERSATIONS ?? Infinity),
);

const scores = await conversationRecall({
  conversations,
  ...recallOptionsFromEnv("speaker"),
  modes: (process.env.BENCH_DEVSET_MODES ?? "standard").split(",") as ("standard" | "deep")[],
  runtime: process.env.BENCH_EMBED_RUNTIME === "ollama" ? "ollama" : "onnx",
});
const result = {
  benchmark: "devset-recall",
  finishedAt: new Date().toISOString(),
  set: { name: basename(setPath), ...setSize(conversations) },
  goal: { recallAt10: 0.8, mrr: "above BM25's" },
  ...scores,
};
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, "devset-recall.json"), `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
