/**
 * Where an appliance's Cortex is and which token it accepts: its Service URL (or an override when the operator
 * runs outside the cluster) and the token from the appliance's token Secret.
 */

import { remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import { cortexTokenKey } from "../appliance/children/cortex.js";
import { childName, serviceUrl } from "../appliance/children/shared.js";
import type { Cache } from "../runtime/cache.js";
import type { KubeObject } from "../runtime/kube-client.js";
import { CortexClient, CortexUnavailableError } from "./client.js";

export interface CortexDirectoryOptions {
  secrets: Cache<KubeObject>;
  appliances: Cache<KubeObject & { spec?: unknown }>;
  /** Reads a Secret that is not in the operator's cache (a user-provided token Secret). */
  readSecret: (namespace: string, name: string) => Promise<KubeObject | undefined>;
  cortexUrl?: (appliance: { name: string; namespace: string }) => string;
  fetchImpl?: typeof fetch;
}

export class CortexDirectory {
  constructor(private readonly options: CortexDirectoryOptions) {}

  async clientFor(namespace: string, applianceName: string): Promise<CortexClient> {
    const appliance = this.options.appliances.get(namespace, applianceName);
    if (appliance === undefined) {
      throw new CortexUnavailableError(`RemramAppliance ${namespace}/${applianceName} does not exist`);
    }
    const parsed = remramApplianceSpec.safeParse(appliance.spec ?? {});
    const reference = parsed.success ? parsed.data.cortex.tokenSecretRef : undefined;
    const secretName = reference?.name ?? childName(applianceName, "cortex-token");
    const key = reference?.key ?? cortexTokenKey;
    const secret =
      this.options.secrets.get(namespace, secretName) ??
      (await this.options.readSecret(namespace, secretName));
    const encoded = (secret as { data?: Record<string, string> } | undefined)?.data?.[key];
    if (encoded === undefined)
      throw new CortexUnavailableError(`Cortex token Secret ${secretName} is not there yet`);
    const url =
      this.options.cortexUrl?.({ name: applianceName, namespace }) ??
      serviceUrl({ name: applianceName, namespace }, "cortex");
    return new CortexClient(
      { url, token: Buffer.from(encoded, "base64").toString("utf8") },
      this.options.fetchImpl ?? fetch,
    );
  }
}
