/**
 * A release image's build context: exactly the files its Dockerfile copies, taken from the checkout at the same
 * paths (or, for what make setup fetches rather than the repository holds, from the cache folder the image names). The test bed does the same (hack/install-images.sh assembles each context from hard links), so neither
 * sends the repository's node_modules, .git or .remram to the builder, and a file the Dockerfile needs but the
 * checkout lacks (a dist/ not built yet) fails here, with its name, instead of deep inside a multi-arch build.
 */
import { cpSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, normalize } from "node:path";
import { repoRoot } from "./plan.js";

/** The Dockerfile's instructions, continuation lines joined, comments and blank lines dropped. */
export function instructions(dockerfile: string): string[] {
  const joined: string[] = [];
  let pending = "";
  for (const raw of dockerfile.split("\n")) {
    const line = raw.trimEnd();
    if (pending === "" && /^\s*(#|$)/.test(line)) continue;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    joined.push(`${pending}${line}`.trim());
    pending = "";
  }
  if (pending.trim() !== "") joined.push(pending.trim());
  return joined;
}

/** The context paths a Dockerfile's COPY and ADD instructions read (not those copied from another stage). */
export function copySources(dockerfile: string): string[] {
  const sources = new Set<string>();
  for (const instruction of instructions(dockerfile)) {
    const match = /^(COPY|ADD)\s+(.*)$/i.exec(instruction);
    if (match?.[2] === undefined) continue;
    let rest = match[2];
    const flags: string[] = [];
    for (let flag = /^--\S+\s+/.exec(rest); flag !== null; flag = /^--\S+\s+/.exec(rest)) {
      flags.push(flag[0].trim());
      rest = rest.slice(flag[0].length);
    }
    if (flags.some((flag) => flag.startsWith("--from="))) continue;
    const words = rest.startsWith("[") ? (JSON.parse(rest) as string[]) : rest.split(/\s+/);
    if (words.length < 2) throw new Error(`${instruction}: a source and a destination are needed`);
    for (const source of words.slice(0, -1)) {
      if (/[*?[]/.test(source)) throw new Error(`${instruction}: wildcards are not staged (name the files)`);
      if (/^[a-z]+:\/\//i.test(source)) throw new Error(`${instruction}: remote sources are not staged`);
      const path = normalize(source).replace(/\/+$/, "");
      if (isAbsolute(path) || path === ".." || path.startsWith("../") || path === ".")
        throw new Error(`${instruction}: ${source} is not a path inside the context`);
      sources.add(path);
    }
  }
  return [...sources].sort();
}

/**
 * Copy what `dockerfile` (relative to `root`) reads into `out`, each at its path; returns those paths. A path in
 * `fetched` comes from the folder it names (what make setup fetched), the others from the checkout. A missing one
 * is an error naming it.
 */
export function stageContext(
  dockerfile: string,
  out: string,
  root = repoRoot,
  fetched: Record<string, string> = {},
): string[] {
  const sources = copySources(readFileSync(join(root, dockerfile), "utf8"));
  const origin = (source: string) => fetched[source] ?? join(root, source);
  const missing = sources.filter((source) => !existsSync(origin(source)));
  const unbuilt = missing.filter((source) => fetched[source] === undefined);
  if (unbuilt.length > 0)
    throw new Error(
      `${dockerfile} copies ${unbuilt.join(", ")}, missing from the checkout (run npm run build -w contract -w cortex -w operator -w hooks first)`,
    );
  if (missing.length > 0)
    throw new Error(
      `${dockerfile} copies ${missing.map((source) => `${source} (from ${fetched[source]})`).join(", ")}, not fetched yet (run make setup, or the installer in hack/ that fetches it)`,
    );
  mkdirSync(out, { recursive: true });
  for (const source of sources) {
    mkdirSync(dirname(join(out, source)), { recursive: true });
    cpSync(origin(source), join(out, source), { recursive: true, dereference: true });
  }
  return sources;
}
