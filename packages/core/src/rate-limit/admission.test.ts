import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { billingPeriod } from "../quota/billing-period.ts";
import type { QuotaState } from "../quota/quota.ts";
import { EMPTY_QUOTA, chargeIdempotencyKey, quotaRequest } from "../quota/quota.ts";
import type { AdmitInput } from "../storage/types.ts";
import type { Admission, DayCount, StoredQuota } from "./admission.ts";
import { admission } from "./admission.ts";
import { utcDay } from "./daily-window.ts";
import { ArrayWindowLog, recordAdmission } from "./sliding-window.ts";

const W = 60_000;
// Two minutes before a UTC midnight that is also the first of a month: days and billing periods turn over.
const T0 = Date.UTC(2026, 10, 30, 23, 58, 0);

/** One key and account, kept as a store would keep them, with `admission`'s writes applied. */
class Model {
  log = new ArrayWindowLog([]);
  day: DayCount | undefined = undefined;
  quotas = new Map<number, StoredQuota>();
  /** `admission` of `input` at `now` over this state. */
  decide(input: Omit<AdmitInput, "now">, now: number): Admission {
    return admission(input, this.log, this.day, (_, start) => this.quotas.get(start), now);
  }
  apply(a: Admission): void {
    const w = a.writes;
    if (w === null) return;
    recordAdmission(this.log, w.first, a.result.now);
    this.day = { day: w.day, count: w.count };
    if (w.quota !== null) this.quotas.set(w.periodStart, { state: w.quota, periodEnd: w.periodEnd });
  }
}

type Req = { dt: number; perMinute: number; perDay: number; live: boolean; baseQuota: number; blockSize: number; maxAutoCharges: number };

const reqArb = (minLimit: number): fc.Arbitrary<Req> =>
  fc.record({
    dt: fc.integer({ min: -3_000, max: 30_000 }),
    perMinute: fc.integer({ min: minLimit, max: 5 }),
    perDay: fc.integer({ min: Math.max(minLimit, 1), max: 12 }),
    live: fc.boolean(),
    baseQuota: fc.integer({ min: 2, max: 8 }),
    blockSize: fc.constantFrom(3, 3, 1, 0),
    maxAutoCharges: fc.constantFrom(2, 2, 0),
  });

function inputOf(r: Req, i: number): Omit<AdmitInput, "now"> {
  return {
    keyId: "key_1",
    accountId: "acc_1",
    perMinute: r.perMinute,
    perDay: r.perDay,
    windowMs: W,
    quota: r.live
      ? {
          anchorDay: 1,
          baseQuota: r.baseQuota,
          blockSize: r.blockSize,
          blockPrice: 700,
          currency: "usd",
          retryAfterFailureMs: 20_000,
          maxAutoCharges: r.maxAutoCharges,
          warningEventId: `evt_${i}w`,
          invoiceId: `inv_${i}`,
          heldEventId: `evt_${i}h`,
        }
      : null,
  };
}

