import { createTwoFilesPatch } from "diff";
import { sha256Digest } from "./digest.js";
import { isLive, type KnowledgeType, type MaturingObject, type Scope } from "./knowledge.js";
import { redactText } from "./redaction.js";

/**
 * Artifact proposals (seed 000 §4.9, §5.8): validated knowledge rendered as Markdown at a workspace-relative
 * path, with a unified diff against the current file and base/proposed digests. Rendering is deterministic, so
 * the same knowledge gives the same bytes, digest and proposal id.
 */

export interface PromotionCriteria {
  /** High-confidence threshold for facts, preferences, constraints and decisions … */
  minConfidence: number;
  /** … together with recurring reinforcement. */
  minReinforcements: number;
  /** Principles already passed dream's recurrence test; they need only this confidence. */
  minPrincipleConfidence: number;
}

export const defaultPromotionCriteria: PromotionCriteria = {
  minConfidence: 0.8,
  minReinforcements: 3,
  minPrincipleConfidence: 0.6,
};

/** Whether an object belongs in an artifact: principle-level, high and recurring, or explicitly asked for. */
export function qualifiesForArtifact(
  object: MaturingObject,
  criteria: PromotionCriteria = defaultPromotionCriteria,
): boolean {
  if (!isLive(object)) return false;
  if (object.userDirective) return true;
  if (object.type === "principle") return object.confidence >= criteria.minPrincipleConfidence;
  return (
    object.confidence >= criteria.minConfidence && object.reinforcementCount >= criteria.minReinforcements
  );
}

const pathSegment = (raw: string): string => {
  const cleaned = raw.replace(/[^A-Za-z0-9._ -]/g, "-").replace(/^[^A-Za-z0-9_]+/, "");
  return cleaned.length > 0 ? cleaned.slice(0, 64) : "_";
};

const plural: Record<KnowledgeType, string> = {
  fact: "facts",
  preference: "preferences",
  constraint: "constraints",
  decision: "decisions",
  principle: "principles",
};

/** Where an object's artifact lives: one file per scope and type under the artifacts folder. */
export function artifactPath(artifactsDir: string, scope: Scope, type: KnowledgeType): string {
  const owners = [...scope.ownerIds].sort().map(pathSegment);
  const scopeDir =
    scope.kind === "user"
      ? `users/${owners[0]}`
      : scope.kind === "household"
        ? `households/${owners[0]}`
        : ["shared", ...(owners.length > 0 ? [owners.join("-")] : [])].join("/");
  const base = artifactsDir
    .split("/")
    .filter((s) => s.length > 0 && s !== "." && s !== "..")
    .map(pathSegment);
  return [...base, scopeDir, `${plural[type]}.md`].join("/");
}

function titleFor(scope: Scope, type: KnowledgeType): string {
  const kind = plural[type].charAt(0).toUpperCase() + plural[type].slice(1);
  return scope.kind === "shared"
    ? `${kind} (shared)`
    : `${kind} (${scope.kind} ${[...scope.ownerIds].sort().join(", ")})`;
}

const yamlString = (value: string): string => JSON.stringify(value);
const round2 = (value: number): string => value.toFixed(2);

/** Render objects as one Markdown artifact: front-matter with source ids and confidence, then one entry each. */
export function renderArtifact(title: string, objects: readonly MaturingObject[]): string {
  const ordered = [...objects].sort((a, b) => b.confidence - a.confidence || (a.id < b.id ? -1 : 1));
  const mean = ordered.reduce((sum, o) => sum + o.confidence, 0) / Math.max(1, ordered.length);
  const lines = [
    "---",
    `title: ${yamlString(title)}`,
    "generator: remram-cortex",
    `confidence: ${round2(mean)}`,
    "sources:",
    ...ordered.flatMap((o) => [`  - id: ${yamlString(o.id)}`, `    confidence: ${round2(o.confidence)}`]),
    "---",
    "",
    `# ${title}`,
    "",
    ...ordered.map(
      (o) =>
        `- ${o.statement.replace(/\s+/g, " ").trim()} _(confidence ${round2(o.confidence)}, since ${o.validFrom.slice(0, 10)})_`,
    ),
    "",
  ];
  return lines.join("\n");
}

/** Source ids listed in an artifact's front-matter (empty for a file Cortex did not write). */
export function artifactSourceIds(content: string): string[] {
  const frontMatter = /^---\n([\s\S]*?)\n---\n/.exec(content)?.[1] ?? "";
  return [...frontMatter.matchAll(/^ {2}- id: (".*")$/gm)]
    .map((m) => {
      try {
        return JSON.parse(m[1] as string) as unknown;
      } catch {
        return undefined;
      }
    })
    .filter((id): id is string => typeof id === "string")
    .sort();
}

