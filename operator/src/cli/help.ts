/**
 * What `kubectl remram --help` and `kubectl remram help VERB` print, and the verbs' one-line summaries that shell
 * completion shows beside each candidate. Pure text.
 */

export const verbs = [
  "approve",
  "deny",
  "diff",
  "status",
  "dream",
  "export",
  "check",
  "backup",
  "restore",
  "migrations",
  "user",
  "knowledge",
  "version",
  "completion",
  "help",
] as const;
export type Verb = (typeof verbs)[number];

interface VerbHelp {
  synopsis: string;
  summary: string;
  details: string;
}

const connectionFlags = `  -n, --namespace NS   the namespace (default: the kubeconfig context's, else "default")
      --kubeconfig F   the kubeconfig to use (default: $KUBECONFIG, else ~/.kube/config)
      --context NAME   the kubeconfig context to use`;

const help: Record<Verb, VerbHelp> = {
  approve: {
    synopsis: "approve PROPOSAL [--comment TEXT]",
    summary: "approve a Pending ArtifactProposal; the operator then promotes it",
    details: `Adds the Approved condition and status.approval (you, now, the generation and digest) with a JSON patch
on the /status subresource. Only a Pending proposal can be decided, never by its proposer, and only by someone
holding the approve verb on artifactproposals and patch on artifactproposals/status (the chart's remram-approver
ClusterRole, bound in the namespace).

      --comment TEXT   why (at most 1024 characters; --reason is the same flag)`,
  },
  deny: {
    synopsis: "deny PROPOSAL [--comment TEXT]",
    summary: "deny a Pending ArtifactProposal; the operator tells Cortex",
    details: `Adds the Denied condition and status.approval, like approve; the operator reports the denial to Cortex.

      --comment TEXT   why (at most 1024 characters; --reason is the same flag)`,
  },
  diff: {
    synopsis: "diff PROPOSAL",
    summary: "show the change an ArtifactProposal makes, with its rationale",
    details: "Prints the artifact's path and the proposal's rationale, then its unified diff.",
  },
  status: {
    synopsis: "status [APPLIANCE]",
    summary: "summarize appliances: Ready, each component's condition, endpoints",
    details: `Ready first, then each component's condition, then the endpoints the operator reports; every
RemramAppliance in the namespace when no name is given.`,
  },
  dream: {
    synopsis: "dream now SCHEDULE",
    summary: "ask a DreamSchedule for a dream cycle now",
    details: `Annotates the DreamSchedule with the time of the request; the operator starts a cycle unless one is running
(needs patch on dreamschedules in the namespace).`,
  },
  export: {
    synopsis: "export USER [--appliance NAME] [-o markdown|json]",
    summary: "print everything the assistant remembers about a person, to read or take along",
    details: `Asks the appliance's Cortex for the person's knowledge (corrected items included) and the summaries of
their archived conversations: a Markdown document by default, the records with -o json. USER is the id Cortex
knows the person by (the gateway's, e.g. telegram:123456). Cortex logs who asked (you) and the counts.

Runs as Cortex's admin caller: it reads the Secret APPLIANCE-cortex-admin and forwards a port to the Cortex pod,
so it needs get on that Secret, list on pods and create on pods/portforward in the namespace (a namespace
admin has them).

      --appliance NAME the RemramAppliance (default: the only one in the namespace)
  -o, --output FMT     markdown (default) or json`,
  },
  check: {
    synopsis: "check [--appliance NAME] [-o text|json]",
    summary: "check the appliance's data now: archive hashes, vectors, chunks, proposals, git",
    details: `Asks the appliance's Cortex to read every store whole and compare them (what the operator does every
consistencyCheckSeconds for status.consistency): archived documents against their hashes, vectors against
their knowledge objects and policy gates, transcript chunks and summaries against the archive, proposals
against knowledge and commits, and git fsck of the workspace repository. Findings name ids, never content.
Exits 0 when nothing is wrong, 3 when findings are reported (1 when the check could not run).

Runs as Cortex's admin caller, like export: get on the Secret APPLIANCE-cortex-admin, list on pods and create on
pods/portforward in the namespace.

      --appliance NAME the RemramAppliance (default: the only one in the namespace)
  -o, --output FMT     text (default) or json (Cortex's whole report)`,
  },
  backup: {
    synopsis: "backup [list] [--appliance NAME] [-o text|json]",
    summary: "back up the appliance's memory now, or list its backups",
    details: `Without "list": asks the appliance's Cortex for a backup now (what spec.backup's schedule does) and waits
for it: every index, the artifact repository and the archive, into the volume named in spec.backup.volume.
"list" shows the backups there (newest first), one running with its progress, and the last failure.

Runs as Cortex's admin caller, like check: get on the Secret APPLIANCE-cortex-admin, list on pods and create on
pods/portforward in the namespace.

      --appliance NAME the RemramAppliance (default: the only one in the namespace)
  -o, --output FMT     text (default) or json`,
  },
  restore: {
    synopsis: "restore BACKUP [--appliance NAME]",
    summary: "restore a backup onto a fresh appliance that holds nothing yet",
    details: `Restores a backup from spec.backup.volume onto the appliance's Cortex and waits for it: every file is
checked against its digest first, then the indices, the repository and the archive come back as they were, and
erasures recorded after the backup are replayed, so an erased person's data does not return. Cortex refuses
when it already holds data (restore onto a new appliance, in a new namespace or cluster, that mounts the same
backup volume). A restore cut short after it began writing is finished by restoring the same backup again.

Runs as Cortex's admin caller, like check.

      --appliance NAME the RemramAppliance (default: the only one in the namespace)`,
  },
  migrations: {
    synopsis: "migrations [confirm] [--appliance NAME] [-o text|json]",
    summary: "show index migrations after an upgrade, or confirm them (deletes what a rollback needs)",
    details: `An upgrade whose knowledge index cannot change in place rebuilds it beside the old one after Cortex starts:
reads go on, writes wait (the gateway queues them) until it is done. Without "confirm": the rebuild's progress,
why it waits if it does, and the old indices kept for a \`helm rollback\` with when the retention deletes them.
"confirm" deletes those kept indices now: do it once the upgraded appliance works for you, since a rollback to
the release before the migration then finds no index it can read. Refused while a rebuild runs.

Runs as Cortex's admin caller, like check.

      --appliance NAME the RemramAppliance (default: the only one in the namespace)
  -o, --output FMT     text (default) or json`,
  },
  user: {
    synopsis: "user add|list|remove [MEMBER] [--appliance NAME]",
    summary: "give a household member a credential of their own (for remram-app), list or revoke them",
    details: `Each member of the appliance's spec.household gets a ServiceAccount (SA), APPLIANCE-member-MEMBER, whose
token remram-app takes as the person's sign-in: the app acts with it, so RBAC and the approval policy see the
person.

  user add MEMBER [--approver] [--admin] [--duration 720h] [-o token|kubeconfig]
      Creates the ServiceAccount (or keeps it) and the RoleBindings that match the flags given, deleting the
      ones not asked for: SA-member to the chart's remram-member ClusterRole (read proposals and the appliance)
      always, SA-approver to remram-approver with --approver (decide on proposals), SA-admin to
      remram-household-admin with --admin (the administer verb on remramappliances). Then issues a token with
      the TokenRequest API and prints it alone on stdout (what happened goes to stderr), or with -o kubeconfig
      a kubeconfig for the person: your context's server and CA, the token, the namespace. Nothing else prints
      or keeps the token. A later add issues a new token; earlier ones stay valid until they expire.
  user list
      The household's members: each one's ServiceAccount and bindings (member, approver, admin), and accounts of
      ids no longer in spec.household.
  user remove MEMBER
      Deletes the member's RoleBindings and ServiceAccount; every token issued for it stops working at once
      (tokens name the account's uid). Nothing to delete is not an error.

Needs, in the namespace: get, create and delete on serviceaccounts, create on serviceaccounts/token, get, list,
create and delete on rolebindings, get on remramappliances; and to bind a role, holding what it grants or the
bind verb on it (a cluster admin has all of it).

      --appliance NAME the RemramAppliance (default: the only one in the namespace)
      --approver       add: bind remram-approver too
      --admin          add: bind remram-household-admin too
      --duration D     add: how long the token is valid (default 720h, 10m to 366d; h, m, s, d)
  -o, --output FMT     add: token (default) or kubeconfig`,
  },
  knowledge: {
    synopsis: "knowledge list|search|show|correct|forget ...",
    summary: "see, search, correct and forget what the assistant remembers about you, as in remram-app",
    details: `What remram-app's "My memory" does, from a terminal: your knowledge and your household's, through the
app's API with your own credential, the bearer token of your kubeconfig's user (the kubeconfig
\`kubectl remram user add MEMBER -o kubeconfig\` printed for you; a client certificate or an exec plugin is
not a member's credential). The token goes to the app only, never to a message or a log.

  knowledge list [--user MEMBER] [--status active,demoted,invalidated] [--scope user,household]
                 [--limit N] [--cursor C]
      A table, newest first: id, type, confidence, status, scope and the statement (cut to the terminal), and
      "N of TOTAL; more with --cursor C" when there is another page. --user lists another member's (only a
      household admin may); --status and --scope filter (every status, both scopes by default).
  knowledge search WORDS... [the same flags]
      The same, found by words, best match first.
  knowledge show ID [--user MEMBER]
      One object in full: statement, type, confidence, status, validity, provenance (source, channel,
      session, when), dimensions, links, and what contradicted or replaced it.
  knowledge correct ID "NEW STATEMENT" [--reason TEXT]
      The object is invalidated (kept for the history) and a new one states the correction; prints both ids.
  knowledge forget ID... [--user MEMBER] [--reason TEXT]
      Removes the objects from every store for good (household knowledge only as a household admin) and
      prints what was removed.
  knowledge forget --all --confirm YOUR-MEMBER-ID [--reason TEXT]
      Removes everything remembered about you (your own data only), for good.

remram-app is reached at --app-url (its address through the appliance's front door, or a local port-forward),
else through a port-forward to the appliance's ready remram-app pod, which takes list on pods and create on
pods/portforward in the namespace (a member's own credential has neither: use --app-url).

      --app-url URL    remram-app's address: https, or http to this machine (http://127.0.0.1:8080)
      --appliance NAME without --app-url: whose app pod (default: the only one in the namespace)
      --user MEMBER    list, search, show, forget: another member's knowledge (household admins)
      --status LIST    list, search: active, demoted, invalidated (comma-separated)
      --scope LIST     list, search: user, household (comma-separated)
      --limit N        list, search: how many per page (1 to 200, default 50)
      --cursor C       list, search: the next page, as the previous one printed
      --reason TEXT    correct, forget: why (kept in Cortex's audit)
      --all            forget: everything about you (with --confirm YOUR-MEMBER-ID)
  -o, --output FMT     text (default) or json (the app's answer)`,
  },
  version: {
    synopsis: "version [--client]",
    summary: "print this plugin's version, and the cluster's and the operator's",
    details: `The plugin's version and the commit it was built from; then, unless --client, the Kubernetes version and
each remram operator Deployment's version (its image tag), when you may list Deployments.

      --client         only the plugin's version; no cluster needed`,
  },
  completion: {
    synopsis: "completion bash|zsh",
    summary: "print a shell completion script for kubectl-remram",
    details: `Prints a script that completes verbs, flags and the names of proposals, appliances and schedules:
  source <(kubectl-remram completion bash)        # in ~/.bashrc
  source <(kubectl-remram completion zsh)         # in ~/.zshrc, after compinit
\`kubectl remram <TAB>\` completes through kubectl itself (kubectl >= 1.26, with kubectl's own completion loaded)
once the kubectl_complete-remram executable is on your PATH; npm installs it beside kubectl-remram, and a krew
install lists it in its caveats.`,
  },
  help: {
    synopsis: "help [VERB]",
    summary: "show help for kubectl remram or one of its verbs",
    details: "The same text as --help.",
  },
};

/** What to print under a usage error: the verb's synopsis (or none) and where the help is. */
export function usageHint(verb?: Verb): string {
  if (verb === undefined) return "See 'kubectl remram --help'.\n";
  return `Usage: kubectl remram ${help[verb].synopsis}\nSee 'kubectl remram help ${verb}'.\n`;
}

/** A verb's one-line summary (completion candidates' descriptions). */
export const verbSummary = (verb: Verb): string => help[verb].summary;

export const isVerb = (word: string): word is Verb => (verbs as readonly string[]).includes(word);

export const usage = `kubectl remram — approve Remram artifact proposals and inspect Remram appliances

Usage:
${verbs.map((verb) => `  kubectl remram ${help[verb].synopsis.padEnd(36)} ${help[verb].summary}`).join("\n")}

Flags every verb takes (kubectl passes them on to its plugins):
${connectionFlags}
  -h, --help           help for kubectl remram or a verb

It acts as the user of your kubeconfig's current context. "kubectl remram help VERB" says more about each verb.
`;

export function helpFor(verb: Verb): string {
  const entry = help[verb];
  return `kubectl remram ${entry.synopsis} — ${entry.summary}

${entry.details}

Flags:
${connectionFlags}
`;
}
