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

  it("mounts the Cortex token outside the agent's workspace", () => {
    const tokenMount = mountOf(gateway, gatewayCortexTokenFile);
    expect(tokenMount).toMatchObject({ name: "cortex-token", readOnly: true });
    expect(gatewayCortexTokenFile.startsWith(`${gatewayWorkspaceDir}/`)).toBe(false);
  });
});
