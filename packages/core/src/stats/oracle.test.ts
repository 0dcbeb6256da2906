import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { histogram } from "./histogram.ts";
import { histogramReference } from "./histogram-reference.ts";
import { percentileRank } from "./percentile-rank.ts";
import { percentileSet } from "./percentile-set.ts";
import { summaryStats } from "./summary-stats.ts";

// The shared reference vectors (numpy 2.4.6 / scipy 1.17.1), read where the project keeps them: ../shared/oracles.
interface OracleCase {
  data: number[];
  percentiles: Record<"p10" | "p25" | "p50" | "p75" | "p90", number>;
  mean: number;
  std_dev_population: number;
  min: number;
  max: number;
  percentile_rank_mean: { value: number; rank: number }[];
  histogram: Record<string, { edges: number[]; counts: number[] }>;
}
const oracle = JSON.parse(readFileSync(new URL("../../../../../shared/oracles/stats.json", import.meta.url), "utf8")) as {
  cases: Record<string, OracleCase>;
};

const REL = 1e-9;
// Relative tolerance 1e-9; an absolute floor of 1e-12 only matters where the expected value is 0
// (a constant sample's std_dev), where relative error is undefined.
function close(actual: number, expected: number): boolean {
  return Math.abs(actual - expected) <= Math.max(REL * Math.max(Math.abs(actual), Math.abs(expected)), 1e-12);
}
function expectClose(actual: number, expected: number, what: string): void {
  expect(close(actual, expected), `${what}: got ${actual}, expected ${expected}`).toBe(true);
}

const cases = Object.entries(oracle.cases);

describe("numpy/scipy oracle vectors", () => {
  it("covers every case of the oracle file", () => {
    expect(cases.length).toBeGreaterThanOrEqual(8);
  });

  for (const [name, c] of cases) {
    const sorted = Float64Array.from(c.data).sort();

    it(`${name}: percentiles and mean match numpy.percentile(method="linear")`, () => {
      const set = percentileSet(sorted);
      for (const key of ["p10", "p25", "p50", "p75", "p90"] as const) expectClose(set[key], c.percentiles[key], key);
      expectClose(set.mean, c.mean, "mean");
    });

    it(`${name}: the same percentiles from a plain number[]`, () => {
      const set = percentileSet(Array.from(sorted));
      for (const key of ["p10", "p25", "p50", "p75", "p90"] as const) expectClose(set[key], c.percentiles[key], key);
    });

    it(`${name}: min, max, mean and population std_dev match numpy`, () => {
      const s = summaryStats(sorted);
      expectClose(s.min, c.min, "min");
      expectClose(s.max, c.max, "max");
      expectClose(s.mean, c.mean, "mean");
      expectClose(s.std_dev, c.std_dev_population, "std_dev");
    });

    it(`${name}: percentile ranks match scipy percentileofscore(kind="mean")`, () => {
      expect(c.percentile_rank_mean.length).toBeGreaterThan(0);
      for (const { value, rank } of c.percentile_rank_mean) expectClose(percentileRank(sorted, value), rank, `rank(${value})`);
    });

    it(`${name}: histogram edges and counts match numpy.histogram for every bucket count`, () => {
      const entries = Object.entries(c.histogram);
      expect(entries.length).toBeGreaterThan(0);
      for (const [k, h] of entries) {
        const got = histogram(sorted, Number(k));
        expect(got.counts, `counts, ${k} buckets`).toEqual(h.counts);
        expect(got.edges.length).toBe(h.edges.length);
        got.edges.forEach((e, i) => expectClose(e, h.edges[i] as number, `edge ${i} of ${k}`));
        expect(histogramReference(c.data, Number(k)).counts, `reference counts, ${k} buckets`).toEqual(h.counts);
      }
    });
  }
});
