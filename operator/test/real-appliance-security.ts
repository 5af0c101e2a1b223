// The cluster side of the appliance's security, checked on the real node after a conversation, a dream, an
// approval and an upgrade have run: what each service account may do (`kubectl auth can-i --list`), restricted
// pod security on every appliance pod, and no Secret value in custom resources, Events, logs, labels or annotations.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { binPath, runDir } from "../../test/harness/src/paths.js";
import {
  kubectl,
  kubernetes,
  measured,
  namespace,
  operatorNamespace,
  operatorPods,
} from "./real-appliance.js";

const run = promisify(execFile);

interface Grant {
  resource: string;
  verbs: string[];
}

/** `kubectl auth can-i --list` as a service account, parsed: one grant per resource line. */
async function grantsOf(
  serviceAccount: string,
  inNamespace: string,
): Promise<{ text: string; grants: Grant[] }> {
  const text = await kubectl(["auth", "can-i", "--list", `--as=${serviceAccount}`, "-n", inNamespace]);
  const grants = text
    .split("\n")
    .slice(1)
    // A non-resource URL row has an empty Resources column: once trimmed it starts with its "[/…]" cell.
    .filter((line) => line.trim() !== "" && !line.trim().startsWith("["))
    .map((line) => line.trim().split(/\s{2,}/))
    .filter((columns) => columns.length >= 2)
    .map((columns) => ({
      resource: columns[0] ?? "",
      verbs: (columns.at(-1) ?? "")
        .replace(/^\[|\]$/g, "")
        .split(" ")
        .filter(Boolean),
    }));
  return { text, grants };
}

const selfReviews = new Set([
  "selfsubjectreviews.authentication.k8s.io",
  "selfsubjectaccessreviews.authorization.k8s.io",
  "selfsubjectrulesreviews.authorization.k8s.io",
]);

interface Listed<T> {
  items: T[];
}
type Meta = { kind?: string; metadata: { name: string; labels?: object; annotations?: object } };

/** Every Secret value of the appliance's namespace worth looking for: credentials, not short or structured data. */
async function secretValues(): Promise<{ name: string; value: string }[]> {
  const secrets = JSON.parse(await kubectl(["-n", namespace, "get", "secrets", "-o", "json"])) as Listed<
    Meta & { data?: Record<string, string> }
  >;
  return secrets.items.flatMap((secret) =>
    Object.entries(secret.data ?? {})
      .map(([key, encoded]) => ({
        name: `${secret.metadata.name}/${key}`,
        value: Buffer.from(encoded, "base64").toString(),
      }))
      .filter(({ value }) => value.length >= 12 && !/\s/.test(value.trim()))
      .map(({ name, value }) => ({ name, value: value.trim() })),
  );
}

async function podLogs(inNamespace: string): Promise<string> {
  const pods = JSON.parse(await kubectl(["-n", inNamespace, "get", "pods", "-o", "json"])) as Listed<Meta>;
  const logs = await Promise.all(
    pods.items.map((pod) =>
      kubectl(
        ["-n", inNamespace, "logs", pod.metadata.name, "--all-containers", "--tail=-1"],
        undefined,
        60_000,
      ).catch((error: unknown) => `(no logs: ${String(error)})`),
    ),
  );
  return logs.join("\n");
}