function artifactTitle(content: string): string | undefined {
  const quoted = /^title: (".*")$/m.exec(content)?.[1];
  if (quoted === undefined) return undefined;
  try {
    const title: unknown = JSON.parse(quoted);
    return typeof title === "string" ? title : undefined;
  } catch {
    return undefined;
  }
}

export const maxDiffLength = 65_536;

/** A unified diff from the current file (empty when new) to the proposed one, cut at the CRD's bound. */
export function unifiedDiff(path: string, current: string | undefined, proposed: string): string {
  const patch = createTwoFilesPatch(
    current === undefined ? "/dev/null" : `a/${path}`,
    `b/${path}`,
    current ?? "",
    proposed,
    undefined,
    undefined,
    { context: 3 },
  );
  if (patch.length <= maxDiffLength) return patch;
  const marker = "\n… diff truncated\n";
  return patch.slice(0, maxDiffLength - marker.length) + marker;
}

/** Field names follow the ArtifactProposal CRD spec, which the operator mirrors proposals into. */
export interface ProposalDraft {
  id: string;
  artifactPath: string;
  title: string;
  content: string;
  /** Digest of the file the diff applies to; undefined for a new file. */
  baseDigest?: string | undefined;
  proposedDigest: string;
  diff: string;
  sourceKnowledgeIds: string[];
  confidence: number;
  rationale: string;
}

/** Proposal ids follow from path and proposed bytes: regenerating the same change gives the same proposal. */
export function proposalId(path: string, proposedDigest: string): string {
  return `prop-${sha256Digest(`${path}\n${proposedDigest}`).slice("sha256:".length, "sha256:".length + 16)}`;
}

export function draftProposal(
  path: string,
  title: string,
  objects: readonly MaturingObject[],
  current: string | undefined,
): ProposalDraft {
  // Artifacts land in git and in the agent's read-only workspace, whatever model reads them and whoever shares
  // the scope: no credential, card number or contact detail goes in (promotion refuses content that has one).
  const content = redactText(renderArtifact(title, objects));
  const proposedDigest = sha256Digest(content);
  const sourceIds = objects.map((o) => o.id).sort();
  const confidence = objects.reduce((sum, o) => sum + o.confidence, 0) / Math.max(1, objects.length);
  const added = sourceIds.filter((id) => !artifactSourceIds(current ?? "").includes(id));
  const removed = artifactSourceIds(current ?? "").filter((id) => !sourceIds.includes(id));
  return {
    id: proposalId(path, proposedDigest),
    artifactPath: path,
    title: redactText(title),
    content,
    baseDigest: current === undefined ? undefined : sha256Digest(current),
    proposedDigest,
    // The current file may predate redaction; its removed lines must not carry live values into the record.
    diff: redactText(unifiedDiff(path, current, content)),
    sourceKnowledgeIds: sourceIds,
    confidence: Number(confidence.toFixed(4)),
    rationale: `${added.length} entr${added.length === 1 ? "y" : "ies"} added, ${removed.length} retired: ${[
      ...added.map((id) => `+${id}`),
      ...removed.map((id) => `-${id}`),
    ].join(" ")}`,
  };
}

/**
 * Proposals for every artifact whose set of qualifying objects differs from the ids its current file lists:
 * a new entry qualifies or a listed one stopped qualifying (invalidated, demoted). Confidence drift alone
 * proposes nothing, so a cycle does not churn proposals. At most `maxProposals`, by path.
 */
export function generateProposals(
  objects: readonly MaturingObject[],
  currentFiles: ReadonlyMap<string, string>,
  options: { artifactsDir: string; maxProposals: number; criteria?: PromotionCriteria },
): ProposalDraft[] {
  const groups = new Map<string, { title: string; members: MaturingObject[] }>();
  for (const object of objects) {
    if (!qualifiesForArtifact(object, options.criteria)) continue;
    const path = artifactPath(options.artifactsDir, object.scope, object.type);
    const group = groups.get(path) ?? { title: titleFor(object.scope, object.type), members: [] };
    group.members.push(object);
    groups.set(path, group);
  }
  // Artifacts whose every entry stopped qualifying still need a proposal that empties them.
  for (const [path, content] of currentFiles) {
    if (!groups.has(path) && artifactSourceIds(content).length > 0) {
      groups.set(path, { title: artifactTitle(content) ?? path, members: [] });
    }
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .filter(([path, group]) => {
      const listed = artifactSourceIds(currentFiles.get(path) ?? "");
      const ids = group.members.map((o) => o.id).sort();
      return listed.length !== ids.length || listed.some((id, i) => id !== ids[i]);
    })
    .slice(0, options.maxProposals)
    .map(([path, group]) => draftProposal(path, group.title, group.members, currentFiles.get(path)));
}
