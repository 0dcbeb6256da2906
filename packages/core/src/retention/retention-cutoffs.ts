/** Where retention cuts each kind of history at a time: the `before` of every `Storage.prune` target. */
import type { RetentionConfig } from "../config/config.ts";
import { RETENTION_BOUNDS } from "../config/retention-bounds.ts";
import type { PruneTarget } from "../storage/types.ts";

const DAY_MS = 86_400_000;

/** The order a run prunes in: deliveries before events, so the events they free go in the same run. */
export const PRUNE_ORDER: readonly PruneTarget[] = ["deliveries", "events", "sessions", "sign_in_links", "day_counters", "usage_days", "key_usage_hours", "key_usage_days"];

/**
 * The cutoff of each target at `now`: a time (Unix ms) for deliveries, events, sessions and sign-in links, a UTC
 * day for day counters and usage. Every setting is held to its minimum first (a config built in code skips
 * validation), so the day counters of today and yesterday and the console's 90 days of usage are never cut.
 */
export function retentionCutoffs(now: number, retention: RetentionConfig): Readonly<Record<PruneTarget, number>> {
  const days = (key: keyof RetentionConfig): number => Math.max(RETENTION_BOUNDS[key].min, retention[key]);
  const today = Math.floor(now / DAY_MS);
  const sessions = now - days("sessionsDays") * DAY_MS;
  return {
    deliveries: now - days("deliveriesDays") * DAY_MS,
    events: now - days("eventsDays") * DAY_MS,
    sessions,
    sign_in_links: sessions,
    // Kept: the last `dayCountersDays` UTC days, today included.
    day_counters: today - days("dayCountersDays") + 1,
    usage_days: today - days("usageDays") + 1,
    // Times: an hourly row goes once its hour began more than `analyticsHourlyDays` ago; a daily row once its UTC
    // day is no longer among the last `analyticsDailyDays`, today included.
    key_usage_hours: now - days("analyticsHourlyDays") * DAY_MS,
    key_usage_days: (today - days("analyticsDailyDays") + 1) * DAY_MS,
  };
}
