import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderManifest } from "./manifest.js";
import { hooksRoot, manifestPath } from "./paths.js";

// `npm run manifest -w hooks`: rewrite openclaw.plugin.json from the zod config schema, in Biome's layout.
const { version } = JSON.parse(readFileSync(join(hooksRoot, "package.json"), "utf8")) as { version: string };
writeFileSync(manifestPath, renderManifest(version));
execFileSync(join(hooksRoot, "..", "node_modules", ".bin", "biome"), ["format", "--write", manifestPath], {
  stdio: "ignore",
});
console.log(`wrote ${manifestPath}`);
