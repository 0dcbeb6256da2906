import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideSuppression } from "./suppression.ts";

describe("decideSuppression", () => {
  it("the issue's example: dtc 30, b2b 10, all 40 withholds b2b (below_minimum) and dtc (complementary)", () => {
    const d = decideSuppression(40, new Map([["dtc", 30], ["b2b", 10]]), 30);
    expect(d.all).toBeNull();
    expect([...d.segments]).toEqual([["dtc", "complementary"], ["b2b", "below_minimum"]]);
  });

  it("publishes everything when every segment meets the minimum", () => {
    const d = decideSuppression(90, new Map([["a", 30], ["b", 60]]), 30);
    expect(d.all).toBeNull();
    expect([...d.segments.values()]).toEqual([null, null]);
  });

  it("withholds nothing more when the withheld segments together reach the minimum", () => {
    const d = decideSuppression(100, new Map([["a", 50], ["b", 20], ["c", 15], ["d", 15]]), 30);
    expect(Object.fromEntries(d.segments)).toEqual({ a: null, b: "below_minimum", c: "below_minimum", d: "below_minimum" });
  });

  it("withholds the smallest published segment first, ties in name order", () => {
    const d = decideSuppression(110, new Map([["z", 40], ["y", 40], ["x", 25], ["big", 5]]), 30);
    // outside = 30 already (x + big)? 25 + 5 = 30: enough.
    expect(Object.fromEntries(d.segments)).toEqual({ z: null, y: null, x: "below_minimum", big: "below_minimum" });
    const e = decideSuppression(90, new Map([["z", 40], ["y", 40], ["x", 10]]), 30);
    expect(Object.fromEntries(e.segments)).toEqual({ z: null, y: "complementary", x: "below_minimum" });
  });

  it("withholds all below the minimum, and then needs no complementary suppression", () => {
    const d = decideSuppression(20, new Map([["a", 12], ["b", 8]]), 30);
    expect(d.all).toBe("below_minimum");
    expect([...d.segments.values()]).toEqual(["below_minimum", "below_minimum"]);
  });

  it("without an `all` cell, only primary suppression applies (segments cannot be subtracted from each other)", () => {
    const d = decideSuppression(null, new Map([["a", 40], ["b", 3]]), 30);
    expect(d.all).toBeNull();
    expect(Object.fromEntries(d.segments)).toEqual({ a: null, b: "below_minimum" });
  });

  // Businesses each in one or two segments; sizes around the minimum.
  const population = fc
    .record({
      minimum: fc.integer({ min: 1, max: 40 }),
      segments: fc.integer({ min: 1, max: 6 }),
      sizes: fc.array(fc.integer({ min: 0, max: 80 }), { minLength: 6, maxLength: 6 }),
      overlaps: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat()), { maxLength: 10 }),
    })
    .map(({ minimum, segments, sizes, overlaps }) => {
      // business id -> segments it sits in
      const members = new Map<number, Set<number>>();
      let id = 0;
      for (let s = 0; s < segments; s++) for (let i = 0; i < (sizes[s] as number); i++) members.set(id++, new Set([s]));
      for (const [b, s] of overlaps) if (id > 0) members.get(b % id)!.add(s % segments);
      return { minimum, segments, members };
    });

  it("property: every hidden group is empty or covers the minimum; every cell below the minimum is withheld", () => {
    fc.assert(
      fc.property(population, ({ minimum, segments, members }) => {
        const sizes = new Map<string, number>();
        for (let s = 0; s < segments; s++) {
          let n = 0;
          for (const set of members.values()) if (set.has(s)) n++;
          if (n > 0) sizes.set(`s${s}`, n);
        }
        const all = members.size;
        const d = decideSuppression(all > 0 ? all : null, sizes, minimum);
        for (const [name, n] of sizes) {
          const r = d.segments.get(name);
          if (n < minimum) expect(r).toBe("below_minimum");
          else expect(r === null || r === "complementary").toBe(true);
        }
        if (all === 0) return;
        expect(d.all).toBe(all < minimum ? "below_minimum" : null);
        if (d.all !== null) {
          // Nothing published to subtract from: every segment is below the minimum too.
          for (const r of d.segments.values()) expect(r).toBe("below_minimum");
          return;
        }
        // The businesses `all` minus the published segments leaves: none, or at least the minimum.
        const published = new Set([...d.segments].filter(([, r]) => r === null).map(([name]) => Number(name.slice(1))));
        let hidden = 0;
        for (const set of members.values()) if (![...set].some((s) => published.has(s))) hidden++;
        expect(hidden === 0 || hidden >= minimum).toBe(true);
        // Every difference between published aggregates (all minus any published subset) covers 0 or ≥ minimum.
      }),
      { numRuns: 2000 },
    );
  });

  it("property: on a partition, complementary suppression withholds no more than it must (one segment fewer would leak)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 40 }), fc.array(fc.integer({ min: 1, max: 90 }), { minLength: 1, maxLength: 6 }), (minimum, ns) => {
        const sizes = new Map(ns.map((n, i) => [`s${i}`, n]));
        const all = ns.reduce((a, b) => a + b, 0);
        const d = decideSuppression(all, sizes, minimum);
        if (d.all !== null) return;
        const hiddenOf = (names: Iterable<string>): number => [...names].reduce((a, s) => a + (sizes.get(s) as number), 0);
        const complementary = [...d.segments].filter(([, r]) => r === "complementary").map(([s]) => s);
        const withheld = [...d.segments].filter(([, r]) => r !== null).map(([s]) => s);
        const hidden = hiddenOf(withheld);
        expect(hidden === 0 || hidden >= minimum).toBe(true);
        if (complementary.length > 0) {
          // Publishing the last one chosen (the largest complementary) again would leave too few hidden.
          const last = complementary.reduce((a, b) => ((sizes.get(a) as number) >= (sizes.get(b) as number) ? a : b));
          expect(hidden - (sizes.get(last) as number)).toBeLessThan(minimum);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
