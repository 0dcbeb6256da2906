import { describe, expect, it } from "vitest";
import { createPrng, hashSeed } from "./prng.ts";

function draws(seed: string, n: number): number[] {
  const p = createPrng(seed);
  return Array.from({ length: n }, () => p.next());
}

describe("createPrng", () => {
  it("same seed → same numbers; different seed → different numbers", () => {
    expect(draws("alpha", 50)).toEqual(draws("alpha", 50));
    expect(draws("alpha", 50)).not.toEqual(draws("alpha2", 50));
    expect(hashSeed("a|b")).not.toEqual(hashSeed("ab|"));
  });

  it("uniform draws lie in [0, 1) with a mean near 0.5", () => {
    const xs = draws("uniform", 20000);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(m).toBeGreaterThan(0.49);
    expect(m).toBeLessThan(0.51);
  });

  it("int covers its inclusive range", () => {
    const p = createPrng("int");
    const seen = new Set<number>();
    for (let i = 0; i < 1000; i++) seen.add(p.int(3, 6));
    expect([...seen].sort()).toEqual([3, 4, 5, 6]);
  });

  it("normal, lognormal, logitNormal and beta have the intended centres", () => {
    const p = createPrng("shapes");
    const n = 20000;
    const median = (f: () => number): number => {
      const xs = Float64Array.from({ length: n }, f).sort();
      return xs[n >> 1] as number;
    };
    let s = 0;
    let s2 = 0;
    for (let i = 0; i < n; i++) {
      const z = p.normal(2, 3);
      s += z;
      s2 += z * z;
    }
    expect(s / n).toBeCloseTo(2, 0);
    expect(Math.sqrt(s2 / n - (s / n) ** 2)).toBeCloseTo(3, 0);
    expect(median(() => p.lognormal(100, 0.5)) / 100).toBeCloseTo(1, 1);
    expect(median(() => p.logitNormal(0.73, 0.4))).toBeCloseTo(0.73, 1);
    const b = Float64Array.from({ length: n }, () => p.beta(2, 6));
    expect(b.every((x) => x > 0 && x < 1)).toBe(true);
    expect(b.reduce((a, x) => a + x, 0) / n).toBeCloseTo(0.25, 1);
    expect(Float64Array.from({ length: n }, () => p.gamma(0.5)).every((x) => x >= 0)).toBe(true);
  });
});
