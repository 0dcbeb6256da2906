/**
 * Storage faults, logged rate-limited: the first failure of a run at once (with its cause: `SQLITE_FULL`,
 * `ECONNREFUSED`, a timeout…), then at most one summary line per interval with how many more failed, and one
 * line when storage answers again. A storm of 503s therefore names its cause in the log without flooding it.
 */
import type { Clock } from "../clock/clock.ts";
import type { Logger } from "./logger.ts";
import { redact } from "./logger.ts";

/** Records storage failures and recoveries for the log (and for metrics, through `onFault`). */
export interface FaultLog {
  /** Whether a failure was recorded since the last success: `ok()` is needed only then. */
  readonly failing: boolean;
  /** Records a failed storage operation (`requestId`: the request it failed, named on a line it causes). */
  fault(operation: string, error: unknown, requestId?: string): void;
  /** Records a successful storage operation; logs the recovery if failures came before it. */
  ok(): void;
}

/** Options of `faultLog`. */
export interface FaultLogOptions {
  /** The shortest time between two lines about one run of failures (ms, default 5000). */
  readonly intervalMs?: number;
  /** Called with each failure's cause (e.g. to count it). */
  readonly onFault?: (cause: string) => void;
  /** The first line's message (default `storage unavailable: answering 503`). */
  readonly message?: string;
}

/** The most specific cause an error carries: a driver code (`SQLITE_FULL`, `ECONNREFUSED`, `57P01`) or its name. */
export function faultCause(error: unknown): string {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && typeof e === "object" && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code !== "" && code !== "service.unavailable") return code.slice(0, 64);
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const first = faultCause(errors[0]);
      if (first !== "unknown") return first;
    }
    const cause = (e as { cause?: unknown }).cause;
    if (cause === undefined) break;
    e = cause;
  }
  if (e instanceof Error) {
    if (/timeout|timed out/i.test(e.message)) return "timeout";
    // node-postgres says this, without a code, when the server or the network drops a connection in use.
    if (/connection terminated/i.test(e.message)) return "connection_terminated";
    return e.name === "Error" ? "error" : e.name.slice(0, 64);
  }
  return "unknown";
}

/** A one-line, secret-free description of the innermost error behind `error`. */
export function faultMessage(error: unknown): string {
  let e: unknown = error;
  for (let depth = 0; depth < 5; depth++) {
    const cause = typeof e === "object" && e !== null ? (e as { cause?: unknown }).cause : undefined;
    if (cause === undefined) break;
    e = cause;
  }
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return redact(text).slice(0, 300);
}

/** A FaultLog writing to `logger`, timed by `clock`. */
export function faultLog(logger: Logger, clock: Clock, options: FaultLogOptions = {}): FaultLog {
  const intervalMs = options.intervalMs ?? 5000;
  const onFault = options.onFault;
  const message = options.message ?? "storage unavailable: answering 503";
  let failing = false;
  let since = 0; // when the current run of failures began
  let total = 0; // failures in the current run
  let unlogged = 0; // failures since the last line
  let lastLine = 0;
  let lastCause = "";
  let lastOperation = "";
  const causes = new Set<string>(); // the causes of the current run already logged
  return {
    get failing() {
      return failing;
    },
    fault(operation, error, requestId) {
      const cause = faultCause(error);
      onFault?.(cause);
      const now = clock.now();
      total++;
      lastOperation = operation;
      if (!failing) {
        failing = true;
        since = now;
        total = 1;
        unlogged = 0;
        lastLine = now;
        lastCause = cause;
        causes.clear();
        causes.add(cause);
        logger.error(message, { operation, cause, error: faultMessage(error), request_id: requestId });
        return;
      }
      unlogged++;
      // A new cause is news: log it at once, like the first failure (a few distinct ones at most).
      const news = !causes.has(cause) && causes.size < 8;
      if (news || now - lastLine >= intervalMs) {
        causes.add(cause);
        logger.error("storage still unavailable", { operation, cause, error: faultMessage(error), failures: unlogged, failures_total: total, since_ms: now - since, request_id: requestId });
        unlogged = 0;
        lastLine = now;
        lastCause = cause;
      }
    },
    ok() {
      if (!failing) return;
      failing = false;
      logger.info("storage recovered", { failures_total: total, unlogged_failures: unlogged, last_cause: lastCause, last_operation: lastOperation, outage_ms: clock.now() - since });
    },
  };
}
