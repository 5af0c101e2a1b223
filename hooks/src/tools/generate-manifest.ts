import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderManifest } from "./manifest.js";
import { hooksRoot, manifestPath } from "./paths.js";

// `npm run manifest -w hooks`: rewrite openclaw.plugin.json from the zod config schema.
const { version } = JSON.parse(readFileSync(join(hooksRoot, "package.json"), "utf8")) as { version: string };
writeFileSync(manifestPath, renderManifest(version));
console.log(`wrote ${manifestPath}`);
