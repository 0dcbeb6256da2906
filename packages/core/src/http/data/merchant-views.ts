/** How snapshots and merchant analyses look in responses, with their doc schemas (OpenAPI only). */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import type { Metric } from "../../data/catalog.ts";
import { CATEGORIES, METRICS } from "../../data/catalog.ts";
import type { Finding } from "../../merchant/merchant-insights.ts";
import { merchantInsights } from "../../merchant/merchant-insights.ts";
import { merchantScore } from "../../merchant/merchant-score.ts";
import type { SnapshotRecord } from "../../storage/types.ts";
import { Timestamp } from "./doc-schemas.ts";
import type { MerchantAnalysis } from "./merchant-analysis.ts";
import { roundOutput } from "./round-output.ts";

const Integer = v.pipe(v.number(), v.integer());
const Rank = v.pipe(v.number(), v.minValue(0), v.maxValue(100));
const Direction = v.picklist(["higher_is_better", "lower_is_better"]);

/** A stored snapshot. */
export const SnapshotSchema = v.object({
  vcfs_id: v.pipe(v.string(), v.description("`vcfs_<ULID>`.")),
  merchant_id: v.string(),
  category: v.picklist(CATEGORIES),
  segment: v.pipe(v.string(), v.description("`all` when no segment was given.")),
  period: v.string(),
  metrics: v.pipe(v.record(v.picklist(METRICS), v.number()), v.description("The values as posted, in catalogue order.")),
  created_at: Timestamp,
});

/** The values of a snapshot keyed in catalogue order. */
function orderedMetrics(metrics: SnapshotRecord["metrics"]): Partial<Record<Metric, number>> {
  const out: Partial<Record<Metric, number>> = {};
  for (const m of METRICS) {
    const value = metrics[m];
    if (value !== undefined) out[m] = value;
  }
  return out;
}

/** The API's view of a snapshot. */
export function snapshotView(s: SnapshotRecord): v.InferOutput<typeof SnapshotSchema> {
  return { vcfs_id: s.id, merchant_id: s.merchantId, category: s.category, segment: s.segment, period: s.period, metrics: orderedMetrics(s.metrics), created_at: isoTime(s.createdAt) };
}

const Head = {
  merchant_id: v.string(),
  vcfs_id: v.pipe(v.string(), v.description("The snapshot analysed.")),
  category: v.picklist(CATEGORIES),
  segment: v.string(),
  period: v.pipe(v.string(), v.description("The snapshot's period.")),
};

function head(a: MerchantAnalysis): v.InferOutput<v.ObjectSchema<typeof Head, undefined>> {
  const s = a.snapshot;
  return { merchant_id: s.merchantId, vcfs_id: s.id, category: s.category, segment: s.segment, period: s.period };
}

const UnrankedSchema = v.object({
  metric: v.picklist(METRICS),
  value: v.number(),
  reason: v.pipe(v.picklist(["no_data", "insufficient_sample"]), v.description("`no_data`: no cell in any period of the granularity; `insufficient_sample`: the cell is withheld (see `withheld_reason`).")),
  benchmark_period: v.nullable(v.string()),
  sample_size: v.pipe(v.null(), v.description("Always null: a withheld cell's size is not published.")),
  withheld_reason: v.pipe(
    v.nullable(v.picklist(["below_minimum", "complementary"])),
    v.description("For `insufficient_sample`: `below_minimum`, or `complementary` (withheld so that a smaller segment cannot be derived by subtraction; see docs/privacy.md)."),
  ),
});

function unrankedView(a: MerchantAnalysis): v.InferOutput<typeof UnrankedSchema>[] {
  return a.unranked.map((u) => ({ metric: u.metric, value: u.value, reason: u.reason, benchmark_period: u.benchmarkPeriod, sample_size: null, withheld_reason: u.withheld }));
}

