/**
 * Privacy of the published statistics, attacked through the real HTTP API on every store (issue 14). Data is
 * imported as the operator would (`importObservations`), then an attacker with an ordinary key asks every
 * data endpoint and tries to learn what the publication minimum hides:
 * - the size of a withheld cell (it must appear nowhere),
 * - a withheld segment's mean, count or histogram by subtracting published aggregates (differencing),
 *   on the exact case (dtc 30, b2b 10, all 40) and over random segment sizes around the minimum;
 * - a published cell's individual values, by binary search on percentile ranks (reconstruction).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Storage } from "@benchdata/core";
import { createPrng, percentileRank, roundTo1 } from "@benchdata/core";
import { importObservations } from "./import/import-observations.ts";
import { type Res, attackerOf, privacyStores } from "./test-support/privacy-attacker.ts";

const MIN = 30;
const PERIOD = "2026-Q3";
const stores = await privacyStores("privacy-http");

/** Imports one metric's values per segment (each business in one segment) into ecommerce, PERIOD. */
async function importSegments(storage: Storage, segments: Record<string, number[]>, metric = "gross_margin"): Promise<void> {
  const lines: string[] = [];
  let id = 0;
  for (const [segment, values] of Object.entries(segments)) {
    for (const value of values) lines.push(JSON.stringify({ business_id: `b${id++}`, category: "ecommerce", segment, period: PERIOD, metric, value }) + "\n");
  }
  await importObservations(storage, lines, { format: "ndjson" });
}

/** What an attacker can collect about each cell: published (segment → n, mean, histogram counts), and every body. */
interface Harvest {
  readonly published: Map<string, { n: number; mean: number; counts: number[] | null }>;
  readonly bodies: string[];
}

/** Asks every endpoint that reads the cells of ecommerce/gross_margin in PERIOD. */
async function harvest(api: Awaited<ReturnType<typeof attackerOf>>, segments: readonly string[]): Promise<Harvest> {
  const published = new Map<string, { n: number; mean: number; counts: number[] | null }>();
  const bodies: string[] = [];
  const q = (s: string): string => (s === "all" ? "" : `&segment=${s}`);
  const keep = (r: Res): Res => (bodies.push(r.text), r);
  for (const s of ["all", ...segments]) {
    const b = keep(await api.get(`/benchmarks?category=ecommerce&period=${PERIOD}${q(s)}`));
    const d = keep(await api.get(`/benchmarks/distribution?category=ecommerce&metric=gross_margin&buckets=10&period=${PERIOD}${q(s)}`));
    keep(await api.get(`/benchmarks/percentile?category=ecommerce&metric=gross_margin&value=0.5&period=${PERIOD}${q(s)}`));
    keep(await api.get(`/benchmarks/history?category=ecommerce&metric=gross_margin${q(s)}`));
    if (b.status === 200 && b.body.metrics.gross_margin) published.set(s, { n: b.body.sample_size, mean: b.body.metrics.gross_margin.mean, counts: null });
    if (d.status === 200) published.set(s, { n: d.body.sample_size, mean: d.body.stats.mean, counts: d.body.histogram.map((h: { count: number }) => h.count) });
  }
  const bd = keep(await api.get(`/segments/breakdown?category=ecommerce&metric=gross_margin&period=${PERIOD}`));
  if (bd.status === 200) for (const row of bd.body.segments) if (!row.withheld) published.set(row.segment, { ...(published.get(row.segment) ?? { counts: null }), n: row.sample_size, mean: row.percentiles.mean });
  keep(await api.get(`/segments?category=ecommerce&period=${PERIOD}`));
  // A merchant in each segment: compare, insights, score, report.
  for (const s of segments) {
    const merchant = `m-${s}`;
    keep(await api.post("/merchant/vcfs", { merchant_id: merchant, category: "ecommerce", segment: s, period: PERIOD, metrics: { gross_margin: 0.5 } }));
    for (const path of ["/merchant/compare", "/merchant/insights", "/merchant/score", "/report"]) keep(await api.get(`${path}?merchant_id=${merchant}`));
  }
  return { published, bodies };
}

