/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's timings (15 s lease, 10 s renew deadline,
 * 2 s retry). client-node has none. Writes carry the Lease's resourceVersion, so two candidates racing for an
 * expired lease cannot both win. The decision is a pure function; the loop around it is the I/O shell.
 */
import type { Logger } from "pino";
import { type Clock, systemClock, type TimerHandle } from "./clock.js";
import { KubeApiError, type KubeClient, resourcePath } from "./kube-client.js";

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease {
  apiVersion: "coordination.k8s.io/v1";
  kind: "Lease";
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

export interface LeaderElectionConfig {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export const defaultLeaderElection: LeaderElectionConfig = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

/** MicroTime as the API server writes it: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export type LeaseDecision = "take" | "renew" | "wait";

/** Whether `identity` may write the lease now: renew its own, take an expired or released one, else wait. */
export function decideLease(spec: LeaseSpec | undefined, identity: string, nowMs: number): LeaseDecision {
  const holder = spec?.holderIdentity ?? "";
  if (holder === identity) return "renew";
  if (holder === "") return "take";
  const renewedAt = Date.parse(spec?.renewTime ?? spec?.acquireTime ?? "");
  const durationMs = (spec?.leaseDurationSeconds ?? 15) * 1000;
  if (Number.isNaN(renewedAt) || renewedAt + durationMs < nowMs) return "take";
  return "wait";
}

export function nextLeaseSpec(
  spec: LeaseSpec | undefined,
  identity: string,
  nowMs: number,
  config: LeaderElectionConfig,
): LeaseSpec {
  const taking = spec?.holderIdentity !== identity;
  return {
    holderIdentity: identity,
    leaseDurationSeconds: Math.round(config.leaseDurationMs / 1000),
    acquireTime: taking ? microTime(nowMs) : (spec?.acquireTime ?? microTime(nowMs)),
    renewTime: microTime(nowMs),
    leaseTransitions: (spec?.leaseTransitions ?? 0) + (taking && (spec?.holderIdentity ?? "") !== "" ? 1 : 0),
  };
}

export interface LeaderElectorOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  config?: LeaderElectionConfig;
  clock?: Clock;
  log: Logger;
  onStartedLeading: () => void;
  /** Called once when renewals failed for longer than the renew deadline; the process should stop reconciling. */
  onStoppedLeading: () => void;
}

export class LeaderElector {
  private readonly config: LeaderElectionConfig;
  private readonly clock: Clock;
  private timer: TimerHandle | undefined;
  private leading = false;
  private lastRenewMs = 0;
  private stopped = false;

  constructor(private readonly options: LeaderElectorOptions) {
    this.config = options.config ?? defaultLeaderElection;
    this.clock = options.clock ?? systemClock;
  }

  isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    void this.tick();
  }

  /** Stop trying; a leader hands the lease back so a successor need not wait for it to expire. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    if (!this.leading) return;
    this.leading = false;
    const lease = await this.read();
    if (lease?.spec?.holderIdentity !== this.options.identity) return;
    await this.options.client
      .replace(this.path(), {
        ...lease,
        spec: { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1 },
      })
      .catch((error: unknown) => this.options.log.warn({ err: error }, "could not release the lease"));
  }

  private path(name?: string): string {
    return resourcePath("coordination.k8s.io/v1", "Lease", this.options.namespace, name ?? this.options.name);
  }

  private read(): Promise<Lease | undefined> {
    return this.options.client.get<Lease>(this.path());
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const now = this.clock.now();
    try {
      const acquired = await this.tryAcquireOrRenew(now);
      if (acquired) {
        this.lastRenewMs = now;
        if (!this.leading) {
          this.leading = true;
          this.options.log.info({ identity: this.options.identity }, "became leader");
          this.options.onStartedLeading();
        }
      }
    } catch (error) {
      this.options.log.warn({ err: error }, "lease update failed");
    }
    if (this.leading && this.clock.now() - this.lastRenewMs > this.config.renewDeadlineMs) {
      this.leading = false;
      this.options.log.error("lost the lease: renewals failed past the renew deadline");
      this.options.onStoppedLeading();
      return;
    }
    if (!this.stopped) this.timer = this.clock.setTimeout(() => void this.tick(), this.config.retryPeriodMs);
  }

  private async tryAcquireOrRenew(now: number): Promise<boolean> {
    const lease = await this.read();
    if (lease === undefined) {
      try {
        await this.options.client.create(this.path(undefined).replace(/\/[^/]+$/, ""), {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: this.options.name, namespace: this.options.namespace },
          spec: nextLeaseSpec(undefined, this.options.identity, now, this.config),
        });
        return true;
      } catch (error) {
        if (error instanceof KubeApiError && error.status === 409) return false;
        throw error;
      }
    }
    if (decideLease(lease.spec, this.options.identity, now) === "wait") return false;
    try {
      await this.options.client.replace(this.path(), {
        ...lease,
        spec: nextLeaseSpec(lease.spec, this.options.identity, now, this.config),
      });
      return true;
    } catch (error) {
      // 409: someone else wrote the lease since we read it; they won this round.
      if (error instanceof KubeApiError && error.status === 409) return false;
      throw error;
    }
  }
}
