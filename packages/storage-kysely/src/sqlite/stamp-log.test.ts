import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { slidingWindow } from "@benchdata/core";
import { decodeFloat64, encodeFloat64 } from "../cells/cell-codec.ts";
import { logBytes, windowOverLog } from "./stamp-log.ts";

describe("windowOverLog", () => {
  it("decides every request exactly as core's slidingWindow, and stores the same log (clock steps back included)", () => {
    const arbitraryLog = fc.array(fc.integer({ min: 0, max: 200_000 }), { maxLength: 40 }).map((xs) => xs.sort((a, b) => a - b));
    fc.assert(
      fc.property(arbitraryLog, fc.integer({ min: 0, max: 260_000 }), fc.integer({ min: 0, max: 45 }), fc.integer({ min: 1, max: 120_000 }), (log, now, limit, windowMs) => {
        const core = slidingWindow(log, now, limit, windowMs);
        const ours = windowOverLog(decodeFloat64(encodeFloat64(log)), now, limit, windowMs);
        expect({ allowed: ours.allowed, remaining: ours.remaining, resetAt: ours.resetAt, retryAfterMs: ours.retryAfterMs }).toEqual({
          allowed: core.allowed,
          remaining: core.remaining,
          resetAt: core.resetAt,
          retryAfterMs: core.retryAfterMs,
        });
        if (core.allowed) expect(Array.from(decodeFloat64(logBytes(ours.log!)))).toEqual(core.stamps);
        else expect(ours.log).toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  it("a full window refuses until the oldest counted stamp leaves it", () => {
    const log = new Float64Array([1000, 2000, 3000]);
    expect(windowOverLog(log, 60_999, 3, 60_000)).toMatchObject({ allowed: false, resetAt: 61_000, retryAfterMs: 1 });
    const next = windowOverLog(log, 61_000, 3, 60_000);
    expect(next).toMatchObject({ allowed: true, remaining: 0, resetAt: 62_000 });
    expect(Array.from(next.log!)).toEqual([2000, 3000, 61_000]);
  });
});
