/**
 * The node's images: the node's own parts (pause, CoreDNS, local-path, busybox) from hack/install-node-parts.sh and
 * the appliance's images (operator, Cortex, hooks, gateway and the OpenSearch and Ollama stand-ins, and the previous
 * release's operator, Cortex and hooks) from hack/install-images.sh, both docker-archive files in the cache, imported into the node's containerd.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { cacheDir } from "../../paths.js";
import type { AppImages } from "../types.js";

const run = promisify(execFile);

/** Image archives written by hack/install-node-parts.sh. */
export const nodeImagesDir = join(cacheDir, "images");
/** Image archives and their names (images.env) written by hack/install-images.sh. */
export const appImagesDir = join(nodeImagesDir, "app");

const nodePartsHint = "run `bash hack/install-node-parts.sh` (or `make setup`)";
const appImagesHint = "run `make images` (or `make setup`)";

export interface ImageArchive {
  file: string;
  tags: string[];
}

/** RepoTags of each image archive (`tar -xOf x.tar manifest.json`), so the harness needs no image list of its own. */
async function archivesIn(dir: string, hint: string): Promise<ImageArchive[]> {
  if (!existsSync(dir)) throw new Error(`no image archives in ${dir}: ${hint}`);
  const files = readdirSync(dir).filter((name) => name.endsWith(".tar"));
  if (files.length === 0) throw new Error(`no image archives in ${dir}: ${hint}`);
  return Promise.all(
    files.map(async (name) => {
      const file = join(dir, name);
      const { stdout } = await run("tar", ["-xOf", file, "manifest.json"]);
      const manifest = JSON.parse(stdout) as { RepoTags?: string[] }[];
      return { file, tags: manifest.flatMap((entry) => entry.RepoTags ?? []) };
    }),
  );
}

export const nodePartArchives = (): Promise<ImageArchive[]> => archivesIn(nodeImagesDir, nodePartsHint);
export const appArchives = (): Promise<ImageArchive[]> => archivesIn(appImagesDir, appImagesHint);

/** The tag among the node's part archives that starts with `prefix`; a clear error naming the installer if none. */
export function imageTagged(archives: readonly ImageArchive[], prefix: string): string {
  const tag = archives.flatMap((archive) => archive.tags).find((candidate) => candidate.startsWith(prefix));
  if (!tag) throw new Error(`no image ${prefix}* among the archives in ${nodeImagesDir}: ${nodePartsHint}`);
  return tag;
}

/** The appliance's image names from images.env; every one must be among the archives' tags. */
export function parseAppImages(imagesEnv: string, archives: readonly ImageArchive[]): AppImages {
  const tags = new Set(archives.flatMap((archive) => archive.tags));
  const setting = (key: string): string => {
    const value = new RegExp(`^${key}=(.+)$`, "m").exec(imagesEnv)?.[1]?.trim();
    if (!value) throw new Error(`${join(appImagesDir, "images.env")} has no ${key}: ${appImagesHint}`);
    return value;
  };
  const image = (key: string): string => {
    const value = setting(key);
    if (!tags.has(value)) throw new Error(`no archive in ${appImagesDir} holds ${value}: ${appImagesHint}`);
    return value;
  };
  return {
    operator: image("REMRAM_IMAGE_OPERATOR"),
    cortex: image("REMRAM_IMAGE_CORTEX"),
    app: image("REMRAM_IMAGE_APP"),
    hooks: image("REMRAM_IMAGE_HOOKS"),
    gateway: image("REMRAM_IMAGE_GATEWAY"),
    opensearch: image("REMRAM_IMAGE_OPENSEARCH"),
    ollama: image("REMRAM_IMAGE_OLLAMA"),
    previous: {
      commit: setting("REMRAM_PREVIOUS_COMMIT"),
      chart: setting("REMRAM_PREVIOUS_CHART"),
      operator: image("REMRAM_PREVIOUS_IMAGE_OPERATOR"),
      cortex: image("REMRAM_PREVIOUS_IMAGE_CORTEX"),
      hooks: image("REMRAM_PREVIOUS_IMAGE_HOOKS"),
    },
  };
}

export function readAppImages(archives: readonly ImageArchive[]): AppImages {
  const file = join(appImagesDir, "images.env");
  if (!existsSync(file)) throw new Error(`${file} is missing: ${appImagesHint}`);
  return parseAppImages(readFileSync(file, "utf8"), archives);
}

/** Import archives one after another (parallel imports only compete for the same disk). */
export async function importImages(
  containerdSocket: string,
  archives: readonly ImageArchive[],
): Promise<void> {
  for (const archive of archives) {
    await run("ctr", ["--address", containerdSocket, "-n", "k8s.io", "images", "import", archive.file], {
      maxBuffer: 4 * 1024 * 1024,
    }).catch((error: unknown) => {
      const detail = error instanceof Error ? error.message : String(error);
      throw new Error(`importing ${archive.file} into the node's containerd failed: ${detail}`);
    });
  }
}
