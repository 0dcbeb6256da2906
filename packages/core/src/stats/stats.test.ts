import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countAtOrBelow, countBelow } from "./bisect.ts";
import { histogram } from "./histogram.ts";
import { histogramReference } from "./histogram-reference.ts";
import { mean } from "./mean.ts";
import { pairwiseSum } from "./pairwise-sum.ts";
import { percentileRank } from "./percentile-rank.ts";
import { percentileSet } from "./percentile-set.ts";
import { quantileSorted } from "./quantile-sorted.ts";
import { roundTo1 } from "./round-to1.ts";
import { summaryStats } from "./summary-stats.ts";

// Finite doubles of a business-metric scale; extreme magnitudes overflow max − min in numpy too.
// Subnormals are folded to 0: a range of a few subnormal ulps cannot hold strictly increasing edges (numpy's neither).
const value = fc.double({ min: -1e9, max: 1e9, noNaN: true, noDefaultInfinity: true }).map((v) => (Math.abs(v) < 1e-300 ? 0 : v));
// Mixes a few repeated values in so ties (common in real cells) are exercised.
const sample = fc
  .tuple(fc.array(value, { minLength: 1, maxLength: 300 }), fc.array(fc.constantFrom(0, 0.5, 1, 3), { maxLength: 20 }))
  .map(([a, b]) => Float64Array.from([...a, ...b]).sort());

describe("quantileSorted", () => {
  it("is the order statistic at q = 0 and q = 1 and NaN out of range or empty", () => {
    const s = Float64Array.from([1, 2, 10]);
    expect(quantileSorted(s, 0)).toBe(1);
    expect(quantileSorted(s, 1)).toBe(10);
    expect(quantileSorted(s, 0.5)).toBe(2);
    expect(quantileSorted(s, 0.75)).toBe(6);
    expect(quantileSorted(s, -0.1)).toBeNaN();
    expect(quantileSorted(s, 1.1)).toBeNaN();
    expect(quantileSorted(new Float64Array(0), 0.5)).toBeNaN();
  });

  it("is exact at an interpolation weight of 1 − ε thanks to numpy's two-sided lerp", () => {
    // With a + (b − a)·t alone, t just below 1 can overshoot b; numpy's form cannot.
    const s = Float64Array.from([0.1, 0.7]);
    for (const q of [0.5, 0.9, 0.999999, 1]) expect(quantileSorted(s, q)).toBeLessThanOrEqual(0.7);
  });
});

describe("percentileSet properties", () => {
  it("percentiles are monotone (p10 ≤ p25 ≤ p50 ≤ p75 ≤ p90) and within [min, max]", () => {
    fc.assert(
      fc.property(sample, (s) => {
        const p = percentileSet(s);
        const min = s[0] as number;
        const max = s[s.length - 1] as number;
        return min <= p.p10 && p.p10 <= p.p25 && p.p25 <= p.p50 && p.p50 <= p.p75 && p.p75 <= p.p90 && p.p90 <= max;
      }),
    );
  });

  it("the mean lies within [min, max]", () => {
    fc.assert(
      fc.property(sample, (s) => {
        const m = mean(s);
        const spread = Math.abs(s[0] as number) + Math.abs(s[s.length - 1] as number);
        return m >= (s[0] as number) - 1e-12 * spread && m <= (s[s.length - 1] as number) + 1e-12 * spread;
      }),
    );
  });

  it("is NaN everywhere for an empty sample", () => {
    expect(Object.values(percentileSet(new Float64Array(0))).every(Number.isNaN)).toBe(true);
  });
});

