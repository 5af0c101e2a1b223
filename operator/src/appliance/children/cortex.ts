/**
 * Cortex: its Deployment, the workspace claim it shares with the gateway (each in a subPath of its own), its
 * Service, and one credential Secret per caller of its API (the admin's unless the spec names one).
 */
import { type CallerName, callerNames } from "@remram/contract";
import { inProcessEmbeddingModel } from "../../api/v1alpha1/remram-appliance.js";
import type { KubeObject } from "../../runtime/kube-client.js";
import { requiredModels } from "./ollama.js";
import {
  type ApplianceContext,
  childClaim,
  childLabels,
  childMeta,
  childName,
  childSecret,
  childService,
  ports,
  resourcesOf,
  restrictedContainerSecurity,
  restrictedPodSecurity,
  selectorLabels,
  serviceUrl,
} from "./shared.js";

export const cortexCredentialKey = "token";

/**
 * Where a caller's Cortex credential lives: a Secret of its own per caller (`<appliance>-cortex-<caller>`, key
 * `token`), so each pod mounts only its own and each can be rotated alone. `spec.cortex.tokenSecretRef` names the
 * admin's, for a household that keeps its admin credential itself.
 */
export function cortexCredentialSecret(
  ctx: Pick<ApplianceContext, "name" | "spec">,
  caller: CallerName,
): { name: string; key: string } {
  if (caller === "admin" && ctx.spec.cortex.tokenSecretRef !== undefined)
    return ctx.spec.cortex.tokenSecretRef;
  return { name: childName(ctx.name, `cortex-${caller}`), key: cortexCredentialKey };
}

/** The callers whose credential Secret the operator generates. */
export function generatedCredentialCallers(ctx: Pick<ApplianceContext, "spec">): CallerName[] {
  return callerNames.filter((caller) => caller !== "admin" || ctx.spec.cortex.tokenSecretRef === undefined);
}

/** Cortex reads every caller's credential from this folder and re-reads it, so a rotated Secret needs no restart. */
export const cortexCredentialsDir = "/var/run/secrets/remram/cortex";

function opensearchUrl(ctx: ApplianceContext): string {
  return ctx.spec.opensearch.external?.url ?? serviceUrl(ctx, "opensearch");
}

/**
 * Cortex's own folder on the workspace claim (subPath `cortex`), apart from the agent's workspace (subPath
 * `workspace`): the git repository promoted artifacts are committed to, and the hash-addressed archive. Cortex's
 * root file system is read-only, so every path it writes is named here or lies on an emptyDir (HOME, /tmp).
 */
export const cortexDataDir = "/data/cortex";
/** Where the external OpenSearch's CA bundle is mounted (spec.opensearch.external.caSecretRef). */
const opensearchCaDir = "/var/run/secrets/remram/opensearch-ca";
export const opensearchSecretsVersionAnnotation = "remram.io/opensearch-secrets-version";
export const cortexRepoDir = `${cortexDataDir}/repo`;
export const cortexArchiveDir = `${cortexDataDir}/archive`;
/** Cortex writes artifacts under `artifacts/` of its repository (maturationPlugin's default artifactsDir). */
export const cortexArtifactsSubPath = "cortex/repo/artifacts";
/** Where spec.backup.volume is mounted: Cortex writes one folder per backup into it (CORTEX_BACKUP_DIR). */
export const cortexBackupDir = "/var/lib/remram/backups";
/** Where spec.backup.s3's credentials Secret is mounted (Cortex reads it for every request). */
const backupS3CredentialsDir = "/var/run/secrets/remram/backup-s3";
/** HOME for Cortex's git (it reads ~/.gitconfig; the image's user has no home on the read-only root). */
export const cortexHomeDir = "/home/cortex";
/**
 * The gateway's state folder (its `openclaw` subPath of the shared claim), read-only: with spec.backup's age keys
 * Cortex seals it into every backup (its pairings must not sit in clear there).
 */
export const cortexGatewayStateDir = "/var/lib/remram/gateway-state";

/** The model Cortex embeds with, and its vectors' length: Ollama's (the spec's or the profile's) or its image's own. */
export function cortexEmbedding(ctx: Pick<ApplianceContext, "spec" | "profile">): {
  model: string;
  dimensions: number;
} {
  if (ctx.spec.cortex.embedding.runtime === "inProcess") {
    const { name, dimensions } = inProcessEmbeddingModel;
    return { model: name, dimensions };
  }
  return { model: requiredModels(ctx).embedding, dimensions: ctx.spec.ollama.models.embeddingDimensions };
}