/**
 * The differencing attack: `all` minus any set of published segments. Returns what it learned about a group of
 * fewer than the minimum businesses (n and mean), or null.
 */
function difference(h: Harvest): { n: number; mean: number } | null {
  const all = h.published.get("all");
  if (all === undefined) return null;
  const segs = [...h.published].filter(([s]) => s !== "all");
  for (let mask = 1; mask < 1 << segs.length; mask++) {
    let n = all.n;
    let sum = all.mean * all.n;
    for (let i = 0; i < segs.length; i++) {
      if ((mask & (1 << i)) === 0) continue;
      const [, p] = segs[i]!;
      n -= p.n;
      sum -= p.mean * p.n;
    }
    if (n > 0 && n < MIN) return { n, mean: sum / n };
  }
  return null;
}

const meanOf = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const spread = (n: number, from: number, to: number): number[] => Array.from({ length: n }, (_, i) => from + ((to - from) * i) / Math.max(1, n - 1));

for (const [name, open] of Object.entries(stores)) {
  describe(`privacy through HTTP: ${name}`, () => {
    it("the issue's reproduction (dtc 30, b2b 13, all 43): b2b's mean, size and histogram cannot be derived from any answer", async () => {
      const storage = await open();
      await storage.migrate?.();
      try {
        const dtc = spread(30, 0.3, 0.6);
        const b2b = spread(13, 0.61, 0.9).map((x) => Math.round(x * 1e4) / 1e4);
        await importSegments(storage, { dtc, b2b });
        const api = await attackerOf(storage);
        const h = await harvest(api, ["dtc", "b2b"]);
        // Nothing is published. b2b is below the minimum; dtc would leave it as all − dtc, so it is withheld too
        // (complementary); and all would still bound it (b2b ≤ 43 − 30, since a complementary cell holds at least
        // the minimum), so all is withheld too.
        expect([...h.published.keys()]).toEqual([]);
        expect(difference(h)).toBeNull();
        const bd = await api.get(`/segments/breakdown?category=ecommerce&metric=gross_margin&period=${PERIOD}`);
        expect(bd.status).toBe(404);
        expect(bd.body.code).toBe("data.insufficient_sample");
        const all = await api.get(`/benchmarks/distribution?category=ecommerce&metric=gross_margin&period=${PERIOD}`);
        expect(all.status).toBe(404);
        expect(all.body.detail).toContain("complementary");
        const seg = await api.get(`/segments?category=ecommerce&period=${PERIOD}`);
        expect(seg.body.segments).toEqual([
          { segment: "b2b", sample_size: null, published: false, withheld_reason: "below_minimum" },
          { segment: "dtc", sample_size: null, published: false, withheld_reason: "complementary" },
        ]);
        const dist = await api.get(`/benchmarks/distribution?category=ecommerce&metric=gross_margin&segment=dtc&period=${PERIOD}`);
        expect(dist.status).toBe(404);
        expect(dist.body.code).toBe("data.insufficient_sample");
        expect(dist.body.detail).toContain("complementary");
        // Nothing anywhere carries b2b's size (13), dtc's (30), or b2b's mean or sum.
        const b2bMean = meanOf(b2b).toFixed(6).replace(/0+$/, "");
        for (const body of h.bodies) {
          expect(body).not.toMatch(/"sample_size":(13|30)\b/);
          expect(body).not.toMatch(/\b13 in\b|\b30 in\b|at most 13|at most 30/);
          expect(body).not.toContain(b2bMean);
        }
        // The merchant endpoints rank nothing in either segment and do not say why with a number.
        const compare = await api.get("/merchant/compare?merchant_id=m-b2b");
        expect(compare.status).toBe(404);
        expect(compare.body.code).toBe("data.insufficient_sample");
        const insights = await api.get("/merchant/insights?merchant_id=m-dtc");
        expect(insights.status).toBe(200);
        expect(insights.text).not.toMatch(/"sample_size":\d/);
        // Nothing ranked: no finding carries a percentile of the withheld cell.
        expect(insights.text).not.toContain('"percentile"');
      } finally {
        await storage.close?.();
      }
    });

    it("with a larger dtc (65) all is published and both segments withheld: b2b's size is bounded by nothing the codes do not say", async () => {
      const storage = await open();
      await storage.migrate?.();
      try {
        const b2b = spread(13, 0.61, 0.9).map((x) => Math.round(x * 1e4) / 1e4);
        await importSegments(storage, { dtc: spread(65, 0.3, 0.6), b2b });
        const api = await attackerOf(storage);
        const h = await harvest(api, ["dtc", "b2b"]);
        expect([...h.published.keys()]).toEqual(["all"]);
        expect(h.published.get("all")!.n).toBe(78);
        expect(difference(h)).toBeNull();
        const bd = await api.get(`/segments/breakdown?category=ecommerce&metric=gross_margin&period=${PERIOD}`);
        expect(bd.body.segments).toEqual([
          { segment: "all", sample_size: 78, withheld: false, withheld_reason: null, percentiles: expect.any(Object) },
          { segment: "b2b", sample_size: null, withheld: true, withheld_reason: "below_minimum", percentiles: null },
          { segment: "dtc", sample_size: null, withheld: true, withheld_reason: "complementary", percentiles: null },
        ]);
        // What the codes allow: dtc ≥ 30 and b2b from 1 to 29 with dtc + b2b = 78: every b2b size from 1 to 29 fits.
        for (const body of h.bodies) {
          expect(body).not.toMatch(/"sample_size":(13|65)\b/);
          expect(body).not.toContain(meanOf(b2b).toFixed(6).replace(/0+$/, ""));
        }
      } finally {
        await storage.close?.();
      }
    });

    it("a business reported under two segments (s1 30, s2 30, all 59): all − s1 − s2 would give its value; only all is published", async () => {
      const storage = await open();
      await storage.migrate?.();
      try {
        const row = (business_id: string, segment: string, value: number): string => JSON.stringify({ business_id, category: "ecommerce", segment, period: PERIOD, metric: "gross_margin", value }) + "\n";
        const lines: string[] = [];
        for (let i = 0; i < 29; i++) lines.push(row(`a${i}`, "s1", 0.3 + i / 100), row(`b${i}`, "s2", 0.2 + i / 200));
        lines.push(row("x", "s1", 0.8123), row("x", "s2", 0.8123));
        await importObservations(storage, lines, { format: "ndjson" });
        const api = await attackerOf(storage);
        const h = await harvest(api, ["s1", "s2"]);
        // The review's attack: 59 × mean_all − 30 × mean_s1 − 30 × mean_s2 = −0.8123. Nothing to subtract now.
        expect([...h.published.keys()]).toEqual(["all"]);
        expect(h.published.get("all")!.n).toBe(59);
        for (const body of h.bodies) expect(body).not.toMatch(/"sample_size":30\b/);
      } finally {
        await storage.close?.();
      }
    });

    it("sample_size of several metrics counts the published metrics' distinct businesses, and nothing of a withheld metric", async () => {
      const storage = await open();
      await storage.migrate?.();
      try {
        // dtc: d0..d29 report gross_margin, d20..d59 revenue_growth (10 report both), x0..x4 only cart_abandon_rate
        // (5 businesses: withheld below the minimum). Imported as the operator would.
        const lines: string[] = [];
        const row = (business_id: string, metric: string, value: number): number => lines.push(JSON.stringify({ business_id, category: "ecommerce", segment: "dtc", period: PERIOD, metric, value }) + "\n");
        for (let i = 0; i < 30; i++) row(`d${i}`, "gross_margin", 0.3 + i / 100);
        for (let i = 20; i < 60; i++) row(`d${i}`, "revenue_growth", i / 200);
        for (let i = 0; i < 5; i++) row(`x${i}`, "cart_abandon_rate", 0.6 + i / 100);
        await importObservations(storage, lines, { format: "ndjson" });
        const api = await attackerOf(storage);
        for (const q of ["", "&segment=dtc"]) {
          const b = await api.get(`/benchmarks?category=ecommerce&period=${PERIOD}${q}`);
          expect(b.status).toBe(200);
          expect(Object.keys(b.body.metrics).sort()).toEqual(["gross_margin", "revenue_growth"]);
          // 60 distinct: not the largest cell (40), not the sum (70), not every business of the cell (65).
          expect(b.body.sample_size).toBe(60);
        }
        const seg = await api.get(`/segments?category=ecommerce&period=${PERIOD}`);
        expect(seg.body.segments).toEqual([{ segment: "dtc", sample_size: 60, published: true, withheld_reason: null }]);
        // The withheld metric's 5 businesses show nowhere: neither alone nor added to a published count.
        const h = await harvest(api, ["dtc"]);
        for (const body of [...h.bodies, seg.text]) expect(body).not.toMatch(/"sample_size":(5|65|35|45)\b/);
      } finally {
        await storage.close?.();
      }
    });

    it("property: over random segment sizes around the minimum, no subtraction of published means, counts or histograms reaches fewer than the minimum businesses", async () => {
      const storage = await open();
      await storage.migrate?.();
      try {
        const api = await attackerOf(storage);
        await fc.assert(
          fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 2 * MIN + 5 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 1000 }), async (sizes, salt) => {
            const segments: Record<string, number[]> = {};
            sizes.forEach((n, i) => (segments[`s${i}`] = spread(n, 0.1 + i / 10 + salt / 1e5, 0.5 + i / 10 + salt / 1e5)));
            await importSegments(storage, segments);
            const names = Object.keys(segments);
            const h = await harvest(api, names);
            // Means and counts: no published combination isolates a small group.
            expect(difference(h)).toBeNull();
            // Every cell below the minimum is withheld, and its size is in no body.
            for (const [s, values] of Object.entries(segments)) {
              if (values.length < MIN) expect(h.published.has(s)).toBe(false);
            }
            const hidden = new Set(names.filter((s) => !h.published.has(s)).map((s) => segments[s]!.length));
            const shown = new Set([...h.published.values()].map((p) => p.n));
            for (const n of hidden) {
              if (shown.has(n)) continue;
              for (const body of h.bodies) expect(body).not.toContain(`"sample_size":${n},`);
            }
            // Histograms: when all and a published segment share their edges, all's counts minus the segment's
            // cover either nothing or at least the minimum businesses.
            const all = h.published.get("all");
            if (all?.counts) {
              const rest = [...all.counts];
              for (const [s, p] of h.published) if (s !== "all" && p.counts && p.counts.length === rest.length) p.counts.forEach((c, i) => (rest[i] = rest[i]! - c));
              const left = rest.reduce((a, b) => a + b, 0);
              const fromSegments = [...h.published].filter(([s]) => s !== "all").reduce((a, [, p]) => a + p.n, 0);
              expect(all.n - fromSegments === 0 || all.n - fromSegments >= MIN).toBe(true);
              expect(left).toBeGreaterThanOrEqual(0);
            }
          }),
          { numRuns: name === "memory" ? 40 : 8 },
        );
      } finally {
        await storage.close?.();
      }
    }, 120_000);
  });
}

