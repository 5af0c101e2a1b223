/** Cortex's indices in OpenSearch: set up from the versioned templates, and whether they are there. */
import { type CortexStore, request } from "./client.js";
import {
  chunkTemplate,
  concreteIndex,
  dimensionsTemplate,
  knowledgeTemplate,
  templateVersion,
  vectorsTemplate,
} from "./templates.js";

/**
 * Put the versioned templates and create any missing index (the alias comes from the template). An index built
 * from an older template version gets the new template's mappings added in place.
 */
export async function ensureIndices(store: CortexStore): Promise<void> {
  const { indices, embedDimensions } = store;
  const templates: [string, unknown][] = [
    [indices.knowledge, knowledgeTemplate(indices.knowledge)],
    [indices.vectors, vectorsTemplate(indices.vectors, embedDimensions)],
    [indices.chunks, chunkTemplate(indices.chunks, embedDimensions)],
    [indices.dimensions, dimensionsTemplate(indices.dimensions)],
  ];
  for (const [alias, template] of templates) {
    await request(store, "PUT", `/_index_template/${alias}`, template, { retries: 2 });
    const existing = await request<Record<string, { mappings?: { _meta?: { templateVersion?: number } } }>>(
      store,
      "GET",
      `/${alias}/_mapping`,
      undefined,
      { ignore: [404] },
    );
    if (existing.statusCode === 404) {
      await request(store, "PUT", `/${concreteIndex(alias)}`, undefined, { ignore: [400], retries: 2 });
      continue;
    }
    for (const [index, mapping] of Object.entries(existing.body)) {
      if ((mapping.mappings?._meta?.templateVersion ?? 0) < templateVersion) {
        const mappings = (template as { template: { mappings: unknown } }).template.mappings;
        await request(store, "PUT", `/${index}/_mapping`, mappings);
      }
    }
  }
  await request(
    store,
    "GET",
    `/_cluster/health/${indices.knowledge},${indices.vectors},${indices.chunks}?wait_for_status=green&timeout=30s`,
  );
}

export async function indicesExist(store: CortexStore, timeoutMs: number): Promise<boolean> {
  try {
    const { statusCode } = await request(
      store,
      "HEAD",
      `/${store.indices.knowledge},${store.indices.vectors},${store.indices.chunks},${store.indices.dimensions}`,
      undefined,
      { timeoutMs, ignore: [404] },
    );
    return statusCode === 200;
  } catch {
    return false;
  }
}
