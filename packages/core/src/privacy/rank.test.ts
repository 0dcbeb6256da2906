import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { percentileSet } from "../stats/percentile-set.ts";
import { exactRanksAllowed, interpolatedRank } from "./rank.ts";

const set = { p10: 10, p25: 25, p50: 50, p75: 75, p90: 90 };

describe("interpolatedRank", () => {
  it("is the identity on a uniform set, 0 and 100 beyond the extended ends", () => {
    for (const v of [0, 5, 10, 17.5, 50, 80, 90, 95, 100]) expect(interpolatedRank(set, v)).toBeCloseTo(v, 12);
    expect(interpolatedRank(set, -1)).toBe(0);
    expect(interpolatedRank(set, 101)).toBe(100);
  });

  it("gives the mean of the flat stretch at tied percentiles, 50 for a constant cell", () => {
    expect(interpolatedRank({ p10: 0, p25: 0, p50: 0, p75: 1, p90: 2 }, 0)).toBe(25);
    expect(interpolatedRank({ p10: 3, p25: 3, p50: 3, p75: 3, p90: 3 }, 3)).toBe(50);
    expect(interpolatedRank({ p10: 3, p25: 3, p50: 3, p75: 3, p90: 3 }, 2.999)).toBe(0);
  });

  it("property: monotone, within [0, 100], and a function of the percentile set alone (two cells with the same set rank alike)", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 1, maxLength: 60 }), fc.double({ min: -2e3, max: 2e3, noNaN: true }), fc.double({ min: -2e3, max: 2e3, noNaN: true }), (xs, a, b) => {
        const sorted = Float64Array.from(xs).sort();
        const s = percentileSet(sorted);
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const rl = interpolatedRank(s, lo);
        const rh = interpolatedRank(s, hi);
        expect(rl).toBeGreaterThanOrEqual(0);
        expect(rh).toBeLessThanOrEqual(100);
        expect(rl).toBeLessThanOrEqual(rh + 1e-9);
        // Changing a value that no percentile depends on changes no rank.
        const copy = Float64Array.from(sorted);
        copy[0] = (copy[0] as number) - 1;
        if (sorted.length >= 11) {
          const t = percentileSet(copy);
          if (t.p10 === s.p10) expect(interpolatedRank(t, lo)).toBe(rl);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("exact ranks only where one step of 0.1 covers at least the minimum", () => {
    expect(exactRanksAllowed(29_999, 30)).toBe(false);
    expect(exactRanksAllowed(30_000, 30)).toBe(true);
  });
});
