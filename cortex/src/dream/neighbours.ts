import type { SimilarPair } from "./contradictions.js";

/**
 * The neighbour graph dream reasons over: for each embedded object, its nearest same-scope neighbours by cosine.
 * An object's vector never changes, so its list is looked up once (k-NN) and kept; a later object near it has
 * the pair in its own list. A cycle then reads every pair instead of repeating 100,000 k-NN searches, and looks
 * up only the objects that have no list yet: new ones, and those a time-limited cycle did not reach.
 */

/** Neighbours kept per object. */
export const neighboursPerObject = 8;
/** Below this cosine a neighbour serves no rule (the lowest threshold in use, "related", is 0.75). */
export const neighbourFloor = 0.75;

export interface Neighbour {
  id: string;
  similarity: number;
}

/** One object's stored list. `vector: false`: it had no vector when looked at and no model was there to make one. */
export interface NeighbourList {
  id: string;
  computedAt: string;
  vector: boolean;
  neighbours: Neighbour[];
}

/** k-NN hits of one object as its list: not itself, at or above the floor, nearest first then by id. */
export function neighbourListFrom(
  id: string,
  hits: readonly { id: string; similarity: number }[],
  computedAt: string,
): NeighbourList {
  const neighbours = hits
    .filter((hit) => hit.id !== id && hit.similarity >= neighbourFloor)
    .map((hit) => ({ id: hit.id, similarity: Math.round(hit.similarity * 1e6) / 1e6 }))
    .sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : 1))
    .slice(0, neighboursPerObject);
  return { id, computedAt, vector: true, neighbours };
}

/**
 * Every pair in the graph among `known` objects, once, with ids sorted inside the pair and pairs sorted by ids.
 * A pair from a list in `builtNow` (looked up this cycle) is fresh. Cosine is symmetric; if the two lists
 * disagree in the last digit, the higher value is kept.
 */
export function pairsFromNeighbourLists(
  lists: Iterable<NeighbourList>,
  known: ReadonlySet<string>,
  builtNow: ReadonlySet<string> = new Set(),
): SimilarPair[] {
  const pairs = new Map<string, SimilarPair>();
  for (const list of lists) {
    if (!known.has(list.id)) continue;
    const fresh = builtNow.has(list.id);
    for (const neighbour of list.neighbours) {
      if (!known.has(neighbour.id) || neighbour.id === list.id) continue;
      const [aId, bId] = list.id < neighbour.id ? [list.id, neighbour.id] : [neighbour.id, list.id];
      const key = `${aId}\n${bId}`;
      const existing = pairs.get(key);
      pairs.set(key, {
        aId,
        bId,
        similarity: Math.max(existing?.similarity ?? neighbour.similarity, neighbour.similarity),
        ...((fresh || existing?.fresh) && { fresh: true }),
      });
    }
  }
  return [...pairs.values()].sort((x, y) =>
    x.aId === y.aId ? (x.bId < y.bId ? -1 : 1) : x.aId < y.aId ? -1 : 1,
  );
}

/**
 * Which objects need a k-NN lookup, in the order a time-limited cycle should take them: changed objects first
 * (the cycle reasons about them now), then the rest by id. An object listed without a vector is retried only
 * when a model can embed it.
 */
export function neighbourLookupOrder(
  objects: readonly { id: string; changed: boolean }[],
  lists: ReadonlyMap<string, NeighbourList>,
  canEmbed: boolean,
): string[] {
  const pending = objects.filter((object) => {
    const list = lists.get(object.id);
    return list === undefined || (!list.vector && canEmbed);
  });
  const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
  return [
    ...pending.filter((o) => o.changed).sort(byId),
    ...pending.filter((o) => !o.changed).sort(byId),
  ].map((o) => o.id);
}
