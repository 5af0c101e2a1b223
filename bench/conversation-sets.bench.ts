/**
 * Recall on the conversation sets the project generates (bench/generated-conversations.ts), through a real Cortex
 * (bench/conversation-cortex.ts): the same scores as the LoCoMo dev set, for `make bench`, which may not hold that
 * set. Writes bench/results/conversation-sets.json.
 *
 * BENCH_SETS_SEEDS: the sets' seeds, comma-separated (default one set); BENCH_SETS_CONVERSATIONS,
 * BENCH_SETS_SESSIONS; BENCH_DEVSET_TURNS and BENCH_DEVSET_TRACES as for devset-recall (default turns
 * "speaker,dated").
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { conversationRecall, recallOptionsFromEnv } from "./conversation-cortex.js";
import { setSize } from "./conversation-recall.js";
import { defaultGeneratedSet, generateConversations } from "./generated-conversations.js";

const recallOptions = recallOptionsFromEnv("speaker,dated");
const seeds = (process.env.BENCH_SETS_SEEDS ?? String(defaultGeneratedSet.seed)).split(",").map(Number);
const options = {
  ...defaultGeneratedSet,
  conversations: Number(process.env.BENCH_SETS_CONVERSATIONS ?? defaultGeneratedSet.conversations),
  sessions: Number(process.env.BENCH_SETS_SESSIONS ?? defaultGeneratedSet.sessions),
};

const sets = [];
for (const seed of seeds) {
  const conversations = generateConversations({ ...options, seed });
  const scores = await conversationRecall({
    conversations,
    ...recallOptions,
    modes: ["standard"],
    runtime: "onnx",
  });
  sets.push({
    seed,
    ...setSize(conversations),
    ...scores,
  });
}
const result = {
  benchmark: "conversation-sets",
  finishedAt: new Date().toISOString(),
  generator: { ...options, seeds },
  goal: { recallAt10: 0.8, mrr: "above BM25's" },
  sets,
};
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, "conversation-sets.json"), `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
