// An S3-compatible server for the backup tests: S3Proxy (hack/install-s3proxy.sh) with its filesystem backend, on a
// free loopback port, with one access key, signatures checked as S3 checks them (v2 or v4). Buckets are folders
// under the run directory, removed when it stops.
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cacheDir, runDir } from "../paths.js";
import { freePort } from "../ports.js";
import { spawnService } from "../process.js";
import { waitFor } from "../wait.js";
import type { Started } from "./types.js";

export interface S3Endpoints {
  url: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Where the buckets' objects lie on disk (a test may damage one). */
  dataDir: string;
}

export const s3proxyLib = join(cacheDir, "s3proxy", "lib");

export async function startS3Server(options: { timeoutMs?: number } = {}): Promise<Started<S3Endpoints>> {
  if (!existsSync(s3proxyLib))
    throw new Error(
      `S3Proxy is not installed at ${s3proxyLib}: run \`bash hack/install-s3proxy.sh\` (or \`make setup\`)`,
    );
  const port = await freePort();
  const dir = join(runDir, `s3proxy-${port}`);
  const dataDir = join(dir, "buckets");
  mkdirSync(dataDir, { recursive: true });
  const url = `http://127.0.0.1:${port}`;
  const endpoints = {
    url,
    region: "us-east-1",
    accessKeyId: `remram-test-${port}`,
    secretAccessKey: `remram-test-secret-${port}`,
    dataDir,
  };
  writeFileSync(
    join(dir, "s3proxy.conf"),
    [
      `s3proxy.endpoint=${url}`,
      "s3proxy.authorization=aws-v2-or-v4",
      `s3proxy.identity=${endpoints.accessKeyId}`,
      `s3proxy.credential=${endpoints.secretAccessKey}`,
      "jclouds.provider=filesystem",
      `jclouds.filesystem.basedir=${dataDir}`,
      "",
    ].join("\n"),
  );
  const server = spawnService({
    name: `s3proxy-${port}`,
    command: "java",
    args: [
      "-Xmx256m",
      "-cp",
      join(s3proxyLib, "*"),
      "org.gaul.s3proxy.Main",
      "--properties",
      join(dir, "s3proxy.conf"),
    ],
    cwd: dir,
  });
  const stop = async (): Promise<void> => {
    await server.stop(5_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Any HTTP answer means it listens: an unsigned request is refused (403), as S3 refuses it.
    await waitFor(async () => ((await fetch(url).catch(() => undefined)) === undefined ? undefined : true), {
      what: `s3proxy at ${url}`,
      timeoutMs: options.timeoutMs ?? 60_000,
      abortIf: server.exitReason,
    });
  } catch (error) {
    await stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${server.logTail(20)}`);
  }
  return { endpoints, processes: [server], stop };
}