/** GET /merchant/compare's body. */
export const CompareSchema = v.object({
  ...Head,
  metrics: v.array(
    v.object({
      metric: v.picklist(METRICS),
      value: v.number(),
      direction: Direction,
      percentile: v.pipe(Rank, v.description("Percentile rank of the value in the cell (mean of strict and weak ranks), one decimal.")),
      better_than_pct: v.pipe(Rank, v.description("Share of peers the value is better than, in the metric's good direction: `percentile`, or `100 − percentile` when lower is better.")),
      p25: v.number(),
      p50: v.number(),
      p75: v.number(),
      sample_size: Integer,
      benchmark_period: v.pipe(v.string(), v.description("The cell's period: the snapshot's, or the latest with data when the snapshot's has none.")),
      fallback: v.pipe(v.boolean(), v.description("True when `benchmark_period` is not the snapshot's period.")),
    }),
  ),
  unranked: v.pipe(v.array(UnrankedSchema), v.description("Metrics of the snapshot that could not be ranked.")),
});

/** The compare view of an analysis. */
export function compareView(a: MerchantAnalysis): v.InferOutput<typeof CompareSchema> {
  return {
    ...head(a),
    metrics: a.ranked.map((c) => ({
      metric: c.metric,
      value: c.value,
      direction: c.direction,
      percentile: c.percentile,
      better_than_pct: c.betterThanPct,
      p25: roundOutput(c.p25),
      p50: roundOutput(c.p50),
      p75: roundOutput(c.p75),
      sample_size: c.sampleSize,
      benchmark_period: c.benchmarkPeriod,
      fallback: c.benchmarkPeriod !== a.snapshot.period,
    })),
    unranked: unrankedView(a),
  };
}

/** GET /merchant/insights' body. */
export const InsightsSchema = v.object({
  ...Head,
  previous: v.pipe(v.nullable(v.object({ vcfs_id: v.string(), period: v.string() })), v.description("The snapshot trends compare with: the latest earlier one of the same granularity.")),
  findings: v.array(
    v.object({
      kind: v.picklist(["strength", "weakness", "improving", "worsening"]),
      metric: v.picklist(METRICS),
      message: v.string(),
      evidence: v.pipe(v.record(v.string(), v.nullable(v.union([v.number(), v.string()]))), v.description("The figures behind the finding.")),
    }),
  ),
});

function findingView(f: Finding): v.InferOutput<typeof InsightsSchema>["findings"][number] {
  const e = f.evidence;
  // Derived figures leave rounded like every number of the API; submitted values and ranks stay as they are.
  const evidence = "change" in e ? { ...e, change: roundOutput(e.change) } : { ...e, p25: roundOutput(e.p25), p50: roundOutput(e.p50), p75: roundOutput(e.p75) };
  return { kind: f.kind, metric: f.metric, message: f.message, evidence };
}

/** The insights view of an analysis. */
export function insightsView(a: MerchantAnalysis): v.InferOutput<typeof InsightsSchema> {
  return {
    ...head(a),
    previous: a.previous === null ? null : { vcfs_id: a.previous.id, period: a.previous.period },
    findings: merchantInsights(a.ranked, a.snapshot, a.previous, a.where).map(findingView),
  };
}

/** GET /merchant/score's body. */
export const ScoreSchema = v.object({
  ...Head,
  score: v.pipe(Rank, v.description("The mean of the ranked metrics' direction-adjusted ranks (`better_than_pct`), one decimal.")),
  grade: v.pipe(v.picklist(["A", "B", "C", "D", "F"]), v.description("A from 80, B from 60, C from 40, D from 20, F below.")),
  components: v.array(
    v.object({
      metric: v.picklist(METRICS),
      rank: v.pipe(Rank, v.description("The direction-adjusted rank (`better_than_pct`).")),
      weight: v.pipe(v.number(), v.description("1/n for n ranked metrics; the weights sum to 1.")),
      contribution: v.pipe(v.number(), v.description("weight × rank; the contributions sum to the score before rounding.")),
    }),
  ),
  unranked: v.pipe(v.array(UnrankedSchema), v.description("Metrics left out of the score.")),
});

/** The score view of an analysis with at least one ranked metric. */
export function scoreView(a: MerchantAnalysis): v.InferOutput<typeof ScoreSchema> {
  const s = merchantScore(a.ranked);
  if (s === null) throw new Error("scoreView: nothing ranked (call requireRanked first)");
  return {
    ...head(a),
    score: s.score,
    grade: s.grade,
    components: s.components.map((c) => ({ metric: c.metric, rank: c.rank, weight: roundOutput(c.weight), contribution: roundOutput(c.contribution) })),
    unranked: unrankedView(a),
  };
}
