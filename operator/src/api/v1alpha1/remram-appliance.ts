// Over 400 lines on purpose: one kind's whole API (spec, status, condition reasons, the CEL rules of admission) in
// one file, as kubebuilder keeps <kind>_types.go, so the CRD generator and a reader see the kind whole.
import { z } from "zod";
import {
  ageColumn,
  conditions,
  dnsLabel,
  dnsSubdomain,
  imageRef,
  type KindDefinition,
  listMap,
  quantity,
  readyColumns,
  secretKeyRef,
  storage,
  timestamp,
  withCel,
} from "./common.js";
import { cronPattern, timeZonePattern } from "./dream-schedule.js";
import { escalationSpec } from "./escalation.js";
import {
  channelsNeedMembers,
  channelWithoutMembersRefusal,
  gatewayChannelsSpec,
  supportedChannels,
} from "./gateway-channels.js";
import { gatewayExposeSpec, gatewayStatus } from "./gateway-expose.js";

export const hardwareProfileNames = ["auto", "moltbox-baseline", "cpu-only", "large-gpu"] as const;

const modelName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9._\-/:]*$/);

const openSearchSpec = withCel(
  z
    .object({
      mode: z
        .enum(["embedded", "external"])
        .default("embedded")
        .describe("embedded runs a single-node OpenSearch StatefulSet; external uses `external`."),
      image: imageRef.optional().describe("OpenSearch image (embedded mode)."),
      heap: quantity.optional().describe("JVM heap (Xms = Xmx); by default half the profile's memory limit."),
      storage: storage.optional().describe("Data volume (embedded mode); by default the profile's size."),
      external: z
        .object({
          url: z
            .string()
            .min(1)
            .max(2048)
            .regex(/^https?:\/\/[^\s]+$/)
            .describe("Base URL of an existing OpenSearch cluster."),
          credentialsSecretRef: z
            .object({ name: secretKeyRef.shape.name })
            .strict()
            .optional()
            .describe("Secret with `username` and `password` keys."),
          caSecretRef: z
            .object({
              name: secretKeyRef.shape.name,
              key: secretKeyRef.shape.key.default("ca.crt"),
            })
            .strict()
            .optional()
            .describe(
              "Secret holding the PEM CA bundle the cluster's certificate chains to (key `ca.crt` by default); without it the system's trust store decides.",
            ),
        })
        .strict()
        .optional(),
    })
    .strict(),
  {
    rule: "self.mode == 'external' ? has(self.external) : !has(self.external)",
    message: "external is required when mode is external and forbidden otherwise",
    fieldPath: ".external",
  },
  {
    rule: "self.mode == 'embedded' || (!has(self.image) && !has(self.heap) && !has(self.storage))",
    message: "image, heap and storage apply only to an embedded OpenSearch",
  },
);

const ollamaSpec = withCel(
  z
    .object({
      image: imageRef
        .optional()
        .describe(
          "Ollama image. Needs a POSIX shell and find (ollama/ollama has both): a step before `ollama serve` repairs downloads a stop interrupted.",
        ),
      gpu: z
        .enum(["auto", "required", "disabled"])
        .default("auto")
        .describe(
          "auto uses a GPU when a node offers nvidia.com/gpu; required waits for one; disabled never uses one.",
        ),
      runtimeClassName: dnsLabel
        .optional()
        .describe("RuntimeClass for GPU pods (k3s ships `nvidia`); default nvidia."),
      models: z
        .object({
          routing: modelName.optional().describe("Model for routine turns."),
          reflection: modelName.optional().describe("Model for reflection and dream."),
          embedding: modelName
            .optional()
            .describe(
              "Embedding model Ollama runs for Cortex (its dimensions in embeddingDimensions); unset with spec.cortex.embedding.runtime inProcess.",
            ),
          embeddingDimensions: z
            .int()
            .min(8)
            .max(4096)
            .default(384)
            .describe(
              "Length of the embedding model's vectors (384 for the profiles' all-minilm). Changing the model or this re-embeds every stored object and chunk in the background (status.embeddings); meanwhile what is not re-embedded yet is found by its words only.",
            ),
        })
        .strict()
        .prefault({})
        .describe("Models by role; unset roles take the hardware profile's choice."),
      storage: storage.optional().describe("Models volume; by default the profile's size."),
      contextWindow: z
        .int()
        .min(2048)
        .max(262144)
        .default(16384)
        .describe(
          "Context window in tokens the chat models run with: Ollama's num_ctx, and what the gateway plans prompts and compaction against. Under 16384 the gateway leaves the workspace's bootstrap files out of prompts.",
        ),
      maxOutputTokens: z
        .int()
        .min(16)
        .max(32768)
        .default(2048)
        .describe(
          "Most tokens a chat model may generate in one reply (Ollama's num_predict). Reflection runs get at least 1024, so a whole delta fits.",
        ),
      insecureRegistries: z
        .array(
          z
            .string()
            .max(253)
            .regex(/^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?(:[0-9]{1,5})?$/),
        )
        .max(8)
        .optional()
        .describe(
          "Registries (host or host:port) that models may be pulled from over plain HTTP, e.g. a model mirror on the LAN.",
        ),
    })
    .strict(),
  {
    rule: "!(self.gpu == 'disabled' && has(self.runtimeClassName))",
    message: "runtimeClassName cannot be set when gpu is disabled",
    fieldPath: ".runtimeClassName",
  },
);

