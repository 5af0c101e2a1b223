/**
 * Test support: start, kill and restart the real Cortex (testing/cortex-entry.ts) on a fixed port and index
 * prefix, against the test bed's OpenSearch (and Ollama for embeddings).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { repoRoot, runDir } from "../../../test/harness/src/paths.js";
import { freePort } from "../../../test/harness/src/ports.js";
import { type ManagedProcess, spawnService } from "../../../test/harness/src/process.js";
import { waitFor } from "../../../test/harness/src/wait.js";

export interface CortexProcess {
  url: string;
  /** The gateway's credential: the hooks call Cortex as the gateway. */
  token: string;
  indexPrefix: string;
  /** Start (again) on the same port and indices; resolves when /readyz answers 200. */
  start(): Promise<void>;
  /** SIGKILL: a crash, not a graceful stop. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export async function cortexProcess(params: {
  opensearchUrl: string;
  ollamaUrl?: string;
}): Promise<CortexProcess> {
  const port = await freePort();
  const token = `hooks-test-token-${randomBytes(8).toString("hex")}`;
  const indexPrefix = `hooks-${randomBytes(4).toString("hex")}`;
  const dataDir = join(runDir, `cortex-${indexPrefix}`);
  mkdirSync(dataDir, { recursive: true });
  let current: ManagedProcess | undefined;
  const url = `http://127.0.0.1:${port}`;
  const ready = async (): Promise<true | undefined> => {
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
    return response.ok ? true : undefined;
  };
  return {
    url,
    token,
    indexPrefix,
    async start() {
      current = spawnService({
        name: `cortex-${indexPrefix}-${Date.now()}`,
        command: join(repoRoot, "node_modules", ".bin", "tsx"),
        args: [join(repoRoot, "hooks", "src", "testing", "cortex-entry.ts")],
        cwd: repoRoot,
        env: {
          ...process.env,
          CORTEX_HOST: "127.0.0.1",
          CORTEX_PORT: String(port),
          CORTEX_GATEWAY_TOKEN: token,
          CORTEX_OPENSEARCH_URL: params.opensearchUrl,
          CORTEX_INDEX_PREFIX: indexPrefix,
          CORTEX_LOG_LEVEL: "warn",
          REMRAM_TEST_CORTEX_DATA: dataDir,
          ...(params.ollamaUrl === undefined ? {} : { CORTEX_OLLAMA_URL: params.ollamaUrl }),
        },
      });
      const started = current;
      await waitFor(ready, {
        what: "Cortex",
        timeoutMs: 120_000,
        intervalMs: 300,
        abortIf: () => {
          const ended = started.exitReason();
          return ended === undefined ? undefined : `${ended}\n${started.logTail()}`;
        },
      });
    },
    async kill() {
      // No grace period: Cortex gets no chance to finish anything, as in a crash.
      await current?.stop(0);
      current = undefined;
    },
    async stop() {
      await current?.stop();
      current = undefined;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
