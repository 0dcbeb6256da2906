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

const sortedCell = (values: number[], sampleSize: number): PreparedCell["cell"] => ({ sorted: Float64Array.from(values).sort(), sampleSize });

/** Runs the pass over `ordered`; with `checkOnly` it looks for duplicates and builds nothing. */
export async function buildCells(ordered: AsyncIterable<readonly StagedRow[]>, checkOnly = false): Promise<BuiltCells> {
  const cells: PreparedCell[] = [];
  const replace: ReplacedPeriod[] = [];
  const periods = new Set<string>();
  let duplicate: Duplicate | null = null;

  let group: { category: Category; period: string; metric: Metric } | null = null;
  let segments = new Map<string, number[]>();
  let all: number[] = [];
  // The business being read and its values (for `all`).
  let business: string | null = null;
  let own: number[] = [];
  let prev: StagedRow | null = null;
  const replaced = new Set<string>();

  const endBusiness = (): void => {
    if (own.length === 1) all.push(own[0]!);
    else if (own.length > 1) all.push(own.sort((a, b) => a - b).reduce((x, y) => x + y, 0) / own.length);
    business = null;
    own = [];
  };
  const endGroup = (): void => {
    endBusiness();
    if (group && !checkOnly) {
      for (const [segment, values] of [...segments].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        cells.push({ category: group.category, segment, period: group.period, metric: group.metric, cell: sortedCell(values, values.length) });
      }
      cells.push({ category: group.category, segment: ALL_SEGMENTS, period: group.period, metric: group.metric, cell: sortedCell(all, all.length) });
    }
    segments = new Map();
    all = [];
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
      }
      own.push(r.value);
      let values = segments.get(r.segment);
      if (!values) segments.set(r.segment, (values = []));
      values.push(r.value);
    }
  }
  endGroup();
  replace.sort((a, b) => (a.category < b.category ? -1 : a.category > b.category ? 1 : a.period < b.period ? -1 : a.period > b.period ? 1 : 0));
  return { cells, replace, periods: periods.size, duplicate };
}
