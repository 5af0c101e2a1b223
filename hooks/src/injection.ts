import { bundleClose, bundleItemText, bundleOpen, liveStateIntent, liveStatePhrase } from "@remram/contract";
import type { RetrieveResponse } from "./cortex-contract.js";

/**
 * The knowledge block the hooks put into a prompt is the one Cortex rendered (the contract's renderBundle, counted
 * with Cortex's tokenizer under the request's token budget): the plugin injects it as is and never renders one of
 * its own. It goes into `appendSystemContext`: OpenClaw places that after its core system prompt and the
 * workspace bootstrap files and before the session transcript, which is seed 000 §4.3's order (core prompt →
 * bootstrap → Remram bundle → transcript).
 */

/** The contract's delimiters, one spelling for Cortex and the hooks. */
export const blockBegin = bundleOpen;
export const blockEnd = bundleClose;

/**
 * A cheap, conservative token estimate (about 3.5 characters a token for English; rounds up), for the prompt and
 * transcript sizes escalation weighs; the knowledge block's size is Cortex's exact count.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3.5);
}

type KnowledgeItem = Pick<RetrieveResponse["facts"][number], "scope" | "privacy" | "consent">;

const privateLevels = new Set(["private", "secret"]);

/**
 * Private-scope knowledge: a private privacy level; without a level, user scope; without either, private,
 * because what cannot be shown to be shareable is treated as not shareable.
 */
export function isPrivateItem(item: KnowledgeItem): boolean {
  if (item.privacy !== undefined) return privateLevels.has(item.privacy);
  if (item.scope !== undefined) return item.scope === "user";
  return true;
}

export function mayLeaveTheBox(item: KnowledgeItem, allowPrivateToCloud: boolean): boolean {
  return !isPrivateItem(item) || allowPrivateToCloud || item.consent?.cloud === true;
}

/** Whether this bundle, injected as retrieved, holds anything a cloud model must not see. */
export function blocksCloud(bundle: RetrieveResponse, allowPrivateToCloud: boolean): boolean {
  return itemsWithheldFrom(bundle, "cloud", allowPrivateToCloud) > 0;
}

/**
 * How many of the bundle's items a model at `target` must not read. Cortex leaves them out of a bundle asked for a
 * cloud model; one that still holds some (a bundle asked for a local model, an older Cortex) is not injected at
 * all: the block is Cortex's text, and cutting items out of it would need a renderer of the plugin's own.
 */
export function itemsWithheldFrom(
  bundle: RetrieveResponse,
  target: "local" | "cloud",
  allowPrivateToCloud: boolean,
): number {
  if (target === "local") return 0;
  return [...bundle.facts, ...bundle.chunks].filter((item) => !mayLeaveTheBox(item, allowPrivateToCloud))
    .length;
}

export interface InjectedBlock {
  /** Cortex's rendered block, byte for byte. */
  text: string;
  /** Cortex's count of it (o200k_base), framing included. */
  tokens: number;
  /** Each fact's and chunk's text as it reads in the block (for the injection ledger). */
  itemTexts: string[];
}

export type BlockOutcome =
  | { ok: true; block: InjectedBlock }
  | { ok: false; reason: "nothing_retrieved" | "over_budget" };

/**
 * The block to inject for a bundle: Cortex's text as is; nothing when Cortex rendered nothing (nothing qualified)
 * or, against its contract, a block over the ceiling the plugin asked for.
 */
export function knowledgeBlock(bundle: RetrieveResponse, tokenCeiling: number): BlockOutcome {
  const { text, tokens } = bundle.bundle;
  if (text.trim() === "") return { ok: false, reason: "nothing_retrieved" };
  if (tokens > tokenCeiling) return { ok: false, reason: "over_budget" };
  const itemTexts = [
    ...bundle.facts.map((fact) => bundleItemText(fact.statement)),
    ...bundle.chunks.map((chunk) => bundleItemText(chunk.text)),
  ];
  return { ok: true, block: { text, tokens, itemTexts } };
}

/**
 * The intent sent with /retrieve: "live_state" when the request asks about current live state (the contract's
 * detector, which Cortex runs too when no intent comes), so the bundle comes back as history under a live-check
 * instruction; otherwise none, and Cortex decides.
 */
export function retrieveIntent(requestText: string): string | undefined {
  return liveStatePhrase(requestText) === null ? undefined : liveStateIntent;
}
