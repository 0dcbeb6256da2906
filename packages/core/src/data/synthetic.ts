/** The deterministic synthetic dataset that test keys read: every category, metric and segment, generated lazily per cell. */
import { isCategory, metricsOf, offersMetric } from "./catalog.ts";
import type { Category, Metric } from "./catalog.ts";
import { formatPeriod, parsePeriod, shiftPeriod } from "./period.ts";
import type { Granularity, Period } from "./period.ts";
import { createPrng } from "./prng.ts";
import type { Prng } from "./prng.ts";
import { ALL_SEGMENTS } from "./source.ts";
import type { BenchmarkSource, Cell } from "./source.ts";
import { SYNTHETIC_PROFILES } from "./synthetic-profiles.ts";
import type { MetricShape, SegmentProfile } from "./synthetic-profiles.ts";

/** The last quarter of the synthetic dataset: fixed, so the dataset never changes with the wall clock. */
export const SYNTHETIC_LATEST_QUARTER = "2026-Q3";

/** Options of `createSyntheticSource`; every field has a default. */
export interface SyntheticOptions {
  /** Latest quarter with data (`YYYY-Qn`); the latest month is its last month. Default `2026-Q3`. */
  readonly latestQuarter?: string;
  /** Quarters of history, latest included. Default 24. */
  readonly quarters?: number;
  /** Months of history, latest included. Default 36. */
  readonly months?: number;
  /** Most (category, segment, period) cell sets kept in memory; older ones are regenerated on demand. Default 512. */
  readonly cacheSize?: number;
}

type CellSet = Map<Metric, Cell>;

/** The synthetic segments (excluding `all`) of every category. */
export const SYNTHETIC_SEGMENTS: { readonly [C in Category]: readonly string[] } = {
  ecommerce: segmentNames("ecommerce"),
  saas: segmentNames("saas"),
  marketplace: segmentNames("marketplace"),
  retail: segmentNames("retail"),
  fintech: segmentNames("fintech"),
  food_beverage: segmentNames("food_beverage"),
  health_wellness: segmentNames("health_wellness"),
};

function segmentNames(category: Category): readonly string[] {
  return SYNTHETIC_PROFILES[category].segments.map((s) => s.name);
}

const MONEY_OR_MULTIPLE = new Set<Metric>(["customer_ltv", "customer_acquisition_cost", "average_order_value", "ltv_cac_ratio", "burn_multiple"]);

/** Fractional year at the middle of a period (2026-Q3 → 2026.625). */
function yearOf(p: Period): number {
  return p.year + (p.index - 0.5) / (p.granularity === "quarterly" ? 4 : 12);
}

/** The shared macro cycle of growth: a 2021 boom and a 2022–23 slowdown, near zero by 2025. */
function macroCycle(t: number): number {
  return 0.025 * Math.exp(-(((t - 2021.4) / 0.5) ** 2)) - 0.03 * Math.exp(-(((t - 2023.0) / 0.7) ** 2));
}

function fromSpace(space: MetricShape["space"], x: number): number {
  return space === "logit" ? 1 / (1 + Math.exp(-x)) : space === "log" ? Math.exp(x) : x;
}

function toSpace(space: MetricShape["space"], v: number): number {
  return space === "logit" ? Math.log(v / (1 - v)) : space === "log" ? Math.log(v) : v;
}

/** Rounds as reported figures are: ratios to 4 decimals, money and multiples to cents. */
function report(metric: Metric, v: number): number {
  return MONEY_OR_MULTIPLE.has(metric) ? Math.round(v * 100) / 100 : Math.round(v * 1e4) / 1e4;
}

// How to draw one metric for one segment at one time: its centre in transformed space and spreads.
interface Drawer {
  readonly metric: Metric;
  readonly shape: MetricShape;
  readonly centre: number;
  readonly tailSpread: number;
  readonly idioSpread: number;
}

