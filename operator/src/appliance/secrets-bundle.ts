/**
 * The appliance's Secrets in its backups, encrypted to keys the user holds (spec.backup.secrets.ageRecipients):
 * the ones the operator generated (Cortex's caller credentials, the gateway's token and its CA, which paired
 * devices trust) and the ones the spec names (a cloud model's key, channel tokens, the S3 key, an external
 * OpenSearch's credentials, a TLS certificate). Cortex stores the file as an attachment it cannot read; on a new
 * appliance the user decrypts it and applies it before restoring (`age -d -i KEY FILE | kubectl apply -n NS -f -`).
 * age (age-encryption.org/v1): a format with a Debian package to decrypt by hand, and one well-kept library here.
 */
import { Encrypter } from "age-encryption";
import { dump } from "js-yaml";
import type { RemramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import type { KubeClient, KubeObject } from "../runtime/kube-client.js";
import { applianceLabel, managedBy } from "./children/shared.js";
import { channelTokenRefs } from "./openclaw-channels.js";

/** The attachment's name in each backup. */
export const secretsAttachmentName = "attachment-appliance-secrets.yaml.age";

type SecretObject = KubeObject & { type?: string; data?: Record<string, string>; immutable?: boolean };

/** Every Secret the spec names, by name (the user's; the operator only reads them). */
export function namedSecrets(spec: RemramApplianceSpec): string[] {
  const names = [
    spec.escalation.cloud?.apiKeySecretRef.name,
    ...channelTokenRefs(spec.gateway.channels).map(({ ref }) => ref.name),
    spec.backup?.s3?.credentialsSecretRef.name,
    spec.opensearch.external?.credentialsSecretRef?.name,
    spec.opensearch.external?.caSecretRef?.name,
    spec.cortex.tokenSecretRef?.name,
    spec.gateway.expose?.ingress?.tls.secretName,
  ];
  return [...new Set(names.filter((name): name is string => name !== undefined))].sort();
}

/** A Secret as it can be applied into another namespace: no identity, owner or bookkeeping of this cluster's. */
export function portableSecret(secret: SecretObject): SecretObject {
  const { name, labels, annotations } = secret.metadata;
  const kept = Object.entries(annotations ?? {}).filter(
    // kubectl's copy of the last applied object repeats every value.
    ([key]) => key !== "kubectl.kubernetes.io/last-applied-configuration",
  );
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      ...(labels && Object.keys(labels).length > 0 ? { labels } : {}),
      ...(kept.length > 0 ? { annotations: Object.fromEntries(kept) } : {}),
    },
    ...(secret.type ? { type: secret.type } : {}),
    ...(secret.immutable ? { immutable: true } : {}),
    ...(secret.data ? { data: secret.data } : {}),
  };
}

/** The Secrets as one YAML List for `kubectl apply`, with how to use it (pure). */
export function secretsManifest(
  appliance: { namespace: string; name: string },
  secrets: readonly SecretObject[],
  takenAt: string,
): string {
  const header = [
    `# The Secrets of RemramAppliance ${appliance.namespace}/${appliance.name}, read ${takenAt}.`,
    "# Restore them before restoring the backup, into the new appliance's namespace:",
    "#   age -d -i KEY-FILE attachment-appliance-secrets.yaml.age | kubectl apply -n NAMESPACE -f -",
  ];
  const list = { apiVersion: "v1", kind: "List", items: secrets.map(portableSecret) };
  return `${header.join("\n")}\n${dump(list, { lineWidth: -1, sortKeys: true })}`;
}

/** The appliance's Secrets, read now: the ones it generated (by its labels) and the ones its spec names. */
export async function applianceSecrets(
  client: Pick<KubeClient, "get">,
  namespace: string,
  name: string,
  spec: RemramApplianceSpec,
): Promise<SecretObject[]> {
  const selector = `app.kubernetes.io/managed-by=${managedBy},${applianceLabel}=${name}`;
  const generated =
    (
      await client.get<{ items: SecretObject[] }>(
        `/api/v1/namespaces/${namespace}/secrets?labelSelector=${encodeURIComponent(selector)}`,
      )
    )?.items ?? [];
  const byName = new Map(generated.map((secret) => [secret.metadata.name, secret]));
  for (const secretName of namedSecrets(spec)) {
    if (byName.has(secretName)) continue;
    // A named Secret that is not there has nothing to keep; the spec's own conditions say it is missing.
    const secret = await client.get<SecretObject>(`/api/v1/namespaces/${namespace}/secrets/${secretName}`);
    if (secret !== undefined) byName.set(secretName, secret);
  }
  return [...byName.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

/** The manifest encrypted to every recipient (any one of their identities decrypts it). */
export async function sealForRecipients(text: string, recipients: readonly string[]): Promise<Uint8Array> {
  const encrypter = new Encrypter();
  for (const recipient of recipients) encrypter.addRecipient(recipient);
  return encrypter.encrypt(text);
}

/** The attachment for one backup of the appliance, or none when the spec names no recipient. */
export async function sealedSecretsAttachment(
  client: Pick<KubeClient, "get">,
  appliance: { namespace: string; name: string; spec: RemramApplianceSpec },
  now: Date,
): Promise<{ name: string; contentBase64: string }[]> {
  const recipients = appliance.spec.backup?.secrets?.ageRecipients ?? [];
  if (recipients.length === 0) return [];
  const secrets = await applianceSecrets(client, appliance.namespace, appliance.name, appliance.spec);
  const sealed = await sealForRecipients(secretsManifest(appliance, secrets, now.toISOString()), recipients);
  return [{ name: secretsAttachmentName, contentBase64: Buffer.from(sealed).toString("base64") }];
}
