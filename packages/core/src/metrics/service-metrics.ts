/**
 * benchdata's metrics, registered once per registry: the HTTP app, the delivery worker and the billing worker
 * given one registry share these families. Children with fixed labels are resolved here, once.
 */
import type { PrunedTable } from "../storage/types.ts";
import type { CounterChild, Family, GaugeChild, HistogramChild, MetricsRegistry } from "./metrics-registry.ts";

/** Request duration buckets (seconds): a data request takes about a millisecond; storage waits are longer. */
export const DURATION_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Webhook delivery latency buckets (seconds), up to the 30 s time-out. */
export const DELIVERY_BUCKETS: readonly number[] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Why an admission was refused. */
export type RefusalReason = "rate_limit" | "daily_limit" | "quota" | "quota_held";
/** Why the service answered 503. */
export type UnavailableCause = "storage" | "key_churn" | "not_ready";
/** What became of one delivery attempt. */
export type DeliveryOutcome = "succeeded" | "retrying" | "dead" | "lease_lost";
/** What became of one charge attempt. */
export type ChargeOutcomeLabel = "paid" | "failed" | "unknown" | "lease_lost";

/** How a run of the pruning worker ended. */
export type PruneRunOutcome = "succeeded" | "failed";

/** What `benchdata_retention_pruned_rows_total` counts, by its `table` label: each pruned table, and the history records of erased accounts. */
export type PrunedRows = PrunedTable | "erased_history";

const PRUNED_ROWS: readonly PrunedRows[] = ["deliveries", "delivery_attempts", "events", "sessions", "sign_in_links", "day_counters", "usage_days", "key_usage_hours", "key_usage_days", "erased_history"];

/** The status classes `requests_total` is labelled with, indexed by `status / 100`. */
const STATUS_CLASSES = ["1xx", "1xx", "2xx", "3xx", "4xx", "5xx"] as const;

/** One route's request metrics, resolved for every status class. */
export interface RouteMetrics {
  /** Records one answered request: its status and how long it took (ms). */
  record(status: number, ms: number): void;
  /** Counts one answered request without timing it. */
  count(status: number): void;
}

/** benchdata's metric families and their pre-resolved children. */
export interface ServiceMetrics {
  readonly registry: MetricsRegistry;
  /** The metrics of one route (`route` is its template, e.g. `/api/v1/console/keys/{key_id}`). */
  route(method: string, route: string): RouteMetrics;
  readonly refused: Readonly<Record<RefusalReason, CounterChild>>;
  readonly unavailable: Readonly<Record<UnavailableCause, CounterChild>>;
  /** Storage failures by driver cause (`SQLITE_FULL`, `ECONNREFUSED`, …; at most 32 distinct, then `other`). */
  storageError(cause: string): void;
  readonly deliveries: Readonly<Record<DeliveryOutcome, CounterChild>>;
  readonly deliveryLatency: HistogramChild;
  readonly charges: Readonly<Record<ChargeOutcomeLabel, CounterChild>>;
  readonly outboxDepth: GaugeChild;
  /** Sets the pool gauges (only stores with a pool report them, so others show no misleading zeros). */
  setPool(size: number, inUse: number, waiting: number): void;
  /** 1 while storage's gauges were read at the last scrape, 0 when that failed. */
  readonly storageUp: GaugeChild;
  readonly draining: GaugeChild;
  /** Rows the pruning worker deleted, by table (`erased_history`: records of erased accounts it purged). */
  readonly pruned: Readonly<Record<PrunedRows, CounterChild>>;
  /** Unfinished erasures the pruning worker purged to the end. */
  readonly erasuresFinished: CounterChild;
  /** Pruning runs, by outcome. */
  readonly pruneRuns: Readonly<Record<PruneRunOutcome, CounterChild>>;
  /** When the last pruning run that succeeded ended (Unix seconds). */
  readonly pruneLastSuccess: GaugeChild;
  /** How long the last pruning run took (seconds). */
  readonly pruneDuration: GaugeChild;
}

const byRegistry = new WeakMap<MetricsRegistry, ServiceMetrics>();

function children<K extends string, C>(family: Family<C>, keys: readonly K[]): Record<K, C> {
  const out = {} as Record<K, C>;
  for (const k of keys) out[k] = family.labels(k);
  return out;
}

