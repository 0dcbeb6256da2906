/** The data endpoints' query parameters as valibot schemas: they validate requests and document them in OpenAPI. */
import * as v from "valibot";
import { CATEGORIES, METRICS } from "../../data/catalog.ts";
import { ServiceError } from "../../errors/service-error.ts";
import { param, quote } from "../query.ts";

/** `category`: one of the catalogue's categories (else `validation.invalid_category`, listing them). */
export const categoryParam = param(v.pipe(v.picklist(CATEGORIES), v.description("Business category.")), {
  expect: "must be a category",
  invalid: (value) => new ServiceError(422, "validation.invalid_category", `Unknown category ${quote(value)}. Valid values: ${CATEGORIES.join(", ")}.`),
});

/** `metric`: a known metric key (else `validation.invalid_metric`, listing them). */
export const metricParam = param(v.pipe(v.picklist(METRICS), v.description("Metric key.")), {
  expect: "must be a metric key",
  invalid: (value) => new ServiceError(422, "validation.invalid_metric", `Unknown metric ${quote(value)}. Valid values: ${METRICS.join(", ")}.`),
});

/** `segment`: a sub-segment name; omitted means `all` (every segment aggregated). */
export const segmentParam = param(
  v.pipe(v.string(), v.minLength(1), v.maxLength(100), v.description("Sub-segment filter; omitted means `all` (every segment aggregated).")),
  { expect: "must be a segment name of 1 to 100 characters" },
);

const PERIOD = /^\d{4}-(Q[1-4]|0[1-9]|1[0-2])$/;

function periodWithDefault(defaultText: string): v.GenericSchema<string, string> {
  return param(v.pipe(v.string(), v.regex(PERIOD), v.description(`Period, quarterly \`YYYY-Qn\` or monthly \`YYYY-MM\`; default: ${defaultText}.`)), {
    expect: "must be a period `YYYY-Qn` or `YYYY-MM`",
  });
}

/** `period`: `YYYY-Qn` (quarter) or `YYYY-MM` (month); omitted, the latest period with data (CONTRACT). */
export const periodParam = periodWithDefault("the latest period with data, quarterly or monthly (a quarter and the month it ends with: the quarter)");

/** `period` of `/benchmarks`, whose default the spec fixes as the latest quarter. */
export const quarterDefaultPeriodParam = periodWithDefault("the latest quarter with data");

/** `period` of the merchant analyses: which snapshot to analyse. */
export const snapshotPeriodParam = periodWithDefault("the merchant's latest snapshot");

/** `value`: a finite decimal number. */
export const valueParam = param(
  v.pipe(v.string(), v.regex(/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/), v.transform(Number), v.number(), v.finite(), v.description("The value to rank, in the metric's unit (ratios as fractions).")),
  { expect: "must be a finite decimal number" },
);

/** An integer parameter within inclusive bounds (outside them: `validation.out_of_range`, never clamped). */
export function integerParam(min: number, max: number, description: string): v.GenericSchema<string, number> {
  return param(
    v.pipe(v.string(), v.regex(/^[+-]?\d+$/), v.transform(Number), v.number(), v.minValue(min), v.maxValue(max), v.integer(), v.description(description)),
    { expect: "must be an integer", range: [min, max] },
  );
}

/** `granularity`: `quarterly` or `monthly`. */
export const granularityParam = param(v.pipe(v.picklist(["quarterly", "monthly"]), v.description("Period granularity.")), {
  expect: "must be `quarterly` or `monthly`",
});
