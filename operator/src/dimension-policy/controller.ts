/** The DimensionPolicy controller: it reconciles policies and watches nothing else (Cortex is not a kind). */
import type { CortexDirectory } from "../cortex/directory.js";
import type { Controller } from "../runtime/controller.js";
import type { Manager } from "../runtime/manager.js";
import * as kinds from "../runtime/resource-kinds.js";
import { DimensionPolicyReconciler } from "./reconciler.js";

export function setupDimensionPolicyController(
  manager: Manager,
  options: { cortex: CortexDirectory },
): Controller {
  const reconciler = new DimensionPolicyReconciler({
    client: manager.client,
    policies: manager.cache(kinds.dimensionPolicies),
    cortex: options.cortex,
    events: manager.events,
    now: manager.now,
    log: manager.log,
  });
  return manager.add({
    name: "dimensionpolicy",
    for: kinds.dimensionPolicies,
    reconcile: (key) => reconciler.reconcile(key),
  });
}