/**
 * The embedding model Cortex's image carries for spec.cortex.embedding.runtime inProcess (cortex/Dockerfile copies
 * hack/install-embedding-onnx.sh's folder, EMBED_ONNX_NAME in hack/versions.env, to `dir`).
 */
export const inProcessEmbeddingModel = {
  name: "all-minilm-l6-v2-q",
  dimensions: 384,
  dir: "/opt/remram/embedding",
} as const;

const cortexSpec = z
  .object({
    image: imageRef.optional().describe("Cortex image."),
    tokenSecretRef: secretKeyRef
      .optional()
      .describe(
        "The admin's credential for Cortex's API (erasure, archive verification). Unset: the operator generates <name>-cortex-admin. The gateway, operator and app credentials are always generated, one Secret each (<name>-cortex-<caller>).",
      ),
    retrieval: z
      .object({
        tokenBudget: z
          .int()
          .min(256)
          .max(16000)
          .default(2048)
          .describe(
            "Token ceiling of the knowledge bundle injected into a prompt (the hooks plugin's budget).",
          ),
        topK: z
          .int()
          .min(1)
          .max(200)
          .default(40)
          .describe("Candidates each Cortex retriever (BM25, vectors, facets) contributes in standard mode."),
        timeoutMs: z
          .int()
          .min(10)
          .max(5000)
          .optional()
          .describe(
            "How long a run waits for its knowledge before it goes on without it (the hooks plugin's retrieve cap). Unset: 250 with a GPU, 2000 on the CPU fallback, where Ollama embeds the query between the chat model's tokens and a turn takes tens of seconds anyway.",
          ),
      })
      .strict()
      .prefault({}),
    embedding: z
      .object({
        runtime: z
          .enum(["ollama", "inProcess"])
          .default("ollama")
          .describe(
            `ollama: Cortex embeds with spec.ollama.models.embedding through Ollama. inProcess: Cortex embeds inside its own process with the model its image carries (${inProcessEmbeddingModel.name}, ${inProcessEmbeddingModel.dimensions} dimensions): a query's vector costs a few milliseconds instead of a call to Ollama, and Ollama loads no embedding model. A change re-embeds every stored object and chunk in the background (status.embeddings). Needs a Cortex image of this release or later.`,
          ),
      })
      .strict()
      .prefault({})
      .describe("Where Cortex's embeddings are computed."),
  })
  .strict();

const channelSecret = z
  .object({
    channel: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z][a-z0-9-]*$/),
    secretRef: secretKeyRef,
  })
  .strict();

/** What a model is pulled for; `agent`: named by an agent of spec.gateway.agents and by no role. */
export const modelRoles = ["routing", "reflection", "embedding", "agent"] as const;
export type ModelRole = (typeof modelRoles)[number];

const gatewayAgent = z
  .object({
    id: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z][a-z0-9_-]*$/),
    model: modelName.optional().describe("Overrides the routing model for this agent."),
  })
  .strict();

/** Shown when an agent is named `artifacts` (operator/test/admission.int.test.ts). */
export const artifactsAgentRefusal =
  "an agent may not be named artifacts: an agent after the first works in the workspace folder named after it, and artifacts/ there is the read-only mount of the approved artifacts";

/** Shown when a sandbox mode other than off is refused at admission (operator/test/admission.int.test.ts). */
export const sandboxRefusal =
  "sandbox modes non-main and all need a Docker daemon, which the gateway pod does not have; use off (tools then run in the gateway container, under its restricted security context and OpenClaw's tool policy)";

