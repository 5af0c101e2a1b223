import { describe, expect, it } from "vitest";
import { detectLiveState } from "./intent.js";

describe("live-state intent detection", () => {
  it.each([
    "Is OpenSearch running right now?",
    "is the gateway up?",
    "What version is installed on the box?",
    "what's the current status of ollama",
    "Are the backups still running",
  ])("marks %j as a live-state question", (text) => {
    expect(detectLiveState(text).detected).toBe(true);
  });

  it.each([
    "Why did we choose OpenSearch over Postgres?",
    "What does Jason prefer for breakfast?",
    "Summarise the decision about escalation policy",
  ])("leaves %j to memory", (text) => {
    expect(detectLiveState(text)).toEqual({ detected: false, reason: null });
  });

  it("trusts an explicit live_state intent from the caller", () => {
    expect(detectLiveState("tell me about the cluster", "live_state")).toEqual({
      detected: true,
      reason: 'intent "live_state"',
    });
  });

  it("lets the caller's intent decide when it sent one, and reads the text only when it did not", () => {
    expect(detectLiveState("Is OpenSearch running right now?", "recall")).toEqual({
      detected: false,
      reason: null,
    });
    expect(detectLiveState("Is OpenSearch running right now?")).toEqual({
      detected: true,
      reason: 'phrase "right now"',
    });
  });
});
