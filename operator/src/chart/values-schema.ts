/**
 * The chart's values as a zod schema: the one source of charts/remram-operator/values.schema.json (written by
 * `npm run crds -w operator`), so `helm install`/`upgrade`/`template`/`lint` refuse a mistyped or unknown value
 * with its path instead of rendering a broken Deployment. Every object is strict (an unknown key is an error,
 * a typo never silently falls back to the default); only the free-form maps (labels, nodeSelector) and Helm's
 * own `global` take keys of the user's choosing.
 */
import { z } from "zod";

/** Namespace names: what the API server accepts (DNS-1123 label). */
const namespaceName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, {
    error: "must be a namespace name: lowercase letters, digits and '-', at most 63 characters",
  });

/** A list without repeats: JSON Schema's uniqueItems for Helm, the same rule for zod. */
function uniqueList<T extends z.ZodType>(item: T) {
  return z
    .array(item)
    .refine((values) => new Set(values).size === values.length, { error: "must not repeat an entry" })
    .meta({ uniqueItems: true });
}

// The reference grammar of distribution/reference, without the lookaheads Go's RE2 (Helm's validator) lacks.
const pathComponent = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const registryHost = "[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]+)?";
const repositoryGrammar = `(?:${registryHost}/)?${pathComponent}(?:/${pathComponent})*`;
const tagGrammar = "[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}";
const digestGrammar = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";

const repositoryError =
  "must be an image repository such as remram/operator or registry.local:5000/remram/operator";
const repository = z
  .string()
  .max(255)
  .regex(new RegExp(`^${repositoryGrammar}$`), { error: repositoryError });
const repositoryOrEmpty = z
  .string()
  .max(255)
  .regex(new RegExp(`^(${repositoryGrammar})?$`), { error: `${repositoryError}, or empty` });
const imageTag = z.string().regex(new RegExp(`^(${tagGrammar})?$`), {
  error: "must be an image tag (letters, digits, '_', '.', '-', at most 128) or empty",
});
/** The operands: a full reference pinned by tag or digest, as the operator passes it on unchanged. */
const pinnedImage = z
  .string()
  .max(512)
  .regex(new RegExp(`^${repositoryGrammar}(?::${tagGrammar}(?:@${digestGrammar})?|@${digestGrammar})$`), {
    error: "must be an image reference pinned by a tag or digest, such as ollama/ollama:0.24.0",
  });
const pullPolicy = z.enum(["Always", "IfNotPresent", "Never"]);

