import { describe, expect, it } from "vitest";
import { deniedReason } from "./service.js";

describe("a proposal's denial", () => {
  it("stores its free-text reason redacted, contact details replaced", () => {
    expect(deniedReason("leaks ghp_abcdefghijklmnopqrstuvwxyz0123; ask ana on +49 170 1234567")).toBe(
      "leaks <TOKEN>; ask ana on <PHONE>",
    );
    expect(deniedReason("duplicate of the boat note")).toBe("duplicate of the boat note");
    expect(deniedReason(undefined)).toBeUndefined();
  });
});
