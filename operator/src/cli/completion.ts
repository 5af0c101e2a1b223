/**
 * Shell completion, the pure half. kubectl (>= 1.26) completes `kubectl remram ...` by running the
 * `kubectl_complete-remram` executable with the words typed after `remram`, the unfinished one last, and reads
 * Cobra's `__complete` answer: one candidate a line (`value<TAB>description`), then `:DIRECTIVE`. The scripts of
 * `kubectl remram completion bash|zsh` ask `kubectl-remram __complete ...` the same way for direct calls.
 */
import { lifecycleStatuses, personKnowledgeScopes } from "@remram/contract";
import { type Connection, checkOutputs, exportOutputs } from "./commands.js";
import { isVerb, type Verb, verbSummary, verbs } from "./help.js";
import { knowledgeActions, knowledgeOutputs } from "./knowledge.js";
import { tokenOutputs } from "./users.js";

/** Cobra's ShellCompDirective bits that this plugin uses. */
export const directive = { default: 0, error: 1, noFileComp: 4 } as const;

export interface Candidate {
  value: string;
  description?: string;
}

export type NamedResource = "artifactproposals" | "remramappliances" | "dreamschedules";

/** Where the candidates for the word being typed come from. */
export type CompletionSource =
  | { kind: "words"; candidates: Candidate[] }
  /** Names from the cluster; approve and deny offer only Pending proposals. */
  | { kind: "names"; resource: NamedResource; pendingOnly: boolean }
  | { kind: "namespaces" }
  /** The ids in the namespace's appliances' spec.household.members. */
  | { kind: "members" }
  | { kind: "contexts" }
  /** A path: the shell's own file completion. */
  | { kind: "files" }
  | { kind: "nothing" };

export interface CompletionRequest {
  source: CompletionSource;
  /** The unfinished word, without a `--flag=` prefix. */
  partial: string;
  /** `--namespace=` and the like: put back in front of every candidate. */
  prefix: string;
  /** The connection flags and namespace typed so far, to ask the right cluster. */
  connection: Connection;
}

/** A flag that takes a value: a connection flag (kept to ask the right cluster) or a verb's own. */
type ValueFlag =
  | keyof Connection
  | "comment"
  | "appliance"
  | "output"
  | "duration"
  | "app-url"
  | "user"
  | "status"
  | "scope"
  | "limit"
  | "cursor"
  | "confirm";
const valueFlags: Record<string, ValueFlag> = {
  "-n": "namespace",
  "--namespace": "namespace",
  "--kubeconfig": "kubeconfig",
  "--context": "context",
  "--comment": "comment",
  "--reason": "comment",
  "--appliance": "appliance",
  "-o": "output",
  "--output": "output",
  "--duration": "duration",
  "--app-url": "app-url",
  "--user": "user",
  "--status": "status",
  "--scope": "scope",
  "--limit": "limit",
  "--cursor": "cursor",
  "--confirm": "confirm",
};
const connectionKeys: readonly ValueFlag[] = ["namespace", "kubeconfig", "context"];
const isConnectionKey = (flag: ValueFlag): flag is keyof Connection => connectionKeys.includes(flag);

const flagCandidates = (verb: Verb | undefined): Candidate[] => [
  { value: "--namespace", description: "the namespace" },
  { value: "--kubeconfig", description: "the kubeconfig file" },
  { value: "--context", description: "the kubeconfig context" },
  { value: "--help", description: "help" },
  ...(verb === "approve" || verb === "deny" ? [{ value: "--comment", description: "why" }] : []),
  ...(verb === "version" ? [{ value: "--client", description: "only the plugin's version" }] : []),
  ...(verb === "export" || verb === "check" || verb === "backup" || verb === "migrations"
    ? [
        { value: "--appliance", description: "the RemramAppliance" },
        { value: "--output", description: verb === "export" ? "markdown or json" : "text or json" },
      ]
    : []),
  ...(verb === "restore" ? [{ value: "--appliance", description: "the RemramAppliance" }] : []),
  ...(verb === "user"
    ? [
        { value: "--appliance", description: "the RemramAppliance" },
        { value: "--approver", description: "add: bind remram-approver too" },
        { value: "--admin", description: "add: bind remram-household-admin too" },
        { value: "--duration", description: "add: how long the token is valid (720h)" },
        { value: "--output", description: "add: token or kubeconfig" },
      ]
    : []),
  ...(verb === "knowledge"
    ? [
        { value: "--app-url", description: "remram-app's address" },
        { value: "--appliance", description: "without --app-url: whose app pod" },
        { value: "--user", description: "another member's knowledge (admins)" },
        { value: "--status", description: "active, demoted, invalidated" },
        { value: "--scope", description: "user, household" },
        { value: "--limit", description: "how many per page" },
        { value: "--cursor", description: "the next page" },
        { value: "--reason", description: "correct, forget: why" },
        { value: "--all", description: "forget: everything about you" },
        { value: "--confirm", description: "forget --all: your member id" },
        { value: "--output", description: "text or json" },
      ]
    : []),
];

