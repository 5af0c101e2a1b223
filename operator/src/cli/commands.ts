/**
 * The pure half of kubectl-remram: argument parsing (node:util parseArgs), the status patch an approval is, why a
 * proposal cannot be decided, and the status summary it prints. main.ts does the I/O.
 */
import { parseArgs } from "node:util";
import type {
  ArtifactProposalSpec,
  ArtifactProposalStatus,
  Decision,
} from "../api/v1alpha1/artifact-proposal.js";
import type { Condition } from "../api/v1alpha1/common.js";
import { isVerb, type Verb, verbs } from "./help.js";

export type Command =
  | { verb: "approve" | "deny"; name: string; comment?: string }
  | { verb: "diff"; name: string }
  | { verb: "status"; name?: string }
  | { verb: "dream-now"; name: string }
  | { verb: "export"; userId: string; appliance?: string; output: ExportOutput }
  | { verb: "check"; appliance?: string; output: CheckOutput }
  | { verb: "backup"; appliance?: string; output: CheckOutput; list: boolean }
  | { verb: "restore"; backupId: string; appliance?: string }
  | { verb: "migrations"; appliance?: string; output: CheckOutput; confirm: boolean }
  | { verb: "version"; clientOnly: boolean }
  | { verb: "completion"; shell: Shell }
  | { verb: "help"; topic?: Verb }
  /** `__complete WORDS... PARTIAL`: what kubectl_complete-remram and the completion scripts ask for. */
  | { verb: "complete"; words: string[] };

export const exportOutputs = ["markdown", "json"] as const;
export type ExportOutput = (typeof exportOutputs)[number];

export const checkOutputs = ["text", "json"] as const;
export type CheckOutput = (typeof checkOutputs)[number];

export const shells = ["bash", "zsh"] as const;
export type Shell = (typeof shells)[number];

/** kubectl's flags that a plugin gets with the rest of its arguments, and the namespace. */
export interface Connection {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export interface Invocation {
  command: Command;
  connection: Connection;
}

export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(
    message: string,
    /** The verb whose help to show with the message; the general usage when absent. */
    readonly topic?: Verb,
  ) {
    super(message);
  }
}

const options = {
  namespace: { type: "string", short: "n" },
  kubeconfig: { type: "string" },
  context: { type: "string" },
  comment: { type: "string" },
  reason: { type: "string" },
  client: { type: "boolean" },
  appliance: { type: "string" },
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
} as const;

/** The flags each verb takes besides the connection flags and --help. */
const verbFlags: Partial<Record<Verb, readonly (keyof typeof options)[]>> = {
  approve: ["comment", "reason"],
  deny: ["comment", "reason"],
  version: ["client"],
  export: ["appliance", "output"],
  check: ["appliance", "output"],
  backup: ["appliance", "output"],
  restore: ["appliance"],
  migrations: ["appliance", "output"],
};
const commonFlags: readonly (keyof typeof options)[] = ["namespace", "kubeconfig", "context", "help"];

/** parseArgs' errors in the words of this command. */
function usageErrorOf(error: unknown): UsageError {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /'([^']+)'/.exec(message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && flag) return new UsageError(`unknown flag ${flag}`);
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && flag && message.includes("argument missing"))
    return new UsageError(`${flag.replace(/ <value>$/, "")} needs a value`);
  return new UsageError(message.split("\n").join(" "));
}

