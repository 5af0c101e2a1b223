import { describe, expect, it } from "vitest";
import { type ControlPlaneLayout, kubeApiserverArgs, kubeControllerManagerArgs } from "../kubernetes.js";
import { corednsManifests, localPathManifests } from "./addons.js";
import {
  kubeletArgs,
  type NodeLayout,
  nodeNetwork,
  renderCniTemplate,
  renderContainerdConfig,
  renderKubeletConfig,
} from "./config.js";

const layout: NodeLayout = {
  dir: "/state/node",
  apiserverUrl: "https://10.199.0.1:6443",
  apiserverCa: "/state/pki/apiserver.crt",
  kubeletClientCa: "/state/pki/kubelet-client-ca.crt",
};

describe("the real node's configuration", () => {
  it("keeps containerd's state, sockets, runc root and CNI files in the node's own directory", () => {
    const toml = renderContainerdConfig(layout, "localhost/pause:3.10");
    const paths = [...toml.matchAll(/"(\/[^"]*)"/g)].map((match) => match[1]);
    expect(paths.filter((path) => !path?.startsWith("/state/node/"))).toEqual([
      "/usr/sbin/runc",
      "/usr/lib/cni",
    ]);
    expect(toml).toContain("restrict_oom_score_adj = true");
    expect(toml).toContain("SystemdCgroup = false");
    expect(toml).toContain('sandbox_image = "localhost/pause:3.10"');
  });

  it("lets containerd fill in the pod CIDR the controller manager allocates", () => {
    const conflist = JSON.parse(renderCniTemplate(layout));
    expect(conflist.plugins[0].ipam.ranges).toEqual([[{ subnet: "{{.PodCIDR}}" }]]);
    expect(conflist.plugins[0].ipam.dataDir).toBe("/state/node/cni/ipam");
  });

  it("registers the kubelet tainted, on cgroupfs, with cluster DNS and no host resolver", () => {
    const config = JSON.parse(renderKubeletConfig(layout));
    expect(config.cgroupDriver).toBe("cgroupfs");
    expect(config.registerWithTaints).toEqual([
      { key: "remram.io/real-node", value: "true", effect: "NoSchedule" },
    ]);
    expect(config.clusterDNS).toEqual([nodeNetwork.clusterDns]);
    expect(config.authentication.anonymous.enabled).toBe(false);
    expect(config.imageGCHighThresholdPercent).toBe(100);
    expect(kubeletArgs(layout)).toContain("--cert-dir=/state/node/kubelet/pki");
  });

  it("points the apiserver's kubelet traffic at InternalIPs only when a real node joins", () => {
    const controlPlane: ControlPlaneLayout = {
      dir: "/state/kubernetes-6443",
      etcdPort: 2379,
      apiserverPort: 6443,
      kwokPort: 10247,
      stagesFile: "/cache/kwok-stages.yaml",
    };
    expect(kubeApiserverArgs(controlPlane).some((arg) => arg.startsWith("--advertise-address=10."))).toBe(
      false,
    );
    const withNode = { ...controlPlane, nodeAdvertiseAddress: nodeNetwork.hostIp };
    expect(kubeApiserverArgs(withNode)).toContain(`--advertise-address=${nodeNetwork.hostIp}`);
    expect(kubeApiserverArgs(withNode)).toContain("--bind-address=127.0.0.1");
    expect(kubeApiserverArgs(withNode)).toContain("--kubelet-preferred-address-types=InternalIP,Hostname");
    expect(kubeControllerManagerArgs(withNode)).toContain("--allocate-node-cidrs=true");
  });
});

describe("the node's add-ons", () => {
  it("serve DNS on the cluster DNS address from a non-root CoreDNS that forwards nowhere", () => {
    const manifests = corednsManifests("localhost/coredns:1.12.4") as {
      kind: string;
      spec?: object;
      data?: object;
    }[];
    const service = manifests.find((manifest) => manifest.kind === "Service") as {
      spec: { clusterIP: string };
    };
    expect(service.spec.clusterIP).toBe(nodeNetwork.clusterDns);
    const config = manifests.find((manifest) => manifest.kind === "ConfigMap") as {
      data: { Corefile: string };
    };
    expect(config.data.Corefile).not.toMatch(/forward|loop/);
  });

  it("make local-path the default StorageClass, provisioning under the node's directory", () => {
    const manifests = localPathManifests(
      { localPath: "localhost/local-path-provisioner:v0.0.30", busybox: "localhost/busybox:1.35.0" },
      "/state/node/local-path",
    ) as {
      kind: string;
      metadata: { annotations?: Record<string, string> };
      data?: Record<string, string>;
    }[];
    const storageClass = manifests.find((manifest) => manifest.kind === "StorageClass");
    expect(storageClass?.metadata.annotations?.["storageclass.kubernetes.io/is-default-class"]).toBe("true");
    const config = manifests.find((manifest) => manifest.kind === "ConfigMap");
    expect(JSON.parse(config?.data?.["config.json"] ?? "{}").nodePathMap[0].paths).toEqual([
      "/state/node/local-path",
    ]);
  });
});
