/**
 * Fail closed: any failure of storage or of a data source becomes 503 `service.unavailable` (logged without
 * secrets), so a broken store can never turn into an uncounted 200 or a 500 with a stack.
 */
import type { BenchmarkSource } from "../data/source.ts";
import { isServiceError, ServiceError } from "../errors/service-error.ts";
import type { Logger } from "../log/logger.ts";
import type { Storage } from "../storage/types.ts";
import { describeError } from "./reply.ts";

const UNAVAILABLE = new ServiceError(503, "service.unavailable", "The service is temporarily unavailable (storage unreachable). Retry shortly.", { "retry-after": "1" });

/** The 503 for a failed storage operation, logged once here. */
export function unavailable(logger: Logger, operation: string, error: unknown): ServiceError {
  if (isServiceError(error)) return error;
  logger.error("storage unavailable", { operation, error: describeError(error) });
  return UNAVAILABLE;
}

function guardMethod<A extends unknown[], T>(fn: (...args: A) => Promise<T>, self: unknown, name: string, logger: Logger): (...args: A) => Promise<T> {
  const fail = (error: unknown): never => {
    throw unavailable(logger, name, error);
  };
  // Not an async function: one `.then` per call instead of an extra awaited frame (this is on the hot path).
  return (...args: A): Promise<T> => {
    try {
      return fn.apply(self, args).then(undefined, fail);
    } catch (error) {
      return Promise.reject(unavailable(logger, name, error));
    }
  };
}

/** Storage whose every method turns a failure into 503 `service.unavailable`. */
export function failClosedStorage(storage: Storage, logger: Logger): Storage {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(storage, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      let w = wrapped.get(prop);
      if (!w) wrapped.set(prop, (w = guardMethod(value as (...a: unknown[]) => Promise<unknown>, target, String(prop), logger)));
      return w;
    },
  });
}

/** A BenchmarkSource whose every failure is 503 `service.unavailable`. */
export function failClosedSource(source: BenchmarkSource, logger: Logger, name: string): BenchmarkSource {
  return {
    latestPeriod: guardMethod(source.latestPeriod, source, `${name}.latestPeriod`, logger),
    recentPeriods: guardMethod(source.recentPeriods, source, `${name}.recentPeriods`, logger),
    cells: guardMethod(source.cells, source, `${name}.cells`, logger),
    segments: guardMethod(source.segments, source, `${name}.segments`, logger),
  };
}
