/**
 * Which metrics a `sample_size` that speaks for several metrics may count together, so that no subtraction of
 * such counts reaches a withheld group (docs/privacy.md, "`sample_size` of several metrics").
 *
 * The distinct businesses of several metrics (a union) are a new aggregate, beside each metric's cell. If each
 * segment counted the union of its own published metrics, segments publishing different metrics would let
 * `all`'s union minus the segments' unions isolate a withheld segment: S1 publishing only M1 (30), S2 only M2
 * (40) and S3 withheld (3) give 73 − 30 − 40 = 3, although each metric on its own passed complementary
 * suppression (`suppression.ts`). The fix is to count together only metrics that hide nothing:
 *
 * - the **basis** of a (category, period) is the metrics whose every cell, `all` and each segment's, is
 *   published. For those, no business is outside a published cell, so unions of them tell only how the
 *   published businesses report (how many report one basis metric and not another), never anything of a
 *   withheld cell. (An earlier basis also admitted metrics withheld only in segments that show nothing; a
 *   review showed that the withheld businesses' pattern counts, with the cells `/segments/breakdown` lists,
 *   could then pin a withheld cell: 31 withheld businesses report A or B, 30 report each, so 1 reports A and
 *   not B, and the one segment with an A cell and no B cell held exactly 1.)
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
  const basis = new Set<Metric>();
  for (const [m, g] of groups) {
    if (g.all === undefined || g.allReason !== null) continue;
    let everywhere = true;
    for (const s of g.segments.keys()) if ((g.reasons.get(s) ?? null) !== null) everywhere = false;
    if (everywhere) basis.add(m);
  }
  if (basis.size < 2) return basis;
  // The segments with cells of the basis metrics (all published).
  const shown = new Set<string>();
  for (const [m, g] of groups) if (basis.has(m)) for (const s of g.segments.keys()) shown.add(s);
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
