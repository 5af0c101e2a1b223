/** Cortex's indices in OpenSearch: set up from the versioned templates, and whether they are there. */
import { type CortexStore, request } from "./client.js";
import { copyWithoutVectors, ensureGeneration, type GenerationState, moveAlias } from "./generations.js";
import {
  chunkTemplate,
  concreteIndex,
  dimensionsTemplate,
  knowledgeRebuiltBelow,
  knowledgeTemplate,
  templateVersion,
  vectorsTemplate,
} from "./templates.js";

/** The generations of the two indices that hold vectors, as start-up left them. */
export interface EmbeddingIndices {
  vectors: GenerationState;
  chunks: GenerationState;
}

type Template = { template: { mappings: unknown } };

/** Add the template's mappings to an index built from an older template version (additive changes). */
async function addMappings(store: CortexStore, index: string, template: Template): Promise<void> {
  await request(store, "PUT", `/${index}/_mapping`, template.template.mappings);
}

/**
 * Put the versioned templates and create any missing index under its alias. An index built from an older
 * template version gets the new template's mappings added in place, unless it must be rebuilt. The vector indices follow the configured
 * embedding model: another model's are replaced by a new generation (store/generations.ts), and what that
 * leaves to embed is returned for the fill job.
 */
export async function ensureIndices(
  store: CortexStore,
  embeddingModel: string | null,
): Promise<EmbeddingIndices> {
  const { indices, embedDimensions } = store;
  // Below `rebuiltBelow` an index cannot take the template's mappings (a changed analyzer): it is rebuilt instead,
  // after start-up (store/rebuild.ts).
  const plain: [string, Template, number][] = [
    [indices.knowledge, knowledgeTemplate(indices.knowledge), knowledgeRebuiltBelow],
    [indices.dimensions, dimensionsTemplate(indices.dimensions), 0],
  ];
  for (const [alias, template, rebuiltBelow] of plain) {
    await request(store, "PUT", `/_index_template/${alias}`, template, { retries: 2 });
    const existing = await request<Record<string, { mappings?: { _meta?: { templateVersion?: number } } }>>(
      store,
      "GET",
      `/${alias}/_mapping`,
      undefined,
      { ignore: [404] },
    );
    if (existing.statusCode === 404) {
      await request(
        store,
        "PUT",
        `/${concreteIndex(alias)}`,
        { aliases: { [alias]: {} } },
        {
          ignore: [400],
          retries: 2,
        },
      );
      continue;
    }
    for (const [index, mapping] of Object.entries(existing.body)) {
      const built = mapping.mappings?._meta?.templateVersion ?? 0;
      if (built < templateVersion && built >= rebuiltBelow) await addMappings(store, index, template);
    }
  }

  const configured = embeddingModel === null ? null : { model: embeddingModel, dimensions: embedDimensions };
  const vectorsTemplateBody = vectorsTemplate(indices.vectors, embedDimensions);
  const chunkTemplateBody = chunkTemplate(indices.chunks, embedDimensions);
  await request(store, "PUT", `/_index_template/${indices.vectors}`, vectorsTemplateBody, { retries: 2 });
  await request(store, "PUT", `/_index_template/${indices.chunks}`, chunkTemplateBody, { retries: 2 });
  const vectors = await ensureGeneration(store, indices.vectors, configured, concreteIndex(indices.vectors), {
    addMappings: (index) => addMappings(store, index, vectorsTemplateBody),
    // Knowledge vectors are made again from the knowledge index: the new index starts empty.
    adopt: (from, to) => moveAlias(store, indices.vectors, from, to),
  });
  const chunks = await ensureGeneration(store, indices.chunks, configured, concreteIndex(indices.chunks), {
    addMappings: (index) => addMappings(store, index, chunkTemplateBody),
    adopt: async (from, to) => {
      await copyWithoutVectors(store, indices.chunks, from, to);
    },
  });
  await request(
    store,
    "GET",
    `/_cluster/health/${indices.knowledge},${indices.vectors},${indices.chunks}?wait_for_status=green&timeout=30s`,
  );
  return { vectors, chunks };
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
