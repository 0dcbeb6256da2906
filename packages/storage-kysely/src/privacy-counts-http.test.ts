/**
 * Privacy of the multi-metric `sample_size` (issue 14), attacked through HTTP on every store. `/benchmarks` and
 * `/segments` give one count for several metrics; `/segments/breakdown` gives each metric's cell size. An
 * attacker who knows how the counts are made (docs/privacy.md) can combine them linearly. A secret (a
 * withheld group's size) is learnable exactly when its indicator vector over the businesses' "atoms"
 * (segment × which metrics a business reports) lies in the span of the published counts' vectors. The tests:
 * - the reviewer's case (S1 publishes only gross_margin, S2 only revenue_growth, S3 withheld with 3
 *   businesses), where counting each segment's own published metrics gave 73 − 30 − 40 = 3;
 * - the same check over random structures around the minimum (fast-check): the server's counts equal the
 *   documented rule, and the rule puts no withheld group's size in the span;
 * - the checker itself finds the leak of the old rule.
 * Every atom is an unknown to the attacker, empty ones included: an attacker who also knows which metrics each
 * business reports (which atoms are empty) holds auxiliary knowledge, out of scope like knowing all but a few
 * businesses of a cell (docs/privacy.md, "What remains possible").
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Storage } from "@benchdata/core";
import { decideSuppression } from "@benchdata/core";
import { importObservations } from "./import/import-observations.ts";
import { type Attacker, attackerOf, privacyStores } from "./test-support/privacy-attacker.ts";

const MIN = 30;
const PERIOD = "2026-Q3";
const METRICS = ["gross_margin", "revenue_growth", "refund_rate"] as const;
type M = (typeof METRICS)[number];
/** Which metrics a business reports: every non-empty subset, by bits (1: gross_margin, 2: revenue_growth, 4: refund_rate). */
const PATTERNS: readonly (readonly M[])[] = [1, 2, 3, 4, 5, 6, 7].map((bits) => METRICS.filter((_, i) => (bits >> i) & 1));

/** Businesses per segment and pattern (index into PATTERNS). */
type Structure = Record<string, readonly number[]>;
interface Atom {
  readonly segment: string;
  readonly metrics: readonly M[];
  readonly n: number;
}
const atomsOf = (s: Structure): Atom[] => Object.entries(s).flatMap(([segment, counts]) => counts.map((n, i) => ({ segment, metrics: PATTERNS[i]!, n })));

async function importStructure(storage: Storage, s: Structure): Promise<void> {
  const lines: string[] = [];
  let id = 0;
  for (const a of atomsOf(s)) {
    for (let k = 0; k < a.n; k++, id++) {
      for (const metric of a.metrics) {
        const value = (metric === "revenue_growth" ? -0.1 : 0.2) + ((id * 37) % 101) / 200;
        lines.push(JSON.stringify({ business_id: `b${id}`, category: "ecommerce", segment: a.segment, period: PERIOD, metric, value }) + "\n");
      }
    }
  }
  await importObservations(storage, lines, { format: "ndjson" });
}

/** What the API shows: each published cell's size, and each answer's multi-metric count and metrics. */
interface Shown {
  /** `${x}/${metric}` → size, x a segment or `all`. */
  readonly cells: Map<string, number>;
  /** x → /benchmarks' sample_size and included metrics (x with something published). */
  readonly answers: Map<string, { n: number; metrics: M[] }>;
}

async function harvest(api: Attacker, segments: readonly string[]): Promise<Shown> {
  const cells = new Map<string, number>();
  const answers = new Map<string, { n: number; metrics: M[] }>();
  for (const m of METRICS) {
    const bd = await api.get(`/segments/breakdown?category=ecommerce&metric=${m}&period=${PERIOD}`);
    if (bd.status !== 200) continue;
    for (const row of bd.body.segments) if (!row.withheld) cells.set(`${row.segment}/${m}`, row.sample_size);
  }
  for (const x of ["all", ...segments]) {
    const b = await api.get(`/benchmarks?category=ecommerce&period=${PERIOD}${x === "all" ? "" : `&segment=${x}`}`);
    if (b.status === 200) answers.set(x, { n: b.body.sample_size, metrics: Object.keys(b.body.metrics).filter((m): m is M => (METRICS as readonly string[]).includes(m)) });
  }
  const seg = await api.get(`/segments?category=ecommerce&period=${PERIOD}`);
  for (const row of seg.body.segments ?? []) {
    // /segments and /benchmarks count a segment alike.
    expect(row.sample_size, row.segment).toBe(answers.get(row.segment)?.n ?? null);
  }
  return { cells, answers };
}

