import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonInner, jsonNumber } from "./round-output.ts";

describe("jsonInner", () => {
  it("writes what JSON.stringify writes, for any string", () => {
    const texts = fc.oneof(
      fc.string({ unit: "grapheme" }),
      fc.string({ unit: "binary" }),
      // Mostly plain text with the characters that need escaping mixed in.
      fc.array(fc.constantFrom("a", " ", "%", '"', "\\", "\n", "\u0000", "\u001f", "\u007f", "\u2028", "\ud800", "\udc00", "é", "😀")).map((a) => a.join("")),
    );
    fc.assert(fc.property(texts, (s) => `"${jsonInner(s)}"` === JSON.stringify(s)), { numRuns: 5_000 });
  });

  it("leaves a sentence as it is", () => {
    const plain = "A gross margin of 70% is at percentile 50.0 of saas (all segments) in 2026-Q3.";
    expect(jsonInner(plain)).toBe(plain);
    expect(jsonInner('say "hi"\\')).toBe('say \\"hi\\"\\\\');
  });
});

describe("jsonNumber", () => {
  it("writes finite numbers as JSON does and the rest as null", () => {
    fc.assert(fc.property(fc.double(), (x) => jsonNumber(x) === JSON.stringify(x)));
  });
});
