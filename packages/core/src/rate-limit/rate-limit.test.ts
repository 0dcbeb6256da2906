import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { slidingWindow } from "./sliding-window.ts";
import type { SlidingWindowDecision } from "./sliding-window.ts";
import { countedDay, dailyPeek, dailyWindow, utcDay } from "./daily-window.ts";

const W = 60_000;

/** Replays request times through the window, applying each decision like a store would. */
function replay(times: number[], limit: number): { admitted: number[]; decisions: SlidingWindowDecision[] } {
  let log: number[] = [];
  const admitted: number[] = [];
  const decisions: SlidingWindowDecision[] = [];
  for (const t of times) {
    const d = slidingWindow(log, t, limit, W);
    decisions.push(d);
    if (d.allowed) {
      log = d.stamps;
      admitted.push(t);
    }
  }
  return { admitted, decisions };
}

const timesArb = fc.array(fc.integer({ min: 0, max: 300_000 }), { maxLength: 400 }).map((a) => a.sort((x, y) => x - y));

describe("sliding window", () => {
  it("property: in ANY rolling 60 s span at most `limit` requests are admitted", () => {
    fc.assert(
      fc.property(timesArb, fc.integer({ min: 1, max: 20 }), (times, limit) => {
        const { admitted } = replay(times, limit);
        for (let i = 0; i < admitted.length; i++) {
          let j = i;
          while (j < admitted.length && admitted[j]! < admitted[i]! + W) j++;
          if (j - i > limit) return false;
        }
        return true;
      }),
    );
  });

  it("property: it admits whenever fewer than `limit` were admitted in the trailing 60 s (never refuses needlessly)", () => {
    fc.assert(
      fc.property(timesArb, fc.integer({ min: 1, max: 20 }), (times, limit) => {
        let log: number[] = [];
        const admitted: number[] = [];
        for (const t of times) {
          const d = slidingWindow(log, t, limit, W);
          const recent = admitted.filter((a) => a > t - W).length;
          if (!d.allowed && recent < limit) return false;
          if (d.allowed) {
            log = d.stamps;
            admitted.push(t);
          }
        }
        return true;
      }),
    );
  });

  it("property: when refused, retryAfter is exact — one ms earlier is refused, at retryAfter it is admitted", () => {
    fc.assert(
      fc.property(timesArb, fc.integer({ min: 1, max: 10 }), (times, limit) => {
        let log: number[] = [];
        for (const t of times) {
          const d = slidingWindow(log, t, limit, W);
          if (d.allowed) {
            log = d.stamps;
            continue;
          }
          if (d.retryAfterMs < 1) return false;
          if (d.retryAfterMs > 1 && slidingWindow(log, t + d.retryAfterMs - 1, limit, W).allowed) return false;
          if (!slidingWindow(log, t + d.retryAfterMs, limit, W).allowed) return false;
        }
        return true;
      }),
    );
  });

  it("property: remaining never goes negative and the log never exceeds the limit", () => {
    fc.assert(
      fc.property(timesArb, fc.integer({ min: 1, max: 10 }), (times, limit) => {
        const { decisions } = replay(times, limit);
        return decisions.every((d) => d.remaining >= 0 && d.remaining <= limit && d.stamps.length <= limit);
      }),
    );
  });

  it("admits a burst of `limit`, refuses the next with the exact wait, and reports limit/remaining/reset", () => {
    let log: number[] = [];
    for (let i = 0; i < 3; i++) {
      const d = slidingWindow(log, 1000 + i, 3, W);
      expect(d).toMatchObject({ allowed: true, remaining: 2 - i, resetAt: 1000 + W });
      log = d.stamps;
    }
    expect(slidingWindow(log, 1500, 3, W)).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 1000 + W - 1500, resetAt: 1000 + W });
    expect(slidingWindow(log, 1000 + W, 3, W).allowed).toBe(true);
  });

  it("a fixed window would admit 2x across a boundary; this one does not", () => {
    // 3 at 59.9 s, then 3 at 60.1 s: a fixed minute window admits all six.
    const { admitted } = replay([59_900, 59_901, 59_902, 60_100, 60_101, 60_102], 3);
    expect(admitted).toEqual([59_900, 59_901, 59_902]);
  });

  it("a limit lowered below the stored log still refuses until enough stamps expire", () => {
    const d = slidingWindow([0, 10, 20, 30], 40, 2, W);
    expect(d).toMatchObject({ allowed: false, retryAfterMs: 20 + W - 40 });
    expect(slidingWindow([0], 5, 0, W).allowed).toBe(false);
  });
});

