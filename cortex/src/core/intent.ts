/**
 * Live-state intent (seed 001: LIVE > RAW > DERIVED). Questions about what runs, is installed or is configured
 * *now* are marked so the caller knows memory is historical for them and a live check must come first.
 */
const livePatterns: readonly RegExp[] = [
  /\b(?:is|are|was)\b[^.?!]{0,60}\b(?:running|up|down|online|offline|alive|healthy|reachable|deployed|installed|enabled|listening|working)\b(?:\s+(?:now|right now|currently|at the moment))?\s*\??/i,
  /\b(?:right now|currently|at the moment|as of now|at present)\b/i,
  /\b(?:current|live|actual)\s+(?:state|status|version|config(?:uration)?|value|load|usage)\b/i,
  /\bstatus of\b/i,
  /\bwhat\s+(?:version|config(?:uration)?)\b[^.?!]{0,40}\b(?:running|installed|deployed|active)\b/i,
  /\b(?:still|currently)\s+(?:running|up|down|installed|deployed)\b/i,
];

const liveIntents = new Set(["live_state", "live", "status", "current_state"]);

export interface LiveStateDetection {
  detected: boolean;
  reason: string | null;
}

export function detectLiveState(requestText: string, intent?: string): LiveStateDetection {
  if (intent !== undefined && liveIntents.has(intent.toLowerCase())) {
    return { detected: true, reason: `intent "${intent}"` };
  }
  for (const pattern of livePatterns) {
    const match = pattern.exec(requestText);
    if (match !== null) return { detected: true, reason: `phrase "${match[0].trim()}"` };
  }
  return { detected: false, reason: null };
}
