/**
 * The ValidatingAdmissionPolicy that guards ArtifactProposal approvals. CRD CEL cannot see who is asking, so the
 * identity rules live here (in-process CEL, no webhook): the approver needs the custom `approve` verb, must record
 * their own name, may not be the proposer, and a decision is True-only, single and final. Everything else in status
 * belongs to the operator alone.
 */
import { group, version } from "./v1alpha1/common.js";

export const approvalPolicyName = "remram-artifactproposal-approval";

/** The identity of the operator's ServiceAccount, as request.userInfo.username reports it. */
export function operatorUsername(namespace: string, serviceAccount: string): string {
  return `system:serviceaccount:${namespace}:${serviceAccount}`;
}

const decisionFilter = "filter(c, c.type == 'Approved' || c.type == 'Denied')";
const otherConditionsFilter = "filter(c, c.type != 'Approved' && c.type != 'Denied')";

interface Validation {
  expression: string;
  message?: string;
  messageExpression?: string;
  reason: "Forbidden" | "Invalid";
}

export function approvalValidations(): Validation[] {
  return [
    {
      expression: "request.operation != 'CREATE' || object.spec.proposedBy == request.userInfo.username",
      messageExpression: "'spec.proposedBy must be the creating user (' + request.userInfo.username + ')'",
      reason: "Forbidden",
    },
    {
      expression: "!variables.isStatusUpdate || variables.isOperator || variables.otherStatusUnchanged",
      message:
        "only the remram operator may change status fields other than status.approval and the Approved/Denied conditions",
      reason: "Forbidden",
    },
    {
      expression:
        "!variables.decisionChanged || authorizer.group('remram.io').resource('artifactproposals').namespace(object.metadata.namespace).name(object.metadata.name).check('approve').allowed()",
      messageExpression:
        "'user ' + request.userInfo.username + ' may not approve or deny artifactproposal ' + object.metadata.name + ': it needs the approve verb on artifactproposals in ' + object.metadata.namespace",
      reason: "Forbidden",
    },
    {
      expression:
        "!variables.decisionChanged || (variables.newDecisions.size() == 1 && object.?status.?approval.?decision.orValue('') == variables.newDecisions[0].type)",
      message:
        "a decision sets one Approved or Denied condition together with status.approval naming the same decision",
      reason: "Invalid",
    },
    {
      expression:
        "!variables.decisionChanged || object.?status.?approval.?by.orValue('') == request.userInfo.username",
      messageExpression:
        "'status.approval.by must be the approving user (' + request.userInfo.username + ')'",
      reason: "Forbidden",
    },
    {
      expression:
        "!variables.decisionChanged || object.?status.?approval.?by.orValue('') != object.spec.proposedBy",
      message: "the proposer cannot approve or deny their own proposal",
      reason: "Forbidden",
    },
    {
      expression:
        "!variables.decisionChanged || (object.?status.?approval.?generation.orValue(0) == object.metadata.generation && object.?status.?approval.?proposedDigest.orValue('') == object.spec.proposedDigest)",
      message: "status.approval must name the current metadata.generation and spec.proposedDigest",
      reason: "Invalid",
    },
    {
      expression: "variables.newDecisions.all(c, c.status == 'True')",
      message: "Approved and Denied conditions can only be True",
      reason: "Invalid",
    },
    {
      expression: "variables.newDecisions.size() <= 1",
      message: "Approved and Denied are mutually exclusive",
      reason: "Invalid",
    },
    {
      expression:
        "!variables.isStatusUpdate || variables.oldDecisions.size() == 0 || (variables.newDecisions == variables.oldDecisions && object.?status.?approval == oldObject.?status.?approval)",
      message: "a decision is final: Approved, Denied and status.approval cannot change once set",
      reason: "Forbidden",
    },
  ];
}

export function buildApprovalPolicy(operatorIdentity: string): Record<string, unknown> {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: approvalPolicyName, labels: { "app.kubernetes.io/part-of": "remram" } },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [group],
            apiVersions: [version],
            operations: ["CREATE", "UPDATE"],
            resources: ["artifactproposals", "artifactproposals/status"],
          },
        ],
      },
      variables: [
        { name: "isOperator", expression: `request.userInfo.username == '${operatorIdentity}'` },
        {
          name: "isStatusUpdate",
          expression: "request.operation == 'UPDATE' && request.subResource == 'status'",
        },
        { name: "newDecisions", expression: `object.?status.?conditions.orValue([]).${decisionFilter}` },
        {
          name: "oldDecisions",
          expression: `request.operation == 'UPDATE' ? oldObject.?status.?conditions.orValue([]).${decisionFilter} : []`,
        },
        {
          name: "decisionChanged",
          expression:
            "variables.isStatusUpdate && (variables.newDecisions != variables.oldDecisions || object.?status.?approval != oldObject.?status.?approval)",
        },
        {
          name: "otherStatusUnchanged",
          expression: [
            "object.?status.?phase == oldObject.?status.?phase",
            "object.?status.?observedGeneration == oldObject.?status.?observedGeneration",
            "object.?status.?promotion == oldObject.?status.?promotion",
            `object.?status.?conditions.orValue([]).${otherConditionsFilter} == oldObject.?status.?conditions.orValue([]).${otherConditionsFilter}`,
          ].join(" && "),
        },
      ],
      validations: approvalValidations(),
    },
  };
}

export function buildApprovalPolicyBinding(): Record<string, unknown> {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: approvalPolicyName, labels: { "app.kubernetes.io/part-of": "remram" } },
    spec: { policyName: approvalPolicyName, validationActions: ["Deny"] },
  };
}
