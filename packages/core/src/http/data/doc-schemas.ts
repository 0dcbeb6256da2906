/** valibot schemas of the data endpoints' response bodies, for the OpenAPI document only. */
import * as v from "valibot";

/** A percentile set (ratios as fractions, money as plain numbers). */
export const PercentileSetSchema = v.object({
  p10: v.number(),
  p25: v.number(),
  p50: v.number(),
  p75: v.number(),
  p90: v.number(),
  mean: v.number(),
});

/** ISO 8601 UTC timestamp with milliseconds. */
export const Timestamp = v.pipe(v.string(), v.isoTimestamp());
