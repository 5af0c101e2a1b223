/**
 * Signing a person in: the API server says whose their bearer token is (a SelfSubjectReview sent with that token:
 * the same authentication as TokenReview, but it needs no right of the app's, so the app holds no cluster-wide
 * permission), the user is mapped to a household member (member.ts), and asked, with the same token, whether they
 * administer the appliance (a SelfSubjectAccessReview for the `administer` verb of remram-household-admin).
 * Answers are cached briefly by the token's digest, so a page of requests costs Kubernetes one round each.
 */
import { createHash } from "node:crypto";
import type { KubeConfig } from "@kubernetes/client-node";
import { KubeApiError, KubeClient } from "@remram/operator/kube-client";
import { personClient } from "../kube.js";
import { memberOf } from "./member.js";

/** Answers kept at most: a household has a handful of members, each with a browser or two. */
const cacheLimit = 1000;

export interface Person {
  memberId: string;
  /** The Kubernetes user name, as approvals record it. */
  username: string;
  householdId: string;
  admin: boolean;
  /** The person's Kubernetes client: their token, never the app's. */
  kube: KubeClient;
}

export type Identification = { person: Person } | { status: 401 | 403 | 503; message: string };

interface ApplianceHousehold {
  spec?: { household?: { id: string; members: { id: string }[] } };
}

interface SelfSubjectReview {
  status?: { userInfo?: { username?: string } };
}

interface AccessReview {
  status?: { allowed?: boolean };
}

export interface IdentitiesOptions {
  own: KubeConfig;
  namespace: string;
  appliance: string;
  cacheMs: number;
  clock?: () => number;
}

export class Identities {
  private readonly app: KubeClient;
  private readonly cache = new Map<string, { until: number; outcome: Identification }>();
  private readonly clock: () => number;

  constructor(private readonly options: IdentitiesOptions) {
    this.app = new KubeClient(options.own, { timeoutMs: 10_000 });
    this.clock = options.clock ?? Date.now;
  }

  async identify(token: string): Promise<Identification> {
    const key = createHash("sha256").update(token).digest("hex");
    const now = this.clock();
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.until > now) return cached.outcome;
    const outcome = await this.check(token);
    // Kubernetes being unreachable is no verdict on the person: ask again next time.
    if (!("status" in outcome) || outcome.status !== 503) {
      this.cache.set(key, { until: now + this.options.cacheMs, outcome });
      if (this.cache.size > cacheLimit) this.evict(now);
    }
    return outcome;
  }

  /** Expired answers first; then the oldest, so a flood of made-up tokens cannot grow the cache. */
  private evict(now: number): void {
    for (const [key, entry] of this.cache) if (entry.until <= now) this.cache.delete(key);
    for (const key of this.cache.keys()) {
      if (this.cache.size <= cacheLimit) break;
      this.cache.delete(key);
    }
  }

  private async check(token: string): Promise<Identification> {
    const { namespace, appliance } = this.options;
    const kube = personClient(this.options.own, token);
    let username: string | undefined;
    try {
      const review = await kube.send<SelfSubjectReview>(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
      );
      username = review.status?.userInfo?.username;
    } catch (error) {
      if (!(error instanceof KubeApiError && error.status === 401))
        return {
          status: 503,
          message: `Kubernetes could not check the credential: ${(error as Error).message}`,
        };
    }
    if (username === undefined)
      return {
        status: 401,
        message:
          "the credential is not valid: it expired, or its member was removed (kubectl remram user add issues a new one)",
      };
    // The app's own read: its failure is the app's (its identity or rights), never the person's.
    let found: ApplianceHousehold | undefined;
    try {
      found = await this.app.get<ApplianceHousehold>(
        `/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances/${appliance}`,
      );
    } catch (error) {
      return {
        status: 503,
        message: `the app could not read appliance ${appliance}: ${(error as Error).message}`,
      };
    }
    if (found === undefined)
      return { status: 503, message: `there is no RemramAppliance ${appliance} in namespace ${namespace}` };
    const household = found.spec?.household;
    if (household === undefined)
      return {
        status: 403,
        message: `appliance ${appliance} has no household (spec.household): nobody can sign in`,
      };
    const member = memberOf(username, {
      namespace,
      appliance,
      memberIds: household.members.map((m) => m.id),
    });
    if ("refusal" in member) return { status: 403, message: member.refusal };
    let admin: boolean;
    try {
      const access = await kube.send<AccessReview>(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SelfSubjectAccessReview",
            spec: {
              resourceAttributes: {
                group: "remram.io",
                resource: "remramappliances",
                verb: "administer",
                namespace,
                name: appliance,
              },
            },
          },
        },
      );
      admin = access.status?.allowed === true;
    } catch (error) {
      return {
        status: 503,
        message: `Kubernetes could not check the member's rights: ${(error as Error).message}`,
      };
    }
    return { person: { memberId: member.memberId, username, householdId: household.id, admin, kube } };
  }
}
