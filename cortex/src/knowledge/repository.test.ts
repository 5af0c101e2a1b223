import { describe, expect, it } from "vitest";
import { vectorGateFields } from "../store/documents.js";
import { storedObject } from "../testing/fixtures.js";
import { vectorWrite } from "./repository.js";

const active = storedObject();
const demoted = { ...active, status: "demoted" as const };
const invalidated = {
  ...active,
  status: "invalidated" as const,
  validity: { ...active.validity, invalidAt: "2026-03-02T00:00:00.000Z" },
};

describe("what an update does to the object's vector", () => {
  it("deletes the vector of an object that is invalidated, once", () => {
    expect(vectorWrite("v", { object: invalidated, previous: active })).toEqual([
      { delete: { _index: "v", _id: "k1" } },
    ]);
    expect(vectorWrite("v", { object: invalidated, previous: demoted })).toEqual([
      { delete: { _index: "v", _id: "k1" } },
    ]);
    expect(vectorWrite("v", { object: invalidated, previous: invalidated })).toEqual([]);
  });

  it("keeps a demoted object's vector, with the gate moved, so reflection can still revive it", () => {
    expect(vectorWrite("v", { object: demoted, previous: active })).toEqual([
      { update: { _index: "v", _id: "k1", retry_on_conflict: 3 } },
      { doc: vectorGateFields(demoted) },
    ]);
    expect(vectorWrite("v", { object: active, previous: demoted })).toEqual([
      { update: { _index: "v", _id: "k1", retry_on_conflict: 3 } },
      { doc: vectorGateFields(active) },
    ]);
  });

  it("leaves the vector alone when only confidence, counters or links change", () => {
    expect(
      vectorWrite("v", { object: { ...active, confidence: 0.9, reinforcementCount: 3 }, previous: active }),
    ).toEqual([]);
  });
});
