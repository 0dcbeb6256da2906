/** Finding the cells a data request needs, with the contract's 404s when there is no data or too small a sample. */
import type { Category, Metric } from "../../data/catalog.ts";
import { metricsOf, offersMetric } from "../../data/catalog.ts";
import type { BenchmarkSource, Cell } from "../../data/source.ts";
import { ALL_SEGMENTS } from "../../data/source.ts";
import type { Granularity } from "../../data/period.ts";
import { parsePeriod } from "../../data/period.ts";
import { ServiceError } from "../../errors/service-error.ts";
import type { WithheldReason } from "../../privacy/suppression.ts";
import { cellName } from "./data-endpoint.ts";
import { withheldReason } from "./publication.ts";

/**
 * 404 `data.not_found`. The detail helps the caller on: for an unknown segment it lists the category's segments;
 * for a period without data it names the latest period with data; `suggest` says what to ask for when the default
 * (a quarter, where the spec fixes one) finds nothing but data of the other granularity exists.
 */
export async function noData(source: BenchmarkSource, category: Category, segment: string, period: string | null, suggest?: NoDataSuggestion): Promise<never> {
  let hint = "";
  if (segment !== ALL_SEGMENTS) {
    const segments = await source.segments(category);
    if (!segments.includes(segment)) hint = segments.length > 0 ? ` Segments with data: ${segments.join(", ")}.` : " The category has no segments with data.";
  }
  let what = "benchmark data";
  if (hint === "" && suggest !== undefined) {
    what = `${suggest.granularity} benchmark data`;
    const other: Granularity = suggest.granularity === "quarterly" ? "monthly" : "quarterly";
    const latest = await source.latestPeriod(category, segment, other);
    if (latest !== null) hint = ` It has ${other} data (the latest: ${latest}); ask with \`${suggest.ask(latest)}\`.`;
  } else if (hint === "" && period !== null) {
    const latest = await latestPeriodWithData(source, category, segment);
    if (latest !== null) hint = ` The latest period with data is ${latest}.`;
  }
  const where = period === null ? "" : ` in ${period}`;
  throw new ServiceError(404, "data.not_found", `No ${what} for ${cellName(category, segment)}${where}.${hint}`);
}

/** What a 404 suggests when an endpoint's default granularity has no data: the granularity looked for, and the query to try instead. */
export interface NoDataSuggestion {
  readonly granularity: Granularity;
  ask(latestOfOther: string): string;
}

/**
 * The month a period ends with, counted from year 0 (periods of either granularity compare by it; a month and
 * the quarter it ends end together). Numbers rather than `periodDates(…).end` texts: this runs on every request
 * that asks for the latest period, where building the two dates cost about 11k instructions.
 */
function endMonth(period: string): number {
  const p = parsePeriod(period);
  if (p === null) return -Infinity;
  return p.year * 12 + (p.granularity === "quarterly" ? p.index * 3 : p.index);
}

/**
 * The latest period with data for the category and segment, of either granularity: the one that ends last; a
 * quarter and the month it ends with end together, and then the quarter wins (the larger sample, and the
 * granularity the spec defaults to). Null when there is no data at all.
 */
export async function latestPeriodWithData(source: BenchmarkSource, category: Category, segment: string): Promise<string | null> {
  const [quarter, month] = await Promise.all([source.latestPeriod(category, segment, "quarterly"), source.latestPeriod(category, segment, "monthly")]);
  if (quarter === null || month === null) return quarter ?? month;
  return endMonth(month) > endMonth(quarter) ? month : quarter;
}

/** The requested period, or the latest period with data for the category and segment (CONTRACT: "the latest with data"). */
export async function resolvePeriod(source: BenchmarkSource, category: Category, segment: string, period: string | undefined): Promise<string> {
  if (period !== undefined) return period;
  const latest = await latestPeriodWithData(source, category, segment);
  if (latest === null) return noData(source, category, segment, null);
  return latest;
}

/**
 * The requested period, or the latest quarter with data (the spec's default for `/benchmarks`). With no quarter
 * but months, the 404 says so and names the latest month to ask for.
 */
export async function resolveQuarter(source: BenchmarkSource, category: Category, segment: string, period: string | undefined): Promise<string> {
  if (period !== undefined) return period;
  const latest = await source.latestPeriod(category, segment, "quarterly");
  if (latest === null) return noData(source, category, segment, null, { granularity: "quarterly", ask: (month) => `period=${month}` });
  return latest;
}

/** 422 `validation.metric_not_offered` unless the category offers the metric. */
export function assertOffered(category: Category, metric: Metric): void {
  if (!offersMetric(category, metric)) {
    throw new ServiceError(422, "validation.metric_not_offered", `Metric \`${metric}\` is not offered for category \`${category}\`. Offered: ${metricsOf(category).join(", ")}.`);
  }
}

/**
 * 404 `data.insufficient_sample` for a withheld cell. The detail never gives the cell's size (a withheld cell
 * reveals nothing beyond "below the minimum"), only the reason: `below_minimum`, or `complementary` (withheld
 * so that a smaller segment's figures cannot be derived by subtracting published ones).
 */
export function insufficientSample(category: Category, segment: string, period: string, metric: Metric | null, reason: WithheldReason, minimum: number): ServiceError {
  const what = metric === null ? `${cellName(category, segment)} in ${period}` : `${metric} for ${cellName(category, segment)} in ${period}`;
  return new ServiceError(404, "data.insufficient_sample", `Not enough businesses to publish ${what}: ${withheldWhy(reason, minimum)}.`);
}

/** The words every `data.insufficient_sample` detail gives for a reason, ending with the reason code (no size). */
export function withheldWhy(reason: WithheldReason, minimum: number): string {
  return reason === "below_minimum"
    ? `fewer businesses than the publication minimum (${minimum}) (reason: below_minimum)`
    : `withheld so that a segment below the publication minimum (${minimum}) cannot be derived from the published figures (reason: complementary)`;
}

/** The one cell of a metric in a period, refusing missing data and withheld cells. */
export async function requireCell(source: BenchmarkSource, category: Category, segment: string, period: string, metric: Metric, minimum: number): Promise<Cell> {
  const cells = await source.cells(category, segment, period, [metric]);
  const cell = cells.get(metric);
  if (cell === undefined) return noData(source, category, segment, period);
  const reason = await withheldReason(source, category, segment, period, metric, cell, minimum);
  if (reason !== null) throw insufficientSample(category, segment, period, metric, reason, minimum);
  return cell;
}
