import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { hooksRoot } from "./paths.js";

/**
 * `npm run check:sdk -w hooks`: type-check src/openclaw-api.ts (the structural copy of the SDK types this
 * plugin uses) against the real `openclaw` package the test bed installed, so an upgrade that changes a
 * hook's shape fails here instead of at runtime. Needs hack/install-openclaw.sh to have run (or
 * OPENCLAW_PACKAGE_DIR pointing at an unpacked package).
 */
const cache = process.env.REMRAM_CACHE ?? join(homedir(), ".cache", "remram");
const versions = execFileSync("bash", [
  "-c",
  `source "${join(hooksRoot, "..", "hack", "versions.env")}"; echo "$OPENCLAW_VERSION"`,
])
  .toString()
  .trim();
const packageDir =
  process.env.OPENCLAW_PACKAGE_DIR ?? join(cache, `openclaw-${versions}`, "node_modules", "openclaw");
if (!existsSync(join(packageDir, "package.json"))) {
  console.error(
    `no openclaw package at ${packageDir}: run hack/install-openclaw.sh or set OPENCLAW_PACKAGE_DIR`,
  );
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), "remram-sdk-check-"));
try {
  mkdirSync(join(work, "node_modules"));
  symlinkSync(packageDir, join(work, "node_modules", "openclaw"));
  copyFileSync(join(hooksRoot, "src", "openclaw-api.ts"), join(work, "openclaw-api.ts"));
  writeFileSync(join(work, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(
    join(work, "conformance.ts"),
    [
      'import type { OpenClawPluginApi, OpenClawPluginDefinition } from "openclaw/plugin-sdk/plugin-entry";',
      'import type { HookHandlers, HostPluginApi, PluginDefinition } from "./openclaw-api.js";',
      "declare const realApi: OpenClawPluginApi;",
      "declare const ourHandlers: HookHandlers;",
      "declare const ourEntry: PluginDefinition;",
      "// Everything but on() that the host hands register() must satisfy what the plugin expects of it.",
      'export const hostApi: Omit<HostPluginApi, "on"> = realApi;',
      "// Each handler the plugin registers must be one the host's on() accepts for that hook.",
      'realApi.on("before_model_resolve", ourHandlers.before_model_resolve);',
      'realApi.on("before_prompt_build", ourHandlers.before_prompt_build);',
      'realApi.on("tool_result_persist", ourHandlers.tool_result_persist);',
      'realApi.on("agent_end", ourHandlers.agent_end);',
      'realApi.on("before_compaction", ourHandlers.before_compaction);',
      'realApi.on("before_reset", ourHandlers.before_reset);',
      'realApi.on("session_end", ourHandlers.session_end);',
      'realApi.on("gateway_stop", ourHandlers.gateway_stop);',
      'export const entry: Pick<OpenClawPluginDefinition, "id" | "name" | "description"> = ourEntry;',
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(work, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2024",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        types: [],
        lib: ["ES2024", "DOM"],
      },
      files: ["conformance.ts"],
    }),
  );
  const tsc = join(hooksRoot, "..", "node_modules", "typescript", "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", work], { stdio: "inherit" });
  } catch {
    console.error(`src/openclaw-api.ts no longer matches openclaw at ${packageDir}`);
    process.exit(1);
  }
  console.log(`src/openclaw-api.ts conforms to ${packageDir}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
