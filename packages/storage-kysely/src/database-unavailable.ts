/**
 * When the database cannot be reached, every storage method rejects with the contract's
 * 503 `service.unavailable` (the HTTP layer then answers 503, never an uncounted 200). Other errors
 * (constraint violations, bugs) pass through unchanged.
 */
import { ServiceError } from "@benchdata/core";
import type { Storage } from "@benchdata/core";

/** The storage could not reach its database: a `ServiceError` 503 `service.unavailable` carrying the driver's error as `cause`. */
export class StorageUnavailableError extends ServiceError {
  override readonly cause: unknown;

  constructor(cause: unknown) {
    super(503, "service.unavailable", "The service's storage is unavailable; try again shortly.", { "Retry-After": "1" });
    this.cause = cause;
  }
}

// Socket-level failures of the pg driver (Node's error codes).
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE", "ECONNABORTED"]);
// PostgreSQL SQLSTATEs that mean "the server is not there for you right now" (class 08, shutdown, too many
// connections, and a lock not granted within the hot path's lock_timeout).
const PG_UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "53300", "53400", "55P03"]);
// pg and pg-pool signal lost or impossible connections with plain Errors and these messages.
const PG_UNAVAILABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection error|Connection refused|server closed the connection/i;

/** Whether a pg error means the PostgreSQL server is unreachable (as opposed to a failing statement). */
export function isPostgresUnavailable(e: unknown): boolean {
  if (typeof e !== "object" || e === null) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code) || PG_UNAVAILABLE_STATES.has(code) || code.startsWith("08")) return true;
  }
  const errors = (e as { errors?: unknown }).errors;
  // Node's AggregateError when every address of a host (IPv4 and IPv6) refused.
  if (Array.isArray(errors) && errors.length > 0 && errors.every(isPostgresUnavailable)) return true;
  const message = (e as { message?: unknown }).message;
  return typeof message === "string" && PG_UNAVAILABLE_MESSAGES.test(message);
}

// SQLite result codes of a database that is locked beyond busy_timeout, gone, full or unreadable.
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|PROTOCOL|READONLY|NOTADB)/;

/** Whether a better-sqlite3 error means the database file cannot be used right now. */
export function isSqliteUnavailable(e: unknown): boolean {
  if (typeof e !== "object" || e === null) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string" && SQLITE_UNAVAILABLE.test(code)) return true;
  const message = (e as { message?: unknown }).message;
  if (typeof message !== "string") return false;
  // A closed database: better-sqlite3 throws a TypeError; node:sqlite (Node 24, Deno) ERR_INVALID_STATE.
  if (code === "ERR_INVALID_STATE" && /statement has been finalized|database is not open/.test(message)) return true;
  return e instanceof TypeError && /database connection is not open/.test(message);
}

/** Maps an unavailability error to StorageUnavailableError, leaving others as they are. */
export function mapUnavailable(e: unknown, isUnavailable: (e: unknown) => boolean): unknown {
  if (e instanceof StorageUnavailableError) return e;
  return isUnavailable(e) ? new StorageUnavailableError(e) : e;
}

/**
 * Wraps every method of a Storage (and of its `benchmarks` source) so that unavailability errors
 * reject as StorageUnavailableError. Extra properties (such as `kind`) are kept.
 */
export function failClosed<S extends Storage>(storage: S, isUnavailable: (e: unknown) => boolean): S {
  const wrap = <T extends object>(target: T): T => {
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(target)) {
      out[name] =
        typeof value === "function"
          ? async (...args: unknown[]): Promise<unknown> => {
              try {
                return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
              } catch (e) {
                throw mapUnavailable(e, isUnavailable);
              }
            }
          : value;
    }
    return out as T;
  };
  const wrapped = wrap(storage);
  return Object.assign(wrapped, { benchmarks: wrap(storage.benchmarks) });
}
