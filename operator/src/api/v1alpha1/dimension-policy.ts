// The spec is PUT to Cortex as its dimension policy: its enumerations are the contract's own.
import { knowledgeTypes, privacyLevels, retrievalWeights, scopes } from "@remram/contract";
import { z } from "zod";
import {
  ageColumn,
  applianceRef,
  conditions,
  type KindDefinition,
  listMap,
  listSet,
  readyColumns,
  timestamp,
  withCel,
} from "./common.js";

const dimensionName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z][a-z0-9_]*$/);

const probability = z.number().min(0).max(1);

export const dimensionPolicySpec = z
  .object({
    applianceRef: applianceRef.describe(
      "The appliance whose Cortex takes this policy, in this namespace. One policy per appliance: metadata.name must equal applianceRef.name, and applianceRef cannot change.",
    ),
    dimensions: listMap(
      z
        .array(
          z
            .object({
              name: dimensionName,
              description: z.string().max(512).optional(),
              values: listSet(z.array(z.string().min(1).max(128)).max(256))
                .optional()
                .describe("Canonical values; empty means free-form."),
            })
            .strict(),
        )
        .min(1)
        .max(64),
      "name",
    ).describe("Canonical dimensions knowledge is filed under."),
    candidatePromotion: z
      .object({
        minOccurrences: z.int().min(1).max(1000).default(3),
        minConfidence: probability.default(0.7),
      })
      .strict()
      .prefault({})
      .describe("When a candidate dimension seen by dream becomes a proposal."),
    eligibility: z
      .object({
        minConfidence: probability.default(0.2),
        excludeTypes: listSet(z.array(z.enum(knowledgeTypes)).max(5)).optional(),
      })
      .strict()
      .prefault({}),
    privacy: withCel(
      z
        .object({
          defaultLevel: z.enum(privacyLevels).default("household"),
          allowedScopes: listSet(z.array(z.enum(scopes)).min(1).max(3)).default([
            "user",
            "household",
            "shared",
          ]),
          injectableLevels: listSet(z.array(z.enum(privacyLevels)).max(4)).default(["public", "household"]),
        })
        .strict()
        .prefault({}),
      {
        rule: "!self.injectableLevels.exists(l, l == 'secret')",
        message: "secret knowledge can never be injectable",
        fieldPath: ".injectableLevels",
      },
    ),
    retrievalWeights,
  })
  .strict();

export const dimensionPolicyStatus = z
  .object({
    observedGeneration: z.int().min(0).optional(),
    conditions: conditions.optional(),
    appliedHash: z.string().max(71).optional().describe("sha256 of the policy body Cortex accepted last."),
    lastSyncTime: timestamp.optional(),
  })
  .strict();

export type DimensionPolicySpec = z.output<typeof dimensionPolicySpec>;
export type DimensionPolicyStatus = z.output<typeof dimensionPolicyStatus>;

/** The reasons of a DimensionPolicy's conditions (Synced, and Ready with the same outcome), which users match on. */
export const DimensionPolicyReason = {
  Applied: "Applied",
  /** Cortex refused the request; for a policy it calls invalid (400), the operator waits for a spec change. */
  Rejected: "Rejected",
  CortexUnavailable: "CortexUnavailable",
  /** Another policy already holds this appliance (one made before names were tied to appliances); not applied. */
  DuplicatePolicy: "DuplicatePolicy",
} as const;
export type DimensionPolicyReason = (typeof DimensionPolicyReason)[keyof typeof DimensionPolicyReason];

export const dimensionPolicyKind: KindDefinition = {
  kind: "DimensionPolicy",
  plural: "dimensionpolicies",
  singular: "dimensionpolicy",
  shortNames: ["dimpol", "dp"],
  categories: ["remram"],
  description:
    "Canonical dimensions, promotion thresholds, eligibility, privacy and retrieval weights for Cortex.",
  spec: dimensionPolicySpec,
  status: dimensionPolicyStatus,
  metadataNameRule: {
    // Cortex holds one policy per appliance, so two objects would overwrite each other there. Tying the name to the
    // appliance lets the API server's name uniqueness admit one. Objects made before this rule keep their names
    // (oldSelf): their status, finalizer and spec stay writable as long as applianceRef does not change.
    rule: "self.metadata.name == self.spec.applianceRef.name || (oldSelf.hasValue() && oldSelf.value().spec.applianceRef == self.spec.applianceRef)",
    optionalOldSelf: true,
    fieldPath: ".spec.applianceRef.name",
    message:
      "a DimensionPolicy is named after its appliance (one policy per appliance): metadata.name must equal spec.applianceRef.name, which cannot change",
  },
  printerColumns: [
    ...readyColumns,
    { name: "Synced", type: "string", jsonPath: '.status.conditions[?(@.type=="Synced")].status' },
    ageColumn,
    { name: "Hash", type: "string", jsonPath: ".status.appliedHash", priority: 1 },
  ],
};
