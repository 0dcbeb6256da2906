/**
 * Fail closed: any failure of storage or of a data source becomes 503 `service.unavailable`, so a broken store
 * can never turn into an uncounted 200 or a 500 with a stack. Every such failure goes to the fault log with its
 * cause (rate-limited there), including those a storage layer already turned into a 503 of its own.
 */
import type { BenchmarkSource } from "../data/source.ts";
import { isServiceError, ServiceError } from "../errors/service-error.ts";
import type { FaultLog } from "../log/fault-log.ts";
import type { ServiceMetrics } from "../metrics/service-metrics.ts";
import type { Storage } from "../storage/types.ts";

/** Where a storage failure is recorded: the fault log, and the count of 503s it caused. */
export interface FaultSink {
  readonly faults: FaultLog;
  readonly metrics: ServiceMetrics;
}

/** The 503 core answers for a storage failure it caught itself. */
export const UNAVAILABLE = new ServiceError(503, "service.unavailable", "The service is temporarily unavailable (storage unreachable). Retry shortly.", { "retry-after": "1" });

// 503s from a storage layer already given to a fault log: an error that passes through two guards (the proxy,
// then a handler's own catch) is one failure, recorded once.
const recorded = new WeakSet<object>();

/** The 503 for a failed storage operation; the failure is recorded in `sink` (once per error), with the request's id when given. */
export function unavailable(sink: FaultSink, operation: string, error: unknown, requestId?: string): ServiceError {
  if (isServiceError(error)) {
    // A storage layer's own 503 (e.g. storage-kysely's, whose `cause` is `SQLITE_FULL` or `ECONNREFUSED`) is a fault too.
    if (error.status === 503 && error !== UNAVAILABLE && !recorded.has(error)) {
      recorded.add(error);
      sink.faults.fault(operation, error, requestId);
      sink.metrics.unavailable.storage.inc();
    }
    return error;
  }
  sink.faults.fault(operation, error, requestId);
  sink.metrics.unavailable.storage.inc();
  return UNAVAILABLE;
}

function guardMethod<A extends unknown[], T>(fn: (...args: A) => Promise<T>, self: unknown, name: string, sink: FaultSink): (...args: A) => Promise<T> {
  const faults = sink.faults;
  const fail = (error: unknown): never => {
    throw unavailable(sink, name, error);
  };
  const pass = (value: T): T => {
    if (faults.failing) faults.ok();
    return value;
  };
  // Not an async function: one `.then` per call instead of an extra awaited frame (this is on the hot path).
  return (...args: A): Promise<T> => {
    try {
      return fn.apply(self, args).then(pass, fail);
    } catch (error) {
      return Promise.reject(unavailable(sink, name, error));
    }
  };
}

/** Storage whose every method turns a failure into 503 `service.unavailable`. */
export function failClosedStorage(storage: Storage, sink: FaultSink): Storage {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(storage, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      let w = wrapped.get(prop);
      if (!w) wrapped.set(prop, (w = guardMethod(value as (...a: unknown[]) => Promise<unknown>, target, String(prop), sink)));
      return w;
    },
  });
}

/** A BenchmarkSource whose every failure is 503 `service.unavailable`. */
export function failClosedSource(source: BenchmarkSource, sink: FaultSink, name: string): BenchmarkSource {
  return {
    latestPeriod: guardMethod(source.latestPeriod, source, `${name}.latestPeriod`, sink),
    recentPeriods: guardMethod(source.recentPeriods, source, `${name}.recentPeriods`, sink),
    cells: guardMethod(source.cells, source, `${name}.cells`, sink),
    segments: guardMethod(source.segments, source, `${name}.segments`, sink),
  };
}
