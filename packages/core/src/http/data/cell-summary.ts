/**
 * Per-cell results computed once. A cell is immutable and its object stays the same while its source keeps
 * it, so its rounded percentile set, summary statistics and the JSON text of each are cached in a WeakMap
 * keyed by the Cell. Serializing doubles is the larger cost of a response, hence the cached JSON fragments.
 */
import type { Cell } from "../../data/source.ts";
import type { PercentileSet } from "../../stats/percentile-set.ts";
import { percentileSet } from "../../stats/percentile-set.ts";
import type { SummaryStats } from "../../stats/summary-stats.ts";
import { summaryStats } from "../../stats/summary-stats.ts";
import { roundOutput } from "./round-output.ts";
import { percentileRank } from "../../stats/percentile-rank.ts";
import { exactRanksAllowed, interpolatedRank } from "../../privacy/rank.ts";

interface CellMemo {
  percentiles?: PercentileSet;
  stats?: SummaryStats;
  /** JSON fragments by name. */
  readonly fragments: Map<string, string>;
}

const memos = new WeakMap<Cell, CellMemo>();

function memoOf(cell: Cell): CellMemo {
  let m = memos.get(cell);
  if (m === undefined) memos.set(cell, (m = { fragments: new Map() }));
  return m;
}

/** The cell's percentile set, rounded for output. */
export function cellPercentiles(cell: Cell): PercentileSet {
  const m = memoOf(cell);
  if (m.percentiles === undefined) {
    const raw = percentileSet(cell.sorted);
    m.percentiles = { p10: roundOutput(raw.p10), p25: roundOutput(raw.p25), p50: roundOutput(raw.p50), p75: roundOutput(raw.p75), p90: roundOutput(raw.p90), mean: roundOutput(raw.mean) };
  }
  return m.percentiles;
}

/** The cell's min, max, mean and population standard deviation, rounded for output. */
export function cellStats(cell: Cell): SummaryStats {
  const m = memoOf(cell);
  if (m.stats === undefined) {
    const raw = summaryStats(cell.sorted);
    m.stats = { min: roundOutput(raw.min), max: roundOutput(raw.max), mean: roundOutput(raw.mean), std_dev: roundOutput(raw.std_dev) };
  }
  return m.stats;
}

/** A JSON fragment derived from the cell alone, built once per name (e.g. `set`, `hist:20`). */
export function cellJson(cell: Cell, name: string, build: () => string): string {
  const fragments = memoOf(cell).fragments;
  let json = fragments.get(name);
  if (json === undefined) fragments.set(name, (json = build()));
  return json;
}

/** The JSON text of the cell's rounded percentile set. */
export function cellPercentilesJson(cell: Cell): string {
  return cellJson(cell, "set", () => JSON.stringify(cellPercentiles(cell)));
}

/**
 * The rank the API answers for `value` in `cell` (0–100, unrounded): scipy's exact rank only in a cell so large
 * that one step of the rounded rank covers the publication minimum, else the rank on the cell's published
 * percentile set, which no number of questions can turn into the cell's values (docs/privacy.md, route 3).
 */
export function publishedRank(cell: Cell, value: number, minimum: number): number {
  return exactRanksAllowed(cell.sampleSize, minimum) ? percentileRank(cell.sorted, value) : interpolatedRank(cellPercentiles(cell), value);
}
