import { describe, expect, it } from "vitest";
import { images } from "../testing/context.js";
import { podOf } from "../testing/pod.js";
import { buildDevicePlugin } from "./device-plugin.js";

describe("the appliance's children", () => {
  it("keep the node-level device plugin out of the appliance's namespace and ownership, under the given RuntimeClass", () => {
    const daemonSet = buildDevicePlugin(images, "gpu");
    expect(daemonSet.kind).toBe("DaemonSet");
    expect(daemonSet.metadata.namespace).toBe("kube-system");
    expect(daemonSet.metadata.ownerReferences).toBeUndefined();
    expect(podOf(daemonSet).runtimeClassName).toBe("gpu");
  });
});
