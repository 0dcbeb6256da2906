/**
 * The usage breakdown that the console (`GET /api/v1/console/usage/breakdown`) and the operator
 * (`GET /api/v1/admin/accounts/{account_id}/usage/breakdown`) read: an account's data requests by hour or UTC day,
 * grouped by any of key, endpoint and outcome, a cursor page at a time. Its schemas document both routes.
 */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import { latencyQuantile } from "../../analytics/latency-buckets.ts";
import { USAGE_OUTCOMES } from "../../analytics/usage-outcome.ts";
import type { UsageOutcome } from "../../analytics/usage-outcome.ts";
import { ServiceError } from "../../errors/service-error.ts";
import type { KeyAnalyticsStore, KeyUsageGroup, KeyUsageGroupKey } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";
import { integerParam } from "../data/query-params.ts";
import { param, quote } from "../query.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** The longest range one request may ask for: 31 days by hour (744 hours); by day, 400 days or the daily rows' retention if longer. */
export const MAX_HOURLY_RANGE_DAYS = 31;
export const MAX_DAILY_RANGE_DAYS = 400;

const DIMENSIONS = ["key", "endpoint", "outcome"] as const;
type Dimension = (typeof DIMENSIONS)[number];

/** A page's end as `next_cursor`: the last group's identity (base64url JSON). Clients treat it as opaque. */
function encodeCursor(g: KeyUsageGroupKey): string {
  const json = JSON.stringify([g.start, g.keyId, g.endpoint, g.outcome]);
  return btoa(json).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const nullableText = (x: unknown): x is string | null => x === null || (typeof x === "string" && x.length <= 200);

/** The group a cursor names, or null when it is not one this API gave. */
function decodeCursor(text: string): KeyUsageGroupKey | null {
  if (text.length > 600 || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  try {
    const x: unknown = JSON.parse(atob(text.replace(/-/g, "+").replace(/_/g, "/")));
    if (!Array.isArray(x) || x.length !== 4) return null;
    const [start, keyId, endpoint, outcome] = x as unknown[];
    if (typeof start !== "number" || !Number.isSafeInteger(start) || !nullableText(keyId) || !nullableText(endpoint)) return null;
    if (outcome !== null && !(USAGE_OUTCOMES as readonly unknown[]).includes(outcome)) return null;
    return { start, keyId, endpoint, outcome: outcome as UsageOutcome | null };
  } catch {
    return null;
  }
}

const isoParam = (description: string) =>
  param(v.pipe(v.string(), v.isoTimestamp(), v.description(description)), { expect: "must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-01T00:00:00Z" });

/** The query of both breakdown routes. */
export const BreakdownQuery = v.object({
  from: v.optional(isoParam("Start of the range (ISO 8601), rounded down to its hour or UTC day; default: 24 hours (by hour) or 30 days (by day) before `to`.")),
  to: v.optional(isoParam("End of the range (ISO 8601, exclusive), rounded up to its hour or UTC day; default: now (the current hour or day included).")),
  granularity: v.optional(param(v.pipe(v.picklist(["hour", "day"]), v.description("Bucket size: `hour` (default) or UTC `day`.")), { expect: "must be `hour` or `day`" }), "hour"),
  group_by: v.optional(
    param(
      v.pipe(
        v.string(),
        v.check((s) => s === "" || s.split(",").every((d, i, all) => (DIMENSIONS as readonly string[]).includes(d) && all.indexOf(d) === i)),
        v.description("Comma-separated dimensions to group by besides the bucket: any of `key`, `endpoint`, `outcome` (default all three); empty: one total per bucket."),
      ),
      { expect: "must be a comma-separated list of distinct `key`, `endpoint`, `outcome` (or empty)" },
    ),
    "key,endpoint,outcome",
  ),
  key_id: v.optional(param(v.pipe(v.string(), v.regex(/^key_[0-9A-Za-z]{1,64}$/), v.description("Only this key's requests.")), { expect: "must be a key id (`key_…`)" })),
  limit: v.optional(integerParam(1, 1000, "Groups per page (default 500)."), "500"),
  cursor: v.optional(
    param(v.pipe(v.string(), v.check((c) => decodeCursor(c) !== null), v.description("Where the page starts: the previous page's `next_cursor` (opaque).")), {
      expect: "must be a `next_cursor` this API gave",
    }),
  ),
});

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const Millis = v.nullable(v.pipe(v.number(), v.minValue(0)));

/** The answer of both breakdown routes. */
export const BreakdownSchema = v.object({
  granularity: v.picklist(["hour", "day"]),
  from: v.pipe(v.string(), v.isoTimestamp(), v.description("The range's start, as rounded.")),
  to: v.pipe(v.string(), v.isoTimestamp(), v.description("The range's end (exclusive), as rounded.")),
  group_by: v.array(v.picklist(DIMENSIONS)),
  data: v.array(
    v.object({
      start: v.pipe(v.string(), v.isoTimestamp(), v.description("The hour's or UTC day's start.")),
      key_id: v.pipe(v.nullable(v.string()), v.description("The key; null when not grouped by key.")),
      endpoint: v.pipe(v.nullable(v.string()), v.description("Method and path template, e.g. `GET /data/v1/benchmarks/{category}`; null when not grouped by endpoint.")),
      outcome: v.pipe(v.nullable(v.picklist(USAGE_OUTCOMES)), v.description("The outcome class; null when not grouped by outcome.")),
      calls: Count,
      errors: v.pipe(Count, v.description("Calls answered with an error other than 429 (every outcome but `2xx` and `429`).")),
      rate_limited: v.pipe(Count, v.description("Calls answered 429.")),
      outcomes: v.pipe(
        v.object(Object.fromEntries(USAGE_OUTCOMES.map((o) => [o, Count])) as Record<UsageOutcome, typeof Count>),
        v.description("Calls per outcome: `2xx`, `401/403` (key refused), `402` (quota), `404`, `422`, `429`, `5xx`, and `4xx` (any other client error)."),
      ),
      latency_ms: v.pipe(
        v.object({ p50: Millis, p95: Millis, p99: Millis, max: Millis }),
        v.description("Server time per call, read from a fixed histogram: each percentile is the upper bound of its bucket (0.5, 1, 2, 5, 10, 20, 50 … 5000 ms), capped by the slowest call. Null without calls."),
      ),
    }),
  ),
  has_more: v.pipe(v.boolean(), v.description("Whether more groups follow this page.")),
  next_cursor: v.pipe(v.nullable(v.string()), v.description("The `cursor` of the next page; null on the last one.")),
});

/** A breakdown answer. */
export type Breakdown = v.InferOutput<typeof BreakdownSchema>;

/** How both routes describe the breakdown in the OpenAPI document. */
export const BREAKDOWN_DESCRIPTION =
  "Data requests by hour or UTC day, grouped by key, endpoint and outcome (any of them), with latency percentiles. Counted in memory by each " +
  "server instance and written every few seconds (`analytics.flushSeconds`): the latest seconds may not show yet. A request whose key is " +
  "unknown or malformed belongs to no key and is not counted here. Ranges: at most 31 days by hour, 400 days by day (or " +
  "`retention.analyticsDailyDays` if longer). Pages in ascending (start, key, endpoint, outcome) order.";

function view(g: KeyUsageGroup): Breakdown["data"][number] {
  let calls = 0;
  const outcomes = {} as Record<UsageOutcome, number>;
  USAGE_OUTCOMES.forEach((o, i) => {
    outcomes[o] = g.outcomes[i] ?? 0;
    calls += outcomes[o];
  });
  const ok = outcomes["2xx"];
  const limited = outcomes["429"];
  return {
    start: isoTime(g.start),
    key_id: g.keyId,
    endpoint: g.endpoint,
    outcome: g.outcome,
    calls,
    errors: calls - ok - limited,
    rate_limited: limited,
    outcomes,
    latency_ms: {
      p50: latencyQuantile(g.latency, g.maxMs, 0.5),
      p95: latencyQuantile(g.latency, g.maxMs, 0.95),
      p99: latencyQuantile(g.latency, g.maxMs, 0.99),
      max: calls === 0 ? null : g.maxMs,
    },
  };
}

/** Reads one page of an account's breakdown for a validated query; 422 for a range that is empty or too long. */
export async function usageBreakdown(app: AppContext, accountId: string, query: v.InferOutput<typeof BreakdownQuery>, now: number): Promise<Breakdown> {
  const unit = query.granularity === "hour" ? HOUR_MS : DAY_MS;
  const to = Math.ceil((query.to === undefined ? now + 1 : Date.parse(query.to)) / unit) * unit;
  const from = Math.floor((query.from === undefined ? to - (query.granularity === "hour" ? DAY_MS : 30 * DAY_MS) : Date.parse(query.from)) / unit) * unit;
  if (from >= to) throw new ServiceError(422, "validation.invalid_parameter", `\`from\` must be earlier than \`to\`; got ${quote(query.from ?? isoTime(from))} and ${quote(query.to ?? isoTime(to))}.`);
  const maxDays = query.granularity === "hour" ? MAX_HOURLY_RANGE_DAYS : Math.max(MAX_DAILY_RANGE_DAYS, app.config.retention.analyticsDailyDays);
  if (to - from > maxDays * DAY_MS) {
    throw new ServiceError(422, "validation.out_of_range", `The range from \`from\` to \`to\` must be at most ${maxDays} days with granularity \`${query.granularity}\`; got ${Math.ceil((to - from) / DAY_MS)} days.`);
  }
  const dims = query.group_by === "" ? [] : (query.group_by.split(",") as Dimension[]);
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)!;
  const analytics: KeyAnalyticsStore = app.storage;
  const rows = await analytics.keyUsage({
    accountId,
    granularity: query.granularity,
    from,
    to,
    groupBy: { key: dims.includes("key"), endpoint: dims.includes("endpoint"), outcome: dims.includes("outcome") },
    ...(query.key_id !== undefined ? { keyId: query.key_id } : {}),
    ...(after !== undefined ? { after } : {}),
    // One more than the page: whether it exists is `has_more`.
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const hasMore = rows.length > query.limit;
  return {
    granularity: query.granularity,
    from: isoTime(from),
    to: isoTime(to),
    group_by: DIMENSIONS.filter((d) => dims.includes(d)),
    data: page.map(view),
    has_more: hasMore,
    next_cursor: hasMore ? encodeCursor(page[page.length - 1]!) : null,
  };
}
