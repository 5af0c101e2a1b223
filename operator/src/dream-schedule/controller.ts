/** The DreamSchedule controller: it reconciles schedules and reads the ArtifactProposals it mirrors. */
import type { CortexDirectory } from "../cortex/directory.js";
import type { Controller } from "../runtime/controller.js";
import type { Manager } from "../runtime/manager.js";
import * as kinds from "../runtime/resource-kinds.js";
import { DreamScheduleReconciler } from "./reconciler.js";

export interface DreamScheduleControllerOptions {
  cortex: CortexDirectory;
  /** The operator's own username: ArtifactProposals it creates name it as proposer (the VAP checks this). */
  operatorUsername: string;
  /** How often pending proposals are mirrored between cycles (reconciler.ts defaultMirrorIntervalMs). */
  mirrorIntervalMs?: number;
}

export function setupDreamScheduleController(
  manager: Manager,
  options: DreamScheduleControllerOptions,
): Controller {
  const reconciler = new DreamScheduleReconciler({
    client: manager.client,
    schedules: manager.cache(kinds.dreamSchedules),
    // Read only: a proposal's events are the ArtifactProposal controller's.
    proposals: manager.cache(kinds.artifactProposals),
    cortex: options.cortex,
    events: manager.events,
    metrics: manager.metrics,
    operatorUsername: () => options.operatorUsername,
    now: manager.now,
    enqueue: (key) => controller.enqueue(key),
    log: manager.log,
    ...(options.mirrorIntervalMs === undefined ? {} : { mirrorIntervalMs: options.mirrorIntervalMs }),
  });
  const controller = manager.add({
    name: "dreamschedule",
    for: kinds.dreamSchedules,
    reconcile: (key) => reconciler.reconcile(key),
  });
  return controller;
}
