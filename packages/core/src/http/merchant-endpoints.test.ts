import { beforeAll, describe, expect, it } from "vitest";
import { metricsOf } from "../data/catalog.ts";
import { createSyntheticSource, SYNTHETIC_LATEST_QUARTER } from "../data/synthetic.ts";
import { isId } from "../ids/new-id.ts";
import { wellFormedXml } from "../merchant/well-formed-xml.ts";
import type { XmlElement } from "../merchant/well-formed-xml.ts";
import { percentileSet } from "../stats/percentile-set.ts";
import type { Kit, Res } from "./test-kit.ts";
import { kit, LIVE_HOST, spread, T0, TEST_HOST } from "./test-kit.ts";

const ALL_SCOPES = ["benchmarks:read", "segments:read", "merchant:read", "merchant:write", "insights:read", "compare:read", "score:read", "report:read", "export:read"];
const synthetic = createSyntheticSource("benchdata");

let k: Kit;
let testKey: string;
let liveKey: string;

function hostOf(key: string): string {
  return key.startsWith("svc_live_") ? LIVE_HOST : TEST_HOST;
}

/** POST /merchant/vcfs with a JSON body (a string is sent as is). */
function post(key: string, body: unknown, headers: Record<string, string> = { "content-type": "application/json" }, on: Kit = k): Promise<Res> {
  return on.call(new Request(`${hostOf(key)}/data/v1/merchant/vcfs`, { method: "POST", headers: { authorization: `Bearer ${key}`, ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) }));
}

/** The raw response of a GET (for the XML export). */
function raw(key: string, path: string, on: Kit = k): Promise<Response> {
  return on.app.fetch(new Request(`${hostOf(key)}/data/v1${path}`, { headers: { authorization: `Bearer ${key}` } }));
}

beforeAll(async () => {
  k = kit({ config: { tiers: { enterprise: { perMinute: 100_000, perDay: 1_000_000 } } } });
  const { session } = await k.account("enterprise");
  testKey = (await k.key(session, "test", ALL_SCOPES)).raw;
  liveKey = (await k.key(session, "live", ALL_SCOPES)).raw;
});

