// Over 400 lines on purpose: most of it is the table of invalid objects each CRD must refuse with its CEL message,
// checked against one API server with the CRDs and the admission policy installed once.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorUsername } from "../src/api/approval-policy.js";
import { defaultOperatorNamespace, defaultOperatorServiceAccount } from "../src/api/generated-files.js";
import { channelWithoutMembersRefusal } from "../src/api/v1alpha1/gateway-channels.js";
import {
  ingressRefusal,
  nodePortRefusal,
  tlsDisabledRefusal,
  tlsSourceRefusal,
} from "../src/api/v1alpha1/gateway-expose.js";
import { artifactsAgentRefusal, sandboxRefusal } from "../src/api/v1alpha1/remram-appliance.js";
import { KubeApiError, type KubeClient } from "../src/runtime/kube-client.js";
import {
  adminClient,
  createNamespace,
  installCrds,
  runSuffix,
  untilApprovalPolicyAccepts,
} from "./cluster.js";

const { client: admin } = adminClient();
const namespace = `admission-${runSuffix()}`;
const api = `/apis/remram.io/v1alpha1/namespaces/${namespace}`;
const digest = `sha256:${"a".repeat(64)}`;
const operatorName = operatorUsername(defaultOperatorNamespace, defaultOperatorServiceAccount);
const authenticated = ["system:authenticated"];
const operatorClient = admin.as(operatorName, ["system:serviceaccounts", "system:authenticated"]);
const alice = admin.as("alice", authenticated);
const bob = admin.as("bob", authenticated);

/** The message the API server rejects a request with (the test fails if it is accepted). */
async function rejection(request: Promise<unknown>): Promise<string> {
  try {
    await request;
  } catch (error) {
    if (error instanceof KubeApiError) return error.message;
    throw error;
  }
  throw new Error("the request was accepted");
}

const appliance = (name: string, spec: unknown) => ({
  apiVersion: "remram.io/v1alpha1",
  kind: "RemramAppliance",
  metadata: { name, namespace },
  spec,
});
const member = (id: string, ...identities: string[]) => ({
  id,
  identities: identities.map((identity) => {
    const [channel, ...peer] = identity.split(":");
    return { channel, peer: peer.join(":") };
  }),
});
const household = (members: unknown[]) => ({ id: "home", members });
const schedule = (spec: Record<string, unknown>) => ({
  apiVersion: "remram.io/v1alpha1",
  kind: "DreamSchedule",
  metadata: { name: "nightly", namespace },
  spec: { applianceRef: { name: "box" }, schedule: "0 3 * * *", ...spec },
});
const policy = (spec: Record<string, unknown>, name = "box") => ({
  apiVersion: "remram.io/v1alpha1",
  kind: "DimensionPolicy",
  metadata: { name, namespace },
  spec: { applianceRef: { name: "box" }, dimensions: [{ name: "topic" }], ...spec },
});
const proposalSpec = (overrides: Record<string, unknown> = {}) => ({
  applianceRef: { name: "box" },
  proposalId: "p-1",
  artifactPath: "notes/house.md",
  proposedDigest: digest,
  diff: "+ the boiler is serviced in May",
  rationale: "repeated in three sessions",
  proposedBy: operatorName,
  ...overrides,
});
const proposal = (name: string, overrides: Record<string, unknown> = {}) => ({
  apiVersion: "remram.io/v1alpha1",
  kind: "ArtifactProposal",
  metadata: { name, namespace },
  spec: proposalSpec(overrides),
});