/** Creates the synthetic `BenchmarkSource` for a seed: same seed, same numbers, whatever the order of queries. */
export function createSyntheticSource(seed: string, options: SyntheticOptions = {}): BenchmarkSource {
  const latestQuarter = parsePeriod(options.latestQuarter ?? SYNTHETIC_LATEST_QUARTER);
  if (!latestQuarter || latestQuarter.granularity !== "quarterly") {
    throw new RangeError(`latestQuarter must be YYYY-Qn, got ${options.latestQuarter}`);
  }
  const quarterCount = Math.max(1, Math.floor(options.quarters ?? 24));
  const monthCount = Math.max(1, Math.floor(options.months ?? 36));
  const cacheSize = Math.max(1, Math.floor(options.cacheSize ?? 512));
  const latestMonth: Period = { granularity: "monthly", year: latestQuarter.year, index: latestQuarter.index * 3 };

  const list = (latest: Period, count: number): string[] =>
    Array.from({ length: count }, (_, i) => formatPeriod(shiftPeriod(latest, i - count + 1)));
  const periods: Record<Granularity, string[]> = {
    quarterly: list(latestQuarter, quarterCount),
    monthly: list(latestMonth, monthCount),
  };
  const known = new Set([...periods.quarterly, ...periods.monthly]);
  const tFirst = Math.min(yearOf(parsePeriod(periods.quarterly[0] as string) as Period), yearOf(parsePeriod(periods.monthly[0] as string) as Period));
  const tLast = yearOf(latestQuarter);

  // Slow per-(seed, category, metric) wobble so each history has its own shape.
  const wobbles = new Map<string, { amplitude: number; period: number; phase: number }>();
  const wobbleOf = (category: Category, metric: Metric, spread: number): { amplitude: number; period: number; phase: number } => {
    const key = `${category}|${metric}`;
    let w = wobbles.get(key);
    if (!w) {
      const p = createPrng(`${seed}\u0000wobble\u0000${key}`);
      w = { amplitude: spread * (0.04 + 0.06 * p.next()), period: 2 + 2.5 * p.next(), phase: 2 * Math.PI * p.next() };
      wobbles.set(key, w);
    }
    return w;
  };

  const drawers = (category: Category, segment: SegmentProfile, t: number): Drawer[] => {
    const profile = SYNTHETIC_PROFILES[category];
    const out: Drawer[] = [];
    for (const metric of metricsOf(category)) {
      if (metric === "customer_acquisition_cost") continue; // derived from LTV and the ratio
      const shape = profile.metrics[metric];
      if (!shape) continue;
      const w = wobbleOf(category, metric, shape.spread);
      const seasonal = shape.seasonal ? (shape.seasonal / 2) * Math.cos(2 * Math.PI * (t - Math.floor(t) - 0.8)) : 0;
      const centre =
        toSpace(shape.space, shape.centre) +
        (segment.shift[metric] ?? 0) +
        (shape.trend ?? 0) * (t - tLast) +
        (shape.macro ?? 0) * macroCycle(t) +
        seasonal +
        w.amplitude * Math.sin((2 * Math.PI * t) / w.period + w.phase);
      const idio = Math.sqrt(Math.max(0, 1 - shape.loading * shape.loading));
      out.push({ metric, shape, centre, tailSpread: shape.spread * 3, idioSpread: idio });
    }
    return out;
  };

  const segmentPrng = (category: Category, segment: SegmentProfile, periodText: string): Prng => createPrng(`${seed}\u0000${category}\u0000${segment.name}\u0000${periodText}`);
  // The panel grows over time (82% of the base at the start) with a little churn of reporters: the first draw.
  const segmentSize = (segment: SegmentProfile, periodText: string, prng: Prng): number => {
    const t = yearOf(parsePeriod(periodText) as Period);
    const progress = tLast > tFirst ? Math.min(1, Math.max(0, (t - tFirst) / (tLast - tFirst))) : 1;
    return Math.round(segment.businesses * (0.82 + 0.18 * progress)) + prng.int(-4, 4);
  };

  const generateSegment = (category: Category, segment: SegmentProfile, periodText: string): CellSet => {
    const t = yearOf(parsePeriod(periodText) as Period);
    const prng = segmentPrng(category, segment, periodText);
    const n = segmentSize(segment, periodText, prng);
    const ds = drawers(category, segment, t);
    const columns = new Map<Metric, Float64Array>();
    for (const metric of metricsOf(category)) columns.set(metric, new Float64Array(n));
    const ltvColumn = columns.get("customer_ltv");
    const cacColumn = columns.get("customer_acquisition_cost");
    const ratioColumn = columns.get("ltv_cac_ratio");

    for (let i = 0; i < n; i++) {
      const quality = prng.normal();
      for (const d of ds) {
        const s = d.shape;
        const spread = s.tail && prng.next() < s.tail ? d.tailSpread : s.spread;
        let v = fromSpace(s.space, d.centre + spread * (s.loading * quality + d.idioSpread * prng.normal()));
        if (s.floor !== undefined && v < s.floor) v = s.floor + 0.02 * prng.next();
        (columns.get(d.metric) as Float64Array)[i] = report(d.metric, v);
      }
      if (ltvColumn && cacColumn && ratioColumn) {
        // CAC follows from the business's LTV and LTV:CAC, so the three metrics agree per business.
        const ltv = ltvColumn[i] as number;
        const cac = Math.max(0.01, report("customer_acquisition_cost", ltv / (ratioColumn[i] as number)));
        cacColumn[i] = cac;
        ratioColumn[i] = report("ltv_cac_ratio", ltv / cac);
      }
    }
    const cells: CellSet = new Map();
    // Every synthetic business reports every metric: one list of ordinals serves all the segment's cells. The
    // ordinals are numbered per (category, period), as an import numbers them: the category's segments one after
    // another (in profile order, as `all` numbers them), so cells of different segments never share one.
    const profiles = SYNTHETIC_PROFILES[category].segments;
    let first = 0;
    for (const p of profiles) {
      if (p.name === segment.name) break;
      first += segmentSize(p, periodText, segmentPrng(category, p, periodText));
    }
    const businesses = Uint32Array.from({ length: n }, (_, i) => first + i);
    for (const [metric, values] of columns) cells.set(metric, { sorted: values.sort(), sampleSize: n, businesses });
    return cells;
  };

  // Bounded LRU of generated cell sets. A hit only stamps its entry (re-inserting into the Map on every hit,
  // the usual trick, costs a delete, an insert and periodic rehashes on the hot path); the rare insertion past
  // the bound evicts the entry stamped longest ago.
  const cache = new Map<string, { set: CellSet; used: number }>();
  let clock = 0;
  const remember = (key: string, set: CellSet): CellSet => {
    cache.set(key, { set, used: ++clock });
    if (cache.size > cacheSize) {
      let oldest: string | undefined;
      let oldestUse = Infinity;
      for (const [k, e] of cache) {
        if (e.used < oldestUse) {
          oldestUse = e.used;
          oldest = k;
        }
      }
      cache.delete(oldest as string);
    }
    return set;
  };
  const cellSet = (category: Category, segment: string, period: string): CellSet => {
    const key = `${category}|${segment}|${period}`;
    const hit = cache.get(key);
    if (hit) {
      hit.used = ++clock;
      return hit.set;
    }
    const profiles = SYNTHETIC_PROFILES[category].segments;
    if (segment !== ALL_SEGMENTS) {
      const profile = profiles.find((s) => s.name === segment) as SegmentProfile;
      return remember(key, generateSegment(category, profile, period));
    }
    // `all` is the union of the segments' businesses.
    const parts = profiles.map((s) => cellSet(category, s.name, period));
    const union: CellSet = new Map();
    // The segments' businesses are disjoint: number them one segment after another.
    const total = parts.reduce((a, p) => a + ((p.values().next().value as Cell | undefined)?.sampleSize ?? 0), 0);
    const businesses = Uint32Array.from({ length: total }, (_, i) => i);
    for (const metric of metricsOf(category)) {
      const pieces = parts.map((p) => p.get(metric) as Cell);
      const size = pieces.reduce((a, c) => a + c.sorted.length, 0);
      const values = new Float64Array(size);
      let at = 0;
      for (const c of pieces) {
        values.set(c.sorted, at);
        at += c.sorted.length;
      }
      union.set(metric, { sorted: values.sort(), sampleSize: pieces.reduce((a, c) => a + c.sampleSize, 0), businesses });
    }
    return remember(key, union);
  };

  const hasSegment = (category: Category, segment: string): boolean =>
    isCategory(category) && (segment === ALL_SEGMENTS || SYNTHETIC_SEGMENTS[category].includes(segment));

  return {
    latestPeriod(category, segment, granularity) {
      const list = periods[granularity];
      return Promise.resolve(hasSegment(category, segment) && list ? (list[list.length - 1] as string) : null);
    },
    recentPeriods(category, segment, metric, granularity, count) {
      const list = periods[granularity];
      if (!list || !hasSegment(category, segment) || !offersMetric(category, metric) || !(count >= 1)) return Promise.resolve([]);
      return Promise.resolve(list.slice(-Math.floor(Math.min(count, list.length))));
    },
    cells(category, segment, period, metrics) {
      const result = new Map<Metric, Cell>();
      if (!hasSegment(category, segment) || !known.has(period)) return Promise.resolve(result);
      const set = cellSet(category, segment, period);
      for (const m of metrics) {
        const cell = set.get(m);
        if (cell) result.set(m, cell);
      }
      return Promise.resolve(result);
    },
    segments(category) {
      return Promise.resolve(isCategory(category) ? [...SYNTHETIC_SEGMENTS[category]] : []);
    },
  };
}
