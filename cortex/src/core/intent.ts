/**
 * Live-state intent (seed 001: LIVE > RAW > DERIVED). Questions about what runs, is installed or is configured
 * *now* are marked so the bundle renders memory as history and tells the model to check live state first. The
 * caller's intent decides when it sent one (the hooks send "live_state" when the contract's detector fires on
 * their side); otherwise Cortex reads the request text with that same detector.
 */
import { isLiveStateIntent, liveStatePhrase } from "@remram/contract";

export interface LiveStateDetection {
  detected: boolean;
  reason: string | null;
}

export function detectLiveState(requestText: string, intent?: string): LiveStateDetection {
  if (intent !== undefined) {
    return isLiveStateIntent(intent)
      ? { detected: true, reason: `intent "${intent}"` }
      : { detected: false, reason: null };
  }
  const phrase = liveStatePhrase(requestText);
  return phrase === null
    ? { detected: false, reason: null }
    : { detected: true, reason: `phrase "${phrase}"` };
}
