/**
 * Usage analytics' in-memory aggregate: each instance counts its data requests by key × endpoint × outcome × hour,
 * with a latency histogram, and writes the sums every few seconds in one `Storage.addKeyUsage`. The request path
 * only adds to numbers in memory; no request waits for, or is refused by, a write. A failed write is logged, kept
 * and added to the next one; what memory cannot hold is dropped and counted (docs/analytics.md).
 */
import type { Logger } from "../log/logger.ts";
import { silentLogger } from "../log/logger.ts";
import { faultCause, faultMessage } from "../log/fault-log.ts";
import type { CounterChild, GaugeChild, MetricsRegistry } from "../metrics/metrics-registry.ts";
import type { KeyUsageBatch, KeyUsageRow } from "../storage/types.ts";
import { LATENCY_BUCKETS, latencyBucket } from "./latency-buckets.ts";
import { OUTCOME_COUNT, outcomeIndex, USAGE_OUTCOMES } from "./usage-outcome.ts";

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
/** Per outcome in a series: the latency buckets, then the slowest call. */
const STRIDE = LATENCY_BUCKETS + 1;

/** The defaults: a write every 5 s, and at most 100 000 series held (a few tens of MB at worst). */
export const DEFAULT_FLUSH_MS = 5000;
export const DEFAULT_MAX_SERIES = 100_000;

/** What an aggregator needs. */
export interface UsageAggregatorOptions {
  /** Writes one batch (the store's `addKeyUsage`, unguarded: its failures are the aggregator's to handle). */
  readonly write: (batch: KeyUsageBatch) => Promise<void>;
  readonly logger?: Logger;
  /** Time between two writes (ms). */
  readonly flushMs?: number;
  /**
   * The most series held at once: a key × endpoint × hour being counted, or a row kept from a failed write. A
   * request that would start a series beyond it is not counted (`benchdata_analytics_dropped_total`).
   */
  readonly maxSeries?: number;
  /** Where to count writes, drops and held series. */
  readonly metrics?: MetricsRegistry;
}

/** One instance's aggregate. */
export interface UsageAggregator {
  /** The ordinal of an endpoint (its method and template), to pass to `record`; resolve it once, at setup. */
  endpoint(label: string): number;
  /** Counts one answered data request of a known key: its status and duration (ms), at `now` (Unix ms). */
  record(keyId: string, accountId: string, endpoint: number, status: number, ms: number, now: number): void;
  /** Writes what is held now (after a write under way); false when the write failed (what it held is kept for the next). */
  flush(): Promise<boolean>;
  /** Starts writing every `flushMs` (the timer does not keep a process alive). */
  start(): void;
  /** Stops the timer and writes what is held (graceful shutdown). */
  close(): Promise<boolean>;
  /** Series held now (see `maxSeries`). */
  readonly held: number;
}

interface KeyCell {
  readonly accountId: string;
  lastAt: number;
  /** Per endpoint ordinal: OUTCOME_COUNT × STRIDE numbers, or undefined until the first call. */
  readonly series: (Float64Array | undefined)[];
}

interface HourCells {
  readonly hour: number;
  readonly keys: Map<string, KeyCell>;
}

interface AggregatorMetrics {
  readonly written: CounterChild;
  readonly failed: CounterChild;
  readonly dropped: CounterChild;
  readonly held: GaugeChild;
}

const metricsByRegistry = new WeakMap<MetricsRegistry, AggregatorMetrics>();

function aggregatorMetrics(registry: MetricsRegistry): AggregatorMetrics {
  let m = metricsByRegistry.get(registry);
  if (m === undefined) {
    const flushes = registry.counter("benchdata_analytics_flushes_total", "Writes of the usage analytics aggregate, by outcome (failed: kept for the next).", ["outcome"]);
    m = {
      written: flushes.labels("written"),
      failed: flushes.labels("failed"),
      dropped: registry.counter("benchdata_analytics_dropped_total", "Data requests usage analytics did not count: the aggregate held its most series.").labels(),
      held: registry.gauge("benchdata_analytics_held_series", "Series the usage analytics aggregate holds (being counted, or kept from a failed write).").labels(),
    };
    metricsByRegistry.set(registry, m);
  }
  return m;
}

/** A row's identity within a batch. */
function rowId(hour: number, keyId: string, endpoint: string, outcome: string): string {
  return `${hour} ${keyId} ${endpoint} ${outcome}`;
}