/** [description, kind path, body, expected message fragment] */
const invalid: [string, string, unknown, string][] = [
  [
    "backups with no destination",
    "remramappliances",
    appliance("box", { backup: { schedule: "@daily" } }),
    "spec.backup names one destination: volume or s3",
  ],
  [
    "backups into a volume and a bucket at once",
    "remramappliances",
    appliance("box", {
      backup: {
        volume: { claimName: "usb-disk" },
        s3: {
          endpoint: "https://nas.lan:9000",
          bucket: "household",
          credentialsSecretRef: { name: "nas-s3" },
        },
      },
    }),
    "spec.backup names one destination: volume or s3",
  ],
  [
    "a backup's Secrets sealed to something that is not an age public key",
    "remramappliances",
    appliance("box", {
      backup: { volume: { claimName: "usb-disk" }, secrets: { ageRecipients: ["ssh-ed25519 AAAAC3Nza"] } },
    }),
    "each ageRecipient must be an age X25519 public key",
  ],
  [
    "a backup schedule that is not cron",
    "remramappliances",
    appliance("box", { backup: { volume: { claimName: "usb-disk" }, schedule: "nightly" } }),
    "schedule must be a five-field cron expression or a macro such as @daily",
  ],
  [
    "appliance name longer than 40",
    "remramappliances",
    appliance("a".repeat(41), {}),
    "DNS-1035 label of at most 40",
  ],
  ["appliance name starting with a digit", "remramappliances", appliance("1box", {}), "DNS-1035 label"],
  [
    "unknown hardware profile",
    "remramappliances",
    appliance("box", { hardwareProfile: "tiny" }),
    "Unsupported value",
  ],
  [
    "external mode without external",
    "remramappliances",
    appliance("box", { opensearch: { mode: "external" } }),
    "external is required when mode is external",
  ],
  [
    "embedded mode with external",
    "remramappliances",
    appliance("box", { opensearch: { external: { url: "https://os:9200" } } }),
    "external is required when mode is external and forbidden otherwise",
  ],
  [
    "heap on an external OpenSearch",
    "remramappliances",
    appliance("box", { opensearch: { mode: "external", external: { url: "https://os:9200" }, heap: "2Gi" } }),
    "apply only to an embedded OpenSearch",
  ],
  [
    "external URL that is not http",
    "remramappliances",
    appliance("box", { opensearch: { mode: "external", external: { url: "ftp://os" } } }),
    "should match",
  ],
  [
    "unknown gpu mode",
    "remramappliances",
    appliance("box", { ollama: { gpu: "maybe" } }),
    "Unsupported value",
  ],
  [
    "runtime class with gpu disabled",
    "remramappliances",
    appliance("box", { ollama: { gpu: "disabled", runtimeClassName: "nvidia" } }),
    "runtimeClassName cannot be set when gpu is disabled",
  ],
  [
    "storage size that is no quantity",
    "remramappliances",
    appliance("box", { ollama: { storage: { size: "lots" } } }),
    "should match",
  ],
  [
    "token budget below the floor",
    "remramappliances",
    appliance("box", { cortex: { retrieval: { tokenBudget: 10 } } }),
    "greater than or equal to 256",
  ],
  [
    "the same agent twice",
    "remramappliances",
    appliance("box", { gateway: { agents: [{ id: "main" }, { id: "main" }] } }),
    "Duplicate value",
  ],
  [
    "an agent named artifacts (its workspace would be the read-only artifacts mount)",
    "remramappliances",
    appliance("box", { gateway: { agents: [{ id: "main" }, { id: "artifacts" }] } }),
    artifactsAgentRefusal,
  ],
  [
    "unknown dmScope",
    "remramappliances",
    appliance("box", { gateway: { dmScope: "everyone" } }),
    "Unsupported value",
  ],
  [
    "sandbox non-main (needs a Docker daemon)",
    "remramappliances",
    appliance("box", { gateway: { sandbox: "non-main" } }),
    sandboxRefusal,
  ],
  [
    "sandbox all (needs a Docker daemon)",
    "remramappliances",
    appliance("box", { gateway: { sandbox: "all" } }),
    sandboxRefusal,
  ],
  [
    "a node port for a LoadBalancer",
    "remramappliances",
    appliance("box", { gateway: { expose: { type: "LoadBalancer", nodePort: 30789 } } }),
    nodePortRefusal,
  ],
  [
    "type Ingress without its host",
    "remramappliances",
    appliance("box", { gateway: { expose: { type: "Ingress" } } }),
    ingressRefusal,
  ],
  [
    "an ingress for a NodePort",
    "remramappliances",
    appliance("box", { gateway: { expose: { type: "NodePort", ingress: { host: "moltbox.home.arpa" } } } }),
    ingressRefusal,
  ],
  [
    "both a TLS Secret and a cert-manager issuer",
    "remramappliances",
    appliance("box", {
      gateway: {
        expose: {
          type: "Ingress",
          ingress: { host: "moltbox.home.arpa", tls: { secretName: "mine", issuerRef: { name: "ca" } } },
        },
      },
    }),
    tlsSourceRefusal,
  ],
  [
    "a TLS Secret with TLS off",
    "remramappliances",
    appliance("box", {
      gateway: {
        expose: {
          type: "Ingress",
          ingress: { host: "moltbox.home.arpa", tls: { enabled: false, secretName: "x" } },
        },
      },
    }),
    tlsDisabledRefusal,
  ],
  [
    "a Telegram bot without a household",
    "remramappliances",
    appliance("box", {
      gateway: { channels: { telegram: { botTokenSecretRef: { name: "bot", key: "token" } } } },
    }),
    channelWithoutMembersRefusal("telegram"),
  ],
  [
    "a Discord bot no member has an identity for",
    "remramappliances",
    appliance("box", {
      household: household([member("alice", "telegram:123456789")]),
      gateway: { channels: { discord: { tokenSecretRef: { name: "bot", key: "token" } } } },
    }),
    channelWithoutMembersRefusal("discord"),
  ],
  [
    "git email without @",
    "remramappliances",
    appliance("box", { workspace: { gitIdentity: { name: "Box", email: "nope" } } }),
    "should match",
  ],
  [
    "the same household member twice",
    "remramappliances",
    appliance("box", {
      household: household([member("alice", "telegram:1"), member("alice", "telegram:2")]),
    }),
    "Duplicate value",
  ],
  [
    "one identity listed twice for a member",
    "remramappliances",
    appliance("box", { household: household([member("alice", "telegram:1", "telegram:1")]) }),
    "Duplicate value",
  ],
  [
    "one identity claimed by two members",
    "remramappliances",
    appliance("box", {
      household: household([
        member("alice", "telegram:1", "whatsapp:+4712345678"),
        member("bob", "whatsapp:+4712345678"),
      ]),
    }),
    "a channel identity can belong to one member only",
  ],
  [
    "a peer with capitals",
    "remramappliances",
    appliance("box", { household: household([member("alice", "slack:U0123ABC")]) }),
    "peer must be lowercase",
  ],
  [
    "a member id that could be a channel's numeric peer id",
    "remramappliances",
    appliance("box", { household: household([member("123", "telegram:123")]) }),
    "should match",
  ],
  [
    "a household with every direct message in the main session",
    "remramappliances",
    appliance("box", { gateway: { dmScope: "main" }, household: household([member("alice", "telegram:1")]) }),
    "a household needs gateway.dmScope",
  ],
  [
    "in-process embeddings with an Ollama embedding model",
    "remramappliances",
    appliance("box", {
      cortex: { embedding: { runtime: "inProcess" } },
      ollama: { models: { embedding: "nomic" } },
    }),
    "cortex.embedding.runtime inProcess embeds with the model in Cortex's image (all-minilm-l6-v2-q, 384 dimensions)",
  ],
  [
    "in-process embeddings of another length",
    "remramappliances",
    appliance("box", {
      cortex: { embedding: { runtime: "inProcess" } },
      ollama: { models: { embeddingDimensions: 768 } },
    }),
    "leave ollama.models.embedding unset and embeddingDimensions at 384",
  ],
  ["schedule in words", "dreamschedules", schedule({ schedule: "every day" }), "five-field cron expression"],
  [
    "schedule with three fields",
    "dreamschedules",
    schedule({ schedule: "* * *" }),
    "five-field cron expression",
  ],
  [
    "time zone that is no IANA name",
    "dreamschedules",
    schedule({ timeZone: "Not A Zone!" }),
    "IANA time zone name",
  ],
  ["Replace concurrency", "dreamschedules", schedule({ concurrencyPolicy: "Replace" }), "Unsupported value"],
  [
    "zero starting deadline",
    "dreamschedules",
    schedule({ startingDeadlineSeconds: 0 }),
    "greater than or equal to 1",
  ],
  [
    "dry run that would mirror proposals",
    "dreamschedules",
    schedule({ cycle: { dryRun: true } }),
    "a dryRun cycle writes no proposals",
  ],
  [
    "schedule without appliance",
    "dreamschedules",
    { ...schedule({}), spec: { schedule: "0 3 * * *" } },
    "applianceRef: Required value",
  ],
  [
    "policy without dimensions",
    "dimensionpolicies",
    policy({ dimensions: [] }),
    "should have at least 1 items",
  ],
  [
    "dimension name with spaces",
    "dimensionpolicies",
    policy({ dimensions: [{ name: "Bad Name" }] }),
    "should match",
  ],
  [
    "duplicate dimension",
    "dimensionpolicies",
    policy({ dimensions: [{ name: "topic" }, { name: "topic" }] }),
    "Duplicate value",
  ],
  [
    "secret knowledge made injectable",
    "dimensionpolicies",
    policy({ privacy: { injectableLevels: ["secret"] } }),
    "secret knowledge can never be injectable",
  ],
  [
    "weight above ten",
    "dimensionpolicies",
    policy({ retrievalWeights: { bm25: 11 } }),
    "less than or equal to 10",
  ],
  [
    "a second policy for an appliance (its name is not the appliance's)",
    "dimensionpolicies",
    policy({}, "household"),
    'spec.applianceRef.name: Invalid value: "object": a DimensionPolicy is named after its appliance (one policy per appliance): metadata.name must equal spec.applianceRef.name',
  ],
  [
    "artifact path escaping the workspace",
    "artifactproposals",
    proposal("escape", { artifactPath: "../etc/passwd.md" }),
    "should match",
  ],
  [
    "digest that is not sha256",
    "artifactproposals",
    proposal("md5", { proposedDigest: "md5:abc" }),
    "spec.proposedDigest",
  ],
  [
    "proposer other than the creator",
    "artifactproposals",
    proposal("forged", { proposedBy: "somebody-else" }),
    "spec.proposedBy must be the creating user",
  ],
];