const gatewaySpec = withCel(
  z
    .object({
      image: imageRef.optional().describe("OpenClaw gateway image."),
      agents: listMap(z.array(gatewayAgent).min(1).max(16), "id")
        .optional()
        .describe(
          "Agents; a single `main` agent when unset. With several, the first owns the gateway's own work and channels no binding routes, and HTTP clients name an agent (model `openclaw/<id>`). An agent's own model is pulled like the roles' models.",
        ),
      dmScope: z
        .enum(["main", "per-peer", "per-channel-peer", "per-account-channel-peer"])
        .default("per-channel-peer"),
      queueMode: z.enum(["steer", "followup", "collect", "interrupt"]).default("collect"),
      // OpenClaw's modes stay in the enum for a future sandbox backend the pod can reach; only off is admitted.
      sandbox: z
        .enum(["off", "non-main", "all"])
        .default("off")
        .describe(
          "OpenClaw's agents.defaults.sandbox.mode. Only off is admitted: the other modes run tools in Docker containers, and the gateway pod has no Docker daemon.",
        ),
      tools: z
        .object({
          allow: z
            .array(
              z
                .string()
                .min(1)
                .max(64)
                .regex(/^[a-z][a-z0-9_:-]*$/),
            )
            .max(64)
            .optional()
            .describe("The only tools the agents may use (OpenClaw's tools.allow); every tool when unset."),
        })
        .strict()
        .optional(),
      channelSecretRefs: listMap(z.array(channelSecret).max(16), "channel")
        .optional()
        .describe(
          "Deprecated: mounts each Secret at /var/run/secrets/remram/channels/<channel>, which nothing reads. Use channels.",
        ),
      channels: gatewayChannelsSpec
        .optional()
        .describe(
          "Chat channels (Telegram, Discord): each bot's token from a Secret, answering the household's members only.",
        ),
      expose: gatewayExposeSpec
        .prefault({})
        .describe(
          "How household devices reach the gateway: ClusterIP (default), NodePort, LoadBalancer, or an Ingress with TLS.",
        ),
    })
    .strict(),
  {
    rule: "!has(self.sandbox) || self.sandbox == 'off'",
    message: sandboxRefusal,
    fieldPath: ".sandbox",
  },
  {
    rule: "!has(self.agents) || self.agents.all(a, a.id != 'artifacts')",
    message: artifactsAgentRefusal,
    fieldPath: ".agents",
  },
);

const workspaceSpec = z
  .object({
    storage: storage
      .optional()
      .describe(
        "The data volume: the agent's workspace, the gateway's state, and Cortex's artifact repository and archive, each in a folder of its own.",
      ),
    gitIdentity: z
      .object({
        name: z.string().min(1).max(128),
        email: z
          .string()
          .min(3)
          .max(254)
          .regex(/^[^\s@]+@[^\s@]+$/),
      })
      .strict()
      .optional(),
  })
  .strict();

/** remram-app: the household's own window on what the assistant remembers (operator/src/appliance/children/app.ts). */
const appSpec = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe(
        "Deploy remram-app beside Cortex: household members sign in with their own token to see, correct and forget what the assistant remembers and to review proposals. false: none of the app's objects exist.",
      ),
    image: imageRef.optional().describe("remram-app image."),
    prometheusUrl: z
      .string()
      .max(2048)
      .regex(/^https?:\/\/[^\s]+$/, "an http(s) URL")
      .optional()
      .describe(
        "A Prometheus that scrapes this appliance (e.g. http://prometheus-operated.monitoring.svc:9090): the diagnostics page then plots a day of its data. Unset, or when it does not answer: the app plots what it scraped from the components' /metrics itself since it started.",
      ),
  })
  .strict();

/**
 * Backups of Cortex's data (every index, the artifact repository, the archive) into a volume the user provides or
 * an S3-compatible bucket.
 */