/** Creates an aggregator; nothing is written until `flush()`, `start()`'s timer or `close()`. */
export function createUsageAggregator(options: UsageAggregatorOptions): UsageAggregator {
  const write = options.write;
  const logger = options.logger ?? silentLogger;
  const flushMs = Math.max(1, options.flushMs ?? DEFAULT_FLUSH_MS);
  const maxSeries = Math.max(1, options.maxSeries ?? DEFAULT_MAX_SERIES);
  const metrics = options.metrics ? aggregatorMetrics(options.metrics) : null;
  const labels: string[] = [];
  const ordinals = new Map<string, number>();

  let current: HourCells = { hour: -1, keys: new Map() };
  let sealed: HourCells[] = [];
  /** Rows of failed writes, merged into the next one; and the last uses they carried. */
  let kept = new Map<string, KeyUsageRow>();
  let keptLast = new Map<string, { accountId: string; at: number }>();
  let liveSeries = 0;
  let droppedSinceLog = 0;
  let timer: ReturnType<typeof setInterval> | null = null;

  const held = (): number => liveSeries + kept.size;

  function record(keyId: string, accountId: string, endpoint: number, status: number, ms: number, now: number): void {
    const hour = now - (now % HOUR_MS);
    if (hour !== current.hour) {
      if (current.keys.size > 0) sealed.push(current);
      current = { hour, keys: new Map() };
    }
    let cell = current.keys.get(keyId);
    let series = cell?.series[endpoint];
    if (series === undefined) {
      if (liveSeries + kept.size >= maxSeries) {
        droppedSinceLog++;
        metrics?.dropped.inc();
        return;
      }
      if (cell === undefined) current.keys.set(keyId, (cell = { accountId, lastAt: now, series: [] }));
      cell.series[endpoint] = series = new Float64Array(OUTCOME_COUNT * STRIDE);
      liveSeries++;
    }
    if (now > cell!.lastAt) cell!.lastAt = now;
    const base = outcomeIndex(status) * STRIDE;
    series[base + latencyBucket(ms)]!++;
    if (ms > series[base + LATENCY_BUCKETS]!) series[base + LATENCY_BUCKETS] = ms;
  }

  /** Folds every held hour into `rows` (kept rows first) and the last uses into `last`; empties the live state. */
  function drain(): { rows: Map<string, KeyUsageRow>; last: Map<string, { accountId: string; at: number }> } {
    const rows = kept;
    const last = keptLast;
    const hours = sealed;
    if (current.keys.size > 0) hours.push(current);
    sealed = [];
    current = { hour: current.hour, keys: new Map() };
    liveSeries = 0;
    kept = new Map();
    keptLast = new Map();
    for (const { hour, keys } of hours) {
      for (const [keyId, cell] of keys) {
        const prev = last.get(keyId);
        if (prev === undefined || cell.lastAt > prev.at) last.set(keyId, { accountId: cell.accountId, at: cell.lastAt });
        cell.series.forEach((series, ordinal) => {
          if (series === undefined) return;
          const endpoint = labels[ordinal]!;
          for (let o = 0; o < OUTCOME_COUNT; o++) {
            const base = o * STRIDE;
            let calls = 0;
            for (let b = 0; b < LATENCY_BUCKETS; b++) calls += series[base + b]!;
            if (calls === 0) continue;
            const outcome = USAGE_OUTCOMES[o]!;
            const latency = Array.from(series.subarray(base, base + LATENCY_BUCKETS));
            const maxMs = series[base + LATENCY_BUCKETS]!;
            const id = rowId(hour, keyId, endpoint, outcome);
            const had = rows.get(id);
            rows.set(
              id,
              had === undefined
                ? { hour, accountId: cell.accountId, keyId, endpoint, outcome, calls, latency, maxMs }
                : { ...had, calls: had.calls + calls, latency: had.latency.map((n, i) => n + latency[i]!), maxMs: Math.max(had.maxMs, maxMs) },
            );
          }
        });
      }
    }
    return { rows, last };
  }

  async function writeHeld(): Promise<boolean> {
    const { rows, last } = drain();
    if (droppedSinceLog > 0) {
      logger.warn("analytics: requests not counted, the aggregate held its most series", { dropped: droppedSinceLog, max_series: maxSeries });
      droppedSinceLog = 0;
    }
    if (rows.size === 0 && last.size === 0) return true;
    const batch: KeyUsageBatch = {
      rows: [...rows.values()],
      lastUsed: [...last].map(([keyId, l]) => ({ keyId, accountId: l.accountId, at: l.at - (l.at % MINUTE_MS) })),
    };
    try {
      await write(batch);
      metrics?.written.inc();
      metrics?.held.set(held());
      return true;
    } catch (error) {
      // Kept whole and merged into the next write (with what was counted meanwhile); it counts toward `maxSeries`.
      for (const [id, row] of rows) kept.set(id, row);
      for (const [keyId, l] of last) keptLast.set(keyId, l);
      metrics?.failed.inc();
      metrics?.held.set(held());
      logger.warn("analytics: writing the usage aggregate failed; kept for the next write", { rows: rows.size, cause: faultCause(error), error: faultMessage(error) });
      return false;
    }
  }

  // Writes run one after another: a flush asked for while one is under way runs after it, so it writes what was
  // counted up to its own call. The timer skips its turn while one is under way (a slow store gets no pile-up).
  let chain: Promise<boolean> = Promise.resolve(true);
  let busy = 0;
  function flush(): Promise<boolean> {
    busy++;
    const next = chain.then(writeHeld).finally(() => {
      busy--;
    });
    chain = next;
    return next;
  }

  return {
    endpoint(label) {
      let n = ordinals.get(label);
      if (n === undefined) {
        n = labels.push(label) - 1;
        ordinals.set(label, n);
      }
      return n;
    },
    record,
    flush,
    start() {
      if (timer !== null) return;
      timer = setInterval(() => {
        if (busy === 0) void flush();
      }, flushMs);
      unrefTimer(timer);
    },
    async close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      return flush();
    },
    get held() {
      return held();
    },
  };
}

/** Lets the process exit with the timer pending (Node and Bun: `unref()`; Deno: `Deno.unrefTimer`). */
function unrefTimer(timer: ReturnType<typeof setInterval>): void {
  const t = timer as unknown as { unref?: () => void } | number;
  if (typeof t === "object" && typeof t.unref === "function") {
    t.unref();
    return;
  }
  const deno = (globalThis as { Deno?: { unrefTimer?: (id: number) => void } }).Deno;
  if (typeof timer === "number") deno?.unrefTimer?.(timer);
}
