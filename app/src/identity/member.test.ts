import { describe, expect, it } from "vitest";
import { memberOf, memberServiceAccountName } from "./member.js";

const household = { namespace: "remram", appliance: "moltbox", memberIds: ["alice", "bob"] };

describe("memberOf", () => {
  it("maps the member's ServiceAccount in the appliance's namespace to the member", () => {
    const username = `system:serviceaccount:remram:${memberServiceAccountName("moltbox", "alice")}`;
    expect(memberOf(username, household)).toEqual({ memberId: "alice" });
  });

  it("refuses an account of another namespace, another appliance or no member", () => {
    for (const username of [
      "system:serviceaccount:other:moltbox-member-alice",
      "system:serviceaccount:remram:other-member-alice",
      "system:serviceaccount:remram:moltbox-operator",
      "system:serviceaccount:remram:moltbox-member-",
    ]) {
      expect(memberOf(username, household), username).toHaveProperty("refusal");
    }
  });

  it("refuses a plain user even if it is named like a member", () => {
    expect(memberOf("alice", household)).toHaveProperty("refusal");
    expect(memberOf("system:serviceaccount:remram:moltbox-member-alice:x", household)).toHaveProperty(
      "refusal",
    );
  });

  it("says when the account's member left the household", () => {
    const outcome = memberOf("system:serviceaccount:remram:moltbox-member-carol", household);
    expect(outcome).toEqual({ refusal: expect.stringMatching(/carol is no longer a member/) });
  });
});
