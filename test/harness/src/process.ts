import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { logDir, pidDir } from "./paths.js";

export interface SpawnServiceOptions {
  /** Unique name for logs and the PID file, e.g. "opensearch-9200". */
  name: string;
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Keep running after this Node process exits (infra-up); otherwise it is killed on exit. */
  detach?: boolean;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** undefined while running, else a description of how it ended. */
  exitReason(): string | undefined;
  /** The last lines of the log, for error messages. */
  logTail(lines?: number): string;
  /** SIGTERM the whole process group, SIGKILL after `graceMs`; resolves once it is gone. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Map<number, string>();
let exitHookInstalled = false;

/** Safety net: if the test process dies, take the services it started (non-detached ones) with it. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = () => {
    for (const pid of running.keys()) killGroup(pid, "SIGKILL");
  };
  process.on("exit", killAll);
  // A signal ends Node without "exit": kill the services, then let the signal take its usual course.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      killAll();
      process.kill(process.pid, signal);
    });
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Spawn a server in its own process group with output to .remram/logs/<name>.log and a PID file. */
export function spawnService(options: SpawnServiceOptions): ManagedProcess {
  mkdirSync(logDir, { recursive: true });
  mkdirSync(pidDir, { recursive: true });
  const logFile = join(logDir, `${options.name}.log`);
  const logFd = openSync(logFile, "a");
  let child: ChildProcess;
  try {
    child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ["ignore", logFd, logFd],
    });
  } finally {
    closeSync(logFd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${options.name}: could not start ${options.command}`);
  const pidFile = join(pidDir, `${options.name}.pid`);
  writeFileSync(pidFile, `${pid}\n`);
  let ended: string | undefined;
  child.on("exit", (code, signal) => {
    ended = signal ? `exited on ${signal}` : `exited with code ${code}`;
    running.delete(pid);
  });
  child.on("error", (error) => {
    ended = `failed to start: ${error.message}`;
  });
  if (options.detach) {
    child.unref();
  } else {
    installExitHook();
    running.set(pid, options.name);
  }

  return {
    name: options.name,
    pid,
    logFile,
    exitReason: () => ended,
    logTail: (lines = 30) => tailFile(logFile, lines),
    async stop(graceMs = 10_000) {
      await stopProcessGroup(pid, graceMs);
      running.delete(pid);
      rmSync(pidFile, { force: true });
    },
  };
}

/** SIGTERM a process group, wait up to `graceMs`, then SIGKILL. */
export async function stopProcessGroup(pid: number, graceMs = 10_000): Promise<void> {
  if (!killGroup(pid, "SIGTERM")) return;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid) && !groupAlive(pid)) return;
    await sleep(100);
  }
  killGroup(pid, "SIGKILL");
  const killDeadline = Date.now() + 5_000;
  while ((isAlive(pid) || groupAlive(pid)) && Date.now() < killDeadline) await sleep(50);
}

/** Whether any process is left in the group (a child may outlive its leader). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stop every process recorded under .remram/pids (infra-down, or leftovers of a crashed run). */
export async function stopAllRecorded(): Promise<string[]> {
  let files: string[];
  try {
    files = readdirSync(pidDir).filter((file) => file.endsWith(".pid"));
  } catch {
    return [];
  }
  const stopped: string[] = [];
  await Promise.all(
    files.map(async (file) => {
      const path = join(pidDir, file);
      const pid = Number.parseInt(readFileSync(path, "utf8"), 10);
      if (Number.isInteger(pid) && pid > 1 && (isAlive(pid) || groupAlive(pid))) {
        await stopProcessGroup(pid);
        stopped.push(`${file.replace(/\.pid$/, "")} (pid ${pid})`);
      }
      rmSync(path, { force: true });
    }),
  );
  return stopped.sort();
}

function tailFile(path: string, lines: number): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
