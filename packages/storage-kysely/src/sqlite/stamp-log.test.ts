import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeFloat64, encodeFloat64 } from "../cells/cell-codec.ts";
import { decodeLog, encodeLog } from "./stamp-log.ts";

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
