/** Where benchmark numbers come from: imported live data or the synthetic dataset, behind one interface. */
import type { Category, Metric } from "./catalog.ts";
import type { Granularity } from "./period.ts";

/** Which dataset a request reads: live keys read `live`, test keys read `test` (synthetic). */
export type Dataset = "live" | "test";

/** The segment value that aggregates every segment of a category. */
export const ALL_SEGMENTS = "all";

/**
 * One published cell (category × segment-or-all × period × metric), prepared at import time so that
 * queries never scan raw rows: the values sorted ascending (one per business), their count of distinct
 * businesses, and the summary the benchmark endpoint shows.
 */
export interface Cell {
  /** One value per business, ascending. Never mutated by readers. */
  readonly sorted: Float64Array;
  /** Distinct businesses in the cell (the contract's `sample_size`). */
  readonly sampleSize: number;
  /**
   * Who the businesses are, as ordinals, one per business, ascending: numbered per (category, period) at
   * import, so the cells of several metrics of one (category, segment, period) can be counted together
   * (`distinctBusinesses`). Never published. Absent for cells published before the identities were kept
   * (re-import to get them).
   */
  readonly businesses?: Uint32Array;
}

/** Read access to prepared cells; implemented by storage (live data) and by the synthetic generator (test data). */
export interface BenchmarkSource {
  /** The latest period of `granularity` with any data for the category and segment, or null. */
  latestPeriod(category: Category, segment: string, granularity: Granularity): Promise<string | null>;
  /** Up to `count` periods of `granularity` with data for the cell, ending at the latest, ascending. */
  recentPeriods(category: Category, segment: string, metric: Metric, granularity: Granularity, count: number): Promise<string[]>;
  /** The cells of the given metrics in one period; metrics without data are absent from the map. */
  cells(category: Category, segment: string, period: string, metrics: readonly Metric[]): Promise<Map<Metric, Cell>>;
  /** The segments (excluding `all`) that have data for the category. */
  segments(category: Category): Promise<string[]>;
}