/**
 * The reconstruction attack on rank answers (issue 14, route 3). Assuming exact ranks (scipy's mean kind, one
 * decimal), the k-th smallest value is where the rank leaves 100·(k − 1)/n: a binary search of `steps` queries
 * per business between `lo` and `hi` finds it. Returns the values found and the queries made.
 */
async function reconstruct(rank: (v: number) => Promise<number>, n: number, lo: number, hi: number, steps = 40): Promise<{ values: number[]; queries: number }> {
  const values: number[] = [];
  let queries = 0;
  let from = lo;
  for (let k = 1; k <= n; k++) {
    const below = roundTo1((100 * (k - 1)) / n);
    let a = from;
    let b = hi;
    for (let i = 0; i < steps; i++) {
      const mid = (a + b) / 2;
      queries++;
      if ((await rank(mid)) > below) b = mid;
      else a = mid;
    }
    values.push(b);
    from = a;
  }
  return { values, queries };
}

/** How many of `found` equal one of `truth` to 1e-9: the values the attack recovered. */
const recovered = (found: number[], truth: number[]): number => found.filter((f) => truth.some((t) => Math.abs(f - t) < 1e-9)).length;

for (const [name, open] of Object.entries(stores)) {
  describe(`rank queries cannot reconstruct a cell: ${name}`, () => {
    it("binary search on /benchmarks/percentile recovers none of a 30-business cell's values (the same attack recovers all 30 from exact ranks)", async () => {
      const storage = await open();
      await storage.migrate?.();
      try {
        const prng = createPrng("privacy-reconstruction");
        const truth = Array.from({ length: 30 }, () => 0.2 + prng.next() * 0.6).sort((a, b) => a - b);
        const lines = truth.map((value, i) => JSON.stringify({ business_id: `r${i}`, category: "saas", segment: "smb", period: PERIOD, metric: "gross_margin", value }) + "\n");
        await importObservations(storage, lines, { format: "ndjson" });
        const api = await attackerOf(storage);
        // The attack is competent: against exact ranks it recovers every value, at 40 queries per business.
        const sorted = Float64Array.from(truth);
        const exact = await reconstruct(async (v) => roundTo1(percentileRank(sorted, v)), 30, 0, 1);
        expect(recovered(exact.values, truth)).toBe(30);
        expect(exact.queries).toBe(1200);
        // Through the API it learns nothing of the kind.
        const viaHttp = await reconstruct(async (v) => {
          const r = await api.get(`/benchmarks/percentile?category=saas&metric=gross_margin&period=${PERIOD}&value=${v}`);
          expect(r.status).toBe(200);
          return r.body.percentile;
        }, 30, 0, 1);
        expect(recovered(viaHttp.values, truth)).toBe(0);
      } finally {
        await storage.close?.();
      }
    }, 120_000);

    it("ranks depend on the published percentile set alone: two cells with the same set answer every value alike, merchant ranks included", async () => {
      const storage = await open();
      await storage.migrate?.();
      try {
        const a = spread(30, 0.2, 0.8);
        // Moving values no type-7 percentile of 30 reads (positions 0, 5 and 29) keeps the set, changes the cell.
        const b = [...a];
        b[0] = 0.05;
        b[5] = (a[4]! + a[5]!) / 2;
        b[29] = 0.95;
        const rows = (period: string, values: number[]) => values.map((value, i) => JSON.stringify({ business_id: `p${i}`, category: "saas", segment: "smb", period, metric: "gross_margin", value }) + "\n");
        await importObservations(storage, [...rows("2026-Q2", a), ...rows("2026-Q3", b)], { format: "ndjson" });
        const api = await attackerOf(storage);
        const setA = (await api.get("/benchmarks?category=saas&period=2026-Q2")).body.metrics.gross_margin;
        const setB = (await api.get("/benchmarks?category=saas&period=2026-Q3")).body.metrics.gross_margin;
        const { mean: _ma, ...pa } = setA;
        const { mean: _mb, ...pb } = setB;
        expect(pa).toEqual(pb);
        for (let i = 0; i <= 100; i++) {
          const v = i / 100;
          const [ra, rb] = await Promise.all(["2026-Q2", "2026-Q3"].map((p) => api.get(`/benchmarks/percentile?category=saas&metric=gross_margin&period=${p}&value=${v}`)));
          expect(ra!.body.percentile, String(v)).toBe(rb!.body.percentile);
        }
        for (const [period, v] of [["2026-Q2", 0.07], ["2026-Q3", 0.07], ["2026-Q2", 0.9], ["2026-Q3", 0.9]] as const) {
          await api.post("/merchant/vcfs", { merchant_id: `m-${period}-${v}`, category: "saas", period, metrics: { gross_margin: v } });
        }
        const rankOf = async (period: string, v: number) => (await api.get(`/merchant/compare?merchant_id=m-${period}-${v}`)).body.metrics[0].percentile;
        expect(await rankOf("2026-Q2", 0.07)).toBe(await rankOf("2026-Q3", 0.07));
        expect(await rankOf("2026-Q2", 0.9)).toBe(await rankOf("2026-Q3", 0.9));
      } finally {
        await storage.close?.();
      }
    }, 120_000);
  });
}
