/**
 * `npm run build:web -w app`: the browser pages into app/dist/web: index.html, app.js (Preact and the pages, one
 * minified ES2022 module), app.css (Pico CSS and web/src/app.css), their source maps, and a gzip copy of each
 * text file that the server sends to browsers that accept it (static.ts). Prints each file's size.
 */
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const web = fileURLToPath(new URL(".", import.meta.url));
const out = fileURLToPath(new URL("../dist/web/", import.meta.url));

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });

const common = {
  bundle: true,
  minify: true,
  sourcemap: "linked",
  target: "es2022",
  charset: "utf8",
  logLevel: "warning",
  absWorkingDir: web,
} as const;

await Promise.all([
  build({
    ...common,
    entryPoints: { app: join(web, "src/main.tsx") },
    outdir: out,
    format: "esm",
    platform: "browser",
    tsconfig: join(web, "tsconfig.json"),
    jsx: "automatic",
    jsxImportSource: "preact",
  }),
  build({ ...common, entryPoints: { app: join(web, "src/app.css") }, outdir: out }),
]);

for (const name of await readdir(join(web, "public")))
  await copyFile(join(web, "public", name), join(out, name));

const compressible = /\.(html|js|css|svg|map)$/;
const rows: string[] = [];
for (const name of (await readdir(out)).sort()) {
  if (!compressible.test(name)) continue;
  const body = await readFile(join(out, name));
  const gzipped = gzipSync(body, { level: 9 });
  await writeFile(join(out, `${name}.gz`), gzipped);
  if (!name.endsWith(".map"))
    rows.push(`  ${name.padEnd(12)} ${kib(body.length)} (gzip ${kib(gzipped.length)})`);
}
// Every page needs these three; esbuild reports its own errors (and rejects above).
for (const name of ["index.html", "app.js", "app.css"]) await stat(join(out, name));
console.log(`built the pages into ${out}:\n${rows.join("\n")}`);

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1).padStart(6)} KiB`;
}