const backupSpec = withCel(
  z
    .object({
      volume: z
        .object({
          claimName: dnsSubdomain.describe(
            "A PersistentVolumeClaim in the appliance's namespace: a USB disk or a NAS share (NFS, SMB) bound to a PersistentVolume. Cortex writes one folder per backup into it.",
          ),
        })
        .strict()
        .optional(),
      s3: z
        .object({
          endpoint: z
            .string()
            .max(2048)
            .regex(/^https?:\/\/[^\s/]+(:\d+)?\/?$/, "an http(s) URL of the S3 service, without a path")
            .describe(
              "The S3-compatible service: a NAS's S3 endpoint, a self-hosted server or a cloud provider's.",
            ),
          bucket: z
            .string()
            .min(3)
            .max(63)
            .regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/),
          prefix: z
            .string()
            .max(256)
            .regex(/^(?:[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*)?$/)
            .optional()
            .describe("The folder in the bucket (e.g. remram/moltbox); the bucket's root by default."),
          region: z.string().min(1).max(64).optional(),
          credentialsSecretRef: z
            .object({ name: secretKeyRef.shape.name })
            .strict()
            .describe("A Secret with the keys access-key-id and secret-access-key."),
        })
        .strict()
        .optional(),
      schedule: withCel(
        z
          .string()
          .min(1)
          .max(128)
          .default("30 3 * * *")
          .describe("When to back up: cron (five fields) or a macro such as @daily."),
        {
          rule: `self.matches('${cronPattern}')`,
          message: "schedule must be a five-field cron expression or a macro such as @daily",
        },
      ),
      timeZone: withCel(
        z.string().min(1).max(64).default("UTC").describe("IANA time zone the schedule is read in."),
        { rule: `self.matches('${timeZonePattern}')`, message: "timeZone must be an IANA time zone name" },
      ),
      keep: z.int().min(1).max(1000).default(7).describe("Complete backups kept; older ones are removed."),
      secrets: z
        .object({
          ageRecipients: z
            .array(
              withCel(
                z
                  .string()
                  .max(62)
                  .regex(/^age1[02-9ac-hj-np-z]{58}$/, "an age X25519 public key (age1…, from age-keygen)"),
                {
                  rule: "self.matches('^age1[02-9ac-hj-np-z]{58}$')",
                  message:
                    "each ageRecipient must be an age X25519 public key (age1…, from age-keygen -y KEY-FILE)",
                },
              ),
            )
            .min(1)
            .max(8)
            .describe(
              "age public keys (`age-keygen -y KEY-FILE`): each backup then holds the appliance's Secrets encrypted to them, which any one of their keys decrypts.",
            ),
        })
        .strict()
        .optional()
        .describe(
          "The appliance's Secrets in every backup (its generated credentials, the gateway's token and CA, the Secrets the spec names), encrypted to keys you hold. Unset: Secrets are not backed up.",
        ),
    })
    .strict()
    .refine((backup) => (backup.volume === undefined) !== (backup.s3 === undefined), {
      message: "spec.backup names one destination: volume or s3",
    }),
  {
    rule: "has(self.volume) != has(self.s3)",
    message: "spec.backup names one destination: volume or s3",
  },
);

/**
 * A household member's id. OpenClaw writes it into the member's direct-session keys in place of the linked channel
 * peer (session.identityLinks) and the hooks plugin hands it to Cortex as the user id. Lowercase, because OpenClaw
 * lowercases peer ids in session keys; starting with a letter, so it never reads as a numeric channel peer id.
 */
const memberId = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z][a-z0-9._-]*$/);

const peerLowercase = "peer must be lowercase: OpenClaw compares channel identities in lowercase";

const channelIdentity = withCel(
  z
    .object({
      channel: z
        .string()
        .min(1)
        .max(32)
        .regex(/^[a-z][a-z0-9-]*$/)
        .describe("OpenClaw channel id: telegram, whatsapp, signal, discord, slack, ..."),
      peer: z
        .string()
        .min(1)
        .max(64)
        .regex(/^\S+$/)
        .describe(
          "The sender's id on that channel as OpenClaw sees it, in lowercase: a Telegram user id (123456789), a WhatsApp number in E.164 (+4712345678), a Slack member id (u0123abcd).",
        ),
    })
    .strict()
    .superRefine((identity, context) => {
      if (/[A-Z]/.test(identity.peer))
        context.addIssue({ code: "custom", path: ["peer"], message: peerLowercase });
    }),
  {
    rule: "self.peer == self.peer.lowerAscii()",
    message: peerLowercase,
    fieldPath: ".peer",
  },
);

const householdMember = z
  .object({
    id: memberId.describe(
      "Stable member id: one user for Cortex and one canonical peer for OpenClaw on every channel.",
    ),
    identities: listMap(z.array(channelIdentity).max(4), ["channel", "peer"])
      .default([])
      .describe("The member's channel identities; messages from any of them are the member's."),
  })
  .strict();

