import { describe, expect, it } from "vitest";
import { bearerMatches } from "./auth.js";

describe("bearer authentication", () => {
  it("accepts exactly the configured token", () => {
    expect(bearerMatches("Bearer s3cret-token-value", "s3cret-token-value")).toBe(true);
    expect(bearerMatches("bearer s3cret-token-value", "s3cret-token-value")).toBe(true);
    expect(bearerMatches("Bearer s3cret-token-valuX", "s3cret-token-value")).toBe(false);
    expect(bearerMatches("Bearer s3cret", "s3cret-token-value")).toBe(false);
    expect(bearerMatches("Basic s3cret-token-value", "s3cret-token-value")).toBe(false);
    expect(bearerMatches(undefined, "s3cret-token-value")).toBe(false);
  });
});
