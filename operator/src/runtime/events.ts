/**
 * events.k8s.io/v1 Events, emitted by reconcilers on transitions only (never on a no-op reconcile).
 * Reasons are UpperCamelCase constants; notes are bounded to 1 kB and never carry secrets.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { KubeClient, KubeObject } from "./kube-client.js";
import { microTime } from "./leader-election.js";

export interface EventInput {
  type: "Normal" | "Warning";
  reason: string;
  action: string;
  note: string;
}

export class EventRecorder {
  constructor(
    private readonly client: KubeClient,
    private readonly reportingInstance: string,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Best effort: a failed Event never fails a reconcile. */
  async record(regarding: KubeObject, event: EventInput): Promise<void> {
    const namespace = regarding.metadata.namespace ?? "default";
    const body = {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: `${regarding.metadata.name}.${randomBytes(8).toString("hex")}`, namespace },
      eventTime: microTime(this.now()),
      reportingController: "remram.io/operator",
      reportingInstance: this.reportingInstance.slice(0, 128),
      action: event.action.slice(0, 128),
      reason: event.reason.slice(0, 128),
      type: event.type,
      note: event.note.slice(0, 1024),
      regarding: {
        apiVersion: regarding.apiVersion,
        kind: regarding.kind,
        name: regarding.metadata.name,
        namespace,
        uid: regarding.metadata.uid,
        resourceVersion: regarding.metadata.resourceVersion,
      },
    };
    try {
      await this.client.create(`/apis/events.k8s.io/v1/namespaces/${namespace}/events`, body);
    } catch (error) {
      this.log.warn({ err: error, reason: event.reason }, "could not record event");
    }
  }
}
