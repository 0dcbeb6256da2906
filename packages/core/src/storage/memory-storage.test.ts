import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dailyWindow, utcDay } from "../rate-limit/daily-window.ts";
import { slidingWindow } from "../rate-limit/sliding-window.ts";
import { storageConformance } from "../testing/storage-conformance.ts";
import { createMemoryStorage } from "./memory-storage.ts";

storageConformance("memory", { create: async () => createMemoryStorage() });

describe("memory store: the stamp log kept in place", () => {
  const T0 = Date.UTC(2026, 10, 30, 23, 50);
  const WINDOW = 60_000;

  it("admit and peekLimits decide every step exactly as core's slidingWindow and dailyWindow over a copied log", async () => {
    const step = fc.record({
      dt: fc.integer({ min: -5_000, max: 70_000 }),
      perMinute: fc.integer({ min: 0, max: 6 }),
      perDay: fc.integer({ min: 1, max: 40 }),
      peek: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 120 }), async (steps) => {
        const s = createMemoryStorage();
        let stamps: number[] = [];
        let day = utcDay(T0);
        let count = 0;
        let now = T0;
        for (const { dt, perMinute, perDay, peek } of steps) {
          now += dt;
          if (peek) {
            // What peekLimits means: the stored log's stamps inside the window, and today's count.
            const live = stamps.filter((t) => t > now - WINDOW);
            const oldest = live.length >= perMinute && perMinute > 0 ? live[live.length - perMinute]! : live[0];
            const today = day === utcDay(now) ? count : 0;
            expect(await s.peekLimits({ now, keyId: "key_1", accountId: "acc_1", perMinute, perDay, windowMs: WINDOW })).toEqual({
              now,
              minute: { limit: perMinute, remaining: Math.max(0, perMinute - live.length), resetAt: (oldest ?? now) + WINDOW },
              day: { limit: perDay, remaining: Math.max(0, perDay - today), resetAt: (utcDay(now) + 1) * 86_400_000 },
            });
          }
          const got = await s.admit({ now, keyId: "key_1", accountId: "acc_1", perMinute, perDay, windowMs: WINDOW, quota: null });
          const m = slidingWindow(stamps, now, perMinute, WINDOW);
          const d = dailyWindow(day, count, now, perDay);
          if (m.allowed && d.allowed) {
            stamps = m.stamps;
            day = d.day;
            count = d.count;
            expect(got).toMatchObject({ kind: "allowed", minute: { limit: perMinute, remaining: m.remaining, resetAt: m.resetAt }, day: { remaining: d.remaining } });
          } else {
            expect(got).toMatchObject({
              kind: "rate_limited",
              minute: { limit: perMinute, remaining: m.allowed ? m.remaining + 1 : 0, resetAt: m.resetAt },
              retryAfterMs: Math.max(m.retryAfterMs, d.retryAfterMs),
            });
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