describe("percentileRank properties", () => {
  it("stays within 0–100 and agrees with a linear count", () => {
    fc.assert(
      fc.property(sample, value, (s, v) => {
        const r = percentileRank(s, v);
        let below = 0;
        let atOrBelow = 0;
        for (const x of s) {
          if (x < v) below++;
          if (x <= v) atOrBelow++;
        }
        return r >= 0 && r <= 100 && r === ((below + atOrBelow) * 50) / s.length;
      }),
    );
  });

  it("is monotone non-decreasing in the value", () => {
    fc.assert(
      fc.property(sample, value, value, (s, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        return percentileRank(s, lo) <= percentileRank(s, hi);
      }),
    );
  });

  it("never exceeds 100 through rounding (scipy's (l + r)·(50 / n) gives 100.00000000000001 for n = 11)", () => {
    for (let n = 1; n <= 1000; n++) expect(percentileRank(new Float64Array(n), 1)).toBe(100);
  });

  it("counts ties as half: the only value of a one-value sample ranks 50", () => {
    expect(percentileRank(Float64Array.from([7]), 7)).toBe(50);
    expect(percentileRank(Float64Array.from([1, 2, 2, 3]), 2)).toBe(50);
    expect(percentileRank(new Float64Array(0), 1)).toBeNaN();
  });

  it("binary searches agree with linear counts on ties", () => {
    const s = Float64Array.from([1, 2, 2, 2, 3]);
    expect([countBelow(s, 2), countAtOrBelow(s, 2), countBelow(s, 0), countAtOrBelow(s, 9)]).toEqual([1, 4, 0, 5]);
  });
});

describe("roundTo1", () => {
  it("rounds the exact binary value to one decimal", () => {
    expect(roundTo1(12.5)).toBe(12.5);
    expect(roundTo1(33.333333)).toBe(33.3);
    expect(roundTo1(66.66666)).toBe(66.7);
    expect(roundTo1(1.15)).toBe(1.1); // stored as 1.1499999…
    expect(roundTo1(1.05)).toBe(1.1); // stored as 1.0500000…04
    expect(roundTo1(0.25)).toBe(0.3); // an exact tie goes away from zero
    expect(roundTo1(100)).toBe(100);
    expect(Object.is(roundTo1(-0.01), 0)).toBe(true);
    expect(Object.is(roundTo1(-0.04999), 0)).toBe(true);
    expect(roundTo1(-0.25)).toBe(-0.3);
    expect(roundTo1(Number.NaN)).toBeNaN();
    expect(roundTo1(-Infinity)).toBe(-Infinity);
  });

  // toFixed's answer, with its -0 folded to 0: the definition the fast path must keep to.
  const slow = (x: number): number => {
    if (!Number.isFinite(x)) return x;
    const r = Number(x.toFixed(1));
    return r === 0 ? 0 : r;
  };
  it("agrees with toFixed on any double", () => {
    fc.assert(fc.property(fc.double(), (x) => Object.is(roundTo1(x), slow(x))), { numRuns: 20_000 });
  });
  it("agrees with toFixed at and a few ulps around every twentieth (the ties), at every scale", () => {
    const nearTie = fc
      .tuple(fc.integer({ min: -2_000_000, max: 2_000_000 }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: -4, max: 4 }))
      .map(([k, e, ulps]) => {
        const t = ((2 * k + 1) / 20) * 10 ** e;
        const buf = new Float64Array([t]);
        const bits = new BigInt64Array(buf.buffer);
        bits[0] = (bits[0] as bigint) + BigInt(ulps);
        return buf[0] as number;
      });
    fc.assert(fc.property(nearTie, (x) => Object.is(roundTo1(x), slow(x))), { numRuns: 20_000 });
  });
});

// Values a few ulps apart at a huge magnitude: rounding makes neighbouring edges equal there.
const tight = fc
  .tuple(fc.double({ min: 1e13, max: 1e16, noNaN: true }), fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 60 }))
  .map(([a, ks]) => Float64Array.from(ks.map((k) => a + k)).sort());
