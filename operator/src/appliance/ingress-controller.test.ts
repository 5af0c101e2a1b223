import { describe, expect, it } from "vitest";
import type { KubeObject } from "../runtime/kube-client.js";
import {
  endpointSliceSelector,
  ingressProxiesOf,
  parseIngressControllerService,
} from "./ingress-controller.js";

const traefik = { namespace: "kube-system", name: "traefik" };

function slice(name: string, addressType: string, addresses: string[][]): KubeObject {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name, namespace: "kube-system" },
    addressType,
    endpoints: addresses.map((each) => ({ addresses: each })),
  } as KubeObject;
}

describe("the ingress controller's Service", () => {
  it("is <namespace>/<name>, or none when empty", () => {
    expect(parseIngressControllerService("kube-system/traefik")).toEqual(traefik);
    expect(parseIngressControllerService(" ")).toBeUndefined();
    for (const wrong of ["traefik", "a/b/c", "/traefik", "kube-system/"]) {
      expect(() => parseIngressControllerService(wrong)).toThrowError(/is not <namespace>\/<name>/);
    }
    expect(endpointSliceSelector(traefik)).toBe("kubernetes.io/service-name=traefik");
  });

  it("gives every pod address of its slices, once and sorted, and none from FQDN slices", () => {
    const proxies = ingressProxiesOf(traefik, [
      slice("traefik-b", "IPv4", [["10.42.0.9"], ["10.42.0.7"]]),
      slice("traefik-a", "IPv4", [["10.42.0.7"]]),
      slice("traefik-v6", "IPv6", [["fd00::7"]]),
      slice("traefik-name", "FQDN", [["traefik.example"]]),
    ]);
    expect(proxies).toEqual({
      service: "kube-system/traefik",
      addresses: ["10.42.0.7", "10.42.0.9", "fd00::7"],
    });
    expect(ingressProxiesOf(traefik, []).addresses).toEqual([]);
  });
});
