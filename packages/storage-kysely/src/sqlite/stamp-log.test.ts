import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { slidingWindow } from "@benchdata/core";
import { decodeFloat64, encodeFloat64 } from "../cells/cell-codec.ts";
import { decodeLog, encodeLog, windowOverLog } from "./stamp-log.ts";

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
        if (core.allowed) expect(Array.from(decodeLog(encodeLog(ours.log!)))).toEqual(core.stamps);
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

describe("encodeLog / decodeLog", () => {
  const ascending = (values: number[]): Float64Array => new Float64Array(values.sort((a, b) => a - b));

  it("round-trips every ascending log, whole milliseconds or not, whatever its gaps", () => {
    const stamp = fc.oneof(fc.integer({ min: 0, max: 2 ** 42 }), fc.double({ min: 0, max: 2 ** 42, noNaN: true }), fc.integer({ min: 1_763_000_000_000, max: 1_763_000_200_000 }));
    fc.assert(
      fc.property(fc.array(stamp, { maxLength: 60 }), (values) => {
        const log = ascending(values);
        expect(Array.from(decodeLog(encodeLog(log)))).toEqual(Array.from(log));
      }),
      { numRuns: 3000 },
    );
  });

  it("a 60-second window on a millisecond clock is stored in 2 bytes a stamp (plus 7)", () => {
    const log = new Float64Array(Array.from({ length: 1000 }, (_, i) => 1_763_000_000_000 + i * 60));
    const bytes = encodeLog(log);
    expect(bytes.length).toBe(2 * 1000 + 7);
    expect(Array.from(decodeLog(bytes))).toEqual(Array.from(log));
  });

  it("falls back to float64 for fractional stamps and for gaps over 65,535 ms, and reads logs stored before the compact form", () => {
    expect(encodeLog(new Float64Array([1.5, 2])).length).toBe(16);
    expect(encodeLog(new Float64Array([0, 65_535])).length).toBe(11);
    expect(encodeLog(new Float64Array([0, 65_536])).length).toBe(16);
    const old = encodeFloat64([1_763_000_000_000, 1_763_000_000_007]);
    expect(Array.from(decodeLog(old))).toEqual([1_763_000_000_000, 1_763_000_000_007]);
    expect(decodeLog(encodeLog(new Float64Array(0))).length).toBe(0);
  });

  it("refuses a blob that is neither form", () => {
    expect(() => decodeLog(new Uint8Array([7, 0, 0]))).toThrow(/corrupt/);
    expect(() => decodeLog(new Uint8Array(10))).toThrow(/corrupt/);
  });
});
