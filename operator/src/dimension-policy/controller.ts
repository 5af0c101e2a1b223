/**
 * The DimensionPolicy controller: it reconciles policies, and watches them once more to wake the other policies
 * of the same appliance (one policy per appliance: a change to one can hand the appliance to another). Cortex is
 * not a kind.
 */
import type { CortexDirectory } from "../cortex/directory.js";
import type { Controller } from "../runtime/controller.js";
import type { Manager } from "../runtime/manager.js";
import * as kinds from "../runtime/resource-kinds.js";
import { siblingKeys } from "./holder.js";
import { type DimensionPolicyObject, DimensionPolicyReconciler } from "./reconciler.js";

export function setupDimensionPolicyController(
  manager: Manager,
  options: { cortex: CortexDirectory },
): Controller {
  const policies = manager.cache<DimensionPolicyObject>(kinds.dimensionPolicies);
  const reconciler = new DimensionPolicyReconciler({
    client: manager.client,
    policies,
    cortex: options.cortex,
    events: manager.events,
    now: manager.now,
    log: manager.log,
  });
  return manager.add({
    name: "dimensionpolicy",
    for: kinds.dimensionPolicies,
    watches: [
      {
        kind: kinds.dimensionPolicies,
        map: (policy) => siblingKeys(policy, policies.list(policy.metadata.namespace)),
      },
    ],
    reconcile: (key) => reconciler.reconcile(key),
  });
}
