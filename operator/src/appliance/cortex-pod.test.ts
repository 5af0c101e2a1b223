import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../runtime/kube-client.js";
import { buildCortex } from "./children/cortex.js";
import { buildGateway } from "./children/gateway.js";
import { gatewayCortexTokenFile, gatewayWorkspaceDir } from "./openclaw-config.js";
import { applianceContext } from "./testing/context.js";

// CPU only, no metrics namespaces: the pods as a plain box gets them.
const context = () => applianceContext({}, { useGpu: false, metricsNamespaces: [] });

interface Mount {
  name: string;
  mountPath: string;
  subPath?: string;
  readOnly?: boolean;
}
interface Container {
  name: string;
  env: { name: string; value: string }[];
  volumeMounts: Mount[];
  securityContext: { readOnlyRootFilesystem?: boolean };
}
interface Pod {
  containers: Container[];
  volumes: { name: string; persistentVolumeClaim?: { claimName: string }; emptyDir?: object }[];
}

function pod(objects: KubeObject[], name: string): Pod {
  const deployment = objects.find((object) => object.kind === "Deployment" && object.metadata.name === name);
  if (deployment === undefined) throw new Error(`${name} not built`);
  return (deployment as unknown as { spec: { template: { spec: Pod } } }).spec.template.spec;
}

