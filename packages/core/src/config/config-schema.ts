/** The config file's valibot schema and strict validation (kept out of the "." entry, which carries no valibot). */
import * as v from "valibot";
import type { ServiceConfig } from "./config.ts";
import { DEFAULT_CONFIG, mergeConfig } from "./config.ts";
import { LIMIT_BOUNDS, MAX_AUTO_CHARGES_CEILING } from "./limit-bounds.ts";
import { RETENTION_BOUNDS } from "./retention-bounds.ts";

const count = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER));
const positive = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER));
const bounded = (b: { readonly min: number; readonly max: number }) => v.pipe(v.number(), v.integer(), v.minValue(b.min), v.maxValue(b.max));
/** Whole days within bounds; `why` explains the minimum. */
const days = (b: { readonly min: number; readonly max: number }, why?: string) =>
  v.pipe(v.number(), v.integer("must be a whole number of days"), v.minValue(b.min, `must be at least ${b.min}${why ? ` (${why})` : ""}`), v.maxValue(b.max, `must be at most ${b.max}`));
// The same bounds as the admin API's limits (limit-bounds.ts).
const tierSchema = v.strictObject({
  perMinute: v.optional(bounded(LIMIT_BOUNDS.perMinute)),
  perDay: v.optional(bounded(LIMIT_BOUNDS.perDay)),
  monthlyQuota: v.optional(bounded(LIMIT_BOUNDS.monthlyQuota)),
  blockSize: v.optional(bounded(LIMIT_BOUNDS.blockSize)),
  blockPrice: v.optional(bounded(LIMIT_BOUNDS.blockPrice)),
});

