/** What the erasure suite reads to look for a person's words: every store of one Cortex, raw. */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { FastifyInstance } from "fastify";

export const git = async (dir: string, ...args: string[]) =>
  (await promisify(execFile)("git", args, { cwd: dir, maxBuffer: 256 * 1024 * 1024 })).stdout;

function prefixOf(app: FastifyInstance): string {
  return app.cortex.store.indices.knowledge.replace(/-knowledge$/, "");
}

/** Every document of every OpenSearch index of this Cortex, read raw (unindexed fields included). */
export async function openSearchText(app: FastifyInstance): Promise<string> {
  const { client } = app.cortex.store;
  const indices = `/${prefixOf(app)}-*`;
  await client.transport.request({ method: "POST", path: `${indices}/_refresh` });
  const { body } = await client.transport.request({
    method: "POST",
    path: `${indices}/_search`,
    body: { size: 10_000, query: { match_all: {} } },
  });
  return JSON.stringify(body);
}

/** Which of `needles` the files under `roots` hold, as bytes (binary files included), with where. */
export async function filesHolding(roots: readonly string[], needles: Iterable<string>): Promise<string[]> {
  const wanted = [...needles];
  const found: string[] = [];
  for (const root of roots) {
    for (const entry of await readdir(root, { withFileTypes: true, recursive: true }).catch(() => [])) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      // A file may go (a merge, a translog roll) between listing and reading.
      const text = (await readFile(path).catch(() => Buffer.alloc(0))).toString("latin1");
      found.push(...wanted.filter((needle) => text.includes(needle)).map((needle) => `${needle} in ${path}`));
    }
  }
  return found;
}

/**
 * The folders of this Cortex's indices in OpenSearch's data path (translog and segment files), or undefined when
 * OpenSearch runs where this host cannot read its files (a container).
 */
export async function indexFolders(app: FastifyInstance): Promise<string[] | undefined> {
  const { client } = app.cortex.store;
  type Nodes = { nodes: Record<string, { settings: { path: { data: string } } }> };
  const nodes = (await client.transport.request({ method: "GET", path: "/_nodes/settings" })).body as Nodes;
  const data = String(Object.values(nodes.nodes)[0]?.settings.path.data);
  if (!existsSync(data)) return undefined;
  type Settings = Record<string, { settings: { index: { uuid: string } } }>;
  const { body } = await client.transport.request({ method: "GET", path: `/${prefixOf(app)}-*/_settings` });
  return Object.values(body as Settings).map((i) => join(data, "nodes/0/indices", i.settings.index.uuid));
}
