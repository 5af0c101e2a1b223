import { join } from "node:path";
import { build } from "esbuild";
import { bundlePath, hooksRoot } from "./paths.js";

/**
 * `npm run build -w hooks`: one self-contained ESM file, dist/index.js, with zod inlined. OpenClaw copies a
 * path-loaded plugin into its own capture folder before importing it, where the workspace's node_modules
 * are out of reach; a bundle has nothing left to resolve but node: built-ins.
 */
const result = await build({
  entryPoints: [join(hooksRoot, "src", "index.ts")],
  outfile: bundlePath,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  sourcemap: "linked",
  legalComments: "none",
  minify: true,
  logLevel: "warning",
  metafile: true,
});
const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
console.log(`bundled ${bundlePath} (${Math.round(bytes / 1024)} KiB with source map)`);