describe("POST /data/v1/merchant/vcfs", () => {
  it("stores a snapshot: 200 (as every data endpoint) with vcfs_id, segment `all` by default, metrics in catalogue order", async () => {
    const r = await post(testKey, { merchant_id: "m-create", category: "ecommerce", period: "2026-Q2", metrics: { refund_rate: 0.04, gross_margin: 0.41 } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["vcfs_id", "merchant_id", "category", "segment", "period", "metrics", "created_at", "replaced_vcfs_id"]);
    expect(r.body).toMatchObject({ merchant_id: "m-create", category: "ecommerce", segment: "all", period: "2026-Q2", created_at: new Date(T0).toISOString(), replaced_vcfs_id: null });
    expect(isId("vcfs", r.body.vcfs_id)).toBe(true);
    expect(Object.keys(r.body.metrics)).toEqual(["gross_margin", "refund_rate"]);
    expect(r.headers.get("x-ratelimit-limit")).not.toBeNull();
    const list = await k.data(testKey, "/merchant/vcfs?merchant_id=m-create");
    const { replaced_vcfs_id: _, ...stored } = r.body;
    expect(list.body).toEqual({ data: [stored] });
  });

  it("posting the same merchant and period again replaces the snapshot (new id, the old one named); another period adds one", async () => {
    const first = await post(testKey, { merchant_id: "m-replace", category: "saas", segment: "smb", period: "2026-Q1", metrics: { churn_rate: 0.05 } });
    k.clock.advance(1);
    const again = await post(testKey, { merchant_id: "m-replace", category: "saas", segment: "smb", period: "2026-Q1", metrics: { churn_rate: 0.04 } });
    expect(again.status).toBe(200);
    expect(again.body.replaced_vcfs_id).toBe(first.body.vcfs_id);
    expect(again.body.vcfs_id).not.toBe(first.body.vcfs_id);
    k.clock.advance(1);
    await post(testKey, { merchant_id: "m-replace", category: "saas", segment: "smb", period: "2026-Q2", metrics: { churn_rate: 0.03 } });
    const list = await k.data(testKey, "/merchant/vcfs?merchant_id=m-replace");
    expect(list.body.data.map((s: { period: string; metrics: object }) => [s.period, s.metrics])).toEqual([["2026-Q2", { churn_rate: 0.03 }], ["2026-Q1", { churn_rate: 0.04 }]]);
  });

  it("validation: the contract's codes for category, metric, offer, period and values; invalid_body for the rest", async () => {
    const base = { merchant_id: "m-bad", category: "saas", period: "2026-Q2", metrics: { churn_rate: 0.05 } };
    const cases: [unknown, string, string][] = [
      [{ ...base, category: "crypto" }, "validation.invalid_category", "ecommerce, saas"],
      [{ ...base, category: 7 }, "validation.invalid_category", "Valid values"],
      [{ ...base, metrics: { nps: 40 } }, "validation.invalid_metric", "gross_margin"],
      [{ ...base, metrics: { churn_rate: 0.05, cart_abandon_rate: 0.7 } }, "validation.metric_not_offered", "`cart_abandon_rate`"],
      [{ ...base, period: "2026-Q5" }, "validation.invalid_parameter", "`period`"],
      [{ ...base, period: 2026 }, "validation.invalid_body", "`period`"],
      [{ ...base, metrics: { churn_rate: "0.05" } }, "validation.invalid_parameter", "`metrics.churn_rate` must be a finite number"],
      [{ ...base, metrics: { churn_rate: null } }, "validation.invalid_parameter", "`metrics.churn_rate`"],
      [{ ...base, metrics: {} }, "validation.invalid_body", "at least one metric"],
      [{ ...base, metrics: [0.05] }, "validation.invalid_body", "`metrics`"],
      [{ ...base, merchant_id: undefined }, "validation.invalid_body", "`merchant_id` is required"],
      [{ ...base, merchant_id: " padded" }, "validation.invalid_body", "`merchant_id`"],
      [{ ...base, merchant_id: "x".repeat(129) }, "validation.invalid_body", "`merchant_id`"],
      [{ ...base, segment: "Small Business" }, "validation.invalid_body", "`segment`"],
      [{ ...base, extra: 1 }, "validation.invalid_body", "`extra` is not a known field"],
      [[base], "validation.invalid_body", "JSON object"],
    ];
    for (const [body, code, detail] of cases) {
      const r = await post(testKey, body);
      expect([r.status, r.body.code], JSON.stringify(body)).toEqual([422, code]);
      expect(r.body.detail, JSON.stringify(body)).toContain(detail);
    }
    // JSON has no Infinity, but 1e999 parses to it.
    const inf = await post(testKey, '{"merchant_id":"m-bad","category":"saas","period":"2026-Q2","metrics":{"churn_rate":1e999}}');
    expect([inf.status, inf.body.code]).toEqual([422, "validation.invalid_parameter"]);
    expect(inf.body.detail).toContain("Infinity");
    expect((await k.data(testKey, "/merchant/vcfs?merchant_id=m-bad")).body.data).toEqual([]);
  });

  it("body rules as the console's: JSON only (415), valid JSON (400), at most 1 MB (413)", async () => {
    expect((await post(testKey, "merchant_id=m", { "content-type": "application/x-www-form-urlencoded" })).body).toMatchObject({ status: 415, code: "request.unsupported_media_type" });
    expect((await post(testKey, "{not json")).body).toMatchObject({ status: 400, code: "request.invalid_json" });
    expect((await post(testKey, "")).body).toMatchObject({ status: 400, code: "request.invalid_json" });
    const big = JSON.stringify({ merchant_id: "m", category: "saas", period: "2026-Q2", metrics: { churn_rate: 0.1 }, pad: "x".repeat(1_100_000) });
    expect((await post(testKey, big)).body).toMatchObject({ status: 413, code: "request.too_large" });
  });
});

describe("GET /data/v1/merchant/vcfs", () => {
  it("lists newest first, filters by merchant, honours limit (1–100, default 20)", async () => {
    const lk = kit({ config: { tiers: { enterprise: { perMinute: 100_000 } } } });
    const { session } = await lk.account("enterprise");
    const key = (await lk.key(session, "test", ALL_SCOPES)).raw;
    const ids: string[] = [];
    for (let i = 0; i < 22; i++) {
      lk.clock.advance(1000);
      const r = await post(key, { merchant_id: i % 2 === 0 ? "even" : "odd", category: "retail", period: `2020-${String((i % 12) + 1).padStart(2, "0")}`, metrics: { refund_rate: i / 100 } }, undefined, lk);
      expect(r.status).toBe(200);
      ids.push(r.body.vcfs_id);
    }
    const newestFirst = [...ids].reverse();
    // even/2020-01 and even/2020-03… repeat after 12 posts: those later posts replaced earlier ones.
    const all = await lk.data(key, "/merchant/vcfs?limit=100");
    const kept = all.body.data.map((s: { vcfs_id: string }) => s.vcfs_id);
    expect(kept).toEqual(newestFirst.filter((id) => kept.includes(id)));
    expect(kept).toHaveLength(12);
    expect((await lk.data(key, "/merchant/vcfs")).body.data).toHaveLength(12);
    expect((await lk.data(key, "/merchant/vcfs?limit=3")).body.data.map((s: { vcfs_id: string }) => s.vcfs_id)).toEqual(newestFirst.slice(0, 3));
    const odd = await lk.data(key, "/merchant/vcfs?merchant_id=odd");
    expect(odd.body.data.every((s: { merchant_id: string }) => s.merchant_id === "odd")).toBe(true);
    expect(odd.body.data).toHaveLength(6);
    expect((await lk.data(key, "/merchant/vcfs?merchant_id=nobody")).body).toEqual({ data: [] });
  });

  it("the default page is 20", async () => {
    const lk = kit({ config: { tiers: { enterprise: { perMinute: 100_000 } } } });
    const { session } = await lk.account("enterprise");
    const key = (await lk.key(session, "test", ALL_SCOPES)).raw;
    for (let i = 0; i < 21; i++) await post(key, { merchant_id: `m${i}`, category: "retail", period: "2026-Q1", metrics: { refund_rate: 0.01 } }, undefined, lk);
    expect((await lk.data(key, "/merchant/vcfs")).body.data).toHaveLength(20);
  });

  it("limit outside 1–100 → out_of_range; a malformed merchant_id → invalid_parameter", async () => {
    for (const limit of ["0", "101"]) expect((await k.data(testKey, `/merchant/vcfs?limit=${limit}`)).body.code).toBe("validation.out_of_range");
    expect((await k.data(testKey, "/merchant/vcfs?limit=ten")).body.code).toBe("validation.invalid_parameter");
    expect((await k.data(testKey, "/merchant/vcfs?merchant_id=")).body.code).toBe("validation.invalid_parameter");
  });
});

/** Snapshot values equal to the synthetic cells' medians, for the latest quarter. */
async function medians(category: "saas" | "ecommerce", segment = "all", period = SYNTHETIC_LATEST_QUARTER): Promise<Record<string, number>> {
  const cells = await synthetic.cells(category, segment, period, metricsOf(category));
  const out: Record<string, number> = {};
  for (const [m, c] of cells) out[m] = percentileSet(c.sorted).p50;
  return out;
}

describe("GET /data/v1/merchant/compare", () => {
  it("a value equal to its cell's median ranks at 50; quartiles are the ones /benchmarks publishes; direction-aware better_than_pct", async () => {
    const values = await medians("saas");
    await post(testKey, { merchant_id: "m-median", category: "saas", period: SYNTHETIC_LATEST_QUARTER, metrics: values });
    const r = await k.data(testKey, "/merchant/compare?merchant_id=m-median");
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["merchant_id", "vcfs_id", "category", "segment", "period", "metrics", "unranked"]);
    expect(r.body).toMatchObject({ merchant_id: "m-median", category: "saas", segment: "all", period: SYNTHETIC_LATEST_QUARTER, unranked: [] });
    const bench = (await k.data(testKey, "/benchmarks?category=saas")).body.metrics;
    expect(r.body.metrics.map((m: { metric: string }) => m.metric)).toEqual([...metricsOf("saas")]);
    for (const m of r.body.metrics) {
      expect(Object.keys(m)).toEqual(["metric", "value", "direction", "percentile", "better_than_pct", "p25", "p50", "p75", "sample_size", "benchmark_period", "fallback"]);
      expect(Math.abs(m.percentile - 50), m.metric).toBeLessThanOrEqual(1);
      expect(m.better_than_pct).toBeCloseTo(m.direction === "lower_is_better" ? 100 - m.percentile : m.percentile, 9);
      expect([m.p25, m.p50, m.p75]).toEqual([bench[m.metric].p25, bench[m.metric].p50, bench[m.metric].p75]);
      expect(m).toMatchObject({ value: values[m.metric], benchmark_period: SYNTHETIC_LATEST_QUARTER, fallback: false });
    }
    expect(r.body.metrics.find((m: { metric: string }) => m.metric === "churn_rate").direction).toBe("lower_is_better");
  });

  it("ranks within the snapshot's segment", async () => {
    const values = await medians("saas", "enterprise");
    await post(testKey, { merchant_id: "m-enterprise", category: "saas", segment: "enterprise", period: SYNTHETIC_LATEST_QUARTER, metrics: { customer_ltv: values.customer_ltv } });
    const r = await k.data(testKey, "/merchant/compare?merchant_id=m-enterprise");
    const bench = (await k.data(testKey, "/benchmarks?category=saas&segment=enterprise")).body.metrics;
    expect(r.body.segment).toBe("enterprise");
    expect(r.body.metrics[0]).toMatchObject({ metric: "customer_ltv", p50: bench.customer_ltv.p50, percentile: 50 });
  });

  it("a segment without data → 404 data.not_found listing the category's segments", async () => {
    await post(testKey, { merchant_id: "m-nosuch", category: "saas", segment: "nosuch", period: SYNTHETIC_LATEST_QUARTER, metrics: { gross_margin: 0.5 } });
    const r = await k.data(testKey, "/merchant/compare?merchant_id=m-nosuch");
    expect(r.body).toMatchObject({ status: 404, code: "data.not_found" });
    expect(r.body.detail).toContain(`Segments with data: ${(await synthetic.segments("saas")).join(", ")}`);
  });

  it("a period without a cell falls back to the latest period with data and says so", async () => {
    await post(testKey, { merchant_id: "m-future", category: "ecommerce", period: "2031-Q1", metrics: { gross_margin: 0.5 } });
    const r = await k.data(testKey, "/merchant/compare?merchant_id=m-future");
    expect(r.body.metrics[0]).toMatchObject({ metric: "gross_margin", benchmark_period: SYNTHETIC_LATEST_QUARTER, fallback: true });
    expect(r.body.period).toBe("2031-Q1");
  });

  it("uses the latest snapshot, or the one of `period`; unknown merchant → 404 not_found; no snapshot for the period → 404 data.not_found", async () => {
    await post(testKey, { merchant_id: "m-two", category: "saas", period: "2026-Q1", metrics: { gross_margin: 0.1 } });
    await post(testKey, { merchant_id: "m-two", category: "saas", period: "2026-Q2", metrics: { gross_margin: 0.9 } });
    expect((await k.data(testKey, "/merchant/compare?merchant_id=m-two")).body.period).toBe("2026-Q2");
    const q1 = await k.data(testKey, "/merchant/compare?merchant_id=m-two&period=2026-Q1");
    expect(q1.body).toMatchObject({ period: "2026-Q1", metrics: [{ value: 0.1, benchmark_period: "2026-Q1", fallback: false }] });
    const none = await k.data(testKey, "/merchant/compare?merchant_id=m-two&period=2025-Q4");
    expect(none.body).toMatchObject({ status: 404, code: "data.not_found" });
    expect(none.body.detail).toContain("2026-Q1, 2026-Q2");
    expect((await k.data(testKey, "/merchant/compare?merchant_id=nobody")).body).toMatchObject({ status: 404, code: "not_found" });
    expect((await k.data(testKey, "/merchant/compare")).body.code).toBe("validation.missing_parameter");
    expect((await k.data(testKey, "/merchant/compare?merchant_id=m-two&period=Q1")).body.code).toBe("validation.invalid_parameter");
  });
});