/** The members' identities as `<channel>:<peer>`, lowercased: the form OpenClaw's identityLinks compares. */
export function identityKey(identity: { channel: string; peer: string }): string {
  return `${identity.channel}:${identity.peer}`.toLowerCase();
}

const householdSpec = withCel(
  z
    .object({
      id: z
        .string()
        .min(1)
        .max(63)
        .regex(/^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$/)
        .describe(
          "Household id: Cortex's household-scope knowledge belongs to it and every member reads it.",
        ),
      members: listMap(z.array(householdMember).min(1).max(12), "id").describe(
        "The people of the household; each channel identity belongs to one member only.",
      ),
    })
    .strict()
    .superRefine((household, context) => {
      const owners = new Map<string, string>();
      const ids = new Set<string>();
      household.members.forEach((member, index) => {
        if (ids.has(member.id))
          context.addIssue({
            code: "custom",
            path: ["members", index, "id"],
            message: `member id ${member.id} is used twice`,
          });
        ids.add(member.id);
        member.identities.forEach((identity, identityIndex) => {
          const key = identityKey(identity);
          const owner = owners.get(key);
          if (owner !== undefined)
            context.addIssue({
              code: "custom",
              path: ["members", index, "identities", identityIndex],
              message:
                owner === member.id
                  ? `identity ${key} is listed twice for member ${member.id}`
                  : `identity ${key} is claimed by members ${owner} and ${member.id}; a channel identity can belong to one member only`,
            });
          else owners.set(key, member.id);
        });
      });
    }),
  {
    // Member ids and, per member, (channel, peer) are list-map keys: the API server refuses duplicates there.
    rule: "self.members.all(m, m.identities.all(i, self.members.all(n, n.id == m.id || !n.identities.exists(j, j.channel == i.channel && j.peer == i.peer))))",
    message: "a channel identity can belong to one member only",
    fieldPath: ".members",
  },
);

const inProcessEmbeddingFits = {
  rule: `!has(self.cortex) || !has(self.cortex.embedding) || self.cortex.embedding.runtime != 'inProcess' || !has(self.ollama) || !has(self.ollama.models) || (!has(self.ollama.models.embedding) && (!has(self.ollama.models.embeddingDimensions) || self.ollama.models.embeddingDimensions == ${inProcessEmbeddingModel.dimensions}))`,
  message: `cortex.embedding.runtime inProcess embeds with the model in Cortex's image (${inProcessEmbeddingModel.name}, ${inProcessEmbeddingModel.dimensions} dimensions): leave ollama.models.embedding unset and embeddingDimensions at ${inProcessEmbeddingModel.dimensions}`,
  fieldPath: ".cortex.embedding.runtime",
};

const householdNeedsPeerSessions = {
  rule: "!has(self.household) || self.gateway.dmScope != 'main'",
  message:
    "a household needs gateway.dmScope per-peer, per-channel-peer or per-account-channel-peer: main puts every member's direct messages into one session",
  fieldPath: ".gateway.dmScope",
};

export const remramApplianceSpec = withCel(
  z
    .object({
      hardwareProfile: z
        .enum(hardwareProfileNames)
        .default("auto")
        .describe("Sizing profile; auto picks one from node labels and allocatable."),
      opensearch: openSearchSpec.prefault({}),
      ollama: ollamaSpec.prefault({}),
      cortex: cortexSpec.prefault({}),
      gateway: gatewaySpec.prefault({}),
      workspace: workspaceSpec.prefault({}),
      app: appSpec
        .prefault({})
        .describe("remram-app, the household's web app and `kubectl remram knowledge`'s server."),
      escalation: escalationSpec
        .prefault({})
        .describe(
          "Escalation to a cloud model: which one, with its key, and the policy the hooks plugin decides by. Without a cloud model every turn stays on the box.",
        ),
      backup: backupSpec
        .optional()
        .describe(
          "Scheduled backups (`kubectl remram backup` takes one now). Without it nothing is backed up.",
        ),
      household: householdSpec
        .optional()
        .describe(
          "The household: its members and their channel identities. The same person on two channels is one user.",
        ),
      persistentVolumeClaimRetentionPolicy: z
        .object({
          whenDeleted: z
            .enum(["Retain", "Delete"])
            .default("Retain")
            .describe("Retain keeps data PVCs (no ownerReference) when the appliance is deleted."),
        })
        .strict()
        .prefault({}),
    })
    .strict()
    .superRefine((spec, context) => {
      const { models } = spec.ollama;
      if (
        spec.cortex.embedding.runtime === "inProcess" &&
        (models.embedding !== undefined || models.embeddingDimensions !== inProcessEmbeddingModel.dimensions)
      )
        context.addIssue({
          code: "custom",
          path: ["cortex", "embedding", "runtime"],
          message: inProcessEmbeddingFits.message,
        });
      if (spec.household !== undefined && spec.gateway.dmScope === "main")
        context.addIssue({
          code: "custom",
          path: ["gateway", "dmScope"],
          message: householdNeedsPeerSessions.message,
        });
      for (const channel of supportedChannels) {
        if (spec.gateway.channels?.[channel] === undefined) continue;
        const members = spec.household?.members ?? [];
        if (!members.some((member) => member.identities.some((identity) => identity.channel === channel)))
          context.addIssue({
            code: "custom",
            path: ["gateway", "channels", channel],
            message: channelWithoutMembersRefusal(channel),
          });
      }
    }),
  householdNeedsPeerSessions,
  inProcessEmbeddingFits,
  ...channelsNeedMembers,
);

