/**
 * A knowledge index as the release before template 4 built it (statements analysed by plain `english`, `_meta`
 * saying version 3), made from the live one: the data a rebuild test or bench upgrades from. Cortex writes the
 * documents first, so they are exactly what it stores.
 */
import { type CortexStore, request } from "../store/client.js";
import { aliasedIndices, moveAlias } from "../store/generations.js";
import { waitForTask } from "../store/rebuild.js";

type Properties = Record<string, { analyzer?: string; properties?: Properties }>;

/** Pure: the mapping properties with every custom analyzer put back to `english`. */
export function withPlainEnglish(properties: Properties): Properties {
  return Object.fromEntries(
    Object.entries(properties).map(([name, field]) => {
      const next = { ...field };
      if (next.analyzer !== undefined) next.analyzer = "english";
      if (next.properties !== undefined) next.properties = withPlainEnglish(next.properties);
      return [name, next];
    }),
  );
}

/** Move the knowledge alias onto a v3-shaped copy of its index and delete the v4 one; returns the copy's name. */
export async function downgradeKnowledgeIndex(store: CortexStore, version = 3): Promise<string> {
  const alias = store.indices.knowledge;
  const [current] = await aliasedIndices(store, alias);
  if (current === undefined) throw new Error(`no index behind ${alias}`);
  const previous = `${alias}-v${version}`;
  const { body } = await request<Record<string, { mappings: { properties: Properties } }>>(
    store,
    "GET",
    `/${current}/_mapping`,
  );
  const properties = body[current]?.mappings.properties ?? {};
  // The current template matches `<alias>-v*` and would give the copy its analyzers: it goes while the copy is made
  // (Cortex puts it back at start).
  await request(store, "DELETE", `/_index_template/${alias}`, undefined, { ignore: [404] });
  await request(store, "PUT", `/${previous}`, {
    settings: { index: { number_of_shards: 1, number_of_replicas: 0 } },
    mappings: {
      dynamic: false,
      _meta: { templateVersion: version, owner: "remram-cortex" },
      properties: withPlainEnglish(properties),
    },
  });
  // As a task: a large synchronous _reindex answers with more response headers than Node's parser takes.
  const { body: started } = await request<{ task: string }>(
    store,
    "POST",
    "/_reindex?wait_for_completion=false",
    { source: { index: current, size: 1_000 }, dest: { index: previous } },
  );
  const task = await waitForTask(store, started.task, 1_000);
  if ((task?.response?.failures ?? []).length > 0)
    throw new Error(`downgrade copy failed: ${JSON.stringify(task)}`);
  await request(store, "POST", `/${previous}/_refresh`);
  await moveAlias(store, alias, current, previous);
  await request(store, "DELETE", `/${current}`);
  return previous;
}
