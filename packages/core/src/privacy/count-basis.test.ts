import { describe, expect, it } from "vitest";
import type { Metric } from "../data/catalog.ts";
import type { Cell } from "../data/source.ts";
import type { MetricCells } from "./count-basis.ts";
import { countBasis, sampleSizeOf } from "./count-basis.ts";
import type { WithheldReason } from "./suppression.ts";

// The businesses (ordinals) from..to-1, as a cell.
const cell = (...ranges: [number, number][]): Cell => {
  const ids = ranges.flatMap(([from, to]) => Array.from({ length: to - from }, (_, i) => from + i)).sort((a, b) => a - b);
  return { sorted: new Float64Array(ids.length), sampleSize: ids.length, businesses: Uint32Array.from(ids) };
};
const group = (all: Cell, segments: Record<string, [Cell, WithheldReason | null]>): MetricCells => ({
  all,
  allReason: null,
  segments: new Map(Object.entries(segments).map(([s, [c]]) => [s, c])),
  reasons: new Map(Object.entries(segments).map(([s, [, r]]) => [s, r])),
});
const GM = "gross_margin" as Metric;
const RG = "revenue_growth" as Metric;

describe("countBasis", () => {
  it("counts together only the metrics whose every cell is published, not one a segment withholds", () => {
    // s1 publishes both; s2 publishes gross_margin and withholds revenue_growth (complementary).
    const groups = new Map([
      [GM, group(cell([0, 80]), { s1: [cell([0, 40]), null], s2: [cell([40, 80]), null] })],
      [RG, group(cell([0, 75]), { s1: [cell([0, 40]), null], s2: [cell([40, 75]), "complementary"] })],
    ]);
    expect([...countBasis(groups, 30)]).toEqual([GM]);
    // s2 without any revenue_growth business: every cell of both metrics is published.
    groups.set(RG, group(cell([0, 40]), { s1: [cell([0, 40]), null] }));
    expect([...countBasis(groups, 30)].sort()).toEqual([GM, RG]);
  });

  it("a segment with nothing published takes its metrics out of the basis too (the withheld businesses' patterns could pin a cell)", () => {
    const groups = new Map([
      [GM, group(cell([0, 70]), { s1: [cell([0, 40]), null], s2: [cell([40, 70]), "complementary"] })],
      [RG, group(cell([0, 70]), { s1: [cell([0, 35]), null], s2: [cell([40, 70]), "complementary"] })],
    ]);
    expect([...countBasis(groups, 30)]).toEqual([]);
  });

  it("drops the basis when all's union minus the segments' unions falls between 1 and the minimum − 1 (the guard)", () => {
    // Decisions as given (as if a business sat in two segments): 5 businesses of all are in no shown segment.
    const groups = new Map([
      [GM, group(cell([0, 45]), { s1: [cell([0, 40]), null] })],
      [RG, group(cell([0, 40]), { s1: [cell([0, 40]), null] })],
    ]);
    expect(countBasis(groups, 30).size).toBe(0);
    groups.set(GM, group(cell([0, 40]), { s1: [cell([0, 40]), null] }));
    expect(countBasis(groups, 30).size).toBe(2);
  });
});

describe("sampleSizeOf", () => {
  it("is the basis metrics' distinct businesses, or the largest included cell when that is larger", () => {
    const gm = cell([0, 30]);
    const rg = cell([20, 60]);
    const included = new Map([[GM, gm], [RG, rg]]);
    expect(sampleSizeOf(included, new Set([GM, RG]))).toBe(60);
    expect(sampleSizeOf(included, new Set([GM]))).toBe(40);
    expect(sampleSizeOf(included, new Set())).toBe(40);
  });
});
