import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import { describe, expect, it } from "vitest";
import { parseSchedule } from "../dream-schedule/schedule.js";
import { artifactProposalSpec } from "./v1alpha1/artifact-proposal.js";
import { dimensionPolicySpec } from "./v1alpha1/dimension-policy.js";
import { dreamScheduleSpec } from "./v1alpha1/dream-schedule.js";
import { remramApplianceSpec } from "./v1alpha1/remram-appliance.js";

const specs = {
  RemramAppliance: remramApplianceSpec,
  DreamSchedule: dreamScheduleSpec,
  DimensionPolicy: dimensionPolicySpec,
  ArtifactProposal: artifactProposalSpec,
} as const;

describe("manifests/appliance-example.yaml", () => {
  const documents = loadAll(
    readFileSync(join(import.meta.dirname, "../../../manifests/appliance-example.yaml"), "utf8"),
  ) as {
    apiVersion: string;
    kind: keyof typeof specs | "Namespace";
    metadata: { name: string };
    spec?: unknown;
  }[];

  it("holds an appliance, a schedule and a policy that satisfy the schemas", () => {
    const kinds = documents.map((document) => document.kind);
    expect(kinds).toEqual(["Namespace", "RemramAppliance", "DreamSchedule", "DimensionPolicy"]);
    for (const document of documents) {
      if (document.kind === "Namespace") continue;
      const result = specs[document.kind].safeParse(document.spec);
      expect(result.error, document.kind).toBeUndefined();
    }
  });

  it("names the policy after its appliance, as admission requires", () => {
    const policy = documents.find((document) => document.kind === "DimensionPolicy");
    expect(policy?.metadata.name).toBe(dimensionPolicySpec.parse(policy?.spec).applianceRef.name);
  });

  it("has a schedule croner can read in its time zone", () => {
    const schedule = documents.find((document) => document.kind === "DreamSchedule");
    const spec = dreamScheduleSpec.parse(schedule?.spec);
    expect(() => parseSchedule(spec.schedule, spec.timeZone)).not.toThrow();
  });
});