/** Kubernetes resource quantities as the API server parses them (no sign: requests and limits are never negative). */
const quantity = z.union([
  z
    .string()
    .regex(
      /^(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/,
      {
        error: "must be a Kubernetes quantity such as 50m, 0.5, 96Mi or 1Gi",
      },
    ),
  z.number().min(0),
]);
const resourceList = z.strictObject({
  cpu: quantity.optional().describe("CPU, in cores or millicores (50m)."),
  memory: quantity.optional().describe("Memory, in bytes with a suffix (96Mi)."),
  "ephemeral-storage": quantity.optional().describe("Local scratch space (/tmp is an emptyDir)."),
});

/** Prometheus Operator's duration format (its CRDs validate the same pattern). */
const promDuration = z
  .string()
  .min(1)
  .regex(/^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/, {
    error: "must be a Prometheus duration such as 30s, 1m or 1h30m",
  });

const labelKey = z
  .string()
  .max(317)
  .regex(
    /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/,
    {
      error: "must be a label key such as release or example.com/team",
    },
  );
const labelValue = z
  .string()
  .max(63)
  .regex(/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/, {
    error: "must be a label value: letters, digits, '-', '_', '.', at most 63 characters",
  });
const labels = z.record(labelKey, labelValue);

const toleration = z.strictObject({
  key: labelKey.optional().describe("The taint's key; empty with operator Exists matches every taint."),
  operator: z
    .enum(["Exists", "Equal"])
    .optional()
    .describe("Equal (default) compares value; Exists does not."),
  value: labelValue.optional().describe("The taint's value, for operator Equal."),
  effect: z
    .enum(["NoSchedule", "PreferNoSchedule", "NoExecute"])
    .optional()
    .describe("The taint effect to tolerate; empty tolerates every effect."),
  tolerationSeconds: z
    .int()
    .min(0)
    .max(31_536_000)
    .optional()
    .describe("For NoExecute: how long the pod stays after the taint appears."),
});

function monitor(what: string) {
  return z.strictObject({
    enabled: z
      .boolean()
      .describe(`Create the ${what}; rendered only when the monitoring.coreos.com/v1 API exists.`),
    labels: labels.describe(
      "Extra labels, e.g. the release label kube-prometheus-stack selects monitors by.",
    ),
    interval: promDuration.describe("Scrape interval."),
  });
}

export const chartValues = z
  .strictObject({
    image: z
      .strictObject({
        repository: repository.describe("The operator image (operator/Dockerfile)."),
        tag: imageTag.describe("Its tag; empty takes the chart's appVersion."),
        pullPolicy: pullPolicy.describe("Never for images loaded into the node's containerd (the test bed)."),
      })
      .describe("The operator's container image."),
    replicaCount: z
      .int()
      .min(0)
      .max(10)
      .describe(
        "Operator replicas: one leads through the Lease, the others wait passively; 0 stops reconciling.",
      ),
    crds: z
      .strictObject({
        enabled: z.boolean().describe("Install the four CRDs as templates, so `helm upgrade` updates them."),
        keep: z
          .boolean()
          .describe("Keep the CRDs, and with them every appliance, when the release is uninstalled."),
      })
      .describe("The remram.io/v1alpha1 CRDs."),
    approvalPolicy: z
      .strictObject({
        enabled: z
          .boolean()
          .describe(
            "The ValidatingAdmissionPolicy that binds an ArtifactProposal decision to the approving user.",
          ),
      })
      .describe("Admission for ArtifactProposal approvals."),
    applianceNamespaces: uniqueList(namespaceName)
      .min(1)
      .max(50)
      .describe(
        "Namespaces the operator manages appliances in; workload and Secret RBAC is granted only there. They must exist before install.",
      ),
    approverRole: z
      .strictObject({
        create: z
          .boolean()
          .describe(
            "Create the remram-approver ClusterRole, to bind per namespace to the people who approve proposals.",
          ),
      })
      .describe("The approvers' ClusterRole."),
    householdRoles: z
      .strictObject({
        create: z
          .boolean()
          .describe(
            "Create the remram-member and remram-household-admin ClusterRoles, which `kubectl remram user add` binds to each household member's ServiceAccount.",
          ),
      })
      .describe("The household members' ClusterRoles (per-person credentials for remram-app)."),
    operandImages: z
      .strictObject({
        opensearch: pinnedImage.describe("OpenSearch (embedded mode)."),
        ollama: pinnedImage.describe("Ollama."),
        cortex: pinnedImage.describe("Cortex (cortex/Dockerfile)."),
        app: pinnedImage.describe("remram-app, the household's web app (app/Dockerfile)."),
        gateway: pinnedImage.describe("The OpenClaw gateway (hack/gateway/Dockerfile)."),
        hooks: pinnedImage.describe(
          "The hooks plugin's image, copied into the gateway pod (hooks/Dockerfile).",
        ),
        devicePlugin: pinnedImage.describe(
          "The NVIDIA device plugin, applied only on a GPU node that needs it.",
        ),
      })
      .describe("Images of what the operator deploys; the defaults follow hack/versions.env."),
    ingressController: z
      .strictObject({
        enabled: z
          .boolean()
          .describe(
            "Read the controller's Service endpoints (a Role in its namespace: list and watch EndpointSlices), so a gateway behind an Ingress trusts forwarded requests from its pods only. false: appliances exposed through an Ingress list spec.gateway.expose.ingress.trustedProxies themselves.",
          ),
        namespace: namespaceName.describe("The controller's namespace (k3s: kube-system)."),
        service: namespaceName.describe("The controller's Service (k3s: traefik)."),
      })
      .describe(
        "The ingress controller in front of appliances' gateways (spec.gateway.expose.type Ingress).",
      ),
    // The operator's own bounds (REMRAM_RESYNC_SECONDS, REMRAM_CONSISTENCY_CHECK_SECONDS, LOG_LEVEL, REMRAM_PROBE_PORT
    // in operator/src/config.ts).
    resyncSeconds: z
      .int()
      .min(10)
      .max(86_400)
      .describe("Seconds between full re-enqueues of every object (the drift safety net)."),
    consistencyCheckSeconds: z
      .int()
      .min(60)
      .max(604_800)
      .describe(
        "Seconds between consistency checks of each appliance's data (status.consistency, the DataConsistent condition).",
      ),
    logLevel: z
      .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
      .describe("The operator's log level (pino)."),
    probePort: z
      .int()
      .min(1)
      .max(65_535)
      .describe("Port of /healthz, /readyz and /metrics (plain HTTP, admitted only by the NetworkPolicy)."),
    resources: z
      .strictObject({
        requests: resourceList.optional().describe("What the scheduler reserves."),
        limits: resourceList
          .optional()
          .describe("Hard caps; no CPU limit by default (throttling slows reconciles)."),
      })
      .describe("The operator container's resources."),
    metrics: z
      .strictObject({
        allowedNamespaces: uniqueList(namespaceName)
          .max(50)
          .describe(
            "Namespaces whose pods may scrape /metrics: the operator's and every appliance's hooks plugin (NetworkPolicy).",
          ),
        serviceMonitor: monitor("ServiceMonitor for the operator").describe("The operator's ServiceMonitor."),
        podMonitors: monitor("PodMonitors for each appliance's Cortex and hooks plugin").describe(
          "The appliances' PodMonitors.",
        ),
        prometheusRule: z
          .strictObject({
            enabled: z
              .boolean()
              .describe(
                "Create the PrometheusRule; rendered only when the monitoring.coreos.com/v1 API exists.",
              ),
            labels: labels.describe(
              "Extra labels, e.g. the release label kube-prometheus-stack selects rules by.",
            ),
            runbookBaseUrl: z
              .string()
              .max(1024)
              .regex(/^(https?:\/\/[^\s]+)?$/, { error: "must be an http(s) URL or empty" })
              .describe(
                "Where docs/runbooks is published (each alert links <runbookBaseUrl>/<AlertName>.md). Empty (the default) leaves runbook_url out: the chart carries the runbooks in its runbooks/ folder, see docs/runbooks/README.md.",
              ),
            proposalPendingDays: z
              .int()
              .min(1)
              .max(365)
              .describe(
                "RemramProposalPendingTooLong fires when a proposal has waited this many days for a decision.",
              ),
            consistencyCheckStaleHours: z
              .int()
              .min(1)
              .max(2_160)
              .describe(
                "RemramConsistencyCheckStale fires when an appliance's data has not been checked for this many hours (keep it a few consistencyCheckSeconds).",
              ),
            backupStaleHours: z
              .int()
              .min(1)
              .max(8_760)
              .describe(
                "RemramBackupStale fires when no backup has completed for this many hours (keep it above the backup schedule's interval).",
              ),
          })
          .describe("The alert rules."),
        dashboards: z
          .strictObject({
            enabled: z
              .boolean()
              .describe("ConfigMaps the Grafana sidecar of kube-prometheus-stack picks up."),
            label: labelKey.describe("The label the sidecar looks for."),
            labelValue: labelValue.describe("Its value."),
            folder: z.string().min(1).max(100).describe("The Grafana folder (grafana_folder annotation)."),
          })
          .describe("The Grafana dashboards."),
      })
      .describe("Prometheus and Grafana integration."),
    nodeSelector: labels.describe("Node labels the operator pod must run on."),
    tolerations: z.array(toleration).max(20).describe("Taints the operator pod tolerates."),
    tests: z
      .strictObject({
        enabled: z
          .boolean()
          .describe(
            "Render the `helm test` Pods (operator /readyz through its Service; the four CRDs Established).",
          ),
        image: z
          .strictObject({
            repository: repositoryOrEmpty.describe(
              "An image with Node (the checks are `node -e` scripts); empty takes image.repository.",
            ),
            tag: imageTag.describe("Empty takes image.tag, then the chart's appVersion."),
            pullPolicy: z.enum(["", ...pullPolicy.options]).describe("Empty takes image.pullPolicy."),
          })
          .describe("The test Pods' image; the operator's by default, which the cluster already has."),
      })
      .describe("`helm test` hooks."),
    global: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("Helm's values shared with a parent chart when this chart is a dependency; unused here."),
  })
  .meta({ title: "remram-operator chart values" });

export type ChartValues = z.output<typeof chartValues>;

/** values.schema.json as Helm reads it: draft-07, understood by every Helm 3 release. */
export function valuesJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(chartValues, { target: "draft-7", io: "input" }) as Record<string, unknown>;
}