describe("daily window", () => {
  const day = Date.UTC(2026, 10, 22);
  it("counts per UTC day and resets at midnight", () => {
    const a = dailyWindow(utcDay(day), 9, day + 5, 10);
    expect(a).toMatchObject({ allowed: true, count: 10, remaining: 0, resetAt: day + 86_400_000 });
    const b = dailyWindow(a.day, a.count, day + 6, 10);
    expect(b).toMatchObject({ allowed: false, retryAfterMs: 86_400_000 - 6 });
    expect(dailyWindow(a.day, a.count, day + 86_400_000, 10)).toMatchObject({ allowed: true, count: 1, remaining: 9 });
  });

  it("property: never admits more than the limit in one day", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3 * 86_400_000 }), { maxLength: 200 }).map((a) => a.sort((x, y) => x - y)), fc.integer({ min: 1, max: 50 }), (times, limit) => {
        let st = { day: -1, count: 0 };
        const perDay = new Map<number, number>();
        for (const t of times) {
          const d = dailyWindow(st.day, st.count, t, limit);
          if (d.allowed) {
            st = { day: d.day, count: d.count };
            perDay.set(d.day, (perDay.get(d.day) ?? 0) + 1);
          }
        }
        return [...perDay.values()].every((n) => n <= limit);
      }),
    );
  });

  it("property: on a clock that steps back, the counter's day never moves back, no day counts past the limit, and peek agrees", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -120_000, max: 120_000 }), { maxLength: 200 }), fc.integer({ min: 1, max: 6 }), (steps, limit) => {
        let st = { day: utcDay(day), count: 0 };
        let t = day - 60_000;
        const perDay = new Map<number, number>();
        for (const dt of steps) {
          t += dt;
          const peek = dailyPeek(st.day, st.count, t, limit);
          const d = dailyWindow(st.day, st.count, t, limit);
          expect(d.day).toBe(countedDay(st.day, t));
          expect(d.day).toBeGreaterThanOrEqual(Math.max(st.day, utcDay(t)));
          expect(peek).toEqual({ limit, remaining: d.allowed ? d.remaining + 1 : 0, resetAt: d.resetAt });
          if (!d.allowed) expect(t + d.retryAfterMs).toBe((d.day + 1) * 86_400_000);
          if (d.allowed) {
            st = { day: d.day, count: d.count };
            perDay.set(d.day, (perDay.get(d.day) ?? 0) + 1);
          }
        }
        for (const n of perDay.values()) expect(n).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 300 },
    );
  });

  it("a request 1 ms behind the stored day counts toward the stored day, and its refusal waits for that day's end", () => {
    const stored = utcDay(day);
    expect(countedDay(stored, day - 1)).toBe(stored);
    expect(countedDay(stored - 1, day - 1)).toBe(stored - 1);
    expect(countedDay(undefined, day - 1)).toBe(stored - 1);
    expect(dailyWindow(stored, 1, day - 1, 2)).toMatchObject({ allowed: true, day: stored, count: 2, remaining: 0, resetAt: day + 86_400_000 });
    expect(dailyWindow(stored, 2, day - 1, 2)).toMatchObject({ allowed: false, day: stored, retryAfterMs: 86_400_000 + 1 });
  });
});
