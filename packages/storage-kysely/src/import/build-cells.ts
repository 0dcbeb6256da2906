/**
 * Builds the published cells from staged rows in one pass over them grouped by (category, period, metric)
 * and, inside a group, by business, segment and line; it holds one group at a time plus the finished cells.
 *
 * - Each segment's cell: one value per business, sorted; `sampleSize` = its businesses.
 * - The `all` cell: every business of the category that reported the metric in the period, counted once.
 *   A business that reported it under two segments (unusual: a business normally sits in one segment)
 *   contributes the mean of its values (summed in ascending order), so `all` never counts it twice and
 *   does not depend on the order of the file.
 * - The same (business, category, segment, period, metric) twice is an error (`duplicate`).
 * - Every cell keeps its businesses as ordinals (`Cell.businesses`), numbered across the import in order of
 *   first appearance, so that the cells of several metrics can be counted as distinct businesses
 *   (`sample_size` of /benchmarks and /segments). An import replaces each (category, period) whole, so the
 *   cells of one (category, period) always share one numbering. The pass holds one ordinal per distinct
 *   business id of the file.
 */
import type { Category, Metric, PreparedCell } from "@benchdata/core";
import { ALL_SEGMENTS } from "@benchdata/core";
import type { ReplacedPeriod, StagedRow } from "./staging.ts";

/** A repeated observation: `line` repeats what `firstLine` said. */
export interface Duplicate {
  readonly line: number;
  readonly firstLine: number;
  readonly row: StagedRow;
}

/** What the pass produced. */
export interface BuiltCells {
  readonly cells: PreparedCell[];
  readonly replace: ReplacedPeriod[];
  readonly periods: number;
  /** The duplicate with the smallest line, if any (then `cells` must not be published). */
  readonly duplicate: Duplicate | null;
}

const sortedCell = (values: number[], businesses: number[]): PreparedCell["cell"] => ({
  sorted: Float64Array.from(values).sort(),
  sampleSize: businesses.length,
  businesses: Uint32Array.from(businesses).sort(),
});

/** Runs the pass over `ordered`; with `checkOnly` it looks for duplicates and builds nothing. */
export async function buildCells(ordered: AsyncIterable<readonly StagedRow[]>, checkOnly = false): Promise<BuiltCells> {
  const cells: PreparedCell[] = [];
  const replace: ReplacedPeriod[] = [];
  const periods = new Set<string>();
  let duplicate: Duplicate | null = null;

  let group: { category: Category; period: string; metric: Metric } | null = null;
  let segments = new Map<string, { values: number[]; businesses: number[] }>();
  let all: number[] = [];
  let allBusinesses: number[] = [];
  // Ordinals of the import's businesses (one entry per distinct business id).
  const ordinals = new Map<string, number>();
  // The business being read and its values (for `all`).
  let business: string | null = null;
  let own: number[] = [];
  let prev: StagedRow | null = null;
  const replaced = new Set<string>();

  const endBusiness = (): void => {
    if (own.length > 0) allBusinesses.push(ordinals.get(business!)!);
    if (own.length === 1) all.push(own[0]!);
    else if (own.length > 1) all.push(own.sort((a, b) => a - b).reduce((x, y) => x + y, 0) / own.length);
    business = null;
    own = [];
  };
  const endGroup = (): void => {
    endBusiness();
    if (group && !checkOnly) {
      for (const [segment, s] of [...segments].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        cells.push({ category: group.category, segment, period: group.period, metric: group.metric, cell: sortedCell(s.values, s.businesses) });
      }
      cells.push({ category: group.category, segment: ALL_SEGMENTS, period: group.period, metric: group.metric, cell: sortedCell(all, allBusinesses) });
    }
    segments = new Map();
    all = [];
    allBusinesses = [];
  };

  for await (const batch of ordered) {
    for (const r of batch) {
      if (!group || r.category !== group.category || r.period !== group.period || r.metric !== group.metric) {
        endGroup();
        group = { category: r.category, period: r.period, metric: r.metric };
        periods.add(r.period);
        const cp = `${r.category}|${r.period}`;
        if (!replaced.has(cp)) {
          replaced.add(cp);
          replace.push({ category: r.category, period: r.period });
        }
        prev = null;
      }
      if (prev && prev.businessId === r.businessId && prev.segment === r.segment) {
        if (!duplicate || r.line < duplicate.line) duplicate = { line: r.line, firstLine: prev.line, row: r };
        continue;
      }
      prev = r;
      if (checkOnly) continue;
      if (r.businessId !== business) {
        endBusiness();
        business = r.businessId;
        if (!ordinals.has(business)) ordinals.set(business, ordinals.size);
      }
      own.push(r.value);
      let seg = segments.get(r.segment);
      if (!seg) segments.set(r.segment, (seg = { values: [], businesses: [] }));
      seg.values.push(r.value);
      seg.businesses.push(ordinals.get(business)!);
    }
  }
  endGroup();
  replace.sort((a, b) => (a.category < b.category ? -1 : a.category > b.category ? 1 : a.period < b.period ? -1 : a.period > b.period ? 1 : 0));
  return { cells, replace, periods: periods.size, duplicate };
}