describe("admission", () => {
  it("property: on a clock that never steps back, never admits more than perMinute in any rolling window, nor more than perDay in a UTC day", () => {
    // (A clock that steps back re-enters spans it already left; the window then still admits at most perMinute
    // newer than the clock's reading, which the refusal property below checks step by step.)
    const forward = reqArb(0).map((r) => ({ ...r, dt: Math.abs(r.dt) }));
    fc.assert(
      fc.property(fc.array(forward, { maxLength: 120 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 12 }), (reqs, perMinute, perDay) => {
        const m = new Model();
        const admitted: number[] = [];
        let now = T0;
        reqs.forEach((r, i) => {
          now += r.dt;
          const a = m.decide({ ...inputOf(r, i), perMinute, perDay }, now);
          m.apply(a);
          if (a.writes !== null) admitted.push(now);
        });
        for (const t of admitted) {
          expect(admitted.filter((u) => u > t - W && u <= t).length).toBeLessThanOrEqual(perMinute);
          expect(admitted.filter((u) => utcDay(u) === utcDay(t)).length).toBeLessThanOrEqual(perDay);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("property: a refusal changes nothing and reports the binding window's reset, at which a retry is admitted (and not 1 ms before)", () => {
    fc.assert(
      fc.property(fc.array(reqArb(1), { minLength: 1, maxLength: 80 }), (reqs) => {
        const m = new Model();
        let now = T0;
        reqs.forEach((r, i) => {
          now += r.dt;
          const input = inputOf(r, i);
          const a = m.decide(input, now);
          if (a.result.kind === "rate_limited") {
            expect(a.writes).toBeNull();
            expect(a.step).toBeNull();
            const binding = a.result.window === "day" ? a.result.day : a.result.minute;
            expect(binding.resetAt).toBe(now + a.result.retryAfterMs);
            expect(a.result.retryAfterMs).toBeGreaterThan(0);
            expect(m.decide(input, now + a.result.retryAfterMs).result.kind).not.toBe("rate_limited");
            expect(m.decide(input, now + a.result.retryAfterMs - 1).result.kind).toBe("rate_limited");
          }
          m.apply(a);
        });
      }),
      { numRuns: 300 },
    );
  });

  it("property: a live key's admitted request takes exactly quotaRequest's step, with its events, invoice and period", () => {
    fc.assert(
      fc.property(fc.array(reqArb(1), { minLength: 1, maxLength: 80 }), (reqs) => {
        const m = new Model();
        let now = T0;
        reqs.forEach((r, i) => {
          now += r.dt;
          const input = inputOf(r, i);
          const period = billingPeriod(now, 1);
          const before: QuotaState = m.quotas.get(period.start)?.state ?? EMPTY_QUOTA;
          const a = m.decide(input, now);
          m.apply(a);
          if (a.writes === null) return;
          if (input.quota === null) {
            expect(a.step).toBeNull();
            expect(a.writes.quota).toBeNull();
            expect(a.writes.read).toBeUndefined();
            expect(a.result).toMatchObject({ kind: "allowed", quota: null });
            return;
          }
          const step = quotaRequest(input.quota, before, now);
          expect(a.step).toEqual(step);
          expect(a.writes).toMatchObject({ periodStart: period.start, periodEnd: m.quotas.get(period.start)!.periodEnd, quota: step.state });
          expect(a.result.kind).toBe(step.kind === "allow" ? "allowed" : "quota_exhausted");
          const types = a.writes.events.map((e) => e.type);
          if (step.kind === "allow") {
            expect(types).toEqual(step.warn === null ? [] : ["quota.warning"]);
            expect(a.writes.invoice).toBeNull();
          } else {
            expect(types).toEqual(step.heldNow === null ? [] : ["quota.held"]);
            expect(a.result).toMatchObject({ flipped: step.flipped, heldForReview: step.heldForReview, heldNow: step.heldNow !== null, chargeInvoiceId: step.charge ? `inv_${i}` : null });
            if (step.charge === null) expect(a.writes.invoice).toBeNull();
            else
              expect(a.writes.invoice).toMatchObject({
                id: `inv_${i}`,
                status: "pending",
                block: step.charge.block,
                attempt: step.charge.attempt,
                amount: 700,
                idempotencyKey: chargeIdempotencyKey("acc_1", new Date(period.start).toISOString(), step.charge.block, step.charge.attempt),
              });
          }
        });
      }),
      { numRuns: 300 },
    );
  });

  it("property: deterministic, and reads without writing (the same state twice gives the same decision)", () => {
    fc.assert(
      fc.property(fc.array(reqArb(0), { minLength: 1, maxLength: 60 }), (reqs) => {
        const m = new Model();
        let now = T0;
        reqs.forEach((r, i) => {
          now += r.dt;
          const log = [...m.log.stamps];
          const first = m.decide(inputOf(r, i), now);
          expect(m.log.stamps).toEqual(log);
          expect(m.decide(inputOf(r, i), now)).toEqual(first);
          m.apply(first);
        });
      }),
      { numRuns: 200 },
    );
  });

  it("a clock 1 ms behind a day the counter already holds is refused until that day ends, not until the minute frees (the counterexample of seed 1943865222)", () => {
    const midnight = Date.UTC(2026, 11, 1);
    const m = new Model();
    const input = { keyId: "key_1", accountId: "acc_1", perMinute: 1, perDay: 1, windowMs: W, quota: null };
    m.apply(m.decide(input, midnight - 100_000));
    m.apply(m.decide(input, midnight));
    const a = m.decide(input, midnight - 1);
    expect(a.result).toMatchObject({ kind: "rate_limited", window: "day", retryAfterMs: 86_400_001, day: { remaining: 0, resetAt: midnight + 86_400_000 } });
    expect(m.decide(input, midnight + 86_400_000).result.kind).toBe("allowed");
  });

  it("a refusal by both windows near midnight names the day, with the longer wait", () => {
    const now = Date.UTC(2026, 0, 1, 23, 59, 30);
    const log = new ArrayWindowLog([now - 50_000]);
    const a = admission({ keyId: "k", accountId: "a", perMinute: 1, perDay: 1, windowMs: W, quota: null }, log, { day: utcDay(now), count: 1 }, () => undefined, now);
    expect(a.result).toEqual({
      kind: "rate_limited",
      now,
      window: "day",
      minute: { limit: 1, remaining: 0, resetAt: now + 10_000 },
      day: { limit: 1, remaining: 0, resetAt: Date.UTC(2026, 0, 2) },
      retryAfterMs: 30_000,
    });
  });
});