/** A set of businesses as a vector over the atoms. */
type Vec = number[];
const vecOf = (atoms: readonly Atom[], pick: (a: Atom) => boolean): Vec => atoms.map((a) => (pick(a) ? 1 : 0));
const sizeOf = (atoms: readonly Atom[], v: Vec): number => v.reduce((t, x, i) => t + x * atoms[i]!.n, 0);
const inX = (x: string) => (a: Atom) => x === "all" || a.segment === x;
const reports = (ms: readonly M[]) => (a: Atom) => a.metrics.some((m) => ms.includes(m));

/** Whether `target` is a linear combination of `rows` (Gaussian elimination; small integer vectors). */
function inSpan(rows: readonly Vec[], target: Vec): boolean {
  const basis: Vec[] = [];
  const pivots: number[] = [];
  const reduce = (v: Vec): Vec => {
    const r = [...v];
    basis.forEach((b, k) => {
      const f = r[pivots[k]!]!;
      if (Math.abs(f) > 1e-9) for (let i = 0; i < r.length; i++) r[i]! -= f * b[i]!;
    });
    return r;
  };
  for (const row of rows) {
    const r = reduce(row);
    const p = r.findIndex((x) => Math.abs(x) > 1e-9);
    if (p < 0) continue;
    const scaled = r.map((x) => x / r[p]!);
    // Keep the basis fully reduced: clear the new pivot from the earlier rows.
    basis.forEach((b) => {
      const f = b[p]!;
      if (Math.abs(f) > 1e-9) for (let i = 0; i < b.length; i++) b[i]! -= f * scaled[i]!;
    });
    basis.push(scaled);
    pivots.push(p);
  }
  return reduce(target).every((x) => Math.abs(x) < 1e-9);
}

/**
 * The counts the attacker holds as vectors: every published cell, and every answer's count read as the set the
 * documented rule says it is (`rule`), after checking that the server's number is that set's size.
 */
function publishedVectors(atoms: readonly Atom[], shown: Shown, rule: (x: string, included: readonly M[]) => Vec): Vec[] {
  const rows: Vec[] = [];
  for (const [key, n] of shown.cells) {
    const [x, m] = key.split("/") as [string, M];
    const v = vecOf(atoms, (a) => inX(x)(a) && a.metrics.includes(m));
    expect(sizeOf(atoms, v), key).toBe(n);
    rows.push(v);
  }
  for (const [x, { n, metrics }] of shown.answers) {
    const v = rule(x, metrics);
    expect(sizeOf(atoms, v), `sample_size of ${x}`).toBe(n);
    rows.push(v);
  }
  return rows;
}

/** docs/privacy.md's rule: distinct businesses of the basis metrics, or the largest cell when that is larger. */
function documentedRule(atoms: readonly Atom[], shown: Shown): (x: string, included: readonly M[]) => Vec {
  // The metrics whose every cell is published: `all`'s, and each segment's that has businesses for it.
  const segments = [...new Set(atoms.map((a) => a.segment))];
  const basis = METRICS.filter(
    (m) => shown.cells.has(`all/${m}`) && segments.every((s) => shown.cells.has(`${s}/${m}`) || !atoms.some((a) => a.n > 0 && a.segment === s && a.metrics.includes(m))),
  );
  return (x, included) => {
    const union = vecOf(atoms, (a) => inX(x)(a) && reports(included.filter((m) => basis.includes(m)))(a));
    let largest = union;
    for (const m of included) {
      const cell = vecOf(atoms, (a) => inX(x)(a) && a.metrics.includes(m));
      if (sizeOf(atoms, cell) > sizeOf(atoms, largest)) largest = cell;
    }
    return largest;
  };
}

