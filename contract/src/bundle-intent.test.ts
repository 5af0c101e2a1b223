import { describe, expect, it } from "vitest";
import { isLiveStateIntent, liveStateIntent, liveStatePhrase } from "./bundle-intent.js";

describe("the live-state detector the hooks and Cortex share", () => {
  it.each([
    ["Is OpenSearch running right now?", "right now"],
    ["is the gateway up?", "is the gateway up?"],
    ["What version is installed on the box?", "What version is installed"],
    ["what's the current status of ollama", "current"],
    ["Are the backups still running", "Are the backups still running"],
    ["Can you check whether the NAS is online?", "is online?"],
    ["Isn't the camera reachable?", "Isn't the camera reachable?"],
    ["What is running on port 9200 now?", "What is running on port 9200 now?"],
    ["What's the backup status?", "What's the backup status"],
    ["How much disk space is left on the NAS?", "How much disk space is left"],
    ["How full is the photo volume?", "How full"],
    ["Which config is deployed on the cluster?", "Which config is deployed"],
    ["Is the old server still on?", "Is the old server still on?"],
    ["I'm currently away; is the heating on?", "currently"],
  ])("reads %j as a live-state question (%j)", (text, phrase) => {
    expect(liveStatePhrase(text)).toBe(phrase);
  });

  it.each([
    "Why did we choose OpenSearch over Postgres?",
    "What does Jason prefer for breakfast?",
    "Summarise the decision about escalation policy",
    "What was Ana working on last year?",
    "Was the backup running in May?",
    "Is it true that Ana gave up coffee?",
    "Is Ana working on the garden?",
    "What's up?",
    "What is up?",
    "Remind me what my boat is named",
    "What is my cat called?",
    "When is the therapist appointment?",
    "Is the meeting on Thursday?",
    "How did we set up the gateway?",
    "Set up the backup so it is running nightly",
    "Remember that I prefer tea in the morning.",
  ])("leaves %j to memory", (text) => {
    expect(liveStatePhrase(text)).toBeNull();
  });

  it("is deterministic: the same text always gives the same phrase", () => {
    const text = "Is the gateway up? And what is the current version?";
    expect(liveStatePhrase(text)).toBe(liveStatePhrase(text));
    expect(liveStatePhrase(text)).toBe("current");
  });

  it("recognises the intents that mean live state, whatever their case", () => {
    expect(isLiveStateIntent(liveStateIntent)).toBe(true);
    expect(isLiveStateIntent(" Live_State ")).toBe(true);
    expect(isLiveStateIntent("status")).toBe(true);
    expect(isLiveStateIntent("recall")).toBe(false);
    expect(isLiveStateIntent("decision")).toBe(false);
  });
});