const endpoint = z.string().max(2048);

export const remramApplianceStatus = z
  .object({
    observedGeneration: z.int().min(0).optional(),
    conditions: conditions.optional(),
    hardwareProfile: z
      .enum(hardwareProfileNames)
      .optional()
      .describe("The profile in effect (auto resolved)."),
    gpu: z
      .object({
        available: z.boolean(),
        count: z.int().min(0).max(64),
        memoryMiB: z.int().min(0).max(1048576).optional(),
        product: z.string().max(128).optional(),
      })
      .strict()
      .optional(),
    models: listMap(
      z
        .array(
          z
            .object({
              name: modelName,
              role: z
                .enum(modelRoles)
                .describe(
                  "routing, reflection or embedding; agent for a model only an agent of spec.gateway.agents names.",
                ),
              digest: z.string().max(128).optional(),
              pulledAt: timestamp.optional(),
              pull: z
                .object({
                  status: z
                    .string()
                    .max(128)
                    .describe(
                      "Ollama's latest status line: pulling manifest, downloading, verifying sha256 digest, writing manifest.",
                    ),
                  completedBytes: z.int().min(0),
                  totalBytes: z
                    .int()
                    .min(0)
                    .describe("Bytes of the layers Ollama has announced so far (the weights come first)."),
                  percent: z.int().min(0).max(100),
                  error: z
                    .string()
                    .max(512)
                    .optional()
                    .describe("Why the last attempt failed; it is retried."),
                })
                .strict()
                .optional()
                .describe("The pull while the model is missing; absent once Ollama lists it."),
            })
            .strict(),
        )
        .max(20),
      ["role", "name"],
    ).optional(),
    endpoints: z
      .object({
        opensearch: endpoint.optional(),
        ollama: endpoint.optional(),
        cortex: endpoint.optional(),
        gateway: endpoint.optional(),
      })
      .strict()
      .optional(),
    gateway: gatewayStatus
      .optional()
      .describe("How household devices reach the gateway (spec.gateway.expose)."),
    consistency: z
      .object({
        lastCheckTime: timestamp,
        consistent: z.boolean(),
        findings: z.int().min(0).describe("How many findings the check reported, of every kind."),
        byKind: listMap(
          z.array(z.object({ kind: z.string().max(64), count: z.int().min(1) }).strict()).max(16),
          "kind",
        ).optional(),
        examples: z
          .array(z.string().max(300))
          .max(5)
          .optional()
          .describe("The first findings: kind, id and what is wrong (never stored content)."),
        durationMs: z.int().min(0),
        knowledgeObjects: z.int().min(0),
        archivedDocuments: z.int().min(0),
        commits: z.int().min(0),
      })
      .strict()
      .optional()
      .describe(
        "The last consistency check of Cortex's stores (archive hashes, vectors, chunks, proposals, git fsck); `kubectl remram check` runs one now.",
      ),
    embeddings: z
      .object({
        model: z.string().max(256).optional().describe("Absent when Cortex has no embedding model."),
        dimensions: z.int().min(1),
        state: z.enum(["starting", "current", "reembedding", "none"]),
        replacing: z.string().max(300).optional().describe("The model (and dimensions) being replaced."),
        done: z.int().min(0).describe("Objects and chunks embedded with the model so far."),
        total: z.int().min(0),
        waiting: z
          .string()
          .max(500)
          .optional()
          .describe("Why the re-embedding is paused; it resumes by itself."),
      })
      .strict()
      .optional()
      .describe("Cortex's vectors: current, or being made again with a changed embedding model."),
    migrations: z
      .object({
        templateVersion: z
          .int()
          .min(1)
          .describe("The index template version Cortex builds its indices from."),
        state: z.enum(["starting", "current", "rebuilding", "waiting"]),
        rebuilding: z
          .object({
            from: z.string().max(255),
            to: z.string().max(255),
            copied: z.int().min(0),
            total: z.int().min(0),
          })
          .strict()
          .optional()
          .describe("The knowledge index copy running now: reads are served, writes wait until it ends."),
        waiting: z
          .string()
          .max(500)
          .optional()
          .describe("Why the rebuild failed; it is tried again by itself."),
        kept: listMap(
          z
            .array(
              z
                .object({
                  index: z.string().max(255),
                  deleteAfter: timestamp
                    .optional()
                    .describe(
                      "When the retention deletes it; absent: only `kubectl remram migrations confirm` does.",
                    ),
                })
                .strict(),
            )
            .max(16),
          "index",
        ).describe("Indices a migration replaced, kept write-blocked for a `helm rollback`."),
      })
      .strict()
      .optional()
      .describe(
        "Cortex's index migrations: a release that changes the knowledge index rebuilds it beside the live one.",
      ),
    storage: z
      .object({
        volumes: listMap(
          z
            .array(
              z
                .object({
                  name: z.string().max(64),
                  availableBytes: z.int().min(0),
                  availablePercent: z.int().min(0).max(100),
                })
                .strict(),
            )
            .max(8),
          "name",
        ).describe("Cortex's volumes (workspace repository, archive): what is left on each."),
        opensearchDiskUsedPercent: z.number().min(0).max(100).optional(),
        floodStageWatermark: z.string().max(64).optional(),
        writesRefused: z.boolean().describe("Writes are refused for want of space now (HTTP 507)."),
        refusal: z.string().max(500).optional().describe("Why, as Cortex said it to the writer."),
      })
      .strict()
      .optional()
      .describe("Room left for the household's memory; the StorageAvailable condition summarises it."),
    backup: z
      .object({
        lastScheduleTime: timestamp.optional().describe("When the operator last started a scheduled backup."),
        lastSuccessfulBackup: z
          .object({
            id: z.string().max(64),
            completedAt: timestamp,
            bytes: z.int().min(0),
            knowledgeObjects: z.int().min(0),
            archivedDocuments: z.int().min(0),
            commits: z.int().min(0),
          })
          .strict()
          .optional(),
        backups: z.int().min(0).describe("Complete backups in the destination."),
        running: z
          .object({ id: z.string().max(64), phase: z.string().max(32), documentsDone: z.int().min(0) })
          .strict()
          .optional(),
        lastFailure: z
          .object({ time: timestamp, message: z.string().max(1024) })
          .strict()
          .optional(),
      })
      .strict()
      .optional()
      .describe(
        "Backups of Cortex's data into spec.backup.volume; `kubectl remram backup list` shows them all.",
      ),
  })
  .strict();