/** The rule before the fix: each answer counted the distinct businesses of its own published metrics. */
const ownMetricsRule = (atoms: readonly Atom[]) => (x: string, included: readonly M[]): Vec => vecOf(atoms, (a) => inX(x)(a) && reports(included)(a));

/**
 * The secrets: every group below the minimum that the publication rules withhold. For each metric, any set of
 * withheld cells of segments; any set of segments with nothing published; and over any set of segments the
 * businesses in none of their segment's published cells. Each as (label, vector), kept when its size is 1 to
 * MIN − 1.
 */
function secrets(atoms: readonly Atom[], shown: Shown): { label: string; v: Vec }[] {
  const segments = [...new Set(atoms.map((a) => a.segment))].sort();
  const out: { label: string; v: Vec }[] = [];
  const subsets = <T>(xs: readonly T[]): T[][] => xs.reduce<T[][]>((acc, x) => [...acc, ...acc.map((s) => [...s, x])], [[]]).slice(1);
  for (const m of METRICS) {
    const withheld = segments.filter((s) => !shown.cells.has(`${s}/${m}`) && atoms.some((a) => a.n > 0 && a.segment === s && a.metrics.includes(m)));
    // A proper part of a metric's withheld cells is secret whatever its size: the cells' sizes are not published.
    for (const set of subsets(withheld)) out.push({ label: `${set.join("+")} reporting ${m}${set.length < withheld.length ? " (part)" : ""}`, v: vecOf(atoms, (a) => set.includes(a.segment) && a.metrics.includes(m)) });
  }
  const silent = segments.filter((s) => !METRICS.some((m) => shown.cells.has(`${s}/${m}`)));
  for (const set of subsets(silent)) out.push({ label: `segments ${set.join("+")}`, v: vecOf(atoms, (a) => set.includes(a.segment)) });
  // Businesses in no published cell of their own segment, over any set of segments (silent ones wholly).
  const outside = (a: Atom): boolean => !a.metrics.some((m) => shown.cells.has(`${a.segment}/${m}`));
  for (const set of subsets(segments)) out.push({ label: `${set.join("+")} outside their published cells`, v: vecOf(atoms, (a) => set.includes(a.segment) && outside(a)) });
  return out.filter(({ label, v }) => {
    const n = sizeOf(atoms, v);
    return n > 0 && (n < MIN || label.endsWith("(part)"));
  });
}

/**
 * What `/segments/breakdown` also tells: a segment without a row for a metric has no business reporting it, so
 * every atom of that segment whose pattern has the metric is empty (a published fact, not auxiliary knowledge).
 */
const absentCells = (atoms: readonly Atom[]): Vec[] =>
  atoms.flatMap((a, i) => (a.metrics.some((m) => !atoms.some((b) => b.n > 0 && b.segment === a.segment && b.metrics.includes(m))) ? [atoms.map((_, j) => (j === i ? 1 : 0))] : []));

/** The secrets an attacker holding `rows` (and the absent cells' empty atoms) can compute exactly. */
const learnable = (atoms: readonly Atom[], rows: readonly Vec[], shown: Shown): string[] =>
  secrets(atoms, shown).filter(({ v }) => inSpan([...rows, ...absentCells(atoms)], v)).map(({ label, v }) => `${label} (${sizeOf(atoms, v)})`);

/** The reviewer's case: S1 30 businesses (all gross_margin, 27 also revenue_growth), S2 40 (all revenue_growth, 27 also gross_margin), S3 3 (both). */
const REVIEWERS_CASE: Structure = { s1: [3, 0, 27, 0, 0, 0, 0], s2: [0, 13, 27, 0, 0, 0, 0], s3: [0, 0, 3, 0, 0, 0, 0] };

