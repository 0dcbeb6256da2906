/** GET /usage/summary: today's requests, the billing period's calls and allowance, and active keys. */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import { effectiveLimits } from "../../config/config.ts";
import { DAILY_USAGE_MAX_DAYS } from "../../config/retention-bounds.ts";
import { integerParam } from "../data/query-params.ts";
import { ok } from "../reply.ts";
import { accountOf, defineConsoleRoute } from "./define-console-route.ts";
import type { UsageStore } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): UsageStore => app.storage;

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

/** GET /usage/summary. */
export const usageSummary = defineConsoleRoute({
  method: "GET",
  path: "/usage/summary",
  operationId: "getUsageSummary",
  summary: "Usage summary",
  description:
    "`today`: the account's admitted requests this UTC day (all keys); `environments`: each environment's own daily counter and limit (test keys count apart from live keys, so test traffic never refuses a live request; both limits are the account's `per_day`); `month`: calls counted this billing period (live keys); `monthly_limit`: the period's allowance (base quota plus paid blocks); `token_balance`: calls left in it.",
  success: {
    status: 200,
    description: "The usage summary.",
    schema: v.object({
      today: Count,
      daily_limit: Count,
      environments: v.pipe(
        v.object({
          live: v.object({ today: Count, daily_limit: Count }),
          test: v.object({ today: Count, daily_limit: Count }),
        }),
        v.description("Each environment's own UTC-day counter (`today`) and its limit: a test key's requests never count toward the live keys' day."),
      ),
      month: Count,
      monthly_limit: Count,
      token_balance: Count,
      active_keys: Count,
      period_start: v.pipe(v.string(), v.isoTimestamp()),
      period_end: v.pipe(v.string(), v.isoTimestamp()),
      quota_exhausted: v.boolean(),
    }),
  },
  errors: [],
  async handle(call) {
    const { app, now } = call;
    const account = await accountOf(call);
    const limits = effectiveLimits(app.config, account.tier, account.limits);
    const u = await store(app).usage(account.id, now, app.config.billing.anchorDay, limits.monthlyQuota, limits.blockSize);
    return ok({
      today: u.today,
      daily_limit: limits.perDay,
      environments: {
        live: { today: u.today - u.todayTest, daily_limit: limits.perDay },
        test: { today: u.todayTest, daily_limit: limits.perDay },
      },
      month: u.month,
      monthly_limit: u.allowance,
      token_balance: Math.max(0, u.allowance - u.month),
      active_keys: u.activeKeys,
      period_start: isoTime(u.periodStart),
      period_end: isoTime(u.periodEnd),
      quota_exhausted: u.exhausted,
    });
  },
});

const DailyQuery = v.object({ days: v.optional(integerParam(1, DAILY_USAGE_MAX_DAYS, "How many days, ending today (UTC)."), "30") });

/** GET /usage/daily. */
export const usageDaily = defineConsoleRoute({
  method: "GET",
  path: "/usage/daily",
  operationId: "getUsageDaily",
  summary: "Daily usage",
  description: "The account's admitted requests (all keys) per UTC day for the last `days` days (default 30, at most 90), oldest first, today last; a day without requests counts 0. History starts when the server first kept it.",
  query: DailyQuery,
  success: {
    status: 200,
    description: "One entry per day.",
    schema: v.object({ data: v.array(v.object({ date: v.pipe(v.string(), v.isoDate()), calls: Count })) }),
  },
  errors: [],
  async handle({ app, accountId, now, query }) {
    const today = Math.floor(now / 86_400_000);
    const from = today - query.days + 1;
    const counts = new Map((await store(app).dailyUsage(accountId, from, now)).map((d) => [d.day, d.count]));
    const data: { date: string; calls: number }[] = [];
    for (let day = from; day <= today; day++) data.push({ date: new Date(day * 86_400_000).toISOString().slice(0, 10), calls: counts.get(day) ?? 0 });
    return ok({ data });
  },
});
