import { join } from "node:path";
import { build } from "esbuild";
import { bundlePath, contractSource, hooksRoot } from "./paths.js";

/**
 * One self-contained ESM file, dist/index.js, with zod and Cortex's contract (@remram/contract, from its source)
 * inlined. OpenClaw copies a path-loaded plugin into its own capture folder before importing it, where the
 * workspace's node_modules are out of reach; a bundle has nothing left to resolve but node: built-ins. Returns
 * the bundle's size in bytes.
 */
export async function bundlePlugin(): Promise<number> {
  const result = await build({
    entryPoints: [join(hooksRoot, "src", "index.ts")],
    outfile: bundlePath,
    bundle: true,
    alias: { "@remram/contract": contractSource },
    platform: "node",
    format: "esm",
    target: "node24",
    sourcemap: "linked",
    legalComments: "none",
    minify: true,
    logLevel: "warning",
    metafile: true,
  });
  return (
    result.metafile.outputs[Object.keys(result.metafile.outputs).find((name) => name.endsWith(".js")) ?? ""]
      ?.bytes ?? 0
  );
}
