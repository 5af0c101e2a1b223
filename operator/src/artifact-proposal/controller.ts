/** The ArtifactProposal controller: it reconciles proposals and watches nothing else (Cortex is not a kind). */
import type { CortexDirectory } from "../cortex/directory.js";
import type { Controller } from "../runtime/controller.js";
import type { Manager } from "../runtime/manager.js";
import * as kinds from "../runtime/resource-kinds.js";
import { ArtifactProposalReconciler } from "./reconciler.js";

export function setupArtifactProposalController(
  manager: Manager,
  options: { cortex: CortexDirectory },
): Controller {
  const reconciler = new ArtifactProposalReconciler({
    client: manager.client,
    proposals: manager.cache(kinds.artifactProposals),
    cortex: options.cortex,
    events: manager.events,
    metrics: manager.metrics,
    now: manager.now,
    log: manager.log,
  });
  return manager.add({
    name: "artifactproposal",
    for: kinds.artifactProposals,
    reconcile: (key) => reconciler.reconcile(key),
  });
}