export type RemramApplianceSpec = z.output<typeof remramApplianceSpec>;
export type RemramApplianceStatus = z.output<typeof remramApplianceStatus>;

/**
 * The reasons of the appliance's conditions, which users and alerts match on. Ready=True carries reason Ready
 * (runtime/conditions.ts); otherwise Ready carries the reason of the condition that blocks it.
 */
export const ApplianceReason = {
  // GPUAvailable
  GPUFound: "GPUFound",
  GPUDisabled: "GPUDisabled",
  NoGPUCPUFallback: "NoGPUCPUFallback",
  NoGPURuntimeCPUFallback: "NoGPURuntimeCPUFallback",
  GPURequiredButMissing: "GPURequiredButMissing",
  RuntimeClassNotFound: "RuntimeClassNotFound",
  RuntimeHandlerNotFound: "RuntimeHandlerNotFound",
  // HostPrerequisitesMet
  VmMaxMapCountSufficient: "VmMaxMapCountSufficient",
  VmMaxMapCountTooLow: "VmMaxMapCountTooLow",
  NotMeasured: "NotMeasured",
  ExternalOpenSearch: "ExternalOpenSearch",
  // OpenSearchReady of an external cluster: the operator's own request to it
  OpenSearchConnected: "OpenSearchConnected",
  OpenSearchCertificateUntrusted: "OpenSearchCertificateUntrusted",
  OpenSearchUnauthorized: "OpenSearchUnauthorized",
  OpenSearchForbidden: "OpenSearchForbidden",
  OpenSearchUnreachable: "OpenSearchUnreachable",
  OpenSearchSecretMissing: "OpenSearchSecretMissing",
  // OpenSearchReady, OllamaReady, CortexReady, GatewayReady (RollingOut also for Progressing)
  Available: "Available",
  RollingOut: "RollingOut",
  NotAvailable: "NotAvailable",
  NotCreated: "NotCreated",
  // ModelsReady
  ModelsListed: "ModelsListed",
  ModelsPulling: "ModelsPulling",
  OllamaUnreachable: "OllamaUnreachable",
  ModelPullFailed: "ModelPullFailed",
  // EscalationReady (never blocks Ready: without escalation every turn stays on the box)
  EscalationOff: "EscalationOff",
  CloudModelConfigured: "CloudModelConfigured",
  CloudKeyMissing: "CloudKeyMissing",
  // GatewayExposed (never blocks Ready: the gateway works inside the cluster either way)
  ServiceExposed: "ServiceExposed",
  IngressReady: "IngressReady",
  IngressProxyUnknown: "IngressProxyUnknown",
  CertificatePending: "CertificatePending",
  CertificateMissing: "CertificateMissing",
  CertManagerMissing: "CertManagerMissing",
  CertificateInvalid: "CertificateInvalid",
  // ChannelsReady (never blocks Ready)
  ChannelsOff: "ChannelsOff",
  ChannelsConfigured: "ChannelsConfigured",
  ChannelTokenMissing: "ChannelTokenMissing",
  // DataConsistent (never blocks Ready: reads and writes go on; the findings say what to repair)
  ChecksPassed: "ChecksPassed",
  FindingsReported: "FindingsReported",
  NotCheckedYet: "NotCheckedYet",
  CheckFailed: "CheckFailed",
  // EmbeddingsCurrent (never blocks Ready: retrieval goes on by words while vectors are made again)
  EmbeddingsCurrent: "EmbeddingsCurrent",
  Reembedding: "Reembedding",
  NoEmbeddingModel: "NoEmbeddingModel",
  // IndexesCurrent (never blocks Ready: reads go on during a rebuild, writes wait for it with 503)
  IndexesCurrent: "IndexesCurrent",
  RebuildingIndex: "RebuildingIndex",
  RebuildWaiting: "RebuildWaiting",
  // StorageAvailable (never blocks Ready: reads go on while writes are refused)
  SpaceAvailable: "SpaceAvailable",
  SpaceLow: "SpaceLow",
  WritesRefused: "WritesRefused",
  // BackedUp (never blocks Ready)
  BackupSucceeded: "BackupSucceeded",
  BackupFailed: "BackupFailed",
  NoBackupYet: "NoBackupYet",
  BackupsNotConfigured: "BackupsNotConfigured",
  BackupDestinationMissing: "BackupDestinationMissing",
  // Progressing, Degraded
  Steady: "Steady",
  PersistentFailure: "PersistentFailure",
} as const;
export type ApplianceReason = (typeof ApplianceReason)[keyof typeof ApplianceReason];

export const remramApplianceKind: KindDefinition = {
  kind: "RemramAppliance",
  plural: "remramappliances",
  singular: "remramappliance",
  shortNames: ["rra", "appliance"],
  categories: ["remram"],
  description: "A Remram appliance: OpenSearch, Ollama, Cortex and an OpenClaw gateway on this cluster.",
  spec: remramApplianceSpec,
  status: remramApplianceStatus,
  metadataNameRule: {
    // Children are named "<name>-opensearch-headless" and so on; Services need DNS-1035 labels of <= 63 characters.
    rule: "self.metadata.name.size() <= 40 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
    message:
      "name must be a DNS-1035 label of at most 40 characters (it prefixes the names of generated objects)",
  },
  printerColumns: [
    ...readyColumns,
    { name: "GPU", type: "string", jsonPath: '.status.conditions[?(@.type=="GPUAvailable")].status' },
    { name: "Profile", type: "string", jsonPath: ".status.hardwareProfile" },
    ageColumn,
    {
      name: "Models",
      type: "string",
      jsonPath: '.status.conditions[?(@.type=="ModelsReady")].status',
      priority: 1,
    },
  ],
};