function embeddingEnv(ctx: ApplianceContext): { name: string; value: string }[] {
  const { model, dimensions } = cortexEmbedding(ctx);
  return [
    { name: "REMRAM_EMBED_MODEL", value: model },
    { name: "CORTEX_EMBED_DIMENSIONS", value: String(dimensions) },
    ...(ctx.spec.cortex.embedding.runtime === "inProcess"
      ? [
          { name: "CORTEX_EMBED_RUNTIME", value: "onnx" },
          { name: "CORTEX_EMBED_MODEL_DIR", value: inProcessEmbeddingModel.dir },
        ]
      : []),
  ];
}

export function buildCortex(ctx: ApplianceContext): KubeObject[] {
  const models = requiredModels(ctx);
  const workspace = ctx.spec.workspace;
  const credentials = ctx.spec.opensearch.external?.credentialsSecretRef;
  const ca = ctx.spec.opensearch.external?.caSecretRef;
  // A destination that is not there yet is left out: a missing claim or Secret would keep the pod from starting.
  const backup = ctx.backupDestinationProblem === undefined ? ctx.spec.backup : undefined;
  const sealTo = backup?.secrets?.ageRecipients ?? [];
  const env = [
    { name: "CORTEX_PORT", value: String(ports.cortex) },
    { name: "CORTEX_CREDENTIALS_DIR", value: cortexCredentialsDir },
    ...(ctx.spec.household ? [{ name: "REMRAM_HOUSEHOLD_ID", value: ctx.spec.household.id }] : []),
    { name: "REMRAM_OPENSEARCH_URL", value: opensearchUrl(ctx) },
    ...(credentials
      ? [{ name: "REMRAM_OPENSEARCH_CREDENTIALS_DIR", value: "/var/run/secrets/remram/opensearch" }]
      : []),
    ...(ca ? [{ name: "REMRAM_OPENSEARCH_CA_FILE", value: `${opensearchCaDir}/ca.crt` }] : []),
    { name: "REMRAM_OLLAMA_URL", value: serviceUrl(ctx, "ollama") },
    ...embeddingEnv(ctx),
    // Dream words its principles with the reflection model (the role is "Model for reflection and dream").
    { name: "REMRAM_REFLECTION_MODEL", value: models.reflection },
    { name: "REMRAM_WORKSPACE_DIR", value: cortexRepoDir },
    { name: "CORTEX_ARCHIVE_DIR", value: cortexArchiveDir },
    ...(backup?.volume ? [{ name: "CORTEX_BACKUP_DIR", value: cortexBackupDir }] : []),
    ...(backup?.s3
      ? [
          { name: "CORTEX_BACKUP_S3_ENDPOINT", value: backup.s3.endpoint },
          { name: "CORTEX_BACKUP_S3_BUCKET", value: backup.s3.bucket },
          ...(backup.s3.prefix ? [{ name: "CORTEX_BACKUP_S3_PREFIX", value: backup.s3.prefix }] : []),
          ...(backup.s3.region ? [{ name: "CORTEX_BACKUP_S3_REGION", value: backup.s3.region }] : []),
          { name: "CORTEX_BACKUP_S3_CREDENTIALS_DIR", value: backupS3CredentialsDir },
        ]
      : []),
    ...(backup ? [{ name: "CORTEX_BACKUP_KEEP", value: String(backup.keep) }] : []),
    ...(sealTo.length > 0
      ? [
          { name: "CORTEX_GATEWAY_STATE_DIR", value: cortexGatewayStateDir },
          // Public keys: nothing secret in them.
          { name: "CORTEX_BACKUP_AGE_RECIPIENTS", value: sealTo.join(" ") },
        ]
      : []),
    { name: "HOME", value: cortexHomeDir },
    { name: "TMPDIR", value: "/tmp" },
    { name: "REMRAM_TOP_K", value: String(ctx.spec.cortex.retrieval.topK) },
    ...(workspace.gitIdentity
      ? [
          { name: "GIT_AUTHOR_NAME", value: workspace.gitIdentity.name },
          { name: "GIT_AUTHOR_EMAIL", value: workspace.gitIdentity.email },
          { name: "GIT_COMMITTER_NAME", value: workspace.gitIdentity.name },
          { name: "GIT_COMMITTER_EMAIL", value: workspace.gitIdentity.email },
        ]
      : []),
  ];
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: childMeta(ctx, "cortex"),
    spec: {
      replicas: 1,
      // Cortex holds its git repository and archive; two writers must never overlap.
      strategy: { type: "Recreate" },
      selector: { matchLabels: selectorLabels(ctx.name, "cortex") },
      template: {
        metadata: {
          labels: childLabels(ctx.name, "cortex"),
          // Cortex reads the external cluster's credentials and CA at start: a changed Secret rolls it.
          ...(ctx.opensearchSecretsVersion
            ? { annotations: { [opensearchSecretsVersionAnnotation]: ctx.opensearchSecretsVersion } }
            : {}),
        },
        spec: {
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurity(1000),
          containers: [
            {
              name: "cortex",
              image: ctx.spec.cortex.image ?? ctx.images.cortex,
              env,
              ports: [{ name: "http", containerPort: ports.cortex }],
              readinessProbe: { httpGet: { path: "/readyz", port: "http" }, periodSeconds: 10 },
              livenessProbe: {
                httpGet: { path: "/healthz", port: "http" },
                periodSeconds: 20,
                failureThreshold: 6,
              },
              resources: resourcesOf(ctx.profile.cortex.resources),
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [
                { name: "credentials", mountPath: cortexCredentialsDir, readOnly: true },
                ...(credentials
                  ? [
                      {
                        name: "opensearch-credentials",
                        mountPath: "/var/run/secrets/remram/opensearch",
                        readOnly: true,
                      },
                    ]
                  : []),
                ...(ca ? [{ name: "opensearch-ca", mountPath: opensearchCaDir, readOnly: true }] : []),
                // Its own folder on the claim, never the agent's workspace (the gateway sees only artifacts/).
                { name: "workspace", mountPath: cortexDataDir, subPath: "cortex" },
                ...(sealTo.length > 0
                  ? [
                      {
                        name: "workspace",
                        mountPath: cortexGatewayStateDir,
                        subPath: "openclaw",
                        readOnly: true,
                      },
                    ]
                  : []),
                { name: "home", mountPath: cortexHomeDir },
                { name: "tmp", mountPath: "/tmp" },
                ...(backup?.volume ? [{ name: "backups", mountPath: cortexBackupDir }] : []),
                ...(backup?.s3
                  ? [{ name: "backup-s3-credentials", mountPath: backupS3CredentialsDir, readOnly: true }]
                  : []),
              ],
            },
          ],
          volumes: [
            {
              name: "credentials",
              // A projected volume, not subPaths: the kubelet swaps in a rotated Secret's value while Cortex runs.
              projected: {
                sources: callerNames.map((caller) => {
                  const secret = cortexCredentialSecret(ctx, caller);
                  return { secret: { name: secret.name, items: [{ key: secret.key, path: caller }] } };
                }),
              },
            },
            ...(credentials
              ? [{ name: "opensearch-credentials", secret: { secretName: credentials.name } }]
              : []),
            ...(ca
              ? [
                  {
                    name: "opensearch-ca",
                    secret: { secretName: ca.name, items: [{ key: ca.key, path: "ca.crt" }] },
                  },
                ]
              : []),
            { name: "workspace", persistentVolumeClaim: { claimName: childName(ctx.name, "workspace") } },
            { name: "home", emptyDir: {} },
            { name: "tmp", emptyDir: {} },
            // The user's claim (a USB disk, a NAS share): referenced, never created or owned by the appliance.
            ...(backup?.volume
              ? [{ name: "backups", persistentVolumeClaim: { claimName: backup.volume.claimName } }]
              : []),
            ...(backup?.s3
              ? [
                  {
                    name: "backup-s3-credentials",
                    secret: {
                      secretName: backup.s3.credentialsSecretRef.name,
                      items: [
                        { key: "access-key-id", path: "access-key-id" },
                        { key: "secret-access-key", path: "secret-access-key" },
                      ],
                    },
                  },
                ]
              : []),
          ],
        },
      },
    },
  };
  const workspaceStorage = ctx.spec.workspace.storage ?? { size: ctx.profile.workspace.storage };
  return [
    ...generatedCredentialCallers(ctx).map((caller) =>
      childSecret(ctx, `cortex-${caller}`, { [cortexCredentialKey]: ctx.secrets.cortexCredentials[caller] }),
    ),
    childClaim(ctx, "workspace", workspaceStorage.size, workspaceStorage.storageClassName),
    deployment as unknown as KubeObject,
    childService(ctx, "cortex"),
  ];
}
