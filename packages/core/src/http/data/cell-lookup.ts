/** Finding the cells a data request needs, with the contract's 404s when there is no data or too small a sample. */
import type { Category, Metric } from "../../data/catalog.ts";
import { metricsOf, offersMetric } from "../../data/catalog.ts";
import type { BenchmarkSource, Cell } from "../../data/source.ts";
import { ALL_SEGMENTS } from "../../data/source.ts";
import { ServiceError } from "../../errors/service-error.ts";
import { cellName } from "./data-endpoint.ts";

/** 404 `data.not_found`; for an unknown segment the detail lists the category's segments. */
export async function noData(source: BenchmarkSource, category: Category, segment: string, period: string | null): Promise<never> {
  let hint = "";
  if (segment !== ALL_SEGMENTS) {
    const segments = await source.segments(category);
    if (!segments.includes(segment)) hint = segments.length > 0 ? ` Segments with data: ${segments.join(", ")}.` : " The category has no segments with data.";
  }
  const where = period === null ? "" : ` in ${period}`;
  throw new ServiceError(404, "data.not_found", `No benchmark data for ${cellName(category, segment)}${where}.${hint}`);
}

/** The requested period, or the latest quarter with data for the category and segment. */
export async function resolvePeriod(source: BenchmarkSource, category: Category, segment: string, period: string | undefined): Promise<string> {
  if (period !== undefined) return period;
  const latest = await source.latestPeriod(category, segment, "quarterly");
  if (latest === null) return noData(source, category, segment, null);
  return latest;
}

/** 422 `validation.metric_not_offered` unless the category offers the metric. */
export function assertOffered(category: Category, metric: Metric): void {
  if (!offersMetric(category, metric)) {
    throw new ServiceError(422, "validation.metric_not_offered", `Metric \`${metric}\` is not offered for category \`${category}\`. Offered: ${metricsOf(category).join(", ")}.`);
  }
}

/** 404 `data.insufficient_sample` for a cell below the publication minimum. */
export function insufficientSample(category: Category, segment: string, period: string, metric: Metric | null, sampleSize: number, minimum: number): ServiceError {
  const what = metric === null ? `${cellName(category, segment)} in ${period}` : `${metric} for ${cellName(category, segment)} in ${period}`;
  return new ServiceError(404, "data.insufficient_sample", `Not enough businesses to publish ${what}: ${sampleSize} in the sample, at least ${minimum} required.`);
}

/** The one cell of a metric in a period, refusing missing data and small samples. */
export async function requireCell(source: BenchmarkSource, category: Category, segment: string, period: string, metric: Metric, minimum: number): Promise<Cell> {
  const cells = await source.cells(category, segment, period, [metric]);
  const cell = cells.get(metric);
  if (cell === undefined) return noData(source, category, segment, period);
  if (cell.sampleSize < minimum) throw insufficientSample(category, segment, period, metric, cell.sampleSize, minimum);
  return cell;
}
