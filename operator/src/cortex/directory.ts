/**
 * Where an appliance's Cortex is and how the operator calls it: its Service URL (or an override when the operator
 * runs outside the cluster) and the operator's own credential Secret, read at every call so a rotation applies.
 */

import { cortexCredentialKey } from "../appliance/children/cortex.js";
import { childName, serviceUrl } from "../appliance/children/shared.js";
import type { Cache } from "../runtime/cache.js";
import type { KubeObject } from "../runtime/kube-client.js";
import { CortexClient, CortexUnavailableError } from "./client.js";

export interface CortexDirectoryOptions {
  secrets: Cache<KubeObject>;
  appliances: Cache<KubeObject & { spec?: unknown }>;
  /** Reads the credential Secret directly when the cache does not hold it yet. */
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
    const secretName = childName(applianceName, "cortex-operator");
    const key = cortexCredentialKey;
    const secret =
      this.options.secrets.get(namespace, secretName) ??
      (await this.options.readSecret(namespace, secretName));
    const encoded = (secret as { data?: Record<string, string> } | undefined)?.data?.[key];
    if (encoded === undefined)
      throw new CortexUnavailableError(`Cortex credential Secret ${secretName} is not there yet`);
    const url =
      this.options.cortexUrl?.({ name: applianceName, namespace }) ??
      serviceUrl({ name: applianceName, namespace }, "cortex");
    return new CortexClient(
      { url, token: Buffer.from(encoded, "base64").toString("utf8") },
      this.options.fetchImpl ?? fetch,
    );
  }
}