describe("merchant endpoints on live data: ranks, insights, score, report", () => {
  let lk: Kit;
  let key: string;
  let q2: string;
  let q3: string;

  beforeAll(async () => {
    lk = kit();
    const { session } = await lk.account("enterprise");
    key = (await lk.key(session, "live", ALL_SCOPES)).raw;
    // 101 evenly spread values: the rank of an off-grid value is easy to say (below = at or below = count).
    await lk.publish("saas", "all", "2026-Q3", "gross_margin", spread(101, 0, 1));
    await lk.publish("saas", "all", "2026-Q3", "churn_rate", spread(101, 0, 0.1));
    await lk.publish("saas", "all", "2026-Q3", "revenue_growth", spread(101, -0.1, 0.1));
    await lk.publish("saas", "all", "2026-Q3", "burn_multiple", spread(12, 0, 3));
    q2 = (await post(key, { merchant_id: "acme", category: "saas", period: "2026-Q2", metrics: { gross_margin: 0.8, churn_rate: 0.05, revenue_growth: 0.001 } }, undefined, lk)).body.vcfs_id;
    lk.clock.advance(1000);
    const r = await post(key, { merchant_id: "acme", category: "saas", period: "2026-Q3", metrics: { gross_margin: 0.905, churn_rate: 0.0905, revenue_growth: 0.001, burn_multiple: 1.5 } }, undefined, lk);
    expect(r.status).toBe(200);
    q3 = r.body.vcfs_id;
  });

  it("compare: ranks on the published percentile set (cells below 1,000 × the minimum); a cell below the publication minimum is unranked", async () => {
    const r = await lk.data(key, "/merchant/compare?merchant_id=acme");
    expect(r.body.vcfs_id).toBe(q3);
    // The curve through (p10, 10) … (p90, 90), extended above p90 to 100 at p90 + (p90 − p75)·10/15 = 1.0:
    // 0.905 → 90 + 10·0.005/0.1 = 90.5 (scipy's exact rank would be 90.1). 0.0905 (churn, lower is better): rank
    // 90.5, better than 9.5%. 0.001 between p50 = 0 and p75 = 0.05: 50 + 25·0.001/0.05 = 50.5.
    expect(r.body.metrics.map((m: { metric: string; percentile: number; better_than_pct: number }) => [m.metric, m.percentile, m.better_than_pct])).toEqual([
      ["gross_margin", 90.5, 90.5],
      ["revenue_growth", 50.5, 50.5],
      ["churn_rate", 90.5, 9.5],
    ]);
    expect(r.body.metrics[0]).toMatchObject({ p25: 0.25, p50: 0.5, p75: 0.75, sample_size: 101 });
    expect(r.body.unranked).toEqual([{ metric: "burn_multiple", value: 1.5, reason: "insufficient_sample", benchmark_period: "2026-Q3", sample_size: null, withheld_reason: "below_minimum" }]);
  });

  it("insights: strengths and weaknesses by direction, trends against the previous snapshot", async () => {
    const r = await lk.data(key, "/merchant/insights?merchant_id=acme");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ merchant_id: "acme", vcfs_id: q3, period: "2026-Q3", previous: { vcfs_id: q2, period: "2026-Q2" } });
    expect(r.body.findings.map((f: { kind: string; metric: string }) => [f.kind, f.metric])).toEqual([
      ["strength", "gross_margin"],
      ["weakness", "churn_rate"],
      ["improving", "gross_margin"],
      ["worsening", "churn_rate"],
    ]);
    for (const f of r.body.findings) expect(Object.keys(f)).toEqual(["kind", "metric", "message", "evidence"]);
    expect(r.body.findings[0].message).toBe("Gross margin of 90.5% is in the top quartile of saas (all segments) in 2026-Q3: better than 90.5% of peers.");
    expect(r.body.findings[0].evidence).toEqual({ value: 0.905, percentile: 90.5, better_than_pct: 90.5, p25: 0.25, p50: 0.5, p75: 0.75, sample_size: 101, benchmark_period: "2026-Q3" });
    expect(r.body.findings[3].evidence).toEqual({ value: 0.0905, period: "2026-Q3", previous_value: 0.05, previous_period: "2026-Q2", change: 0.0405, change_pct: 81 });
    // The first snapshot has no previous one; its ranks fall back to 2026-Q3's cells.
    const first = await lk.data(key, "/merchant/insights?merchant_id=acme&period=2026-Q2");
    expect(first.body.previous).toBeNull();
    expect(first.body.findings.map((f: { kind: string }) => f.kind)).toEqual(["strength"]);
  });

  it("score: the mean of the direction-adjusted ranks, one decimal, with components and grade", async () => {
    const r = await lk.data(key, "/merchant/score?merchant_id=acme");
    expect(r.status).toBe(200);
    // (90.5 + 50.5 + 9.5) / 3 = 50.1666…
    expect(r.body).toMatchObject({ merchant_id: "acme", vcfs_id: q3, period: "2026-Q3", score: 50.2, grade: "C" });
    expect(r.body.components).toEqual([
      { metric: "gross_margin", rank: 90.5, weight: 0.333333, contribution: 30.166667 },
      { metric: "revenue_growth", rank: 50.5, weight: 0.333333, contribution: 16.833333 },
      { metric: "churn_rate", rank: 9.5, weight: 0.333333, contribution: 3.166667 },
    ]);
    expect(r.body.unranked.map((u: { metric: string }) => u.metric)).toEqual(["burn_multiple"]);
  });

  it("report: the snapshot with exactly the bodies of compare, insights and score, and generated_at", async () => {
    const r = await lk.data(key, "/report?merchant_id=acme");
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["merchant_id", "generated_at", "snapshot", "compare", "insights", "score"]);
    expect(r.body.generated_at).toBe(new Date(T0 + 1000).toISOString());
    expect(r.body.compare).toEqual((await lk.data(key, "/merchant/compare?merchant_id=acme")).body);
    expect(r.body.insights).toEqual((await lk.data(key, "/merchant/insights?merchant_id=acme")).body);
    expect(r.body.score).toEqual((await lk.data(key, "/merchant/score?merchant_id=acme")).body);
    expect(r.body.snapshot).toEqual((await lk.data(key, "/merchant/vcfs?merchant_id=acme&limit=1")).body.data[0]);
    expect((await lk.data(key, "/report?merchant_id=acme&period=2026-Q2")).body.snapshot.vcfs_id).toBe(q2);
  });

  it("nothing rankable: 404 data.insufficient_sample when only small cells exist, data.not_found without data; insights still answer", async () => {
    await post(key, { merchant_id: "small", category: "saas", period: "2026-Q3", metrics: { burn_multiple: 2 } }, undefined, lk);
    for (const path of ["/merchant/compare", "/merchant/score", "/report"]) expect((await lk.data(key, `${path}?merchant_id=small`)).body.code, path).toBe("data.insufficient_sample");
    await post(key, { merchant_id: "retailer", category: "retail", period: "2026-Q3", metrics: { refund_rate: 0.02 } }, undefined, lk);
    for (const path of ["/merchant/compare", "/merchant/score", "/report"]) expect((await lk.data(key, `${path}?merchant_id=retailer`)).body.code, path).toBe("data.not_found");
    expect((await lk.data(key, "/merchant/insights?merchant_id=retailer")).body).toMatchObject({ findings: [], previous: null });
  });
});

