/**
 * The live BenchmarkSource of an SQL store: reads cells by primary key and keeps decoded cells (and the
 * period/segment answers) in process. Every import bumps a data version in the database; the cache asks
 * for that version at most once per `ttlMs` and drops everything when it moved, so a running server sees
 * another process's import within `ttlMs` (and its own at once).
 */
import type { BenchmarkSource, Category, Cell, Granularity, Metric } from "@benchdata/core";
import { decodeFloat64, decodeUint32 } from "./cell-codec.ts";

/** A stored cell row as the dialects return it. */
export interface StoredCellRow {
  readonly metric: string;
  readonly sampleSize: number;
  readonly sorted: Uint8Array;
  /** The cell's business ordinals (uint32 little-endian); null for cells published before they were kept. */
  readonly businesses: Uint8Array | null;
}

/** The uncached reads a dialect provides. */
export interface CellReader {
  dataVersion(): Promise<number>;
  latestPeriod(category: Category, segment: string, granularity: Granularity): Promise<string | null>;
  recentPeriods(category: Category, segment: string, metric: Metric, granularity: Granularity, count: number): Promise<string[]>;
  cells(category: Category, segment: string, period: string, metrics: readonly Metric[]): Promise<StoredCellRow[]>;
  segments(category: Category): Promise<string[]>;
}

/** A BenchmarkSource with an `invalidate` for writes made through the same storage. */
export interface CachedBenchmarks extends BenchmarkSource {
  invalidate(): void;
}

/** The default time a cached answer is trusted before the data version is checked again. */
export const DEFAULT_CACHE_TTL_MS = 1000;

// A bound on cached entries, so a scan over many cells cannot grow the process without limit.
const MAX_ENTRIES = 20_000;

/** Wraps a CellReader in the version-checked cache. `ttlMs` 0 disables caching. */
export function cachedBenchmarks(reader: CellReader, ttlMs: number = DEFAULT_CACHE_TTL_MS, monotonicNow: () => number = () => performance.now()): CachedBenchmarks {
  let entries = new Map<string, Promise<unknown>>();
  let version: number | null = null;
  let checkedAt = -Infinity;
  let checking: Promise<void> | null = null;

  const invalidate = (): void => {
    entries = new Map();
    version = null;
    checkedAt = -Infinity;
  };

  async function fresh(): Promise<void> {
    if (ttlMs <= 0 || monotonicNow() - checkedAt < ttlMs) return;
    checking ??= (async () => {
      try {
        const v = await reader.dataVersion();
        if (v !== version) {
          entries = new Map();
          version = v;
        }
        checkedAt = monotonicNow();
      } finally {
        checking = null;
      }
    })();
    await checking;
  }

  function memo<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (ttlMs <= 0) return load();
    const hit = entries.get(key);
    if (hit) return hit as Promise<T>;
    if (entries.size >= MAX_ENTRIES) entries = new Map();
    const map = entries;
    const p = load();
    map.set(key, p);
    // A failed read is not remembered.
    p.catch(() => {
      if (map.get(key) === p) map.delete(key);
    });
    return p;
  }

  return {
    invalidate,
    async latestPeriod(category, segment, granularity) {
      await fresh();
      return memo(`latest|${category}|${segment}|${granularity}`, () => reader.latestPeriod(category, segment, granularity));
    },
    async recentPeriods(category, segment, metric, granularity, count) {
      await fresh();
      const got = await memo(`recent|${category}|${segment}|${metric}|${granularity}|${count}`, () => reader.recentPeriods(category, segment, metric, granularity, count));
      return [...got];
    },
    async segments(category) {
      await fresh();
      return [...(await memo(`segments|${category}`, () => reader.segments(category)))];
    },
    async cells(category, segment, period, metrics) {
      await fresh();
      const keyOf = (m: Metric): string => `cell|${category}|${segment}|${period}|${m}`;
      const pending = new Map<Metric, Promise<Cell | null>>();
      const missing: Metric[] = [];
      for (const m of metrics) {
        const hit = ttlMs > 0 ? (entries.get(keyOf(m)) as Promise<Cell | null> | undefined) : undefined;
        if (hit) pending.set(m, hit);
        else missing.push(m);
      }
      if (missing.length > 0) {
        // One query for every metric not cached yet; each metric's entry resolves from it (null = no data).
        const rows = reader.cells(category, segment, period, missing).then((list) => {
          const byMetric = new Map<string, Cell>();
          for (const r of list) byMetric.set(r.metric, { sorted: decodeFloat64(r.sorted), sampleSize: r.sampleSize, ...(r.businesses === null ? {} : { businesses: decodeUint32(r.businesses) }) });
          return byMetric;
        });
        for (const m of missing) pending.set(m, memo(keyOf(m), () => rows.then((got) => got.get(m) ?? null)));
      }
      const got = await Promise.all(metrics.map((m) => pending.get(m)!));
      const out = new Map<Metric, Cell>();
      metrics.forEach((m, i) => {
        const c = got[i];
        if (c) out.set(m, c);
      });
      return out;
    },
  };
}
