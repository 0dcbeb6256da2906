/**
 * The bounds of the `retention` settings. Each keeps what something still reads: a day counter the rate limit
 * may still write, the usage history the console's chart and the current billing period show.
 */

/** The most days `GET /api/v1/console/usage/daily` shows (its `days` parameter). */
export const DAILY_USAGE_MAX_DAYS = 90;

/** The longest billing period in days (a calendar month, whatever the anchor day). */
export const LONGEST_BILLING_PERIOD_DAYS = 31;

/** The bounds of each `retention` setting, in days. */
export const RETENTION_BOUNDS = {
  deliveriesDays: { min: 1, max: 3650 },
  eventsDays: { min: 1, max: 3650 },
  // Counted from expiry: an expired session or sign-in link opens nothing, so it may go at once.
  sessionsDays: { min: 0, max: 3650 },
  // Today's and yesterday's counters: an instance whose clock is still before midnight keeps counting yesterday.
  dayCountersDays: { min: 2, max: 3650 },
  // The console's chart, which covers the longest billing period too.
  usageDays: { min: Math.max(DAILY_USAGE_MAX_DAYS, LONGEST_BILLING_PERIOD_DAYS), max: 3650 },
  // The console's last 24 hours of analytics read hourly rows; its 30 days, daily rows.
  analyticsHourlyDays: { min: 2, max: 3650 },
  analyticsDailyDays: { min: 31, max: 3650 },
} as const;
