/**
 * A withheld cell gives the same reason on every endpoint that reads it (issue 29), through HTTP on every store.
 * Each endpoint is asked about each cell (and each segment, where an endpoint answers for several metrics at once)
 * and the reasons are compared with each other and with `decideSuppression`.
 */
import fc from "fast-check";
import { describe, expect, it, onTestFinished } from "vitest";
import type { Storage, WithheldReason } from "@benchdata/core";
import { decideSuppression } from "@benchdata/core";
import { importObservations } from "./import/import-observations.ts";
import { type Attacker, type Res, attackerOf, privacyStores } from "./test-support/privacy-attacker.ts";

const MIN = 30;
const PERIOD = "2025-Q4";
const METRICS = ["gross_margin", "revenue_growth"] as const;
type Metric = (typeof METRICS)[number];
type Reason = WithheldReason | null;
/** Businesses per metric and segment (each business in one segment; `seg-i` reports every metric it has a row for). */
type Sizes = Record<Metric, Record<string, number>>;

const stores = await privacyStores("privacy-reasons");

async function importSizes(storage: Storage, sizes: Partial<Sizes>): Promise<void> {
  const lines: string[] = [];
  for (const [metric, segments] of Object.entries(sizes)) {
    for (const [segment, n] of Object.entries(segments)) {
      for (let i = 0; i < n; i++) lines.push(JSON.stringify({ business_id: `${segment}-${i}`, category: "ecommerce", segment, period: PERIOD, metric, value: 0.2 + (i % 17) / 40 }) + "\n");
    }
  }
  await importObservations(storage, lines, { format: "ndjson" });
}

/** The reason an answer gives: null when it publishes (200), else the code its 404 `data.insufficient_sample` names. */
function refusal(r: Res): Reason {
  if (r.status === 200) return null;
  expect(r.body.code, r.text).toBe("data.insufficient_sample");
  const m = /\(reason: (below_minimum|complementary)\)/.exec(r.body.detail);
  expect(m, r.body.detail).not.toBeNull();
  return m![1] as WithheldReason;
}

let merchants = 0;

/** A merchant snapshot of ecommerce in PERIOD holding `metrics`; returns its id. */
async function snapshot(api: Attacker, segment: string, metrics: readonly Metric[]): Promise<string> {
  const merchant = `m${merchants++}`;
  const body = { merchant_id: merchant, category: "ecommerce", ...(segment === "all" ? {} : { segment }), period: PERIOD, metrics: Object.fromEntries(metrics.map((m) => [m, 0.5])) };
  const r = await api.post("/merchant/vcfs", body);
  expect(r.status, r.text).toBe(200);
  return merchant;
}

/** Every endpoint that reads the one cell (segment, metric), and the reason each gives for it. */
async function cellReasons(api: Attacker, segment: string, metric: Metric): Promise<Record<string, Reason>> {
  const q = `category=ecommerce&metric=${metric}${segment === "all" ? "" : `&segment=${segment}`}`;
  const out: Record<string, Reason> = {
    percentile: refusal(await api.get(`/benchmarks/percentile?${q}&value=0.5&period=${PERIOD}`)),
    distribution: refusal(await api.get(`/benchmarks/distribution?${q}&period=${PERIOD}`)),
    history: refusal(await api.get(`/benchmarks/history?${q}&periods=1`)),
  };
  const bd = await api.get(`/segments/breakdown?category=ecommerce&metric=${metric}&period=${PERIOD}`);
  if (bd.status === 200) out.breakdown = bd.body.segments.find((r: { segment: string }) => r.segment === segment).withheld_reason;
  else if (segment === "all") out.breakdown = refusal(bd);
  // A snapshot holding only this metric: ranked, or refused with the cell's reason; and the unranked entry.
  const merchant = await snapshot(api, segment, [metric]);
  for (const path of ["/merchant/compare", "/merchant/score", "/report"]) out[path] = refusal(await api.get(`${path}?merchant_id=${merchant}`));
  const two = await snapshot(api, segment, [metric, ...METRICS.filter((m) => m !== metric)]);
  const compare = await api.get(`/merchant/compare?merchant_id=${two}`);
  if (compare.status === 200) {
    const unranked = compare.body.unranked.find((u: { metric: string }) => u.metric === metric);
    out["/merchant/compare unranked"] = unranked === undefined ? null : unranked.withheld_reason;
  }
  return out;
}

/** Every endpoint that answers for all the metrics of one segment (or `all`) at once, and the reason each gives. */
async function segmentReasons(api: Attacker, segment: string, metrics: readonly Metric[]): Promise<Record<string, Reason>> {
  const out: Record<string, Reason> = {
    benchmarks: refusal(await api.get(`/benchmarks?category=ecommerce&period=${PERIOD}${segment === "all" ? "" : `&segment=${segment}`}`)),
  };
  if (segment !== "all") {
    const s = await api.get(`/segments?category=ecommerce&period=${PERIOD}`);
    out.segments = s.body.segments.find((r: { segment: string }) => r.segment === segment).withheld_reason;
  }
  const merchant = await snapshot(api, segment, metrics);
  for (const path of ["/merchant/compare", "/merchant/score", "/report"]) out[path] = refusal(await api.get(`${path}?merchant_id=${merchant}`));
  return out;
}