/** benchdata's metrics in `registry` (registered on first use; the same object afterwards). */
export function serviceMetrics(registry: MetricsRegistry): ServiceMetrics {
  const known = byRegistry.get(registry);
  if (known) return known;
  const requests = registry.counter("benchdata_http_requests_total", "HTTP requests answered, by route template, method and status class.", ["route", "method", "status_class"]);
  const duration = registry.histogram("benchdata_http_request_duration_seconds", "Time from routing a request to its response (headers ready), by route template and method.", DURATION_BUCKETS, ["route", "method"]);
  const refused = registry.counter("benchdata_admissions_refused_total", "Data requests refused at admission, by reason.", ["reason"]);
  const unavailable = registry.counter("benchdata_unavailable_total", "503 answers, by cause: storage failed, the key kept changing, or /readyz not ready.", ["cause"]);
  const storageErrors = registry.counter("benchdata_storage_errors_total", "Storage failures, by driver cause (SQLITE_FULL, ECONNREFUSED, a SQLSTATE, timeout…).", ["cause"]);
  const deliveries = registry.counter("benchdata_webhook_deliveries_total", "Webhook delivery attempts, by outcome.", ["outcome"]);
  const deliveryLatency = registry.histogram("benchdata_webhook_delivery_duration_seconds", "Webhook delivery attempt latency (resolution and send).", DELIVERY_BUCKETS);
  const charges = registry.counter("benchdata_billing_charges_total", "Charge attempts made by the billing worker, by outcome.", ["outcome"]);
  const outbox = registry.gauge("benchdata_webhook_outbox_depth", "Webhook deliveries pending (due now or later), read at scrape.");
  const poolSize = registry.gauge("benchdata_storage_pool_size", "Connections the storage pool may open (PostgreSQL).");
  const poolInUse = registry.gauge("benchdata_storage_pool_in_use", "Storage pool connections in use, read at scrape (PostgreSQL).");
  const poolWaiting = registry.gauge("benchdata_storage_pool_waiting", "Callers waiting for a storage pool connection, read at scrape (PostgreSQL).");
  const storageUp = registry.gauge("benchdata_storage_up", "1 when storage answered the scrape's gauge query, else 0.");
  const draining = registry.gauge("benchdata_draining", "1 once the server is draining (shutting down).");
  const pruned = registry.counter("benchdata_retention_pruned_rows_total", "Rows the pruning worker deleted, by table (erased_history: records of erased accounts it purged).", ["table"]);
  const erasuresFinished = registry.counter("benchdata_retention_erasures_finished_total", "Unfinished account erasures the pruning worker purged to the end.");
  const pruneRuns = registry.counter("benchdata_retention_runs_total", "Pruning runs, by outcome (failed: storage failed; the next run continues).", ["outcome"]);
  const pruneLastSuccess = registry.gauge("benchdata_retention_last_success_timestamp_seconds", "When the last pruning run that succeeded ended (Unix time).");
  const pruneDuration = registry.gauge("benchdata_retention_last_run_duration_seconds", "How long the last pruning run took.");
  const causes = new Map<string, CounterChild>();

  const metrics: ServiceMetrics = {
    registry,
    route(method, route) {
      const byClass = STATUS_CLASSES.map((c) => requests.labels(route, method, c));
      const timing = duration.labels(route, method);
      return {
        record(status, ms) {
          (byClass[(status / 100) | 0] ?? (byClass[5] as CounterChild)).inc();
          timing.observe(ms / 1000);
        },
        count(status) {
          (byClass[(status / 100) | 0] ?? (byClass[5] as CounterChild)).inc();
        },
      };
    },
    refused: children(refused, ["rate_limit", "daily_limit", "quota", "quota_held"]),
    unavailable: children(unavailable, ["storage", "key_churn", "not_ready"]),
    storageError(cause) {
      let c = causes.get(cause);
      if (c === undefined) {
        if (causes.size < 32) causes.set(cause, (c = storageErrors.labels(cause)));
        else c = storageErrors.labels("other");
      }
      c.inc();
    },
    deliveries: children(deliveries, ["succeeded", "retrying", "dead", "lease_lost"]),
    deliveryLatency: deliveryLatency.labels(),
    charges: children(charges, ["paid", "failed", "unknown", "lease_lost"]),
    outboxDepth: outbox.labels(),
    setPool(size, inUse, waiting) {
      poolSize.labels().set(size);
      poolInUse.labels().set(inUse);
      poolWaiting.labels().set(waiting);
    },
    storageUp: storageUp.labels(),
    draining: draining.labels(),
    pruned: children(pruned, PRUNED_ROWS),
    erasuresFinished: erasuresFinished.labels(),
    pruneRuns: children(pruneRuns, ["succeeded", "failed"]),
    pruneLastSuccess: pruneLastSuccess.labels(),
    pruneDuration: pruneDuration.labels(),
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