/** Parse the words after `kubectl remram`. Throws UsageError with what is wrong. */
export function parseInvocation(argv: readonly string[]): Invocation {
  // Completion gets the words typed so far, unfinished ones included: never refuse them.
  if (argv[0] === "__complete")
    return { command: { verb: "complete", words: argv.slice(1) }, connection: {} };
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: typeof options; allowPositionals: true }>
  >;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageErrorOf(error);
  }
  const { values, positionals } = parsed;
  const connection: Connection = {};
  for (const key of ["kubeconfig", "context", "namespace"] as const) {
    const value = values[key];
    if (value === "") throw new UsageError(`--${key} needs a value`);
    if (value !== undefined) connection[key] = value;
  }
  const [word, ...rest] = positionals;
  if (word === undefined) return { command: { verb: "help" }, connection };
  if (!isVerb(word)) throw new UsageError(`unknown command "${word}"; the commands are ${verbs.join(", ")}`);
  const verb: Verb = word;
  for (const [flag, value] of Object.entries(values)) {
    const key = flag as keyof typeof options;
    if (value !== undefined && !commonFlags.includes(key) && !verbFlags[verb]?.includes(key))
      throw new UsageError(`--${flag} does not apply to ${verb}`, verb);
  }
  if (values.help) return { command: { verb: "help", topic: verb }, connection };
  return { command: commandOf(verb, rest, values), connection };
}

function commandOf(
  verb: Verb,
  rest: string[],
  values: { comment?: string; reason?: string; client?: boolean; appliance?: string; output?: string },
): Command {
  const arity = (min: number, max: number, what: string): string[] => {
    if (rest.length < min) throw new UsageError(`${verb} needs the ${what}`, verb);
    if (rest.length > max)
      throw new UsageError(
        `${verb} takes ${max === 0 ? "no arguments" : `one ${what}`}; got ${rest.join(" ")}`,
        verb,
      );
    return rest;
  };
  /** -o, one of `allowed`, else the first. */
  const outputOf = <T extends string>(allowed: readonly T[]): T => {
    const output = values.output ?? allowed[0];
    if (!(allowed as readonly (string | undefined)[]).includes(output))
      throw new UsageError(`-o takes ${allowed.join(" or ")}, not "${output}"`, verb);
    return output as T;
  };
  const applianceOf = (): { appliance?: string } => {
    if (values.appliance === "") throw new UsageError("--appliance needs a value", verb);
    return values.appliance !== undefined ? { appliance: values.appliance } : {};
  };
  switch (verb) {
    case "approve":
    case "deny": {
      const [name] = arity(1, 1, "ArtifactProposal name") as [string];
      if (values.comment !== undefined && values.reason !== undefined)
        throw new UsageError("give --comment or --reason, not both", verb);
      const comment = values.comment ?? values.reason;
      if (comment !== undefined && comment.length > 1024)
        throw new UsageError("--comment is limited to 1024 characters", verb);
      return {
        verb,
        name,
        ...(comment !== undefined && comment !== "" ? { comment } : {}),
      };
    }
    case "diff":
      return { verb, name: arity(1, 1, "ArtifactProposal name")[0] as string };
    case "status": {
      const [name] = arity(0, 1, "RemramAppliance name");
      return { verb, ...(name !== undefined ? { name } : {}) };
    }
    case "dream": {
      if (rest[0] !== "now") throw new UsageError("did you mean `kubectl remram dream now SCHEDULE`?", verb);
      if (rest.length !== 2) throw new UsageError("dream now takes one DreamSchedule name", verb);
      return { verb: "dream-now", name: rest[1] as string };
    }
    case "export": {
      const [userId] = arity(
        1,
        1,
        "user id (as Cortex knows the person, e.g. telegram:123 or openai-user:alice)",
      ) as [string];
      return { verb, userId, output: outputOf(exportOutputs), ...applianceOf() };
    }
    case "check":
      arity(0, 0, "");
      return { verb, output: outputOf(checkOutputs), ...applianceOf() };
    case "backup": {
      const [sub] = arity(0, 1, "word list");
      if (sub !== undefined && sub !== "list")
        throw new UsageError(`backup takes nothing (back up now) or "list"; got ${sub}`, verb);
      return { verb, list: sub === "list", output: outputOf(checkOutputs), ...applianceOf() };
    }
    case "restore": {
      const [backupId] = arity(1, 1, "backup id (kubectl remram backup list shows them)") as [string];
      return { verb, backupId, ...applianceOf() };
    }
    case "migrations": {
      const [sub] = arity(0, 1, "word confirm");
      if (sub !== undefined && sub !== "confirm")
        throw new UsageError(`migrations takes nothing (show them) or "confirm"; got ${sub}`, verb);
      return { verb, confirm: sub === "confirm", output: outputOf(checkOutputs), ...applianceOf() };
    }
    case "version":
      arity(0, 0, "");
      return { verb, clientOnly: values.client === true };
    case "completion": {
      const [shell] = arity(1, 1, `shell (${shells.join(" or ")})`);
      if (!(shells as readonly string[]).includes(shell as string))
        throw new UsageError(`no completion for "${shell}"; the shells are ${shells.join(", ")}`, verb);
      return { verb, shell: shell as Shell };
    }
    case "help": {
      const [topic] = arity(0, 1, "verb");
      if (topic === undefined) return { verb };
      if (!isVerb(topic))
        throw new UsageError(`no help for "${topic}"; the commands are ${verbs.join(", ")}`);
      return { verb, topic };
    }
  }
}

