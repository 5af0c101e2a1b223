/**
 * How the two candidate lists should be fused, measured offline on saved candidates (bench/fusion.ts): from
 * bench/devset-recall.ts (BENCH_DEVSET_TRACES, conversation chunks) or bench/retrieve.bench.ts
 * (BENCH_QUALITY_TRACES, the labelled corpus's facts), re-fused under each setting of a grid without asking Cortex
 * again. Prints the settings ranked by MRR, with recall@5/10/20, beside what Cortex ranked and each list alone.
 *
 *   npx tsx bench/devset-fusion.ts /scratch/traces.jsonl   (TOP=n rows, default 25)
 */
import { readFileSync } from "node:fs";
import { scoreRanking, summarizeByKind } from "./conversation-recall.js";
import { asRanked, bySignal, describeFusion, fuse, fusionGrid, type TracedQuestion } from "./fusion.js";

const file = process.argv[2];
if (file === undefined) {
  console.error("usage: npx tsx bench/devset-fusion.ts <traces.jsonl>");
  process.exit(2);
}
const traced = readFileSync(file, "utf8")
  .split("\n")
  .filter((line) => line !== "")
  .map((line) => JSON.parse(line) as TracedQuestion);
const ks = [5, 10, 20];
const score = (rank: (question: TracedQuestion) => string[]) =>
  summarizeByKind(
    traced.map((question) =>
      scoreRanking(rank(question), { question: "", kind: question.kind, evidence: question.evidence }, ks),
    ),
    ks,
  );
const rows = [
  { name: "as Cortex ranked", summary: score((q) => asRanked(q.candidates)) },
  { name: "bm25 alone", summary: score((q) => bySignal(q.candidates, "bm25Rank")) },
  { name: "vector alone", summary: score((q) => bySignal(q.candidates, "knnRank")) },
  ...fusionGrid().map((fusion) => ({
    name: describeFusion(fusion),
    summary: score((q) => fuse(q.candidates, fusion)),
  })),
].sort((a, b) => b.summary.all.mrr - a.summary.all.mrr);
console.log(`${traced.length} questions`);
for (const { name, summary } of rows.slice(0, Number(process.env.TOP ?? 25))) {
  const kinds = Object.entries(summary.byKind)
    .map(([kind, of]) => `${kind} ${of?.recall["@10"]}`)
    .join(", ");
  console.log(
    `${name.padEnd(40)} MRR ${summary.all.mrr.toFixed(3)}  R@5 ${summary.all.recall["@5"]}  R@10 ${summary.all.recall["@10"]}  R@20 ${summary.all.recall["@20"]}  (R@10 ${kinds})`,
  );
}
for (const name of ["as Cortex ranked", "bm25 alone", "vector alone"]) {
  const row = rows.find((candidate) => candidate.name === name);
  console.log(`${name}: rank ${rows.indexOf(row as (typeof rows)[number]) + 1} of ${rows.length}`);
}
