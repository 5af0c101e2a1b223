/**
 * The pure half of kubectl-remram: argument parsing (node:util parseArgs); ../api/approval.ts has the status patch an
 * approval is, status.ts the status summary, users.ts the `user` verbs, knowledge.ts the `knowledge` verb. main.ts does
 * the I/O.
 */
import { parseArgs } from "node:util";
import { isVerb, type Verb, verbs } from "./help.js";
import {
  type KnowledgeCommand,
  type KnowledgeFlags,
  knowledgeCommandOf,
  knowledgeFlags,
} from "./knowledge.js";
import { UsageError } from "./usage-error.js";
import { type UserCommand, type UserFlags, userCommandOf } from "./users.js";

export { UsageError };

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
  | UserCommand
  | KnowledgeCommand
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

const options = {
  namespace: { type: "string", short: "n" },
  kubeconfig: { type: "string" },
  context: { type: "string" },
  comment: { type: "string" },
  reason: { type: "string" },
  client: { type: "boolean" },
  appliance: { type: "string" },
  output: { type: "string", short: "o" },
  approver: { type: "boolean" },
  admin: { type: "boolean" },
  duration: { type: "string" },
  "app-url": { type: "string" },
  user: { type: "string" },
  status: { type: "string" },
  scope: { type: "string" },
  limit: { type: "string" },
  cursor: { type: "string" },
  all: { type: "boolean" },
  confirm: { type: "string" },
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
  user: ["appliance", "output", "approver", "admin", "duration"],
  knowledge: knowledgeFlags,
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
  values: { comment?: string; reason?: string; client?: boolean } & UserFlags & KnowledgeFlags,
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
    case "user":
      return userCommandOf(rest, values);
    case "knowledge":
      return knowledgeCommandOf(rest, values);
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
