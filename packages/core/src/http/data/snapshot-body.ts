/**
 * The body of POST /merchant/vcfs, validated with valibot like the console's bodies, and mapped to the
 * contract's codes where one fits: an unknown category or metric, a metric the category does not offer, a
 * malformed period or a value that is not a finite number each get their own; anything else about the
 * body's shape is `validation.invalid_body` naming the field.
 */
import * as v from "valibot";
import type { Category, Metric } from "../../data/catalog.ts";
import { CATEGORIES, METRICS } from "../../data/catalog.ts";
import { ServiceError } from "../../errors/service-error.ts";
import { isMerchantId, MERCHANT_ID_MAX } from "../../merchant/merchant-id.ts";
import { quote } from "../query.ts";
import { assertJsonObject, invalidBody } from "../read-json-body.ts";
import { assertOffered } from "./cell-lookup.ts";

// What an imported segment can be (see storage-kysely's import rules), plus `all`.
const SEGMENT = /^[a-z0-9]+(?:[_.-][a-z0-9]+)*$/;
const PERIOD = /^\d{4}-(Q[1-4]|0[1-9]|1[0-2])$/;

/** The body's schema (also its OpenAPI description). */
export const SnapshotBody = v.strictObject({
  merchant_id: v.pipe(
    v.string(),
    v.check(isMerchantId, `must be 1 to ${MERCHANT_ID_MAX} characters, without control characters or white space at either end`),
    v.description("Your identifier of the merchant; snapshots, comparisons and exports are looked up by it."),
  ),
  category: v.pipe(v.picklist(CATEGORIES), v.description("The merchant's category: its metrics are ranked among this category's businesses.")),
  segment: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(64, "must be at most 64 characters"),
      v.regex(SEGMENT, "must be lower-case letters and digits joined by `_`, `-` or `.`"),
      v.description("The merchant's segment within the category; omitted or `all` ranks among the whole category."),
    ),
  ),
  period: v.pipe(v.string(), v.regex(PERIOD), v.description("The period the figures cover: quarterly `YYYY-Qn` or monthly `YYYY-MM`.")),
  metrics: v.pipe(
    v.record(v.picklist(METRICS), v.pipe(v.number(), v.finite())),
    v.check((m) => Object.keys(m).length > 0, "must name at least one metric"),
    v.description("Metric values keyed by metric key, in the metric's unit (ratios as fractions, money as plain numbers); each must be offered by the category."),
  ),
});

/** A validated snapshot body. */
export interface SnapshotInput {
  readonly merchantId: string;
  readonly category: Category;
  /** The segment, `all` when none was given. */
  readonly segment: string;
  readonly period: string;
  readonly metrics: Readonly<Partial<Record<Metric, number>>>;
}

const ABORT_EARLY = { abortEarly: true } as const;

/** The contract's own code for an issue, when one fits (else the caller's `invalid_body`). */
function specificError(issue: v.BaseIssue<unknown>, body: Record<string, unknown>): ServiceError | null {
  const path = issue.path ?? [];
  const field = (path[0] as { key?: unknown } | undefined)?.key;
  if (issue.received === "undefined" && path.length === 1) return null; // missing: `invalid_body`, "is required"
  if (field === "category" && path.length === 1) {
    return new ServiceError(422, "validation.invalid_category", `Unknown category ${quote(String(body.category))}. Valid values: ${CATEGORIES.join(", ")}.`);
  }
  if (field === "period" && path.length === 1 && typeof body.period === "string") {
    return new ServiceError(422, "validation.invalid_parameter", `\`period\` must be a period \`YYYY-Qn\` or \`YYYY-MM\`; got ${quote(body.period)}.`);
  }
  if (field === "metrics" && path.length === 2) {
    const item = path[1] as { key?: unknown; origin?: unknown };
    const key = String(item.key);
    if (item.origin === "key") return new ServiceError(422, "validation.invalid_metric", `Unknown metric ${quote(key)} in \`metrics\`. Valid values: ${METRICS.join(", ")}.`);
    return new ServiceError(422, "validation.invalid_parameter", `\`metrics.${key}\` must be a finite number; got ${issue.received}.`);
  }
  return null;
}

/** Validates a parsed JSON body, or throws the 422 of its first problem. */
export function parseSnapshotBody(value: unknown): SnapshotInput {
  assertJsonObject(value);
  // valibot's record takes an array's indices for keys; an array here is a shape error, not unknown metrics.
  if (Array.isArray(value.metrics)) throw new ServiceError(422, "validation.invalid_body", "Invalid request body: `metrics` must be an object of metric values keyed by metric key.");
  const result = v.safeParse(SnapshotBody, value, ABORT_EARLY);
  if (!result.success) {
    const issue = result.issues[0];
    throw specificError(issue, value) ?? invalidBody(issue);
  }
  const body = result.output;
  for (const metric of Object.keys(body.metrics) as Metric[]) assertOffered(body.category, metric);
  return { merchantId: body.merchant_id, category: body.category, segment: body.segment ?? "all", period: body.period, metrics: body.metrics };
}
