import { type ChatModel, ModelUnavailableError } from "../store/chat-model.js";
import { checkWording, type PrincipleDraft, wordingPrompt, wordingReplySchema } from "./wording.js";

/**
 * The one call out of a dream cycle: the reflection model words the principles the rules founded. Each draft gets
 * two tries (greedy, then with some temperature and a fixed seed); a model that cannot be reached is not asked
 * again this cycle, and past the cycle's wording budget nothing more is asked. What is left is deferred, with the
 * reason, and the next cycle asks again: a principle is never stored with text the checks refused.
 */

export type WordingOutcomeKind = "worded" | "malformed" | "unavailable" | "skipped";

export interface WordingSettings {
  /** Epoch milliseconds after which no new call starts. */
  deadline: number;
  /** At most this many drafts are sent to the model per cycle (the rest wait). */
  maxPrinciples: number;
  /** Heard once per draft, with how it ended (metrics). */
  observe?: (outcome: WordingOutcomeKind) => void;
}

export interface WordingResult {
  /** Wordings by principle id: the model's, or a revived principle's own. */
  wordings: Map<string, string>;
  /** Principle ids left without a wording, with why. */
  deferred: Map<string, string>;
  /** Principle ids the model worded this cycle. */
  worded: Set<string>;
}

const attempts = [
  { temperature: 0, maxTokens: 120 },
  { temperature: 0.6, seed: 7, maxTokens: 120 },
] as const;

/**
 * Wordings for `drafts` (in the given order). `known` holds wordings that need no model: a demoted principle the
 * rules found again keeps its statement.
 */
export async function wordPrinciples(
  model: ChatModel,
  drafts: readonly PrincipleDraft[],
  known: ReadonlyMap<string, string>,
  settings: WordingSettings,
  now: () => number = Date.now,
): Promise<WordingResult> {
  const result: WordingResult = { wordings: new Map(), deferred: new Map(), worded: new Set() };
  let unavailable: string | undefined;
  let asked = 0;
  for (const draft of drafts) {
    const own = known.get(draft.id);
    if (own !== undefined) {
      result.wordings.set(draft.id, own);
      continue;
    }
    const refusal =
      unavailable ??
      (asked >= settings.maxPrinciples
        ? `this cycle's ${settings.maxPrinciples} wordings were used`
        : now() > settings.deadline
          ? "this cycle's wording time was used"
          : undefined);
    if (refusal !== undefined) {
      result.deferred.set(draft.id, refusal);
      settings.observe?.("skipped");
      continue;
    }
    asked += 1;
    let reason = "no reply";
    for (const attempt of attempts) {
      try {
        const reply = await model.completeJson(wordingPrompt(draft), wordingReplySchema, attempt);
        const check = checkWording(reply, draft);
        if (check.ok) {
          result.wordings.set(draft.id, check.statement);
          result.worded.add(draft.id);
          break;
        }
        reason = check.reason;
      } catch (error) {
        if (!(error instanceof ModelUnavailableError)) throw error;
        unavailable = `reflection model unavailable: ${error.message.slice(0, 200)}`;
        break;
      }
    }
    if (result.worded.has(draft.id)) settings.observe?.("worded");
    else if (unavailable !== undefined) {
      result.deferred.set(draft.id, unavailable);
      settings.observe?.("unavailable");
    } else {
      result.deferred.set(draft.id, `reply refused twice: ${reason}`);
      settings.observe?.("malformed");
    }
  }
  return result;
}
