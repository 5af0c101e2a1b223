export * from "./artifact-proposal.js";
export * from "./common.js";
export * from "./dimension-policy.js";
export * from "./dream-schedule.js";
export * from "./escalation.js";
export * from "./remram-appliance.js";

import { artifactProposalKind } from "./artifact-proposal.js";
import type { KindDefinition } from "./common.js";
import { dimensionPolicyKind } from "./dimension-policy.js";
import { dreamScheduleKind } from "./dream-schedule.js";
import { remramApplianceKind } from "./remram-appliance.js";

export const allKinds: readonly KindDefinition[] = [
  remramApplianceKind,
  dreamScheduleKind,
  dimensionPolicyKind,
  artifactProposalKind,
];
