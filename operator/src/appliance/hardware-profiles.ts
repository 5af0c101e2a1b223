/**
 * Hardware profiles (hardware-profiles/*.yaml): how big each component is on a given box, and which box `auto`
 * means, from node allocatable and the GPU Feature Discovery labels.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { z } from "zod";
import { quantity } from "../api/v1alpha1/common.js";
import type { hardwareProfileNames } from "../api/v1alpha1/remram-appliance.js";

const resources = z.object({ cpu: quantity, memory: quantity }).strict();
const model = z.string().min(1).max(128);

export const hardwareProfileSchema = z
  .object({
    name: z.enum(["moltbox-baseline", "cpu-only", "large-gpu"]),
    description: z.string().max(512),
    match: z
      .object({
        gpuCount: z.int().min(0),
        minGpuMemoryMiB: z.int().min(0).optional(),
        maxGpuMemoryMiB: z.int().min(0).optional(),
      })
      .strict(),
    opensearch: z.object({ resources, storage: quantity }).strict(),
    ollama: z
      .object({
        gpu: z.boolean(),
        resources,
        storage: quantity,
        models: z.object({ routing: model, reflection: model, embedding: model }).strict(),
      })
      .strict(),
    cortex: z.object({ resources }).strict(),
    gateway: z.object({ resources }).strict(),
    workspace: z.object({ storage: quantity }).strict(),
  })
  .strict();

export type HardwareProfile = z.infer<typeof hardwareProfileSchema>;
export type ProfileName = Exclude<(typeof hardwareProfileNames)[number], "auto">;

export function parseHardwareProfile(text: string, source: string): HardwareProfile {
  const parsed = hardwareProfileSchema.safeParse(load(text));
  if (!parsed.success) throw new Error(`${source}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export function loadHardwareProfiles(directory: string): Map<ProfileName, HardwareProfile> {
  const profiles = new Map<ProfileName, HardwareProfile>();
  for (const file of readdirSync(directory)
    .filter((name) => name.endsWith(".yaml"))
    .sort()) {
    const profile = parseHardwareProfile(readFileSync(join(directory, file), "utf8"), file);
    profiles.set(profile.name, profile);
  }
  return profiles;
}

/** What the cluster's nodes offer, reduced to what profile selection and GPUAvailable need. */
export interface GpuInventory {
  /** Sum of allocatable nvidia.com/gpu over schedulable nodes. */
  count: number;
  /** Largest nvidia.com/gpu.memory (MiB) label among GPU nodes, when GFD set it. */
  memoryMiB?: number;
  product?: string;
  /** A node advertises NVIDIA hardware through labels even if no device plugin runs yet. */
  hardwareLabelled: boolean;
}

export interface NodeLike {
  metadata?: { labels?: Record<string, string> };
  spec?: { unschedulable?: boolean };
  status?: { allocatable?: Record<string, string> };
}

/** Labels (GPU Feature Discovery, Node Feature Discovery) that mark NVIDIA hardware, with or without a device plugin. */
export const gpuHardwareLabels = ["nvidia.com/gpu.present", "feature.node.kubernetes.io/pci-10de.present"];

export function gpuInventory(nodes: readonly NodeLike[]): GpuInventory {
  let count = 0;
  let memoryMiB: number | undefined;
  let product: string | undefined;
  let hardwareLabelled = false;
  for (const node of nodes) {
    if (node.spec?.unschedulable) continue;
    const labels = node.metadata?.labels ?? {};
    if (gpuHardwareLabels.some((label) => labels[label] === "true")) hardwareLabelled = true;
    const gpus = Number.parseInt(node.status?.allocatable?.["nvidia.com/gpu"] ?? "0", 10);
    if (!(gpus > 0)) continue;
    count += gpus;
    const memory = Number.parseInt(labels["nvidia.com/gpu.memory"] ?? "", 10);
    if (Number.isFinite(memory) && (memoryMiB === undefined || memory > memoryMiB)) memoryMiB = memory;
    product ??= labels["nvidia.com/gpu.product"];
  }
  return {
    count,
    hardwareLabelled,
    ...(memoryMiB !== undefined ? { memoryMiB } : {}),
    ...(product ? { product } : {}),
  };
}

/** `auto`: no GPU → cpu-only; a GPU with ≥ 24 GiB → large-gpu; any other GPU (or unknown memory) → the baseline. */
export function selectProfile(inventory: GpuInventory): ProfileName {
  if (inventory.count === 0) return "cpu-only";
  if (inventory.memoryMiB !== undefined && inventory.memoryMiB >= 24576) return "large-gpu";
  return "moltbox-baseline";
}

/** Mebibytes of a memory quantity ("8Gi" → 8192); used for the OpenSearch heap. */
export function quantityToMiB(value: string): number {
  const match = /^([0-9.]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(value);
  if (match === null) throw new Error(`not a memory quantity: ${value}`);
  const amount = Number.parseFloat(match[1] as string);
  const factors: Record<string, number> = {
    Ki: 1 / 1024,
    Mi: 1,
    Gi: 1024,
    Ti: 1024 * 1024,
    k: 1000 / 1048576,
    M: 1e6 / 1048576,
    G: 1e9 / 1048576,
    T: 1e12 / 1048576,
  };
  return Math.floor(amount * (match[2] === undefined ? 1 / 1048576 : (factors[match[2]] as number)));
}
