import { describe, expect, it } from "vitest";
import {
  buildInfo,
  formatClientVersion,
  formatServerVersion,
  type OperatorDeployment,
  operatorVersion,
} from "./version.js";

const deployment = (image: string, labels: Record<string, string> = {}): OperatorDeployment => ({
  metadata: { name: "remram-operator", namespace: "remram-system", labels },
  spec: { replicas: 1, template: { spec: { containers: [{ name: "operator", image }] } } },
  status: { readyReplicas: 1 },
});

describe("kubectl remram version", () => {
  it("is 'source' when not bundled", () => {
    expect(buildInfo).toEqual({ version: "source", flavor: "source" });
  });

  it("reads the operator's version from its image tag, digest or chart label", () => {
    expect(operatorVersion(deployment("localhost:5000/remram-operator:0.2.0"))).toBe("0.2.0");
    expect(operatorVersion(deployment(`ghcr.io/x/remram-operator@sha256:${"ab".repeat(32)}`))).toBe(
      "sha256:abababababab",
    );
    expect(
      operatorVersion(
        deployment("localhost:5000/remram-operator", { "helm.sh/chart": "remram-operator-0.1.0" }),
      ),
    ).toBe("0.1.0");
  });

  it("prints the client, then the cluster and each operator", () => {
    const build = { version: "0.1.0", commit: "abc1234", flavor: "npm" };
    expect(formatClientVersion(build, "20.20.2")).toBe(
      "Client: kubectl-remram 0.1.0 (commit abc1234, node 20.20.2)",
    );
    expect(formatClientVersion({ version: "0.1.0", flavor: "sea" }, "24.21.0")).toBe(
      "Client: kubectl-remram 0.1.0 (built-in node 24.21.0)",
    );
    expect(
      formatServerVersion({ kubernetes: "v1.35.0", operators: [deployment("r/remram-operator:0.1.0")] }),
    ).toBe(
      [
        "Kubernetes: v1.35.0",
        "Operator: 0.1.0 (remram-system/remram-operator, image r/remram-operator:0.1.0, 1/1 ready)",
      ].join("\n"),
    );
    expect(formatServerVersion({ operators: [] })).toBe(
      "Operator: not found (no Deployment labelled app.kubernetes.io/name=remram-operator)",
    );
    expect(formatServerVersion({ kubernetes: "v1.35.0", operators: { error: "you may not list" } })).toBe(
      "Kubernetes: v1.35.0\nOperator: unknown (you may not list)",
    );
  });
});
