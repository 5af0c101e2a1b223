/**
 * Building blocks shared by the four remram.io/v1alpha1 kinds. Every string and list is bounded: the API server's
 * CEL cost estimator rejects rules over unbounded values, and bounds keep objects far below etcd's size limit.
 */
import { approverName } from "@remram/contract";
import { z } from "zod";

export const group = "remram.io";
export const version = "v1alpha1";
export const apiVersion = `${group}/${version}`;

/** One `x-kubernetes-validations` entry: a CEL rule and the message the API server returns when it is false. */
export interface CelRule {
  rule: string;
  message: string;
  /** Where the error points, relative to the schema node carrying the rule, e.g. ".external". */
  fieldPath?: string;
  reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate";
  /** oldSelf is an optional (none on create), so the rule also runs on create and can tell it from an update. */
  optionalOldSelf?: boolean;
}

/** Attach CEL rules to a schema node; the CRD generator copies them verbatim into the OpenAPI schema. */
export function withCel<T extends z.ZodType>(schema: T, ...rules: CelRule[]): T {
  return schema.meta({ "x-kubernetes-validations": rules });
}

/**
 * A list the API server treats as a map keyed by `key` (merges under server-side apply, no duplicate keys); several
 * keys make the combination the key.
 */
export function listMap<T extends z.ZodType>(schema: T, key: string | readonly string[]): T {
  return schema.meta({
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": typeof key === "string" ? [key] : [...key],
  });
}

/** A list of unique scalars (a set under server-side apply). */
export function listSet<T extends z.ZodType>(schema: T): T {
  return schema.meta({ "x-kubernetes-list-type": "set" });
}

/** DNS-1123 label: the names of Kubernetes objects this API refers to. */
export const dnsLabel = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);

/** DNS-1123 subdomain (Secret names and the like). */
export const dnsSubdomain = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);

/** A Kubernetes resource quantity such as "20Gi" or "512Mi". */
export const quantity = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$/);

/** A container image reference, tag or digest included. */
export const imageRef = z
  .string()
  .min(1)
  .max(512)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9._\-/:@]*$/);

export const sha256Digest = z
  .string()
  .length(71)
  .regex(/^sha256:[a-f0-9]{64}$/);

/** A username as the API server reports it in request.userInfo.username. */
/** A Kubernetes user name: the contract's, so a name the API server admits is one Cortex commits. */
export const username = approverName;

export const timestamp = z.iso.datetime();

/** The appliance a schedule, policy or proposal belongs to (same namespace). */
export const applianceRef = z
  .object({ name: dnsLabel.describe("Name of the RemramAppliance in this namespace.") })
  .strict();

export const secretKeyRef = z
  .object({
    name: dnsSubdomain.describe("Secret in the appliance's namespace."),
    key: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[-._a-zA-Z0-9]+$/)
      .describe("Key inside the Secret."),
  })
  .strict();

export const storage = z
  .object({
    size: quantity.describe("Requested size of the PersistentVolumeClaim."),
    storageClassName: dnsSubdomain.optional().describe("StorageClass; the cluster default when unset."),
  })
  .strict();

/** metav1.Condition, field for field. */
export const condition = z
  .object({
    type: z
      .string()
      .min(1)
      .max(316)
      .regex(
        /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
      ),
    status: z.enum(["True", "False", "Unknown"]),
    observedGeneration: z.int().min(0).optional(),
    lastTransitionTime: timestamp,
    reason: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/),
    message: z.string().max(32768),
  })
  .strict();

/** An appliance reports 17 condition types (status.ts, data-care.ts); room for a few more. */
export const conditions = listMap(z.array(condition).max(24), "type");

export type Condition = z.infer<typeof condition>;
export type ConditionStatus = Condition["status"];

/** Metadata every kind's CRD needs beyond its schemas. */
export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  /** CEL over metadata.name (the root's rule): names embedded in children's names, or a name tied to the spec. */
  metadataNameRule?: CelRule;
  printerColumns: PrinterColumn[];
}

/** The Ready / Reason columns every kind shows, before its domain columns. */
export const readyColumns: PrinterColumn[] = [
  { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: "Reason", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
];

export const ageColumn: PrinterColumn = {
  name: "Age",
  type: "date",
  jsonPath: ".metadata.creationTimestamp",
};

/** Metadata of a custom object as the operator reads it (the API server fills these). */
export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  generation: number;
  resourceVersion: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}