function sourceForValue(flag: ValueFlag, verb: string | undefined): CompletionSource {
  if (flag === "namespace") return { kind: "namespaces" };
  if (flag === "context") return { kind: "contexts" };
  if (flag === "kubeconfig") return { kind: "files" };
  if (flag === "appliance") return { kind: "names", resource: "remramappliances", pendingOnly: false };
  if (flag === "output") {
    const formats =
      verb === "export"
        ? exportOutputs
        : verb === "user"
          ? tokenOutputs
          : verb === "knowledge"
            ? knowledgeOutputs
            : checkOutputs;
    return { kind: "words", candidates: formats.map((value) => ({ value })) };
  }
  if (flag === "user" || flag === "confirm") return { kind: "members" };
  const list = (values: readonly string[]): CompletionSource => ({
    kind: "words",
    candidates: values.map((value) => ({ value })),
  });
  if (flag === "status") return list(lifecycleStatuses);
  if (flag === "scope") return list(personKnowledgeScopes);
  return { kind: "nothing" };
}

/** What to offer for the last of `words` (the words after `kubectl remram`, the unfinished one last). */
export function completionRequest(words: readonly string[]): CompletionRequest {
  const typed = words.slice(0, -1);
  const last = words.at(-1) ?? "";
  const connection: Connection = {};
  const positionals: string[] = [];
  let pending: ValueFlag | undefined;
  for (const word of typed) {
    if (pending !== undefined) {
      if (isConnectionKey(pending)) connection[pending] = word;
      pending = undefined;
      continue;
    }
    const [flag, value] = word.includes("=") ? [word.slice(0, word.indexOf("=")), word] : [word, undefined];
    const target = valueFlags[flag];
    if (target !== undefined && value === undefined) pending = target;
    else if (target !== undefined && isConnectionKey(target))
      connection[target] = word.slice(flag.length + 1);
    else if (!word.startsWith("-")) positionals.push(word);
  }
  const base = { partial: last, prefix: "", connection };
  if (pending !== undefined) return { ...base, source: sourceForValue(pending, positionals[0]) };
  const verb = positionals[0] !== undefined && isVerb(positionals[0]) ? positionals[0] : undefined;
  if (last.startsWith("-")) {
    const equals = last.indexOf("=");
    const target = equals === -1 ? undefined : valueFlags[last.slice(0, equals)];
    if (target !== undefined)
      return {
        partial: last.slice(equals + 1),
        prefix: last.slice(0, equals + 1),
        connection,
        source: sourceForValue(target, positionals[0]),
      };
    return { ...base, source: { kind: "words", candidates: flagCandidates(verb) } };
  }
  return { ...base, source: positionalSource(positionals) };
}

const knowledgeActionSummary: Record<string, string> = {
  list: "what the assistant remembers about you",
  search: "find it by words",
  show: "one object in full",
  correct: "say what is true instead",
  forget: "remove objects for good",
};

const userActionSummary: Record<string, string> = {
  add: "give a household member a credential",
  list: "the members and their credentials",
  remove: "revoke a member's credential",
};

