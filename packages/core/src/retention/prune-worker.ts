/**
 * The pruning worker: finishes the account erasures left unfinished (an erasure whose purge was interrupted), then
 * deletes, in bounded batches, what the retention settings no longer keep (finished deliveries and their attempts,
 * events nothing refers to, expired sessions and sign-in links, past day counters, old usage history). Each batch
 * is one short transaction of `Storage.purgeAccount` or `Storage.prune`, and the worker pauses between batches, so
 * other writers (SQLite's one write lock, PostgreSQL's row locks) are never kept waiting for long. Any number of
 * instances may run it against one storage: a row is deleted once, whoever gets to it.
 */
import type { Clock } from "../clock/clock.ts";
import type { ServiceConfig } from "../config/config.ts";
import type { Logger } from "../log/logger.ts";
import { silentLogger } from "../log/logger.ts";
import { faultCause, faultMessage } from "../log/fault-log.ts";
import type { MetricsRegistry } from "../metrics/metrics-registry.ts";
import { serviceMetrics } from "../metrics/service-metrics.ts";
import type { AccountLifecycleStore, PruneCursor, PrunedTable, PruneTarget, RetentionStore } from "../storage/types.ts";
import { PURGE_BATCH } from "./purge-batch.ts";
import { PRUNE_ORDER, retentionCutoffs } from "./retention-cutoffs.ts";

/** What the pruning worker asks of storage: retention's batches, and the unfinished erasures with their purge. */
export type PruneWorkerStore = RetentionStore & Pick<AccountLifecycleStore, "unfinishedErasures" | "purgeAccount">;

/** The capabilities and settings of a pruning worker. */
export interface PruneWorkerOptions {
  /** Retention and unfinished erasures only: the worker deletes in batches, nothing else. */
  readonly storage: PruneWorkerStore;
  readonly clock: Clock;
  /** Its `retention` settings say what is kept. */
  readonly config: ServiceConfig;
  readonly logger?: Logger;
  /** Where to count pruned rows, runs, and the last run's time and duration (e.g. `app.metrics`). */
  readonly metrics?: MetricsRegistry;
  /** Rows one batch of pruning may examine, and unfinished erasures read at a time (default 500). */
  readonly batchSize?: number;
  /** The pause between two batches, in which other writers take the lock (default 20 ms). */
  readonly pauseMs?: number;
  /** Time between the end of a run and the next (default 10 minutes). */
  readonly intervalMs?: number;
  /** Time from `start()` to the first run (default 5 s: the server is serving first). */
  readonly initialDelayMs?: number;
  /** A monotonic millisecond counter for durations (default `performance.now`). */
  readonly elapsed?: () => number;
}

/** What one run deleted. */
export interface PruneReport {
  /** Rows deleted, by table. */
  readonly deleted: Readonly<Record<PrunedTable, number>>;
  /** Unfinished erasures the run purged to the end, and the history records it deleted for them. */
  readonly erasures: { readonly finished: number; readonly purged: number };
  /** Calls of `Storage.purgeAccount` and `Storage.prune` made. */
  readonly batches: number;
  readonly durationMs: number;
  /** Storage failed (the run stopped there; the next run starts over). */
  readonly failed: boolean;
  /** `stop()` ended the run between two batches. */
  readonly stopped: boolean;
}

/** A pruning worker: `tick()` runs once now; `start()` runs it every interval until `stop()`. */
export interface PruneWorker {
  /** One whole run now (joining the one under way, if any); resolves with what it deleted, also when storage failed. */
  tick(): Promise<PruneReport>;
  /** Starts the schedule: a first run after the initial delay, then one every interval. */
  start(): void;
  /** Runs now instead of waiting for the interval (when started). */
  nudge(): void;
  /** Stops the schedule; a run under way ends after its current batch. */
  stop(): Promise<void>;
}

function noneDeleted(): Record<PrunedTable, number> {
  return { deliveries: 0, delivery_attempts: 0, events: 0, sessions: 0, sign_in_links: 0, day_counters: 0, usage_days: 0, key_usage_hours: 0, key_usage_days: 0 };
}