// Values on a lattice of the bucket width, so many land exactly on (or an ulp off) an edge.
const onEdges = fc
  .tuple(value, fc.double({ min: 1e-6, max: 1e3, noNaN: true }), fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 200 }))
  .map(([a, w, ks]) => Float64Array.from(ks.map((k) => a + (k * w) / 7)).sort());

describe("histogram properties", () => {
  it("agrees with the numpy fast-path reference on any sample and 1–100 buckets", () => {
    fc.assert(
      fc.property(fc.oneof(sample, tight, onEdges), fc.integer({ min: 1, max: 100 }), (s, k) => {
        const h = histogram(s, k);
        // A zero-width range even after widening by ±0.5 (|x| ≥ 2^53) makes numpy divide 0 by 0.
        fc.pre(h.edges[0] !== h.edges[k]);
        expect(h).toEqual(histogramReference(Array.from(s).reverse(), k));
      }),
      { numRuns: 1000 },
    );
  });

  it("counts sum to n and edges strictly increase, for any buckets 1–100", () => {
    fc.assert(
      fc.property(sample, fc.integer({ min: 1, max: 100 }), (s, k) => {
        const h = histogram(s, k);
        if (h.counts.length !== k || h.edges.length !== k + 1) return false;
        if (h.counts.reduce((a, b) => a + b, 0) !== s.length) return false;
        return h.edges.every((e, i) => i === 0 || e > (h.edges[i - 1] as number));
      }),
      { numRuns: 300 },
    );
  });

  it("puts the maximum in the closed last bucket and an edge value in the bucket it starts", () => {
    const h = histogram(Float64Array.from([0, 1, 2, 3, 4]), 4);
    expect(h.edges).toEqual([0, 1, 2, 3, 4]);
    expect(h.counts).toEqual([1, 1, 1, 2]);
  });

  it("widens a constant sample to [v − 0.5, v + 0.5] and uses [0, 1] when empty", () => {
    expect(histogram(Float64Array.from([2, 2]), 2)).toEqual({ edges: [1.5, 2, 2.5], counts: [0, 2] });
    expect(histogram(new Float64Array(0), 2)).toEqual({ edges: [0, 0.5, 1], counts: [0, 0] });
  });

  it("rejects a bucket count that is not a positive integer", () => {
    expect(() => histogram(Float64Array.from([1]), 0)).toThrow(RangeError);
    expect(() => histogram(Float64Array.from([1]), 2.5)).toThrow(RangeError);
  });
});

describe("summaryStats", () => {
  it("is numerically careful: a large offset does not destroy the deviation", () => {
    const s = Float64Array.from([1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16]);
    const r = summaryStats(s);
    expect(r.mean).toBe(1e9 + 10);
    expect(r.std_dev).toBeCloseTo(Math.sqrt(22.5), 9);
  });

  it("std_dev is numpy's: the pairwise sum (same blocking as the mean) of the squared deviations, bit for bit", () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 700 }).map((a) => Float64Array.from(a).sort()), (s) => {
        const m = pairwiseSum(s) / s.length;
        const squares = Float64Array.from(s, (x) => (x - m) * (x - m));
        return summaryStats(s).std_dev === Math.sqrt(pairwiseSum(squares) / s.length);
      }),
      { numRuns: 300 },
    );
  });

  it("matches a naive two-pass computation on random samples", () => {
    fc.assert(
      fc.property(sample, (s) => {
        const n = s.length;
        let sum = 0;
        for (const x of s) sum += x;
        const m = sum / n;
        let sq = 0;
        for (const x of s) sq += (x - m) ** 2;
        const r = summaryStats(s);
        const scale = Math.max(Math.abs(s[0] as number), Math.abs(s[n - 1] as number), 1e-300);
        return (
          r.min === s[0] &&
          r.max === s[n - 1] &&
          Math.abs(r.mean - m) <= 1e-12 * scale &&
          Math.abs(r.std_dev - Math.sqrt(sq / n)) <= 1e-9 * scale
        );
      }),
    );
  });
});