describe("the span check finds what a subtraction finds", () => {
  it("the old rule's counts (each segment's own published metrics) put S3's size in the span; the documented rule's do not", () => {
    const atoms = atomsOf(REVIEWERS_CASE);
    // What the server publishes per metric (per-metric suppression, unchanged): s1 gross_margin 30 and s2
    // revenue_growth 40 published; s1's revenue_growth (27), s2's gross_margin (27) and s3 withheld.
    const cells = new Map([["all/gross_margin", 60], ["all/revenue_growth", 70], ["s1/gross_margin", 30], ["s2/revenue_growth", 40]]);
    const old: Shown = { cells, answers: new Map([["all", { n: 73, metrics: [...METRICS] }], ["s1", { n: 30, metrics: ["gross_margin"] }], ["s2", { n: 40, metrics: ["revenue_growth"] }]]) };
    expect(learnable(atoms, publishedVectors(atoms, old, ownMetricsRule(atoms)), old)).toContain("s1+s2+s3 outside their published cells (3)");
    const now: Shown = { cells, answers: new Map([["all", { n: 70, metrics: [...METRICS] }], ["s1", { n: 30, metrics: ["gross_margin"] }], ["s2", { n: 40, metrics: ["revenue_growth"] }]]) };
    expect(learnable(atoms, publishedVectors(atoms, now, documentedRule(atoms, now)), now)).toEqual([]);
  });
});

/** Random structures around the minimum: up to 3 segments, each pattern empty, small or near the minimum. */
const structures = (() => {
  const count = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 20, max: 45 }));
  return fc
    .array(fc.array(count, { minLength: PATTERNS.length, maxLength: PATTERNS.length }), { minLength: 1, maxLength: 3 })
    .filter((segs) => segs.some((c) => c.some((n) => n > 0)))
    .map((segs): Structure => Object.fromEntries(segs.map((c, i) => [`s${i}`, c])));
})();

/** What the server shows for a structure, computed without it: per-metric suppression (core's) and a counting rule. */
function modelShown(s: Structure, rule: (atoms: readonly Atom[], shown: Shown) => (x: string, included: readonly M[]) => Vec): { atoms: Atom[]; shown: Shown } {
  const atoms = atomsOf(s);
  const size = (pick: (a: Atom) => boolean): number => sizeOf(atoms, vecOf(atoms, pick));
  const cells = new Map<string, number>();
  for (const m of METRICS) {
    const all = size((a) => a.metrics.includes(m));
    if (all === 0) continue;
    const sizes = new Map<string, number>();
    for (const seg of Object.keys(s)) {
      const n = size((a) => a.segment === seg && a.metrics.includes(m));
      if (n > 0) sizes.set(seg, n);
    }
    const d = decideSuppression(all, sizes, MIN);
    if (d.all === null) cells.set(`all/${m}`, all);
    for (const [seg, reason] of d.segments) if (reason === null) cells.set(`${seg}/${m}`, sizes.get(seg)!);
  }
  const shown: Shown = { cells, answers: new Map() };
  const counted = rule(atoms, shown);
  for (const x of ["all", ...Object.keys(s)]) {
    const included = METRICS.filter((m) => cells.has(`${x}/${m}`));
    if (included.length > 0) shown.answers.set(x, { n: sizeOf(atoms, counted(x, included)), metrics: included });
  }
  return { atoms, shown };
}

