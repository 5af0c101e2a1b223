import { readFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { allKinds } from "../api/v1alpha1/index.js";
import { remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import { chartDir } from "./chart-files.js";

// Helm renders these only in the integration tier (operator/test/chart-values.int.test.ts); here, what the text
// promises a reader: the NOTES' appliance is one the API server accepts, the tests check every CRD there is.
const templates = join(import.meta.dirname, "../../..", chartDir, "templates");
const read = (name: string) => readFileSync(join(templates, name), "utf8");

describe("NOTES.txt", () => {
  const notes = read("NOTES.txt");

  it("shows a minimal RemramAppliance the CRD's schema accepts, for a heredoc pasted as is", () => {
    const heredoc = notes.match(/^kubectl apply -f - <<EOF\n([\s\S]*?)^EOF$/m)?.[1];
    expect(heredoc, "a heredoc at the start of a line, ending at EOF alone on its line").toBeDefined();
    const appliance = load((heredoc ?? "").replace(/\{\{[^}]*\}\}/g, "remram")) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace: string };
      spec: unknown;
    };
    expect(appliance).toMatchObject({ apiVersion: "remram.io/v1alpha1", kind: "RemramAppliance" });
    expect(remramApplianceSpec.safeParse(appliance.spec).error).toBeUndefined();
    expect(notes).toContain(`wait --for=condition=Ready remramappliance/${appliance.metadata.name}`);
  });

  it("says something else on upgrade, and names what only enabled values render", () => {
    expect(notes).toMatch(/\{\{- if \.Release\.IsUpgrade -?\}\}[\s\S]*\{\{- else -?\}\}/);
    expect(notes).toMatch(
      /\{\{- if \.Values\.metrics\.dashboards\.enabled \}\}\n(?:(?!\{\{- end)[\s\S])*get configmaps -l/,
    );
    expect(notes).toMatch(/\{\{- if \.Values\.approverRole\.create \}\}[\s\S]*kubectl remram approve <name>/);
    expect(notes).toMatch(/\{\{- if \.Values\.tests\.enabled \}\}\n +helm test/);
  });
});

describe("the helm test hooks", () => {
  const crdsTest = read("tests/crds-established.yaml");

  it("check every CRD the operator serves through discovery, with no RBAC of their own", () => {
    const listed = crdsTest.match(/\$crds := list (.+) \}\}/)?.[1]?.match(/"([^"]+)"/g);
    expect(listed?.map((name) => name.replaceAll('"', "")).sort()).toEqual(
      allKinds.map((kind) => kind.plural).sort(),
    );
    // Helm's `test --logs` reads every test hook as a Pod: a ServiceAccount or Role hook would fail it.
    for (const file of ["tests/crds-established.yaml", "tests/operator-ready.yaml"]) {
      expect(read(file).match(/^kind: (\w+)$/gm)).toEqual(["kind: Pod"]);
    }
  });

  it.each(["tests/crds-established.yaml", "tests/operator-ready.yaml"])(
    "%s runs under restricted Pod Security and is a test hook kept for `helm test --logs` until the next run",
    (file) => {
      const text = read(file);
      expect(text).toContain(
        'securityContext: {{- include "remram-operator.testPodSecurity" . | nindent 4 }}',
      );
      expect(text).toContain(
        'securityContext: {{- include "remram-operator.testContainerSecurity" . | nindent 8 }}',
      );
      expect(text).toMatch(/helm\.sh\/hook: test\n/);
      expect(text).toMatch(/helm\.sh\/hook-delete-policy: before-hook-creation\n/);
      expect(text.startsWith("{{- if .Values.tests.enabled }}")).toBe(true);
    },
  );

  it("define restricted security contexts in the helpers", () => {
    const helpers = read("_helpers.tpl");
    const section = (name: string) =>
      load(helpers.match(new RegExp(`define "${name}" -\\}\\}\\n([\\s\\S]*?)\\{\\{- end`))?.[1] ?? "");
    expect(section("remram-operator.testPodSecurity")).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(section("remram-operator.testContainerSecurity")).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
    });
  });

  it("are admitted to the probe port by the NetworkPolicy through labels the operator's selector lacks", () => {
    const helpers = read("_helpers.tpl");
    const labelsOf = (name: string) =>
      load(
        (helpers.match(new RegExp(`define "${name}" -\\}\\}\\n([\\s\\S]*?)\\{\\{- end`))?.[1] ?? "").replace(
          /\{\{[^}]*\}\}/g,
          "x",
        ),
      ) as Record<string, string>;
    const testLabels = labelsOf("remram-operator.testLabels");
    const selector = labelsOf("remram-operator.selectorLabels");
    // The Deployment's ReplicaSet would adopt a pod its selector matches.
    expect(Object.entries(selector).every(([key, value]) => testLabels[key] === value)).toBe(false);
    const policy = read("networkpolicy.yaml");
    expect(policy).toContain(`app.kubernetes.io/name: ${testLabels["app.kubernetes.io/name"]}`);
  });
});
