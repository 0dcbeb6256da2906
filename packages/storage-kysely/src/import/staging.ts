/**
 * Where an import keeps its rows between parsing and publishing: a staging table in (or beside) the
 * store's database, so memory holds no more than the cells being built. Each SQL storage registers how
 * to open one; any other Storage (the memory store) gets an in-memory staging.
 */
import type { Category, Metric, PreparedCell, Storage } from "@benchdata/core";

/** One validated observation and the line of the file it came from. */
export interface StagedRow {
  readonly line: number;
  readonly businessId: string;
  readonly category: Category;
  readonly segment: string;
  readonly period: string;
  readonly metric: Metric;
  readonly value: number;
}

/** A (category, period) an import replaces. */
export interface ReplacedPeriod {
  readonly category: Category;
  readonly period: string;
}

/** An open staging area of one import. */
export interface Staging {
  /** Appends validated rows. */
  add(rows: readonly StagedRow[]): Promise<void>;
  /**
   * Every staged row, in batches, grouped by (category, period, metric), within a group by business, then
   * segment, then ascending line. Groups, businesses and segments come in any consistent order.
   */
  ordered(): AsyncIterable<readonly StagedRow[]>;
  /** Distinct business ids among the staged rows. */
  countBusinesses(): Promise<number>;
  /** Publishes the cells (replacing each listed (category, period) whole), atomically; resolves to the listed pairs that held cells before. */
  publish(cells: readonly PreparedCell[], replace: readonly ReplacedPeriod[]): Promise<ReplacedPeriod[]>;
}

/** What a storage provides to imports. */
export interface ImportBackend {
  /**
   * Runs `fn` with a fresh staging area, discarded afterwards. Where the whole import is one transaction
   * (PostgreSQL), it commits when `fn` resolves and rolls back when it throws.
   */
  withStaging<T>(fn: (staging: Staging) => Promise<T>): Promise<T>;
}

const backends = new WeakMap<Storage, ImportBackend>();

/** Registers how imports into `storage` stage their rows. */
export function registerImportBackend(storage: Storage, backend: ImportBackend): void {
  backends.set(storage, backend);
}

/** The import backend of a storage: its own, or an in-memory one publishing through `replaceCells`. */
export function importBackendOf(storage: Storage): ImportBackend {
  return backends.get(storage) ?? { withStaging: (fn) => fn(memoryStaging((cells, replace) => storage.replaceCells(cells, replace))) };
}

/** A comparison matching the staging tables' order (binary, like SQL's "C" collation on ASCII text). */
function compareRows(a: StagedRow, b: StagedRow): number {
  return cmp(a.category, b.category) || cmp(a.period, b.period) || cmp(a.metric, b.metric) || cmp(a.businessId, b.businessId) || cmp(a.segment, b.segment) || a.line - b.line;
}
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Staging in process memory, for stores that live there anyway. */
export function memoryStaging(publish: (cells: readonly PreparedCell[], replace: readonly ReplacedPeriod[]) => Promise<ReplacedPeriod[]>): Staging {
  let rows: StagedRow[] = [];
  // Holds every row: acceptable only for stores that keep everything in memory anyway.
  return {
    async add(batch) {
      for (const r of batch) rows.push(r);
    },
    async *ordered() {
      rows.sort(compareRows);
      for (let i = 0; i < rows.length; i += 10_000) yield rows.slice(i, i + 10_000);
    },
    async countBusinesses() {
      return new Set(rows.map((r) => r.businessId)).size;
    },
    publish: async (cells, replace) => {
      rows = [];
      return publish(cells, replace);
    },
  };
}

/**
 * Small-integer codes for the few distinct (category, period, metric) groups and segments of an import,
 * so staging tables store and sort integers (plus the business id) instead of five strings a row. Codes
 * follow first appearance, not string order: the cell builder needs equal keys adjacent, not sorted.
 */
export class RowCodec {
  readonly #groups = new Map<string, number>();
  readonly #groupList: { category: Category; period: string; metric: Metric }[] = [];
  readonly #segments = new Map<string, number>();
  readonly #segmentList: string[] = [];

  /** The code of a row's (category, period, metric). */
  group(r: StagedRow): number {
    const k = `${r.category}\u0000${r.period}\u0000${r.metric}`;
    let g = this.#groups.get(k);
    if (g === undefined) {
      g = this.#groupList.length;
      this.#groups.set(k, g);
      this.#groupList.push({ category: r.category, period: r.period, metric: r.metric });
    }
    return g;
  }

  /** The code of a segment. */
  segment(name: string): number {
    let s = this.#segments.get(name);
    if (s === undefined) {
      s = this.#segmentList.length;
      this.#segments.set(name, s);
      this.#segmentList.push(name);
    }
    return s;
  }

  /** Decodes a staged row. */
  row(line: number, businessId: string, group: number, segment: number, value: number): StagedRow {
    const g = this.#groupList[group]!;
    return { line, businessId, category: g.category, period: g.period, metric: g.metric, segment: this.#segmentList[segment]!, value };
  }
}
