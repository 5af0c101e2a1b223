/**
 * Request intents the bundle renders differently for, and the one detector of the live-state intent that the
 * hooks (which send `intent`) and Cortex (which detects it when none was sent) share, so both read a question
 * the same way. Seed 001: "Is X running right now?" is answered by a live check, never from memory.
 */

/** The `intent` of a /retrieve request that asks about current live state. */
export const liveStateIntent = "live_state";

/** Intents that mean live state (synonyms a caller may send); compared lower-cased. */
export const liveStateIntents: readonly string[] = [liveStateIntent, "live", "status", "current_state"];

/** What is up, down, running or installed: words that describe a system's present state. */
const stateWords =
  "running|up|down|online|offline|alive|healthy|unhealthy|reachable|unreachable|deployed|installed|enabled|disabled|listening|working|active|available|responding|broken|stopped|started|mounted|connected|paused|on|off";
/** What may stand between a state word and the end of its clause. */
const stateTail =
  "(?:\\s+(?:right now|now|currently|at the moment|still|again|yet|any ?more|today|at all|on (?:the|this|that|our|my) (?:box|server|host|machine|node|nas|cluster|pi)))?\\s*(?:[?!.,;]|$)";

const livePatterns: readonly RegExp[] = [
  // "right now", "currently", "at the moment": the question is about the present, whatever it asks.
  /\b(?:right now|currently|at the moment|as of now|at present|as we speak)\b/i,
  // "the current version", "what is the current …".
  /\bcurrent\b/i,
  // "Is the gateway up?", "Are the backups still running", "Isn't OpenSearch healthy?" (present tense only).
  new RegExp(
    `(?:^|[.?!;:]\\s*|\\b(?:and|but|so|whether|if|check|see)\\s+)(?:is|are|isn't|aren't|is not|are not)\\b[^.?!;]{0,80}?\\b(?:${stateWords})\\b${stateTail}`,
    "i",
  ),
  // "… whether the backup is running", "the NAS is still up?" (not "what is up?", a greeting).
  new RegExp(
    `(?<!\\bwhat\\s)\\b(?:is|are)\\s+(?:still\\s+|now\\s+|currently\\s+)?(?:${stateWords})\\b\\s*\\?`,
    "i",
  ),
  // "still running", "still installed", "still on the box".
  /\bstill\s+(?:running|up|down|online|installed|deployed|enabled|active|listening|working|there|on\b)/i,
  // "what's running on port 9200 now?", "which version is it now?".
  /\b(?:is|are|what's|what is|which)\b[^.?!]{0,60}\bnow\s*\?/i,
  // "what version is installed", "which config is deployed on the box".
  /\b(?:what|which)\s+(?:version|release|config(?:uration)?|settings?|ports?|ip|address)\b[^.?!]{0,50}?\b(?:is|are)\b[^.?!]{0,40}?\b(?:running|installed|deployed|active|configured|used|set|open|listening|on)\b/i,
  // "what's the status of …", "how's the backup status", "check the status".
  /\b(?:what's|what is|how's|how is|check|show me|give me|tell me)\b[^.?!]{0,40}\bstatus\b/i,
  // "how much disk is left", "how full is the disk", "how much memory is free".
  /\bhow (?:much|many)\b[^.?!]{0,40}\b(?:left|free|used|in use|remaining|available)\b/i,
  /\bhow full\b/i,
];

/**
 * The phrase that makes `text` a question about current live state, or null. Deterministic and pure: the same
 * text always gives the same answer. English only; a past-tense question ("was it running in May?") is not live.
 */
export function liveStatePhrase(text: string): string | null {
  for (const pattern of livePatterns) {
    const match = pattern.exec(text);
    if (match !== null) return match[0].trim();
  }
  return null;
}

export function isLiveStateIntent(intent: string): boolean {
  return liveStateIntents.includes(intent.trim().toLowerCase());
}
