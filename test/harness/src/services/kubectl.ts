import { execFile } from "node:child_process";
import { binPath } from "../paths.js";

/** kubectl from the cache with `input` on stdin; rejects with kubectl's own error text. */
export function kubectl(
  kubeconfig: string,
  args: readonly string[],
  input?: string,
  timeoutMs = 120_000,
): Promise<string> {
  // execFile's default maxBuffer (1 MiB) kills kubectl on a larger output (a backup file read out of a pod).
  const child = execFile(binPath("kubectl"), ["--kubeconfig", kubeconfig, ...args], {
    timeout: timeoutMs,
    maxBuffer: 512 * 1024 * 1024,
  });
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("exit", (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`kubectl ${args.join(" ")}: ${stderr.trim()}`)),
    );
    child.stdin?.end(input ?? "");
  });
}