export interface ProposalView {
  metadata: { name: string; generation?: number };
  spec: ArtifactProposalSpec;
  status?: ArtifactProposalStatus;
}

/**
 * Why this proposal cannot be decided now, or undefined. The admission policy enforces the same rules; checking
 * first gives a clearer message than the API server's.
 */
export function decisionBlocker(proposal: ProposalView, username: string): string | undefined {
  const { name } = proposal.metadata;
  const status = proposal.status;
  const phase = status?.phase;
  if (status?.approval !== undefined) {
    const { decision, by, at } = status.approval;
    return `${name} was already ${decision.toLowerCase()} by ${by} at ${at} (phase ${phase ?? "not set yet"}); a decision is final`;
  }
  if (phase !== undefined && phase !== "Pending") {
    const ready = status?.conditions?.find((condition) => condition.type === "Ready");
    const why = ready?.message ? ` (${ready.reason}: ${ready.message})` : ready ? ` (${ready.reason})` : "";
    return `${name} is ${phase}, not Pending${why}; only a Pending proposal can be approved or denied`;
  }
  if (status === undefined || status.conditions === undefined) {
    return `${name} has no status yet: the operator has not picked it up (is it running?)`;
  }
  if (proposal.spec.proposedBy === username)
    return `you (${username}) proposed ${name}; someone else must decide`;
  return undefined;
}

/**
 * The JSON patch for /status: append the decision condition and record who decided, on which generation and
 * digest. A test op on the conditions' length makes a concurrent edit fail instead of being overwritten.
 */
export function decisionPatch(
  proposal: ProposalView,
  decision: Decision,
  username: string,
  nowIso: string,
  comment?: string,
): unknown[] {
  const conditions = proposal.status?.conditions ?? [];
  const condition: Condition = {
    type: decision,
    status: "True",
    reason: "KubectlRemram",
    message: `${decision.toLowerCase()} with kubectl remram${comment ? `: ${comment}` : ""}`.slice(0, 32768),
    lastTransitionTime: nowIso,
    observedGeneration: proposal.metadata.generation ?? 1,
  };
  return [
    { op: "test", path: "/status/conditions", value: conditions },
    { op: "add", path: "/status/conditions/-", value: condition },
    {
      op: "add",
      path: "/status/approval",
      value: {
        decision,
        by: username,
        at: nowIso,
        generation: proposal.metadata.generation ?? 1,
        proposedDigest: proposal.spec.proposedDigest,
        ...(comment ? { comment } : {}),
      },
    },
  ];
}

export interface ApplianceView {
  metadata: { name: string; namespace?: string; generation?: number };
  status?: {
    observedGeneration?: number;
    hardwareProfile?: string;
    conditions?: Condition[];
    endpoints?: Record<string, string>;
    models?: {
      name: string;
      role: string;
      pull?: { status: string; completedBytes: number; totalBytes: number; percent: number; error?: string };
    }[];
  };
}