beforeAll(async () => {
  await installCrds(admin);
  await createNamespace(admin, namespace);
  // As the chart grants: the operator writes proposals and their status; approvers patch status and hold `approve`.
  const rbac = "/apis/rbac.authorization.k8s.io/v1";
  await admin.create(`${rbac}/namespaces/${namespace}/roles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "operator", namespace },
    rules: [
      {
        apiGroups: ["remram.io"],
        resources: ["artifactproposals", "artifactproposals/status"],
        verbs: ["get", "list", "create", "patch"],
      },
    ],
  });
  await admin.create(`${rbac}/namespaces/${namespace}/roles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "approver", namespace },
    rules: [
      {
        apiGroups: ["remram.io"],
        resources: ["artifactproposals"],
        verbs: ["get", "list", "create", "approve"],
      },
      { apiGroups: ["remram.io"], resources: ["artifactproposals/status"], verbs: ["patch"] },
    ],
  });
  await admin.create(`${rbac}/namespaces/${namespace}/roles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "status-editor", namespace },
    rules: [
      { apiGroups: ["remram.io"], resources: ["artifactproposals"], verbs: ["get"] },
      { apiGroups: ["remram.io"], resources: ["artifactproposals/status"], verbs: ["patch"] },
    ],
  });
  const bind = (role: string, user: string) =>
    admin.create(`${rbac}/namespaces/${namespace}/rolebindings`, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: `${role}-${user.replace(/[^a-z0-9]+/g, "-")}`, namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
    });
  await bind("operator", operatorName);
  await bind("approver", "alice");
  await bind("status-editor", "bob");
}, 120_000);

afterAll(async () => {
  await admin.delete(`/api/v1/namespaces/${namespace}`);
});

describe("the CRDs reject invalid objects at admission", () => {
  it(`with the intended message for each of ${invalid.length} invalid objects`, async () => {
    const mismatches: string[] = [];
    for (const [description, plural, body, expected] of invalid) {
      const creator: KubeClient = plural === "artifactproposals" ? operatorClient : admin;
      const message = await rejection(creator.create(`${api}/${plural}?fieldValidation=Strict`, body)).catch(
        (error: Error) => `ACCEPTED (${error.message})`,
      );
      if (!message.includes(expected))
        mismatches.push(`${description}: expected "${expected}", got: ${message}`);
    }
    expect(invalid.length).toBeGreaterThanOrEqual(25);
    expect(mismatches).toEqual([]);
  });

  it("accepts a household whose members each hold their own identities on several channels", async () => {
    const created = await admin.create(
      `${api}/remramappliances?fieldValidation=Strict`,
      appliance("household", {
        household: household([
          member("alice", "telegram:123456789", "whatsapp:+4712345678"),
          member("bob", "telegram:987654321", "matrix:@bob:matrix.org"),
        ]),
      }),
    );
    expect(created).toMatchObject({
      spec: { household: { id: "home" }, gateway: { dmScope: "per-channel-peer" } },
    });
    await admin.delete(`${api}/remramappliances/household`);
  });

  it("accepts in-process embeddings, with the embedding model left to Cortex's image", async () => {
    const created = await admin.create(
      `${api}/remramappliances?fieldValidation=Strict`,
      appliance("in-process", { cortex: { embedding: { runtime: "inProcess" } } }),
    );
    expect(created).toMatchObject({
      spec: {
        cortex: { embedding: { runtime: "inProcess" } },
        ollama: { models: { embeddingDimensions: 384 } },
      },
    });
    await admin.delete(`${api}/remramappliances/in-process`);
  });

  it("accepts an Ingress with its defaults and channels the household's members are on", async () => {
    const created = await admin.create(
      `${api}/remramappliances?fieldValidation=Strict`,
      appliance("reachable", {
        household: household([member("alice", "telegram:123456789", "discord:123456789012345678")]),
        gateway: {
          expose: { type: "Ingress", ingress: { host: "moltbox.home.arpa" } },
          channels: {
            telegram: { botTokenSecretRef: { name: "bots", key: "telegram" } },
            discord: { tokenSecretRef: { name: "bots", key: "discord" } },
          },
        },
      }),
    );
    expect(created).toMatchObject({
      spec: {
        gateway: {
          expose: {
            type: "Ingress",
            ingress: { className: "traefik", host: "moltbox.home.arpa", tls: { enabled: true } },
          },
        },
      },
    });
    await admin.delete(`${api}/remramappliances/reachable`);
  });

  it("keeps a DimensionPolicy on the appliance it is named after", async () => {
    await admin.create(`${api}/dimensionpolicies`, policy({}));
    const message = await rejection(
      admin.mergePatch(`${api}/dimensionpolicies/box`, { spec: { applianceRef: { name: "other" } } }),
    );
    expect(message).toContain("metadata.name must equal spec.applianceRef.name");
    await admin.delete(`${api}/dimensionpolicies/box`);
    // The install docs apply the example's policy as it is.
    const example = loadAll(
      readFileSync(join(import.meta.dirname, "../../manifests/appliance-example.yaml"), "utf8"),
    ).find((document) => (document as { kind?: string }).kind === "DimensionPolicy") as {
      metadata: Record<string, unknown>;
    };
    await admin.create(`${api}/dimensionpolicies?fieldValidation=Strict&dryRun=All`, {
      ...example,
      metadata: { ...example.metadata, namespace },
    });
  });

  it("keeps an ArtifactProposal's spec immutable", async () => {
    await operatorClient.create(`${api}/artifactproposals`, proposal("immutable"));
    const message = await rejection(
      admin.mergePatch(`${api}/artifactproposals/immutable`, { spec: { rationale: "changed my mind" } }),
    );
    expect(message).toContain("spec is immutable");
  });

  it("refuses gateway sandbox modes that need Docker, saying why and what to use; admits off and the example", async () => {
    const create = (body: unknown) =>
      admin.create(`${api}/remramappliances?fieldValidation=Strict&dryRun=All`, body);
    for (const mode of ["non-main", "all"]) {
      const message = await rejection(create(appliance("sandboxed", { gateway: { sandbox: mode } })));
      expect(message).toContain("spec.gateway.sandbox");
      expect(message).toContain(
        "sandbox modes non-main and all need a Docker daemon, which the gateway pod does not have; use off",
      );
    }
    await create(appliance("unsandboxed", { gateway: { sandbox: "off" } }));
    await create(appliance("defaulted", {}));
    // The install docs apply this manifest as it is.
    const example = loadAll(
      readFileSync(join(import.meta.dirname, "../../manifests/appliance-example.yaml"), "utf8"),
    ).find((document) => (document as { kind?: string }).kind === "RemramAppliance") as {
      metadata: Record<string, unknown>;
    };
    await create({ ...example, metadata: { ...example.metadata, namespace } });
  });
});

describe("approving an ArtifactProposal", () => {
  const decision = (type: "Approved" | "Denied", by: string, overrides: Record<string, unknown> = {}) => [
    {
      op: "add",
      path: "/status/conditions/-",
      value: {
        type,
        status: "True",
        reason: "KubectlRemram",
        message: "",
        lastTransitionTime: "2026-01-01T00:00:00Z",
      },
    },
    {
      op: "add",
      path: "/status/approval",
      value: {
        decision: type,
        by,
        at: "2026-01-01T00:00:00Z",
        generation: 1,
        proposedDigest: digest,
        ...overrides,
      },
    },
  ];
  const statusPath = (name: string) => `${api}/artifactproposals/${name}/status`;

  beforeAll(async () => {
    for (const name of ["p-alice", "p-self"]) {
      const creator = name === "p-self" ? alice : operatorClient;
      const proposedBy = name === "p-self" ? "alice" : operatorName;
      await creator.create(`${api}/artifactproposals`, proposal(name, { proposedBy }));
      // The operator's first status: Pending, Ready=False. The API server applies a changed admission policy
      // a moment after it is stored (another suite may just have installed the chart's with another identity), so
      // this first write waits for the committed policy to be in force.
      await untilApprovalPolicyAccepts(() =>
        operatorClient.mergePatch(statusPath(name), {
          status: {
            phase: "Pending",
            conditions: [
              {
                type: "Ready",
                status: "False",
                reason: "AwaitingApproval",
                message: "",
                lastTransitionTime: "2026-01-01T00:00:00Z",
              },
            ],
          },
        }),
      );
    }
  });

  it("is refused to a user without the approve verb", async () => {
    expect(await rejection(bob.jsonPatch(statusPath("p-alice"), decision("Approved", "bob")))).toContain(
      "needs the approve verb",
    );
  });

  it("is refused when status.approval names someone other than the requester", async () => {
    expect(
      await rejection(alice.jsonPatch(statusPath("p-alice"), decision("Approved", "mallory"))),
    ).toContain("status.approval.by must be the approving user");
  });

  it("is refused to the proposer", async () => {
    expect(await rejection(alice.jsonPatch(statusPath("p-self"), decision("Approved", "alice")))).toContain(
      "the proposer cannot approve",
    );
  });

  it("is refused for another generation or digest than the proposal has", async () => {
    expect(
      await rejection(
        alice.jsonPatch(statusPath("p-alice"), decision("Approved", "alice", { generation: 7 })),
      ),
    ).toContain("must name the current metadata.generation");
  });

  it("is refused as a False condition", async () => {
    const falseApproval = decision("Approved", "alice");
    (falseApproval[0]?.value as { status: string }).status = "False";
    expect(await rejection(alice.jsonPatch(statusPath("p-alice"), falseApproval))).toContain(
      "can only be True",
    );
  });

  it("is accepted from a rightful approver, and then final: no flip to Denied", async () => {
    await alice.jsonPatch(statusPath("p-alice"), decision("Approved", "alice"));
    const flip = [
      { op: "remove", path: "/status/conditions/1" },
      ...decision("Denied", "alice").map((operation) =>
        operation.path === "/status/approval" ? { ...operation, op: "replace" } : operation,
      ),
    ];
    expect(await rejection(alice.jsonPatch(statusPath("p-alice"), flip))).toMatch(
      /decision is final|mutually exclusive/,
    );
  });

  it("leaves every other status field to the operator", async () => {
    expect(
      await rejection(alice.mergePatch(statusPath("p-alice"), { status: { phase: "Promoted" } })),
    ).toContain("only the remram operator may change status fields");
    await operatorClient.mergePatch(statusPath("p-alice"), { status: { phase: "Approved" } });
  });
});
