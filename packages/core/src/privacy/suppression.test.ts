import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { combinedReason, decideSuppression } from "./suppression.ts";

describe("decideSuppression", () => {
  it("the issue's example: dtc 30, b2b 10, all 40: b2b is below the minimum, dtc would bound it (b2b ≤ 40 − 30), so all is withheld too", () => {
    const d = decideSuppression(40, new Map([["dtc", 30], ["b2b", 10]]), 30);
    expect(d.all).toBe("complementary");
    expect([...d.segments]).toEqual([["dtc", "complementary"], ["b2b", "below_minimum"]]);
  });

  it("publishes all when the complementary segments leave a cell below the minimum its whole range (here b2b ≤ 75 − 30 = 45)", () => {
    const d = decideSuppression(75, new Map([["dtc", 65], ["b2b", 10]]), 30);
    expect(d.all).toBeNull();
    expect(Object.fromEntries(d.segments)).toEqual({ dtc: "complementary", b2b: "below_minimum" });
  });

  it("publishes everything when every segment meets the minimum", () => {
    const d = decideSuppression(90, new Map([["a", 30], ["b", 60]]), 30);
    expect(d.all).toBeNull();
    expect([...d.segments.values()]).toEqual([null, null]);
  });

  it("withholds a segment even when the cells below the minimum together reach it (each alone would be bounded: 28 + 29 = 57 gives each ≥ 28)", () => {
    const d = decideSuppression(157, new Map([["a", 100], ["b", 28], ["c", 29]]), 30);
    expect(d.all).toBeNull();
    expect(Object.fromEntries(d.segments)).toEqual({ a: "complementary", b: "below_minimum", c: "below_minimum" });
  });

  it("a business counted in two segments: all 59 − 30 − 30 = −1 would give that business's value; both segments are withheld", () => {
    const sizes = new Map([["s1", 30], ["s2", 30]]);
    // A negative difference always means businesses counted twice, with or without being told.
    for (const overlapping of [false, true]) {
      const d = decideSuppression(59, sizes, 30, { overlapping });
      expect(d.all).toBeNull();
      expect(Object.fromEntries(d.segments)).toEqual({ s1: "complementary", s2: "complementary" });
    }
    // A difference of 0 is trusted only when no business is counted twice: 60 = 30 + 30 may be one business in
    // both segments and another in none, and the subtraction would give the difference of their values.
    expect(Object.fromEntries(decideSuppression(60, sizes, 30).segments)).toEqual({ s1: null, s2: null });
    expect(Object.fromEntries(decideSuppression(60, sizes, 30, { overlapping: true }).segments)).toEqual({ s1: "complementary", s2: null });
  });

  it("chooses complementary segments in name order, not by size (the review's case: 30, 30 and 5)", () => {
    // Smallest-first withheld s1 (30, ties by name) and published s2 (30): s1 ≤ 30 and ≥ 30, so s3 = 65 − 60 = 5.
    const d = decideSuppression(65, new Map([["s2", 30], ["s1", 30], ["s3", 5]]), 30);
    expect(Object.fromEntries(d.segments)).toEqual({ s1: "complementary", s2: "complementary", s3: "below_minimum" });
    expect(d.all).toBe("complementary");
    const e = decideSuppression(205, new Map([["z", 40], ["big", 160], ["x", 5]]), 30);
    expect(Object.fromEntries(e.segments)).toEqual({ z: null, big: "complementary", x: "below_minimum" });
    expect(e.all).toBeNull();
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

  it("property: every hidden group is empty or covers the minimum; every cell below the minimum is withheld; published segments share no business", () => {
    fc.assert(
      fc.property(population, ({ minimum, segments, members }) => {
        const sizes = new Map<string, number>();
        for (let s = 0; s < segments; s++) {
          let n = 0;
          for (const set of members.values()) if (set.has(s)) n++;
          if (n > 0) sizes.set(`s${s}`, n);
        }
        const all = members.size;
        const overlapping = [...members.values()].some((set) => set.size > 1);
        const shareOf = (a: string, b: string): boolean => [...members.values()].some((set) => set.has(Number(a.slice(1))) && set.has(Number(b.slice(1))));
        const d = decideSuppression(all > 0 ? all : null, sizes, minimum, { overlapping, share: shareOf });
        // No two published segments share a business (one minus the other would give the ones they do not share).
        const shown = [...d.segments].filter(([, r]) => r === null).map(([name]) => name);
        for (const a of shown) for (const b of shown) if (a < b) expect(shareOf(a, b), `${a} and ${b}`).toBe(false);
        for (const [name, n] of sizes) {
          const r = d.segments.get(name);
          if (n < minimum) expect(r).toBe("below_minimum");
          else expect(r === null || r === "complementary").toBe(true);
        }
        if (all === 0) return;
        if (all < minimum) expect(d.all).toBe("below_minimum");
        else expect(d.all === null || d.all === "complementary").toBe(true);
        // `all` withheld: nothing published to subtract from.
        if (d.all !== null) return;
        // The businesses `all` minus the published segments leaves: none, or at least the minimum.
        const published = new Set([...d.segments].filter(([, r]) => r === null).map(([name]) => Number(name.slice(1))));
        let hidden = 0;
        for (const set of members.values()) if (![...set].some((s) => published.has(s))) hidden++;
        expect(hidden === 0 || hidden >= minimum).toBe(true);
        // What the subtraction itself gives (all − Σ published, businesses in two segments netted out): nothing
        // with every business in one segment, else at least the minimum (never a negative that isolates those
        // counted twice).
        let difference = all;
        for (const [name, r] of d.segments) if (r === null) difference -= sizes.get(name) as number;
        expect((difference === 0 && !overlapping) || difference >= minimum).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("property: on a partition, an attacker who knows the rule, the reason codes and every published size cannot narrow a cell below the minimum (brute force over every consistent assignment)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 5, max: 7 }), fc.array(fc.integer({ min: 1, max: 16 }), { minLength: 1, maxLength: 3 }), (minimum, ns) => {
        const names = ns.map((_, i) => `s${i}`);
        const sizes = new Map(ns.map((n, i) => [names[i]!, n]));
        const total = ns.reduce((a, b) => a + b, 0);
        const d = decideSuppression(total, sizes, minimum);
        const view = (dd: typeof d, all: number, of: (s: string) => number): string =>
          JSON.stringify([dd.all, dd.all === null ? all : null, names.map((s) => [dd.segments.get(s), dd.segments.get(s) === null ? of(s) : null])]);
        const seen = view(d, total, (s) => sizes.get(s)!);
        const withheld = names.filter((s) => d.segments.get(s) !== null);
        const belowCells = withheld.filter((s) => d.segments.get(s) === "below_minimum");
        if (belowCells.length === 0) return;
        // Every assignment of sizes to the withheld segments that the reason codes allow and that gives the same view.
        // With `all` published the withheld sizes add up to what it leaves, so the last one follows from the others.
        const allowed = (s: string, v: number): boolean => (d.segments.get(s) === "below_minimum" ? v >= 1 && v < minimum : v >= minimum);
        const range = (s: string): number[] =>
          d.segments.get(s) === "below_minimum" ? Array.from({ length: minimum - 1 }, (_, i) => i + 1) : Array.from({ length: Math.max(total, 3 * minimum) - minimum + 1 }, (_, i) => minimum + i);
        const hidden = withheld.reduce((a, s) => a + sizes.get(s)!, 0);
        const bounds = new Map(belowCells.map((s) => [s, { lo: Infinity, hi: -Infinity }]));
        const consider = (chosen: Map<string, number>): void => {
          const candidate = new Map(names.map((s) => [s, chosen.get(s) ?? sizes.get(s)!]));
          const all = [...candidate.values()].reduce((a, b) => a + b, 0);
          if (view(decideSuppression(all, candidate, minimum), all, (s) => candidate.get(s)!) !== seen) return;
          for (const s of belowCells) {
            const b = bounds.get(s)!;
            b.lo = Math.min(b.lo, chosen.get(s)!);
            b.hi = Math.max(b.hi, chosen.get(s)!);
          }
        };
        const free = d.all === null ? withheld.slice(0, -1) : withheld;
        const visit = (i: number, chosen: Map<string, number>): void => {
          if (i < free.length) {
            for (const v of range(free[i]!)) visit(i + 1, new Map(chosen).set(free[i]!, v));
            return;
          }
          if (d.all === null) {
            const last = withheld[withheld.length - 1]!;
            const v = hidden - [...chosen.values()].reduce((a, b) => a + b, 0);
            if (!allowed(last, v)) return;
            chosen = new Map(chosen).set(last, v);
          }
          consider(chosen);
        };
        visit(0, new Map());
        for (const [s, b] of bounds) {
          // At most the two ends can be ruled out: 1 (when `all`'s fate depended on the sizes) and minimum − 1 (when
          // the last of two or more complementary cells did). When `all` is below the minimum too, its b segments
          // hold fewer than the minimum together, so each at most minimum − b: that much the reason codes say.
          expect(b.lo, s).toBeLessThanOrEqual(2);
          expect(b.hi, s).toBeGreaterThanOrEqual(d.all === "below_minimum" ? minimum - belowCells.length : minimum - 2);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe("combinedReason", () => {
  it("below_minimum only when every withheld cell is below the minimum: a cell that meets it makes the refusal complementary", () => {
    expect(combinedReason(["below_minimum", "below_minimum"])).toBe("below_minimum");
    expect(combinedReason(["below_minimum", "complementary"])).toBe("complementary");
    expect(combinedReason(["complementary", "below_minimum"])).toBe("complementary");
    expect(combinedReason(["complementary"])).toBe("complementary");
  });
});