/** Creates a pruning worker over `storage`; nothing runs until `tick()` or `start()`. */
export function createPruneWorker(options: PruneWorkerOptions): PruneWorker {
  const { storage, clock, config } = options;
  const logger = options.logger ?? silentLogger;
  const metrics = options.metrics ? serviceMetrics(options.metrics) : null;
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? 500));
  const pauseMs = Math.max(0, options.pauseMs ?? 20);
  const intervalMs = Math.max(1, options.intervalMs ?? 600_000);
  const initialDelayMs = Math.max(0, options.initialDelayMs ?? 5000);
  const elapsed = options.elapsed ?? (() => performance.now());

  let running = false;
  let stopping = false;
  let current: Promise<PruneReport> | null = null;
  let loopDone: Promise<void> | null = null;
  let wakeSleeper: (() => void) | null = null;

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(finish, ms);
      function finish(): void {
        clearTimeout(timer);
        wakeSleeper = null;
        resolve();
      }
      wakeSleeper = finish;
    });
  }

  async function run(): Promise<PruneReport> {
    const began = elapsed();
    const cutoffs = retentionCutoffs(clock.now(), config.retention);
    const deleted = noneDeleted();
    const erasures = { finished: 0, purged: 0 };
    let batches = 0;
    let target: PruneTarget | "erasures" | null = null;
    /** Between two batches the lock is free: admissions and other writers go first. */
    const pause = async (): Promise<void> => {
      if (batches > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    };
    try {
      // Erasures first: what an erased account left behind is owed to a person. Each is read from the stored list of
      // unfinished ones (never a scan of tombstones) and purged to the end, a batch at a time. One is finished once
      // the store has forgotten it: SQLite keeps it listed while another connection's reader keeps the WAL from being
      // truncated, and then the rest wait for the next run, so a long reader costs one wait per run, not one each.
      target = "erasures";
      let page: string[] = [];
      erasing: do {
        if (stopping) return finish(false, true);
        const after = page.at(-1);
        page = await storage.unfinishedErasures(after === undefined ? { limit: batchSize } : { after, limit: batchSize });
        for (const accountId of page) {
          let purged = 0;
          for (;;) {
            if (stopping) return finish(false, true);
            await pause();
            const n = await storage.purgeAccount({ accountId, limit: PURGE_BATCH });
            batches++;
            if (n === 0) break;
            purged += n;
            erasures.purged += n;
            metrics?.pruned.erased_history.inc(n);
          }
          if (purged > 0) logger.info("retention: an erasure had left history behind; purged it", { account_id: accountId, purged });
          if ((await storage.unfinishedErasures({ of: [accountId], limit: 1 })).length > 0) {
            logger.info("retention: an erasure's history is gone but the store could not yet forget it (SQLite: a reader holds the WAL); the next run tries again", { account_id: accountId });
            break erasing;
          }
          erasures.finished++;
          metrics?.erasuresFinished.inc();
        }
      } while (page.length === batchSize);

      for (target of PRUNE_ORDER) {
        let after: PruneCursor | null = null;
        do {
          if (stopping) return finish(false, true);
          await pause();
          const r = await storage.prune({ target, before: cutoffs[target], limit: batchSize, after });
          batches++;
          for (const [table, n] of Object.entries(r.deleted) as [PrunedTable, number][]) {
            deleted[table] += n;
            if (n > 0) metrics?.pruned[table].inc(n);
          }
          after = r.next;
        } while (after !== null);
      }
      return finish(false, false);
    } catch (e) {
      const cause = faultCause(e);
      metrics?.storageError(cause);
      logger.warn("retention: pruning failed; the next run starts over", { target, cause, error: faultMessage(e), ...deleted, erased_history: erasures.purged, erasures_finished: erasures.finished });
      return finish(true, false);
    }

    function finish(failed: boolean, stopped: boolean): PruneReport {
      const durationMs = elapsed() - began;
      if (metrics) {
        metrics.pruneDuration.set(durationMs / 1000);
        metrics.pruneRuns[failed ? "failed" : "succeeded"].inc();
        if (!failed && !stopped) metrics.pruneLastSuccess.set(clock.now() / 1000);
      }
      if (!failed) {
        const fields = { ...deleted, erased_history: erasures.purged, erasures_finished: erasures.finished, batches, duration_ms: Math.round(durationMs) };
        logger.info(stopped ? "retention: pruning stopped early" : "retention: pruned", fields);
      }
      return { deleted, erasures, batches, durationMs, failed, stopped };
    }
  }

  function tick(): Promise<PruneReport> {
    current ??= run().finally(() => {
      current = null;
    });
    return current;
  }

  async function loop(): Promise<void> {
    await sleep(initialDelayMs);
    while (running) {
      await tick();
      if (!running) break;
      await sleep(intervalMs);
    }
  }

  return {
    tick,
    start() {
      if (running) return;
      running = true;
      stopping = false;
      loopDone = loop();
    },
    nudge() {
      wakeSleeper?.();
    },
    async stop() {
      running = false;
      stopping = true;
      wakeSleeper?.();
      await loopDone;
      await current;
      loopDone = null;
      stopping = false;
    },
  };
}