function positionalSource(positionals: readonly string[]): CompletionSource {
  const [verb, ...rest] = positionals;
  const words = (values: readonly string[], describe?: (value: string) => string): CompletionSource => ({
    kind: "words",
    candidates: values.map((value) => ({ value, ...(describe ? { description: describe(value) } : {}) })),
  });
  if (verb === undefined) return words(verbs, (value) => verbSummary(value as Verb));
  const names = (resource: NamedResource, pendingOnly = false): CompletionSource => ({
    kind: "names",
    resource,
    pendingOnly,
  });
  switch (rest.length === 0 ? verb : `${verb} ${rest.join(" ")}`) {
    case "approve":
    case "deny":
      return names("artifactproposals", true);
    case "diff":
      return names("artifactproposals");
    case "status":
      return names("remramappliances");
    case "dream":
      return words(["now"], () => "ask for a dream cycle now");
    case "dream now":
      return names("dreamschedules");
    case "backup":
      return words(["list"], () => "the backups in the appliance's backup volume");
    case "migrations":
      return words(["confirm"], () => "delete the indices kept for a rollback");
    case "user":
      return words(["add", "list", "remove"], (value) => userActionSummary[value] ?? "");
    case "user add":
    case "user remove":
      return { kind: "members" };
    case "knowledge":
      return words(knowledgeActions, (value) => knowledgeActionSummary[value] ?? "");
    case "completion":
      return words(["bash", "zsh"]);
    case "help":
      return words(verbs, (value) => verbSummary(value as Verb));
    default:
      return { kind: "nothing" };
  }
}

/** Cobra's answer: the candidates that start with the partial word, then the directive. */
export function formatCompletions(request: CompletionRequest, candidates: readonly Candidate[]): string {
  const lines = candidates
    .filter((candidate) => candidate.value.startsWith(request.partial))
    .map(
      (candidate) =>
        `${request.prefix}${candidate.value}${candidate.description ? `\t${candidate.description}` : ""}`,
    );
  const bits = request.source.kind === "files" ? directive.default : directive.noFileComp;
  return `${[...lines, `:${bits}`].join("\n")}\n`;
}

const bash = `# bash completion for kubectl-remram. Load it with:  source <(kubectl-remram completion bash)
# (\`kubectl remram <TAB>\` completes through kubectl's own completion and kubectl_complete-remram.)
_kubectl_remram() {
  local cur=\${COMP_WORDS[COMP_CWORD]} tab=$'\\t' out line directive=0
  local -a candidates=()
  out=$("\${COMP_WORDS[0]}" __complete "\${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null) || return
  while IFS= read -r line; do
    case $line in
      :*) directive=\${line#:} ;;
      '') ;;
      *) candidates+=("\${line%%"$tab"*}") ;;
    esac
  done <<<"$out"
  if ((\${#candidates[@]} == 0)); then
    if (((directive & 4) == 0)); then COMPREPLY=($(compgen -f -- "$cur")); fi
    return
  fi
  COMPREPLY=($(compgen -W "\${candidates[*]}" -- "$cur"))
}
complete -F _kubectl_remram kubectl-remram
`;

const zsh = `#compdef kubectl-remram
# zsh completion for kubectl-remram. Load it (after compinit) with:  source <(kubectl-remram completion zsh)
# (\`kubectl remram <TAB>\` completes through kubectl's own completion and kubectl_complete-remram.)
_kubectl_remram() {
  local tab=$'\\t' out line name directive=0
  local -a candidates
  out=$("\${words[1]}" __complete "\${(@)words[2,CURRENT-1]}" "\${words[CURRENT]}" 2>/dev/null) || return 1
  for line in "\${(@f)out}"; do
    case $line in
      :*) directive=\${line#:} ;;
      '') ;;
      *"$tab"*) name=\${line%%"$tab"*}; candidates+=("\${name//:/\\\\:}:\${line#*"$tab"}") ;;
      *) candidates+=("\${line//:/\\\\:}") ;;
    esac
  done
  if ((\${#candidates} == 0)); then
    ((directive & 4)) || _files
    return
  fi
  _describe -t kubectl-remram 'kubectl remram' candidates
}
compdef _kubectl_remram kubectl-remram
`;

export const completionScripts = { bash, zsh } as const;