export function describeClusterSecurity(): void {
  describe("the appliance's cluster-side security on the real node", () => {
    it("grants each service account only what it needs (kubectl auth can-i --list)", async () => {
      const operatorAccount = (await operatorPods("{.items[0].spec.serviceAccountName}")).trim();
      const operator = `system:serviceaccount:${operatorNamespace}:${operatorAccount}`;
      const inAppliance = await grantsOf(operator, namespace);
      const elsewhere = await grantsOf(operator, "default");
      const podsAccount = await grantsOf(`system:serviceaccount:${namespace}:default`, namespace);
      const report = [
        `# operator (${operatorAccount}) in the appliance's namespace\n${inAppliance.text}`,
        `# operator in another namespace (default)\n${elsewhere.text}`,
        `# the appliance pods' service account (default) in their namespace\n${podsAccount.text}`,
      ].join("\n");
      writeFileSync(join(runDir, "can-i.txt"), report);
      console.log(report);

      // Nothing anywhere may do everything.
      for (const grant of [...inAppliance.grants, ...elsewhere.grants]) {
        expect(grant.resource === "*.*" && grant.verbs.includes("*"), grant.resource).toBe(false);
      }
      const secretsHere = inAppliance.grants.find((grant) => grant.resource === "secrets");
      expect(secretsHere?.verbs.sort()).toEqual(expect.arrayContaining(["create", "get", "list", "watch"]));
      // Secrets only where appliances live: the chart grants no cluster-wide Secret access.
      expect(elsewhere.grants.some((grant) => grant.resource === "secrets")).toBe(false);
      // SubjectAccessReviews, to re-check an approver before a promotion: create, nothing more.
      expect(
        inAppliance.grants.find((grant) => grant.resource === "subjectaccessreviews.authorization.k8s.io")
          ?.verbs,
      ).toEqual(["create"]);
      // The appliance's pods run with no token and their account may do nothing but ask about itself.
      expect(
        podsAccount.grants.map((grant) => grant.resource).filter((resource) => !selfReviews.has(resource)),
      ).toEqual([]);
    });

    it("runs every appliance pod under restricted pod security, as the API server judges it", async () => {
      const labels = JSON.parse(
        await kubectl(["get", "namespace", namespace, "-o", "jsonpath={.metadata.labels}"]),
      ) as Record<string, string>;
      expect(labels["pod-security.kubernetes.io/enforce"]).toBe("restricted");
      // A server-side dry run of the label makes the API server check every running pod against the level.
      const { stdout, stderr } = await run(
        binPath("kubectl"),
        [
          `--kubeconfig=${kubernetes.kubeconfig}`,
          "label",
          "--dry-run=server",
          "--overwrite",
          "namespace",
          namespace,
          "pod-security.kubernetes.io/enforce=restricted",
        ],
        { maxBuffer: 4 * 1024 * 1024 },
      );
      expect(stdout).toContain(namespace);
      expect(stderr).not.toMatch(/violate|Warning/i);
      const pods = (
        await kubectl(["-n", namespace, "get", "pods", "-o", "jsonpath={.items[*].metadata.name}"])
      ).trim();
      expect(pods.split(" ").length).toBeGreaterThanOrEqual(4);
    });

    it("keeps every Secret value out of custom resources, Events, logs, labels and annotations", async () => {
      const secrets = await secretValues();
      // The four Cortex credentials, the gateway's token at least.
      expect(secrets.length).toBeGreaterThanOrEqual(5);
      const resources = await kubectl([
        "-n",
        namespace,
        "get",
        "remramappliances,dreamschedules,dimensionpolicies,artifactproposals",
        "-o",
        "json",
      ]);
      const events = `${await kubectl(["-n", namespace, "get", "events", "-o", "json"])}${await kubectl([
        "-n",
        operatorNamespace,
        "get",
        "events",
        "-o",
        "json",
      ])}`;
      const logs = `${await podLogs(namespace)}\n${await podLogs(operatorNamespace)}`;
      const objects = JSON.parse(
        await kubectl([
          "-n",
          namespace,
          "get",
          "all,configmaps,secrets,pvc,networkpolicies,leases",
          "-o",
          "json",
        ]),
      ) as Listed<Meta>;
      const metadata = JSON.stringify(
        objects.items.map((item) => ({
          labels: item.metadata.labels,
          annotations: item.metadata.annotations,
        })),
      );
      const sources = { resources, events, logs, "labels and annotations": metadata };
      measured.secretLeakCheck = {
        secrets: secrets.length,
        bytesSearched: Object.values(sources).reduce((sum, text) => sum + text.length, 0),
      };
      // Plain and base64 (an annotation like last-applied-configuration would carry a Secret's data encoded).
      const leaks = secrets.flatMap(({ name, value }) =>
        Object.entries(sources)
          .filter(([, text]) => text.includes(value) || text.includes(Buffer.from(value).toString("base64")))
          .map(([source]) => `${name} in ${source}`),
      );
      expect(leaks).toEqual([]);
    }, 180_000);
  });
}
