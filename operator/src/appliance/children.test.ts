import { describe, expect, it } from "vitest";
import type { KubeObject } from "../runtime/kube-client.js";
import { buildOllama } from "./children/ollama.js";
import { buildOpenSearch } from "./children/opensearch.js";
import { buildApplianceChildren, keepLiveStorage } from "./children.js";
import { applianceContext } from "./testing/context.js";
import { podOf } from "./testing/pod.js";

const context = applianceContext;

describe("the appliance's children", () => {
  it("are all in the appliance's namespace with exactly one controller ownerReference, except retained claims", () => {
    const children = buildApplianceChildren(context({}));
    for (const child of children) {
      expect(child.metadata.namespace).toBe("home");
      if (child.kind === "PersistentVolumeClaim") {
        expect(child.metadata.ownerReferences).toBeUndefined();
      } else {
        expect(child.metadata.ownerReferences?.filter((reference) => reference.controller)).toHaveLength(1);
      }
    }
    const deleting = buildApplianceChildren(
      context({ persistentVolumeClaimRetentionPolicy: { whenDeleted: "Delete" } }),
    );
    const claims = deleting.filter((child) => child.kind === "PersistentVolumeClaim");
    expect(claims.length).toBe(2);
    for (const claim of claims) expect(claim.metadata.ownerReferences).toHaveLength(1);
  });

  it("run every pod under the restricted pod security standard, none but remram-app with a service account token", () => {
    for (const child of buildApplianceChildren(context({}))) {
      if (child.kind !== "Deployment" && child.kind !== "StatefulSet") continue;
      const pod = podOf(child);
      // The app reads its own appliance with its token (children/app.ts); every other pod has no API access at all.
      expect(pod.automountServiceAccountToken, child.metadata.name).toBe(child.metadata.name === "box-app");
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect(pod.volumes?.some((volume) => volume.hostPath !== undefined) ?? false).toBe(false);
      for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
        expect(container.securityContext, `${child.metadata.name}/${container.name}`).toMatchObject({
          allowPrivilegeEscalation: false,
          capabilities: { drop: ["ALL"] },
          runAsNonRoot: true,
        });
      }
    }
  });

  it("never include a RuntimeClass: the operator reads the node's, it does not make one", () => {
    const kinds = buildApplianceChildren(context({ ollama: { runtimeClassName: "gpu" } })).map(
      (child) => child.kind,
    );
    expect(kinds).not.toContain("RuntimeClass");
    const pod = podOf(
      buildOllama(context({ ollama: { runtimeClassName: "gpu" } })).find(
        (child) => child.kind === "Deployment",
      ),
    );
    expect(pod.runtimeClassName).toBe("gpu");
  });
});

describe("storage of existing claims", () => {
  it("keeps the live size and class when the profile would change them", () => {
    const desired = buildOllama(context({})).find((child) => child.kind === "PersistentVolumeClaim");
    const live = {
      ...desired,
      spec: { resources: { requests: { storage: "50Gi" } }, storageClassName: "local-path" },
    };
    const kept = keepLiveStorage(desired as KubeObject, live as KubeObject) as unknown as {
      spec: { resources: { requests: { storage: string } }; storageClassName: string };
    };
    expect(kept.spec.resources.requests.storage).toBe("50Gi");
    expect(kept.spec.storageClassName).toBe("local-path");
    expect(keepLiveStorage(desired as KubeObject, undefined)).toBe(desired);
  });

  it("keeps the live claim templates of the OpenSearch StatefulSet", () => {
    const desired = buildOpenSearch(context({})).find((child) => child.kind === "StatefulSet") as KubeObject;
    const live = {
      ...desired,
      spec: {
        volumeClaimTemplates: [
          { metadata: { name: "data" }, spec: { resources: { requests: { storage: "50Gi" } } } },
        ],
      },
    };
    const kept = keepLiveStorage(desired, live as KubeObject) as unknown as {
      spec: { volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[] };
    };
    expect(kept.spec.volumeClaimTemplates[0]?.spec.resources.requests.storage).toBe("50Gi");
  });
});
