/**
 * Which metrics a `sample_size` that speaks for several metrics may count together, so that no subtraction of
 * such counts reaches a withheld group (docs/privacy.md, "`sample_size` of several metrics").
 *
 * The distinct businesses of several metrics (a union) are a new aggregate, beside each metric's cell. If each
 * segment counted the union of its own published metrics, segments publishing different metrics would let
 * `all`'s union minus the segments' unions isolate a withheld segment: S1 publishing only M1 (30), S2 only M2
 * (40) and S3 withheld (3) give 73 − 30 − 40 = 3, although each metric on its own passed complementary
 * suppression (`suppression.ts`). The fix is to count together only the metrics that every answer counts alike:
 *
 * - the **basis** of a (category, period) is the metrics published in `all` and, in every segment with any
 *   published cell, either published or without businesses. For a metric of the basis the businesses outside
 *   the published segments are those of fully withheld segments, which complementary suppression keeps at 0 or
 *   at least the minimum; a union of such groups is again 0 or at least the minimum;
 * - as a last guard (a business under two segments is counted in both), the basis is dropped when `all`'s union
 *   minus the segments' unions, or the businesses the segments' unions miss, are negative or between 1 and the
 *   minimum − 1;
 * - an answer's `sample_size` is the larger of its basis metrics' union and its largest published cell: both are
 *   known to be safe (the union by the above, each cell's size by per-metric suppression), so their maximum is.
 *
 * When every segment publishes every metric (the usual case) the basis is every metric and `sample_size` is
 * exactly the answer's distinct businesses. Pure: cells and decisions in, metrics out.
 */
import type { Metric } from "../data/catalog.ts";
import { distinctBusinesses } from "../data/distinct-businesses.ts";
import type { Cell } from "../data/source.ts";
import type { WithheldReason } from "./suppression.ts";

/** One metric's cells of a (category, period) and their publication decisions (`null`: published). */
export interface MetricCells {
  readonly all: Cell | undefined;
  readonly allReason: WithheldReason | null;
  readonly segments: ReadonlyMap<string, Cell>;
  readonly reasons: ReadonlyMap<string, WithheldReason | null>;
}

/** The metrics whose businesses a multi-metric `sample_size` may count together (see the module comment). */
export function countBasis(groups: ReadonlyMap<Metric, MetricCells>, minimum: number): ReadonlySet<Metric> {
  // Segments with at least one published cell: the ones whose counts are shown.
  const shown = new Set<string>();
  for (const g of groups.values()) for (const [s, r] of g.reasons) if (r === null && g.segments.has(s)) shown.add(s);
  const basis = new Set<Metric>();
  for (const [m, g] of groups) {
    if (g.all === undefined || g.allReason !== null) continue;
    let everywhere = true;
    for (const s of shown) if (g.segments.has(s) && (g.reasons.get(s) ?? null) !== null) everywhere = false;
    if (everywhere) basis.add(m);
  }
  if (basis.size < 2) return basis;
  const allCells: Cell[] = [];
  const bySegment = new Map<string, Cell[]>();
  for (const [m, g] of groups) {
    if (!basis.has(m) || g.all === undefined) continue;
    allCells.push(g.all);
    for (const s of shown) {
      const c = g.segments.get(s);
      if (c === undefined) continue;
      const list = bySegment.get(s);
      if (list === undefined) bySegment.set(s, [c]);
      else list.push(c);
    }
  }
  const everyone = distinctBusinesses(allCells);
  let subtracted = everyone;
  const inSegments: Cell[] = [];
  for (const cells of bySegment.values()) {
    subtracted -= distinctBusinesses(cells);
    inSegments.push(...cells);
  }
  const missed = everyone - distinctBusinesses(inSegments);
  const safe = (n: number): boolean => n === 0 || n >= minimum;
  return safe(subtracted) && safe(missed) ? basis : new Set();
}

/**
 * The `sample_size` of an answer over `included` (the published cells of one segment or `all`, by metric): the
 * distinct businesses of its basis metrics, or its largest cell when that is larger.
 */
export function sampleSizeOf(included: ReadonlyMap<Metric, Cell>, basis: ReadonlySet<Metric>): number {
  const counted: Cell[] = [];
  let largest = 0;
  for (const [m, c] of included) {
    if (basis.has(m)) counted.push(c);
    if (c.sampleSize > largest) largest = c.sampleSize;
  }
  return Math.max(largest, distinctBusinesses(counted));
}
