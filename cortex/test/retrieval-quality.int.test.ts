import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { corpusFactId, corpusPrincipal, knowledgeEventOf, labelledCorpus } from "./fixtures/corpus.js";
import { answerRanks, rankers, summarize } from "./fixtures/quality.js";
import { dropIndices, ingestEvents, retrieveFor, startCortex } from "./helpers.js";

const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ollama = testbedEndpoints("ollama");

describe("retrieval quality on a labelled household corpus (BM25 + MiniLM vectors)", () => {
  let app: FastifyInstance;
  const now = new Date();
  // Small on purpose: it is the corpus docs/cortex-ranking.md tuned on (A); the benchmark runs larger ones.
  const corpus = labelledCorpus(20261122, 40, 5);

  beforeAll(async () => {
    app = await startCortex({
      opensearchUrl,
      ollamaUrl: ollama.url,
      embedModel: ollama.embedModel,
      embedTimeoutMs: 20_000,
      retrieveTimeoutMs: 10_000,
      embedBatchSize: 16,
      embedBatchTimeoutMs: 600_000,
    });
    for (let start = 0; start < corpus.facts.length; start += 50) {
      const answer = await ingestEvents(
        app,
        corpus.facts.slice(start, start + 50).map((fact) => knowledgeEventOf(fact, now)),
      );
      expect(answer.embedded).toBe(true);
    }
  }, 900_000);
  afterAll(async () => {
    await dropIndices(app);
    await app.close();
  });

  it("finds the answer to paraphrased questions, with the hybrid beating BM25 alone and vectors alone", {
    timeout: 900_000,
  }, async () => {
    const ranks: Record<string, (number | null)[]> = { bm25: [], vector: [], hybrid: [] };
    for (const { question, answerKey } of corpus.questions) {
      const answer = await retrieveFor(app, {
        principal: corpusPrincipal,
        requestText: question,
        tokenBudget: 600,
        mode: "deep",
        debug: true,
      });
      expect(answer.degradedReasons).toEqual([]);
      const rank = answerRanks(
        answer.trace ?? { items: [], policyFilterClauses: 0, fusion: "", timingsMs: {} },
        corpusFactId(answerKey),
      );
      for (const ranker of rankers) ranks[ranker]?.push(rank[ranker]);
    }
    const [bm25, vector, hybrid] = rankers.map((ranker) => summarize(ranks[ranker] ?? []));
    console.log(JSON.stringify({ bm25, vector, hybrid }));
    expect(hybrid?.recallAt10).toBeGreaterThan(0.8);
    expect(hybrid?.mrr).toBeGreaterThan(Math.max(bm25?.mrr ?? 0, vector?.mrr ?? 0));
  });

  it("puts the one fact that answers a paraphrase first in the bundle", async () => {
    const answer = await retrieveFor(app, {
      principal: corpusPrincipal,
      requestText: "why can't we update the software on the router",
      tokenBudget: 300,
    });
    expect(answer.facts[0]?.statement).toMatch(/^The router firmware must stay on version/);
    expect(answer.bundle.text).toContain("## constraints");
  });
});