/** A DreamSchedule as `status` shows it beside its appliance. */
export interface DreamScheduleView {
  metadata: { name: string };
  spec: { applianceRef: { name: string }; schedule: string };
  status?: {
    nextScheduleTime?: string;
    lastRun?: {
      startedAt: string;
      finishedAt?: string;
      outcome: string;
      message?: string;
      counts?: Record<string, number>;
      mirroredProposals?: number;
    };
  };
}

function mebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MiB`;
}

/** Long work in progress, so a person sees it move: model pulls (percent, bytes) and dream cycles. */
function progressLines(appliance: ApplianceView, schedules: readonly DreamScheduleView[]): string[] {
  const lines: string[] = [];
  for (const model of appliance.status?.models ?? []) {
    const pull = model.pull;
    if (pull === undefined) continue;
    const bytes =
      pull.totalBytes > 0 ? ` (${mebibytes(pull.completedBytes)} of ${mebibytes(pull.totalBytes)})` : "";
    lines.push(
      `  model ${model.name} (${model.role}): ${pull.percent}% ${pull.status}${bytes}` +
        (pull.error === undefined ? "" : `; last attempt failed: ${pull.error}`),
    );
  }
  for (const schedule of schedules) {
    if (schedule.spec.applianceRef.name !== appliance.metadata.name) continue;
    const run = schedule.status?.lastRun;
    const next =
      schedule.status?.nextScheduleTime === undefined ? "" : `, next ${schedule.status.nextScheduleTime}`;
    if (run === undefined) {
      lines.push(`  dream ${schedule.metadata.name} (${schedule.spec.schedule}): no cycle yet${next}`);
    } else if (run.outcome === "Running") {
      lines.push(`  dream ${schedule.metadata.name}: a cycle is running since ${run.startedAt}`);
    } else {
      const changes = Object.entries(run.counts ?? {})
        .filter(([name, count]) => count > 0 && name !== "objectsScanned" && name !== "survived")
        .map(([name, count]) => `${name} ${count}`)
        .join(", ");
      lines.push(
        `  dream ${schedule.metadata.name}: last cycle ${run.outcome} at ${run.finishedAt ?? run.startedAt}` +
          (changes === "" ? "" : ` (${changes})`) +
          (run.mirroredProposals ? `, ${run.mirroredProposals} proposals to review` : "") +
          (run.message === undefined ? "" : `: ${run.message}`) +
          next,
      );
    }
  }
  return lines;
}

export function formatApplianceStatus(
  appliance: ApplianceView,
  schedules: readonly DreamScheduleView[] = [],
): string {
  const conditions = appliance.status?.conditions ?? [];
  const ready = conditions.find((condition) => condition.type === "Ready");
  const lines = [
    `${appliance.metadata.name}: ${ready ? `Ready=${ready.status} (${ready.reason})` : "not reconciled yet"}` +
      (appliance.status?.hardwareProfile ? `, profile ${appliance.status.hardwareProfile}` : ""),
  ];
  if (
    appliance.status?.observedGeneration !== undefined &&
    appliance.status.observedGeneration !== appliance.metadata.generation
  ) {
    lines.push(
      `  (status is for generation ${appliance.status.observedGeneration}; spec is at ${appliance.metadata.generation})`,
    );
  }
  const width = Math.max(0, ...conditions.map((condition) => condition.type.length));
  for (const condition of conditions) {
    if (condition.type === "Ready") continue;
    lines.push(
      `  ${condition.type.padEnd(width)}  ${condition.status.padEnd(7)}  ${condition.reason}: ${condition.message}`,
    );
  }
  lines.push(...progressLines(appliance, schedules));
  for (const [component, url] of Object.entries(appliance.status?.endpoints ?? {})) {
    lines.push(`  ${component} → ${url}`);
  }
  return lines.join("\n");
}