describe("GET /data/v1/export/xbrl", () => {
  const child = (e: XmlElement, name: string): XmlElement => e.children.find((c) => c.name === name)!;

  it("is a well-formed XBRL instance of the latest snapshot: context for the merchant and period, units, one fact per metric", async () => {
    await post(testKey, { merchant_id: "m-xbrl <&>", category: "ecommerce", period: "2026-Q1", metrics: { gross_margin: 0.3 } });
    await post(testKey, { merchant_id: "m-xbrl <&>", category: "ecommerce", period: "2026-Q2", metrics: { gross_margin: 0.4412, average_order_value: 87.5, cart_abandon_rate: 0.7 } });
    const res = await raw(testKey, `/export/xbrl?merchant_id=${encodeURIComponent("m-xbrl <&>")}`);
    expect(res.status).toBe(200);
    const xml = await res.text();
    const check = wellFormedXml(xml);
    if (!check.ok) throw new Error(check.error);
    const root = check.root;
    expect(root.name).toBe("xbrli:xbrl");
    expect(child(root, "link:schemaRef").attributes["xlink:href"]).toMatch(/^https:\/\/benchdata\.dev\/xbrl\//);
    const context = child(root, "xbrli:context");
    expect(child(child(context, "xbrli:entity"), "xbrli:identifier").text).toBe("m-xbrl <&>");
    expect(xml).toContain("m-xbrl &lt;&amp;&gt;");
    const period = child(context, "xbrli:period");
    expect([child(period, "xbrli:startDate").text, child(period, "xbrli:endDate").text]).toEqual(["2026-04-01", "2026-06-30"]);
    expect(root.children.filter((c) => c.name === "xbrli:unit").map((u) => [u.attributes.id, child(u, "xbrli:measure").text])).toEqual([["pure", "xbrli:pure"], ["USD", "iso4217:USD"]]);
    const facts = root.children.filter((c) => c.name.startsWith("bd:")).map((f) => [f.name, f.attributes.unitRef, f.attributes.decimals, f.text]);
    expect(facts).toEqual([
      ["bd:GrossMargin", "pure", "4", "0.4412"],
      ["bd:CartAbandonmentRate", "pure", "1", "0.7"],
      ["bd:AverageOrderValue", "USD", "1", "87.5"],
    ]);
    expect(res.headers.get("x-ratelimit-limit")).not.toBeNull();
  });

  it("answers Content-Type application/xml", async () => {
    const res = await raw(testKey, `/export/xbrl?merchant_id=${encodeURIComponent("m-xbrl <&>")}`);
    expect(res.headers.get("content-type")).toMatch(/^application\/xml/);
  });

  it("vcfs_id picks a snapshot of that merchant; another merchant's id → 404 not_found; malformed → 422", async () => {
    const snapshots = (await k.data(testKey, `/merchant/vcfs?merchant_id=${encodeURIComponent("m-xbrl <&>")}`)).body.data;
    const older = snapshots.find((s: { period: string }) => s.period === "2026-Q1");
    const res = await raw(testKey, `/export/xbrl?merchant_id=${encodeURIComponent("m-xbrl <&>")}&vcfs_id=${older.vcfs_id}`);
    const check = wellFormedXml(await res.text());
    if (!check.ok) throw new Error(check.error);
    expect(check.root.children.filter((c) => c.name.startsWith("bd:")).map((f) => f.text)).toEqual(["0.3"]);
    const other = await k.data(testKey, `/export/xbrl?merchant_id=m-create&vcfs_id=${older.vcfs_id}`);
    expect(other.body).toMatchObject({ status: 404, code: "not_found" });
    expect((await k.data(testKey, "/export/xbrl?merchant_id=nobody")).body).toMatchObject({ status: 404, code: "not_found" });
    expect((await k.data(testKey, "/export/xbrl?merchant_id=m-create&vcfs_id=vcfs_nope")).body.code).toBe("validation.invalid_parameter");
  });
});

describe("isolation between accounts and environments", () => {
  it("another account never sees a merchant: list empty, every read 404 not_found", async () => {
    const { session } = await k.account("enterprise");
    const other = (await k.key(session, "test", ALL_SCOPES)).raw;
    const mine = (await k.data(testKey, "/merchant/vcfs?merchant_id=m-median")).body.data[0];
    expect((await k.data(other, "/merchant/vcfs")).body).toEqual({ data: [] });
    for (const path of ["/merchant/compare", "/merchant/insights", "/merchant/score", "/report", "/export/xbrl"]) {
      expect((await k.data(other, `${path}?merchant_id=m-median`)).body, path).toMatchObject({ status: 404, code: "not_found" });
    }
    expect((await k.data(other, `/export/xbrl?merchant_id=m-median&vcfs_id=${mine.vcfs_id}`)).body.code).toBe("not_found");
  });

  it("test-key snapshots never mix with live ones, and each environment ranks against its own data", async () => {
    expect((await k.data(liveKey, "/merchant/vcfs?merchant_id=m-median")).body).toEqual({ data: [] });
    expect((await k.data(liveKey, "/merchant/compare?merchant_id=m-median")).body.code).toBe("not_found");
    // The same merchant and period in live is another snapshot: it replaces nothing of the test one.
    const live = await post(liveKey, { merchant_id: "m-median", category: "saas", period: SYNTHETIC_LATEST_QUARTER, metrics: { gross_margin: 0.5 } });
    expect([live.status, live.body.replaced_vcfs_id]).toEqual([200, null]);
    expect((await k.data(testKey, "/merchant/vcfs?merchant_id=m-median")).body.data).toHaveLength(1);
    // Live data (none imported in this kit) is not the synthetic set.
    expect((await k.data(liveKey, "/merchant/compare?merchant_id=m-median")).body.code).toBe("data.not_found");
  });
});

describe("scopes", () => {
  it("each endpoint needs its scopes (403 auth.insufficient_scope naming them); compare needs merchant:read AND compare:read", async () => {
    const { session } = await k.account("enterprise");
    const keyWith = async (scopes: string[]): Promise<string> => (await k.key(session, "test", scopes)).raw;
    const bench = await keyWith(["benchmarks:read"]);
    for (const [path, scope] of [
      ["/segments?category=saas", "segments:read"],
      ["/segments/breakdown?category=saas&metric=churn_rate", "segments:read"],
      ["/merchant/vcfs", "merchant:read"],
      ["/merchant/insights?merchant_id=m", "insights:read"],
      ["/merchant/score?merchant_id=m", "score:read"],
      ["/report?merchant_id=m", "report:read"],
      ["/export/xbrl?merchant_id=m", "export:read"],
    ] as const) {
      const r = await k.data(bench, path);
      expect([r.status, r.body.code], path).toEqual([403, "auth.insufficient_scope"]);
      expect(r.body.detail, path).toContain(`\`${scope}\``);
    }
    const write = await post(bench, { merchant_id: "m", category: "saas", period: "2026-Q1", metrics: { churn_rate: 0.1 } });
    expect([write.status, write.body.code]).toEqual([403, "auth.insufficient_scope"]);
    expect(write.body.detail).toContain("`merchant:write`");
    // A read scope does not allow writing, and the write scope does not allow listing.
    expect((await post(await keyWith(["merchant:read"]), { merchant_id: "m" })).body.detail).toContain("`merchant:write`");
    expect((await k.data(await keyWith(["merchant:write"]), "/merchant/vcfs")).body.detail).toContain("`merchant:read`");

    const compare = "/merchant/compare?merchant_id=m";
    const onlyMerchant = await k.data(await keyWith(["merchant:read"]), compare);
    expect([onlyMerchant.status, onlyMerchant.body.code]).toEqual([403, "auth.insufficient_scope"]);
    expect(onlyMerchant.body.detail).toContain("`compare:read`");
    expect(onlyMerchant.body.detail).not.toContain("`merchant:read`");
    const onlyCompare = await k.data(await keyWith(["compare:read"]), compare);
    expect(onlyCompare.body.detail).toContain("`merchant:read`");
    const neither = await k.data(bench, compare);
    expect(neither.body.detail).toContain("`merchant:read` and `compare:read`");
    expect((await k.data(await keyWith(["merchant:read", "compare:read"]), compare)).body.code).toBe("not_found");
  });
});

describe("OpenAPI", () => {
  it("documents the merchant endpoints' parameters, body and responses from their schemas", () => {
    const doc = k.app.openapi as { paths: Record<string, Record<string, { parameters?: { name: string; required: boolean; schema: Record<string, unknown> }[]; requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown>; required: string[] } }> }; responses: Record<string, { content?: Record<string, { schema: { properties?: Record<string, unknown> } }> }> }>> };
    const postVcfs = doc.paths["/data/v1/merchant/vcfs"]!.post!;
    const body = postVcfs.requestBody!.content["application/json"]!.schema;
    expect(Object.keys(body.properties).sort()).toEqual(["category", "merchant_id", "metrics", "period", "segment"]);
    expect(body.required.sort()).toEqual(["category", "merchant_id", "metrics", "period"]);
    for (const status of ["400", "413", "415", "422"]) expect(postVcfs.responses[status], status).toBeDefined();
    const list = doc.paths["/data/v1/merchant/vcfs"]!.get!.parameters!;
    expect(list.find((p) => p.name === "limit")).toMatchObject({ required: false, schema: { minimum: 1, maximum: 100, default: 20 } });
    for (const path of ["/data/v1/merchant/compare", "/data/v1/merchant/insights", "/data/v1/merchant/score", "/data/v1/report", "/data/v1/export/xbrl"]) {
      const params = doc.paths[path]!.get!.parameters!;
      expect(params.find((p) => p.name === "merchant_id"), path).toMatchObject({ required: true });
    }
    expect(doc.paths["/data/v1/export/xbrl"]!.get!.parameters!.find((p) => p.name === "vcfs_id")).toMatchObject({ required: false });
    expect(Object.keys(doc.paths["/data/v1/merchant/compare"]!.get!.responses["200"]!.content!["application/json"]!.schema.properties!)).toContain("unranked");
    expect(doc.paths["/data/v1/segments/breakdown"]!.get!.parameters!.map((p) => p.name)).toEqual(["category", "metric", "period"]);
  });
});
