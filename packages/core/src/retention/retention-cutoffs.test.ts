import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../config/config.ts";
import { retentionCutoffs } from "./retention-cutoffs.ts";

const DAY = 86_400_000;

describe("retentionCutoffs", () => {
  it("the defaults: deliveries and events 30 days back, sessions 7 days past expiry, today's and yesterday's counters, 400 days of usage", () => {
    const now = Date.UTC(2026, 10, 27, 15, 30);
    const today = Math.floor(now / DAY);
    expect(retentionCutoffs(now, DEFAULT_CONFIG.retention)).toEqual({
      deliveries: now - 30 * DAY,
      events: now - 30 * DAY,
      sessions: now - 7 * DAY,
      sign_in_links: now - 7 * DAY,
      day_counters: today - 1,
      usage_days: today - 399,
      key_usage_hours: now - 30 * DAY,
      key_usage_days: (today - 399) * DAY,
    });
  });

  it("a config built in code below the bounds is held to them: today's and yesterday's counters and the console's 90 days are never cut", () => {
    const now = Date.UTC(2026, 10, 27, 0, 0, 0, 1);
    const today = Math.floor(now / DAY);
    const cut = retentionCutoffs(now, { deliveriesDays: 0, eventsDays: -3, sessionsDays: -1, dayCountersDays: 0, usageDays: 1, analyticsHourlyDays: 0, analyticsDailyDays: 1 });
    expect(cut).toEqual({
      deliveries: now - DAY,
      events: now - DAY,
      sessions: now,
      sign_in_links: now,
      day_counters: today - 1,
      usage_days: today - 89,
      // The console's last 24 hours by hour and 30 days by day are never cut.
      key_usage_hours: now - 2 * DAY,
      key_usage_days: (today - 30) * DAY,
    });
  });
});
