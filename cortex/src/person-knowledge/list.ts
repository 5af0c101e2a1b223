/**
 * POST /person/knowledge: a page of what a person may see (core/person-knowledge.ts decides what that is), each
 * object as stored with whether it is theirs and what contradicts or replaced it.
 */
import type { KnowledgeObject, PersonKnowledgeRequest, PersonKnowledgeResponse } from "@remram/contract";
import type { CortexContext } from "../context.js";
import {
  type After,
  contradictedBy,
  contradictionIds,
  decodeCursor,
  encodeCursor,
  isMine,
  listingDigest,
  listingSearch,
  type Viewer,
} from "../core/person-knowledge.js";
import { badRequest } from "../http-errors.js";
import { loadObjects } from "../knowledge/repository.js";
import { request as storeRequest } from "../store/client.js";
import { knowledgeObjectFields } from "../store/documents.js";
import type { SearchHit } from "../store/reads.js";

/** The person and the appliance's household (none when Cortex is not bound to one). */
export function viewerOf(context: Pick<CortexContext, "config">, userId: string): Viewer {
  return { userId, householdId: context.config.householdId };
}

type Page = { hits: { total: { value: number }; hits: (SearchHit<KnowledgeObject> & { sort?: After })[] } };

export async function listPersonKnowledge(
  context: Pick<CortexContext, "store" | "config">,
  request: PersonKnowledgeRequest,
): Promise<PersonKnowledgeResponse> {
  const { store } = context;
  const viewer = viewerOf(context, request.userId);
  const digest = listingDigest(viewer, request);
  let after: After | undefined;
  if (request.cursor !== undefined) {
    const decoded = decodeCursor(request.cursor, digest);
    if (!decoded.ok) throw badRequest(`body.cursor: ${decoded.message}`);
    after = decoded.after;
  }
  const { body } = await storeRequest<Page>(
    store,
    "POST",
    `/${store.indices.knowledge}/_search`,
    listingSearch(viewer, request, after, knowledgeObjectFields),
  );
  const page = body.hits.hits.slice(0, request.limit);
  const last = page.at(-1)?.sort;
  const more = body.hits.hits.length > request.limit;
  const objects = page.map((hit) => hit._source);
  const linked = await loadObjects(store, objects.flatMap(contradictionIds));
  return {
    items: objects.map((object) => ({
      object,
      mine: isMine(object, viewer),
      contradictedBy: contradictedBy(object, linked, viewer),
    })),
    nextCursor: more && last !== undefined ? encodeCursor(digest, last) : null,
    total: body.hits.total.value,
  };
}