describe("the rule itself, over many structures (no server)", () => {
  it("property: the documented rule puts no withheld group's size in the span", () => {
    fc.assert(
      fc.property(structures, (s) => {
        const { atoms, shown } = modelShown(s, documentedRule);
        expect(learnable(atoms, publishedVectors(atoms, shown, documentedRule(atoms, shown)), shown)).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });

  it("the same property finds a leak in the old rule (each answer counting its own published metrics)", () => {
    const own = (atoms: readonly Atom[]) => ownMetricsRule(atoms);
    expect(() =>
      fc.assert(
        fc.property(structures, (s) => {
          const { atoms, shown } = modelShown(s, own);
          expect(learnable(atoms, publishedVectors(atoms, shown, own(atoms)), shown)).toEqual([]);
        }),
        { numRuns: 2000, seed: 14 },
      ),
    ).toThrow(/Property failed/);
  });
});

const stores = await privacyStores("privacy-counts");

for (const [name, open] of Object.entries(stores)) {
  describe(`multi-metric sample_size through HTTP: ${name}`, () => {
    it("the reviewer's case: all's count minus the segments' counts no longer gives the withheld segment's 3 businesses", async () => {
      const storage = await open();
      await storage.migrate?.();
      try {
        await importStructure(storage, REVIEWERS_CASE);
        const api = await attackerOf(storage);
        const shown = await harvest(api, ["s1", "s2", "s3"]);
        expect(Object.fromEntries(shown.cells)).toEqual({ "all/gross_margin": 60, "all/revenue_growth": 70, "s1/gross_margin": 30, "s2/revenue_growth": 40 });
        // all's count is its largest cell (70), not the 73 distinct businesses: the metrics are not published alike.
        expect(Object.fromEntries([...shown.answers].map(([x, a]) => [x, a.n]))).toEqual({ all: 70, s1: 30, s2: 40 });
        const atoms = atomsOf(REVIEWERS_CASE);
        expect(learnable(atoms, publishedVectors(atoms, shown, documentedRule(atoms, shown)), shown)).toEqual([]);
        const seg = await api.get(`/segments?category=ecommerce&period=${PERIOD}`);
        expect(seg.text).not.toMatch(/"sample_size":(3|73)\b/);
      } finally {
        await storage.close?.();
      }
    });

    it("the fourth review's case: withheld businesses' metric patterns, with the cells the breakdown lists, no longer pin a withheld cell", async () => {
      const storage = await open();
      await storage.migrate?.();
      try {
        // s1 30 and s2 30 report both; s3 1 only gross_margin; s4 29 both; s5 1 only revenue_growth. Per metric,
        // all, s1 and s2 are published and the rest withheld. Counting both metrics together told that 31 withheld
        // businesses report one or the other and 30 each, so 1 reports gross_margin and not revenue_growth: s3's,
        // the only withheld segment with a gross_margin cell and none for revenue_growth. So s3 = 1, s4 = 29.
        const structure: Structure = { s1: [0, 0, 30, 0, 0, 0, 0], s2: [0, 0, 30, 0, 0, 0, 0], s3: [1, 0, 0, 0, 0, 0, 0], s4: [0, 0, 29, 0, 0, 0, 0], s5: [0, 1, 0, 0, 0, 0, 0] };
        await importStructure(storage, structure);
        const api = await attackerOf(storage);
        const shown = await harvest(api, Object.keys(structure));
        // Neither metric hides nothing, so nothing is counted together: each answer shows its largest cell.
        expect(Object.fromEntries([...shown.answers].map(([x, a]) => [x, a.n]))).toEqual({ all: 90, s1: 30, s2: 30 });
        const atoms = atomsOf(structure);
        expect(learnable(atoms, publishedVectors(atoms, shown, documentedRule(atoms, shown)), shown)).toEqual([]);
      } finally {
        await storage.close?.();
      }
    });

    it("when every segment publishes every metric, sample_size is still the exact distinct businesses", async () => {
      const storage = await open();
      await storage.migrate?.();
      try {
        // s1: 10 only gross_margin, 10 only revenue_growth, 25 both; s2: 40 both.
        const structure: Structure = { s1: [10, 10, 25, 0, 0, 0, 0], s2: [0, 0, 40, 0, 0, 0, 0] };
        await importStructure(storage, structure);
        const api = await attackerOf(storage);
        const shown = await harvest(api, ["s1", "s2"]);
        expect(Object.fromEntries([...shown.answers].map(([x, a]) => [x, a.n]))).toEqual({ all: 85, s1: 45, s2: 40 });
      } finally {
        await storage.close?.();
      }
    });

    it("property: over random structures around the minimum, the counts follow the documented rule and no withheld group's size is in their span", async () => {
      const storage = await open();
      await storage.migrate?.();
      try {
        const api = await attackerOf(storage);
        await fc.assert(
          fc.asyncProperty(structures, async (s) => {
            await importStructure(storage, s);
            const shown = await harvest(api, Object.keys(s));
            const atoms = atomsOf(s);
            expect(learnable(atoms, publishedVectors(atoms, shown, documentedRule(atoms, shown)), shown)).toEqual([]);
          }),
          { numRuns: name === "memory" ? 150 : 15 },
        );
      } finally {
        await storage.close?.();
      }
    }, 120_000);
  });
}
