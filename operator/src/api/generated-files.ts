/**
 * Every file `npm run crds -w operator` writes, as (repository-relative path → content). Pure, so the drift test can
 * compare it with what is committed.
 */
import { buildApprovalPolicy, buildApprovalPolicyBinding, operatorUsername } from "./approval-policy.js";
import { buildCrd, renderYaml } from "./crd.js";
import { allKinds } from "./v1alpha1/index.js";

/** Where the chart installs the operator unless told otherwise; crds/ assumes it too. */
export const defaultOperatorNamespace = "remram-system";
export const defaultOperatorServiceAccount = "remram-operator";

export function generatedFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const kind of allKinds) {
    files.set(`crds/remram.io_${kind.plural}.yaml`, renderYaml(buildCrd(kind)));
  }
  const identity = operatorUsername(defaultOperatorNamespace, defaultOperatorServiceAccount);
  files.set(
    "crds/artifactproposal-approval-policy.yaml",
    `${renderYaml(buildApprovalPolicy(identity))}---\n${renderYaml(buildApprovalPolicyBinding()).replace(/^#.*\n/, "")}`,
  );
  return files;
}