/** `reasons` with every endpoint giving `expected`: a failure shows which endpoint differs. */
function each(reasons: Record<string, Reason>, expected: Reason): Record<string, Reason> {
  return Object.fromEntries(Object.keys(reasons).map((k) => [k, expected]));
}

/** The oracle: each cell's reason from the sizes alone (`all` is the sum of the segments: no business in two). */
function expectedReasons(sizes: Sizes): Map<string, Reason> {
  const out = new Map<string, Reason>();
  for (const m of METRICS) {
    const segs = new Map(Object.entries(sizes[m]).filter(([, n]) => n > 0));
    if (segs.size === 0) continue;
    const d = decideSuppression([...segs.values()].reduce((a, b) => a + b, 0), segs, MIN);
    out.set(`all/${m}`, d.all);
    for (const [s, r] of d.segments) out.set(`${s}/${m}`, r);
  }
  return out;
}

/** A refusal of several cells: published when any is, else below_minimum only when every one is below it. */
function combined(reasons: readonly Reason[]): Reason {
  if (reasons.some((r) => r === null)) return null;
  return reasons.every((r) => r === "below_minimum") ? "below_minimum" : "complementary";
}

for (const [name, open] of Object.entries(stores)) {
  describe(`withheld reasons through HTTP: ${name}`, () => {
    it("the issue's case (ecommerce 2025-Q4 gross_margin, dtc 30, b2b 10): all is complementary on every endpoint, the breakdown's 404 included", async () => {
      const storage = await open();
      await storage.migrate?.();
      onTestFinished(() => storage.close?.());
      await importSizes(storage, { gross_margin: { dtc: 30, b2b: 10 } });
      const api = await attackerOf(storage);
      const bd = await api.get(`/segments/breakdown?category=ecommerce&metric=gross_margin&period=${PERIOD}`);
      expect(bd.status).toBe(404);
      expect(bd.body.detail).toContain("(reason: complementary)");
      expect(bd.body.detail).not.toContain("fewer businesses");
      for (const [segment, expected] of [["all", "complementary"], ["dtc", "complementary"], ["b2b", "below_minimum"]] as const) {
        const cell = await cellReasons(api, segment, "gross_margin");
        expect(cell).toEqual(each(cell, expected));
        // One metric: a refusal of the segment's metrics is this cell's.
        const seg = await segmentReasons(api, segment, ["gross_margin"]);
        expect(seg).toEqual(each(seg, expected));
      }
    });

    it("a segment withheld for both reasons (one metric below the minimum, another complementary) gets one reason on every endpoint", async () => {
      const storage = await open();
      await storage.migrate?.();
      onTestFinished(() => storage.close?.());
      // gross_margin: dtc 30 (complementary), b2b 10 (below); revenue_growth the other way round.
      await importSizes(storage, { gross_margin: { dtc: 30, b2b: 10 }, revenue_growth: { dtc: 10, b2b: 30 } });
      const api = await attackerOf(storage);
      for (const segment of ["dtc", "b2b", "all"]) {
        // Some of its cells meet the minimum, so "fewer businesses than the minimum" would be false.
        const seg = await segmentReasons(api, segment, METRICS);
        expect(seg).toEqual(each(seg, "complementary"));
      }
      expect(await cellReasons(api, "dtc", "revenue_growth")).toMatchObject({ percentile: "below_minimum", "/merchant/compare": "below_minimum" });
    });

    it("property: over random segment sizes around the minimum, every endpoint gives each withheld cell and segment the reason decideSuppression gives", async () => {
      const storage = await open();
      await storage.migrate?.();
      onTestFinished(() => storage.close?.());
      const api = await attackerOf(storage);
      const size = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: MIN - 1 }), fc.integer({ min: MIN, max: 2 * MIN + 5 }));
      const sizes = fc.record({ gross_margin: fc.record({ a: size, b: size, c: size }), revenue_growth: fc.record({ a: size, b: size, c: size }) });
      await fc.assert(
        fc.asyncProperty(sizes, async (s) => {
          fc.pre(Object.values(s.gross_margin).some((n) => n > 0) && Object.values(s.revenue_growth).some((n) => n > 0));
          await importSizes(storage, s);
          const expected = expectedReasons(s);
          const bySegment = new Map<string, Reason[]>();
          for (const [cell, reason] of expected) {
            const [segment, metric] = cell.split("/") as [string, Metric];
            const got = await cellReasons(api, segment, metric);
            expect(got, cell).toEqual(each(got, reason));
            bySegment.set(segment, [...(bySegment.get(segment) ?? []), reason]);
          }
          for (const [segment, reasons] of bySegment) {
            const metrics = METRICS.filter((m) => expected.has(`${segment}/${m}`));
            const got = await segmentReasons(api, segment, metrics);
            expect(got, segment).toEqual(each(got, combined(reasons)));
          }
        }),
        { numRuns: name === "memory" ? 40 : 12 },
      );
    });
  });
}
