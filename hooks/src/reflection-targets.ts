import { z } from "zod";
import type { RetrievedFact } from "./cortex-contract.js";

/**
 * The knowledge objects a reflection may act on by id: the facts the run's injected block showed, in the user's or
 * their household's scope (shared knowledge is read-only to a session: Cortex refuses a session's write to it, and a
 * reverse link on it would show other people an id of this person's). before_prompt_build records them per session;
 * agent_end puts them on the reflection job; the reflection prompt lists them under short handles (m1, m2, …), which
 * the plugin maps back to ids, so a model can neither garble a long id nor name one it was not shown.
 */

export const ReflectionTargetSchema = z.strictObject({
  id: z.string().min(1).max(128),
  statement: z.string().max(600),
  type: z.string().max(32),
  scope: z.enum(["user", "household"]),
  /** public | household | private | secret as Cortex reported it; unknown counts as private. */
  privacy: z.string().max(32).optional(),
});
export type ReflectionTarget = z.infer<typeof ReflectionTargetSchema>;

/** Most objects one reflection is offered: a small model handles a short list, and a bundle's best come first. */
export const maxReflectionTargets = 12;

/** The handle of `targets[index]` in the reflection prompt. */
export function targetHandle(index: number): string {
  return `m${index + 1}`;
}

/** The handle of the model's own `items[index]` in its reply (for links between new items). */
export function itemHandle(index: number): string {
  return `n${index + 1}`;
}

/** A handle's position, when it is one of `prefix` and in range. */
export function handleIndex(handle: string, prefix: "m" | "n", count: number): number | undefined {
  const match = /^([mn])(\d{1,3})$/.exec(handle.trim().toLowerCase());
  if (match === null || match[1] !== prefix) return undefined;
  const index = Number(match[2]) - 1;
  return index >= 0 && index < count ? index : undefined;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * The facts of an injected bundle as reflection targets, in Cortex's order: Cortex renders exactly the bundle's
 * facts into the block the plugin injects, so these are what the run showed. Facts outside user and household scope
 * are left out, and at most maxReflectionTargets are kept.
 */
export function shownTargets(facts: readonly RetrievedFact[]): ReflectionTarget[] {
  const targets: ReflectionTarget[] = [];
  for (const fact of facts) {
    if (targets.length >= maxReflectionTargets) break;
    if (fact.scope !== "user" && fact.scope !== "household") continue;
    if (targets.some((target) => target.id === fact.id)) continue;
    targets.push({
      id: fact.id,
      statement: oneLine(fact.statement).slice(0, 600),
      type: fact.type.slice(0, 32),
      scope: fact.scope,
      ...(fact.privacy === undefined ? {} : { privacy: fact.privacy.slice(0, 32) }),
    });
  }
  return targets;
}

/** Per session key, the targets its latest prompt build showed; least recently written first. */
export type ReflectionTargetLedger = Map<string, ReflectionTarget[]>;

const maxSessions = 1_024;

/** Record what a session's prompt build showed; nothing shown forgets the previous run's targets. */
export function rememberReflectionTargets(
  ledger: ReflectionTargetLedger,
  sessionKey: string,
  targets: readonly ReflectionTarget[],
): void {
  ledger.delete(sessionKey);
  if (targets.length === 0) return;
  ledger.set(sessionKey, [...targets]);
  while (ledger.size > maxSessions) {
    const oldest = ledger.keys().next().value;
    if (oldest === undefined) break;
    ledger.delete(oldest);
  }
}

/** The targets for a finished run of `sessionKey`, taken out of the ledger (one reflection per prompt build). */
export function takeReflectionTargets(
  ledger: ReflectionTargetLedger,
  sessionKey: string,
): ReflectionTarget[] {
  const targets = ledger.get(sessionKey) ?? [];
  ledger.delete(sessionKey);
  return targets;
}
