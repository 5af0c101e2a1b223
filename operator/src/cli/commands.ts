/**
 * The pure half of kubectl-remram: argument parsing, the status patch an approval is, and the text it prints.
 * kubectl-remram.ts does the I/O.
 */

import type {
  ArtifactProposalSpec,
  ArtifactProposalStatus,
  Decision,
} from "../api/v1alpha1/artifact-proposal.js";
import type { Condition } from "../api/v1alpha1/common.js";

export type Command =
  | { verb: "approve" | "deny"; name: string; namespace?: string; comment?: string }
  | { verb: "diff"; name: string; namespace?: string }
  | { verb: "status"; name?: string; namespace?: string }
  | { verb: "dream-now"; name: string; namespace?: string }
  | { verb: "help" };

export const usage = `kubectl remram — approve Remram artifact proposals and inspect appliances

  kubectl remram approve PROPOSAL [-n NAMESPACE] [--comment TEXT]
  kubectl remram deny PROPOSAL [-n NAMESPACE] [--comment TEXT]
  kubectl remram diff PROPOSAL [-n NAMESPACE]
  kubectl remram status [APPLIANCE] [-n NAMESPACE]
  kubectl remram dream now SCHEDULE [-n NAMESPACE]

Every command also takes kubectl's --kubeconfig and --context.
`;

export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** kubectl's connection flags, which kubectl hands a plugin with the rest of its arguments. */
export interface Connection {
  kubeconfig?: string;
  context?: string;
}

/** Take `--kubeconfig` and `--context` (both spellings) out of `argv`; the rest is the command. */
export function splitConnectionFlags(argv: readonly string[]): { connection: Connection; rest: string[] } {
  const connection: Connection = {};
  const rest: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    const flag = (["kubeconfig", "context"] as const).find(
      (name) => argument === `--${name}` || argument.startsWith(`--${name}=`),
    );
    if (flag === undefined) {
      rest.push(argument);
      continue;
    }
    const value = argument.includes("=") ? argument.slice(argument.indexOf("=") + 1) : argv[++index];
    if (value === undefined || value === "") throw new UsageError(`--${flag} needs a value`);
    connection[flag] = value;
  }
  return { connection, rest };
}

export function parseArguments(argv: readonly string[]): Command {
  const positional: string[] = [];
  let namespace: string | undefined;
  let comment: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    const value = (): string => {
      const next = argv[++index];
      if (next === undefined) throw new UsageError(`${argument} needs a value`);
      return next;
    };
    if (argument === "-n" || argument === "--namespace") namespace = value();
    else if (argument.startsWith("--namespace=")) namespace = argument.slice("--namespace=".length);
    else if (argument === "--comment" || argument === "--reason") comment = value();
    else if (argument.startsWith("--comment=")) comment = argument.slice("--comment=".length);
    else if (argument === "-h" || argument === "--help") return { verb: "help" };
    else if (argument.startsWith("-")) throw new UsageError(`unknown flag ${argument}`);
    else positional.push(argument);
  }
  const [verb, first, second] = positional;
  const scope = namespace === undefined ? {} : { namespace };
  const need = (name: string | undefined, what: string): string => {
    if (name === undefined) throw new UsageError(`${verb} needs the ${what} name`);
    return name;
  };
  switch (verb) {
    case "approve":
    case "deny":
      if (comment !== undefined && comment.length > 1024)
        throw new UsageError("--comment is limited to 1024 characters");
      return {
        verb,
        name: need(first, "ArtifactProposal"),
        ...scope,
        ...(comment !== undefined ? { comment } : {}),
      };
    case "diff":
      return { verb, name: need(first, "ArtifactProposal"), ...scope };
    case "status":
      return { verb, ...(first !== undefined ? { name: first } : {}), ...scope };
    case "dream":
      if (first !== "now") throw new UsageError("did you mean `kubectl remram dream now SCHEDULE`?");
      return { verb: "dream-now", name: need(second, "DreamSchedule"), ...scope };
    case undefined:
    case "help":
      return { verb: "help" };
    default:
      throw new UsageError(`unknown command ${verb}`);
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
  const status = proposal.status;
  if (status?.approval !== undefined) {
    return `${proposal.metadata.name} was already ${status.approval.decision.toLowerCase()} by ${status.approval.by} at ${status.approval.at}`;
  }
  if (status === undefined || status.conditions === undefined) {
    return `${proposal.metadata.name} has no status yet: the operator has not picked it up (is it running?)`;
  }
  if (proposal.spec.proposedBy === username)
    return `you (${username}) proposed ${proposal.metadata.name}; someone else must decide`;
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
  };
}

export function formatApplianceStatus(appliance: ApplianceView): string {
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
  for (const [component, url] of Object.entries(appliance.status?.endpoints ?? {})) {
    lines.push(`  ${component} → ${url}`);
  }
  return lines.join("\n");
}