/** The JSON file's schema: every key optional, unknown keys refused. */
export const ConfigFileSchema = v.strictObject({
  target: v.optional(v.picklist(["live", "test", "host"])),
  trustProxy: v.optional(v.boolean()),
  currency: v.optional(v.pipe(v.string(), v.regex(/^[a-z]{3}$/))),
  tiers: v.optional(
    v.strictObject({
      developer: v.optional(tierSchema),
      startup: v.optional(tierSchema),
      growth: v.optional(tierSchema),
      enterprise: v.optional(tierSchema),
    }),
  ),
  webhooks: v.optional(
    v.strictObject({
      retryDelaysSeconds: v.optional(v.pipe(v.array(count), v.minLength(1), v.maxLength(20))),
      timeoutSeconds: v.optional(v.pipe(v.number(), v.minValue(0.001), v.maxValue(300))),
      allowHttp: v.optional(v.boolean()),
      allowPrivateNetworks: v.optional(v.boolean()),
      maxPerAccount: v.optional(positive),
      concurrencyPerWebhook: v.optional(positive),
      disableAfterDays: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(365))),
      disableAfterDeadDeliveries: v.optional(v.pipe(count, v.maxValue(1_000_000))),
      ordered: v.optional(v.boolean()),
      secretOverlapHours: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(24 * 30))),
      recoverCallsPerHour: v.optional(v.pipe(positive, v.maxValue(1000))),
      recoverDeliveriesPerHour: v.optional(v.pipe(positive, v.maxValue(100_000))),
    }),
  ),
  billing: v.optional(
    v.strictObject({
      processor: v.optional(v.picklist(["simulated", "stripe"])),
      simulatedOutcome: v.optional(v.picklist(["succeed", "fail"])),
      anchorDay: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(31))),
      retryAfterFailureSeconds: v.optional(count),
      maxAutoChargesPerPeriod: v.optional(v.pipe(count, v.maxValue(MAX_AUTO_CHARGES_CEILING))),
      stripe: v.optional(v.strictObject({ apiBase: v.optional(v.pipe(v.string(), v.url())), secretKeyEnv: v.optional(v.string()) })),
    }),
  ),
  data: v.optional(
    v.strictObject({
      minSampleSize: v.optional(positive),
      syntheticSeed: v.optional(v.pipe(v.string(), v.minLength(1))),
    }),
  ),
  keys: v.optional(v.strictObject({ maxPerAccount: v.optional(positive) })),
  sessions: v.optional(
    v.strictObject({
      ttlDays: v.optional(v.pipe(v.number(), v.minValue(1, "must be at least 1 (sessions always expire)"), v.maxValue(90, "must be at most 90 (the maximum session lifetime)"))),
      signInLinkMinutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, "must be at least 1"), v.maxValue(1440, "must be at most 1440 (one day)"))),
    }),
  ),
  metrics: v.optional(
    v.strictObject({
      // A guessable token would make the metrics public in all but name.
      token: v.optional(v.nullable(v.pipe(v.string(), v.minLength(16, "must be at least 16 characters (or null: metrics off)"), v.maxLength(512), v.regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces")))),
    }),
  ),
  shutdown: v.optional(
    v.strictObject({
      drainDelaySeconds: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(600))),
      drainTimeoutSeconds: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(3600))),
    }),
  ),
  log: v.optional(v.strictObject({ access: v.optional(v.boolean()) })),
  retention: v.optional(
    v.strictObject({
      deliveriesDays: v.optional(days(RETENTION_BOUNDS.deliveriesDays)),
      eventsDays: v.optional(days(RETENTION_BOUNDS.eventsDays)),
      sessionsDays: v.optional(days(RETENTION_BOUNDS.sessionsDays)),
      dayCountersDays: v.optional(days(RETENTION_BOUNDS.dayCountersDays, "today's and yesterday's counters are still in use")),
      usageDays: v.optional(days(RETENTION_BOUNDS.usageDays, "the console's daily usage chart shows up to 90 days, the billing period up to 31")),
      analyticsHourlyDays: v.optional(days(RETENTION_BOUNDS.analyticsHourlyDays, "the console shows the last 24 hours by hour")),
      analyticsDailyDays: v.optional(days(RETENTION_BOUNDS.analyticsDailyDays, "the console shows the last 30 days by day")),
    }),
  ),
  analytics: v.optional(
    v.strictObject({
      enabled: v.optional(v.boolean()),
      flushSeconds: v.optional(v.pipe(v.number(), v.minValue(0.1, "must be at least 0.1"), v.maxValue(300, "must be at most 300 (a kill -9 loses up to one interval)"))),
      maxSeries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100, "must be at least 100"), v.maxValue(10_000_000, "must be at most 10000000"))),
    }),
  ),
  server: v.optional(
    v.strictObject({
      // Long enough for a slow mobile upload of the largest body (1 MB), short enough that a trickling client
      // cannot hold a connection for long; never off.
      requestTimeoutSeconds: v.optional(v.pipe(v.number(), v.minValue(0.1, "must be at least 0.1 (the timeout cannot be turned off)"), v.maxValue(3600, "must be at most 3600"))),
    }),
  ),
});

/** A config file's content, as parsed. */
export type ConfigFile = v.InferOutput<typeof ConfigFileSchema>;

/** The result of validating a config file. */
export type ConfigResult = { ok: true; config: ServiceConfig } | { ok: false; errors: string[] };

/** Validates a parsed JSON config; each error names the offending key path (e.g. `webhooks.timeoutSeconds`). */
export function resolveConfig(raw: unknown): ConfigResult {
  const parsed = v.safeParse(ConfigFileSchema, raw ?? {});
  if (!parsed.success) {
    const errors = parsed.issues.map((issue) => {
      const path = (issue.path ?? []).map((p) => String(p.key)).join(".");
      if (issue.type === "strict_object" || issue.expected === "never") return `unknown key "${path}"`;
      return `${path || "(root)"}: ${issue.message}`;
    });
    return { ok: false, errors };
  }
  return { ok: true, config: mergeConfig(DEFAULT_CONFIG, parsed.output) };
}

