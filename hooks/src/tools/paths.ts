import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The hooks package folder (the plugin root OpenClaw loads), found from this file. */
export const hooksRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const manifestPath = join(hooksRoot, "openclaw.plugin.json");
export const bundlePath = join(hooksRoot, "dist", "index.js");
/** The source of Cortex's contract, bundled into the plugin without building the contract package first. */
export const contractSource = join(hooksRoot, "..", "contract", "src", "index.ts");
