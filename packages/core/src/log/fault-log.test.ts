import { describe, expect, it } from "vitest";
import { manualClock } from "../clock/clock.ts";
import { faultCause, faultLog } from "./fault-log.ts";
import type { LogFields, Logger } from "./logger.ts";

function recorder(): { logger: Logger; lines: { level: string; msg: string; fields: LogFields }[] } {
  const lines: { level: string; msg: string; fields: LogFields }[] = [];
  const at = (level: string) => (msg: string, fields: LogFields = {}) => void lines.push({ level, msg, fields });
  return { lines, logger: { info: at("info"), warn: at("warn"), error: at("error") } };
}

const full = (): Error => Object.assign(new Error("database or disk is full"), { name: "SqliteError", code: "SQLITE_FULL" });
const wrapped = (cause: unknown): Error => Object.assign(new Error("The service's storage is unavailable"), { name: "ServiceError", code: "service.unavailable", status: 503, cause });

describe("fault log", () => {
  it("names the driver's cause through a storage layer's own 503 (SQLITE_FULL, ECONNREFUSED, AggregateError of refusals, timeouts)", () => {
    expect(faultCause(wrapped(full()))).toBe("SQLITE_FULL");
    expect(faultCause(wrapped(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })))).toBe("ECONNREFUSED");
    const refusedTwice = new AggregateError([Object.assign(new Error("a"), { code: "ECONNREFUSED" }), Object.assign(new Error("b"), { code: "ECONNREFUSED" })]);
    expect(faultCause(wrapped(refusedTwice))).toBe("ECONNREFUSED");
    expect(faultCause(wrapped(new Error("timeout exceeded when trying to connect")))).toBe("timeout");
    expect(faultCause(wrapped(new Error("Connection terminated unexpectedly")))).toBe("connection_terminated");
  });

  it("a storm is one line at once, then at most one summary per interval with the count, then one recovery line", () => {
    const { logger, lines } = recorder();
    const clock = manualClock(1_000_000);
    const causes: string[] = [];
    const faults = faultLog(logger, clock, { intervalMs: 5000, onFault: (c) => causes.push(c) });
    faults.ok(); // nothing failed: nothing to say
    expect(lines).toHaveLength(0);
    for (let i = 0; i < 3000; i++) {
      faults.fault("admit", wrapped(full()));
      clock.advance(1); // 3 s of failures
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", msg: "storage unavailable: answering 503", fields: { operation: "admit", cause: "SQLITE_FULL", error: "SqliteError: database or disk is full" } });
    clock.advance(2000);
    faults.fault("createKey", wrapped(full()));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: "error", msg: "storage still unavailable", fields: { cause: "SQLITE_FULL", failures: 3000, failures_total: 3001 } });
    expect(faults.failing).toBe(true);
    faults.ok();
    faults.ok();
    expect(faults.failing).toBe(false);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ level: "info", msg: "storage recovered", fields: { failures_total: 3001, unlogged_failures: 0, last_cause: "SQLITE_FULL" } });
    expect(causes).toHaveLength(3001);
    // The next outage is news again.
    faults.fault("admit", Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
    expect(lines).toHaveLength(4);
    expect(lines[3]!.fields.cause).toBe("ECONNREFUSED");
  });

  it("a new cause within a run is logged at once, once", () => {
    const { logger, lines } = recorder();
    const faults = faultLog(logger, manualClock(0));
    faults.fault("admit", wrapped(full()));
    faults.fault("admit", Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" }));
    faults.fault("admit", Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" }));
    faults.fault("admit", wrapped(full()));
    expect(lines.map((l) => l.fields.cause)).toEqual(["SQLITE_FULL", "SQLITE_IOERR"]);
  });
});