/** The mount a path lies on: the longest mountPath that contains it. */
function mountOf(container: Container, path: string): Mount | undefined {
  return container.volumeMounts
    .filter((mount) => path === mount.mountPath || path.startsWith(`${mount.mountPath}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
}

describe("Cortex's pod", () => {
  const cortexPod = pod(buildCortex(context()), "box-cortex");
  const cortex = cortexPod.containers[0] as Container;
  const env = Object.fromEntries(cortex.env.map((variable) => [variable.name, variable.value]));

  it("writes only to mounted volumes: its root file system is read-only", () => {
    expect(cortex.securityContext.readOnlyRootFilesystem).toBe(true);
    // Every folder Cortex writes: the git repository, the archive, git's HOME, temp files.
    const written = [env.REMRAM_WORKSPACE_DIR, env.CORTEX_ARCHIVE_DIR, env.HOME, env.TMPDIR];
    expect(written.every((path) => path !== undefined)).toBe(true);
    for (const path of written as string[]) {
      const mount = mountOf(cortex, path);
      expect(mount, path).toBeDefined();
      expect(mount?.readOnly ?? false, path).toBe(false);
    }
  });

  it("keeps the repository and the archive on the claim, in a folder of its own, so a new pod finds them", () => {
    for (const path of [env.REMRAM_WORKSPACE_DIR, env.CORTEX_ARCHIVE_DIR] as string[]) {
      const mount = mountOf(cortex, path) as Mount;
      const volume = cortexPod.volumes.find((candidate) => candidate.name === mount.name);
      expect(volume?.persistentVolumeClaim?.claimName, path).toBe("box-workspace");
      expect(mount.subPath, path).toBe("cortex");
    }
    // Nothing of the agent's workspace is mounted into Cortex, and the archive is not inside the repository.
    expect(cortex.volumeMounts.some((mount) => mount.subPath === "workspace")).toBe(false);
    expect(env.CORTEX_ARCHIVE_DIR?.startsWith(`${env.REMRAM_WORKSPACE_DIR}/`)).toBe(false);
  });

  it("reads the gateway's state, read-only, only when backups seal it to the household's keys", () => {
    expect(cortex.volumeMounts.some((mount) => mount.subPath === "openclaw")).toBe(false);
    expect(env.CORTEX_BACKUP_AGE_RECIPIENTS).toBeUndefined();
    const recipient = `age1${"q".repeat(58)}`;
    const sealing = pod(
      buildCortex(
        applianceContext(
          {
            backup: {
              volume: { claimName: "household-backups" },
              secrets: { ageRecipients: [recipient, recipient.replace(/q$/, "p")] },
            },
          },
          { useGpu: false, metricsNamespaces: [] },
        ),
      ),
      "box-cortex",
    ).containers[0] as Container;
    const sealingEnv = Object.fromEntries(sealing.env.map((variable) => [variable.name, variable.value]));
    expect(sealingEnv.CORTEX_BACKUP_AGE_RECIPIENTS).toBe(`${recipient} ${recipient.replace(/q$/, "p")}`);
    const state = mountOf(sealing, sealingEnv.CORTEX_GATEWAY_STATE_DIR as string);
    expect(state).toMatchObject({ name: "workspace", subPath: "openclaw", readOnly: true });
  });
});

describe("Cortex's credentials", () => {
  type Secret = KubeObject & { stringData?: Record<string, string> };
  type Projected = {
    projected?: { sources: { secret: { name: string; items: { key: string; path: string }[] } }[] };
  };
  const secretsOf = (objects: KubeObject[]) =>
    objects
      .filter((object): object is Secret => object.kind === "Secret")
      .map((secret) => secret.metadata.name);

  it("generates one Secret per caller and mounts all four into Cortex as files named like the caller", () => {
    const objects = buildCortex(context());
    expect(secretsOf(objects).sort()).toEqual([
      "box-cortex-admin",
      "box-cortex-app",
      "box-cortex-gateway",
      "box-cortex-operator",
    ]);
    const cortexPod = pod(objects, "box-cortex");
    const container = cortexPod.containers[0] as Container;
    const env = Object.fromEntries(container.env.map((variable) => [variable.name, variable.value]));
    const mount = mountOf(container, `${env.CORTEX_CREDENTIALS_DIR}/gateway`) as Mount;
    expect(mount).toMatchObject({ readOnly: true });
    expect(mount.subPath).toBeUndefined(); // a subPath mount would never see a rotated value
    const volume = cortexPod.volumes.find((candidate) => candidate.name === mount.name) as Projected;
    expect(
      volume.projected?.sources.map((source) => [source.secret.name, source.secret.items[0]?.path]),
    ).toEqual([
      ["box-cortex-gateway", "gateway"],
      ["box-cortex-operator", "operator"],
      ["box-cortex-admin", "admin"],
      ["box-cortex-app", "app"],
    ]);
    expect(Object.keys(env)).not.toContain("CORTEX_TOKEN_FILE");
  });

  it("uses the household's admin Secret when the spec names one, and generates the other three", () => {
    const objects = buildCortex(
      applianceContext(
        { cortex: { tokenSecretRef: { name: "household-admin", key: "credential" } } },
        { useGpu: false, metricsNamespaces: [] },
      ),
    );
    expect(secretsOf(objects)).not.toContain("box-cortex-admin");
    const volume = pod(objects, "box-cortex").volumes.find(
      (candidate) => candidate.name === "credentials",
    ) as Projected;
    expect(volume.projected?.sources[2]?.secret).toEqual({
      name: "household-admin",
      items: [{ key: "credential", path: "admin" }],
    });
  });

  it("binds Cortex to the appliance's household", () => {
    const objects = buildCortex(
      applianceContext(
        {
          gateway: { dmScope: "per-peer" },
          household: {
            id: "home",
            members: [{ id: "alice", identities: [{ channel: "telegram", peer: "1" }] }],
          },
        },
        { useGpu: false, metricsNamespaces: [] },
      ),
    );
    const container = pod(objects, "box-cortex").containers[0] as Container;
    expect(container.env).toContainEqual({ name: "REMRAM_HOUSEHOLD_ID", value: "home" });
  });
});

describe("the gateway's pod", () => {
  const gatewayPod = pod(buildGateway(context()), "box-gateway");
  const gateway = gatewayPod.containers[0] as Container;
  const cortex = pod(buildCortex(context()), "box-cortex").containers[0] as Container;

  it("shows the agent the artifacts folder of Cortex's repository, read-only, and nothing else of Cortex's", () => {
    const cortexEnv = Object.fromEntries(cortex.env.map((variable) => [variable.name, variable.value]));
    const repoMount = mountOf(cortex, cortexEnv.REMRAM_WORKSPACE_DIR as string) as Mount;
    const repoOnClaim = join(
      repoMount.subPath ?? "",
      (cortexEnv.REMRAM_WORKSPACE_DIR as string).slice(repoMount.mountPath.length),
    );
    const fromCortex = gateway.volumeMounts.filter((mount) => mount.subPath?.startsWith("cortex"));
    expect(fromCortex).toEqual([
      {
        name: "state",
        mountPath: `${gatewayWorkspaceDir}/artifacts`,
        subPath: join(repoOnClaim, "artifacts"),
        readOnly: true,
      },
    ]);
  });

  it("mounts only the gateway's own Cortex credential, outside the agent's workspace", () => {
    const tokenMount = mountOf(gateway, gatewayCortexTokenFile);
    expect(tokenMount).toMatchObject({ name: "cortex-token", readOnly: true });
    const volume = gatewayPod.volumes.find((candidate) => candidate.name === "cortex-token") as {
      secret?: { secretName: string };
    };
    expect(volume.secret?.secretName).toBe("box-cortex-gateway");
    expect(gatewayCortexTokenFile.startsWith(`${gatewayWorkspaceDir}/`)).toBe(false);
  });
});
