import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { QuotaPlan, QuotaState } from "./quota.ts";
import type { ChargeRequest } from "./quota.ts";
import {
  allowance,
  chargeIdempotencyKey,
  EMPTY_QUOTA,
  quotaChargeFailed,
  quotaChargeSucceeded,
  quotaManualCharge,
  quotaReleaseHold,
  quotaRequest,
  warningThreshold,
} from "./quota.ts";
import { billingPeriod } from "./billing-period.ts";

const plan: QuotaPlan = { baseQuota: 20, blockSize: 10, blockPrice: 1000, retryAfterFailureMs: 3_600_000, maxAutoCharges: 3 };

describe("quota state machine", () => {
  it("warns on the 16th of 20, allows the 20th, exhausts on the 21st with one charge, refuses after without another", () => {
    let s: QuotaState = EMPTY_QUOTA;
    const warns: number[] = [];
    for (let i = 1; i <= 20; i++) {
      const step = quotaRequest(plan, s, i);
      expect(step.kind).toBe("allow");
      if (step.kind === "allow" && step.warn !== null) warns.push(i);
      s = step.state;
    }
    expect(warns).toEqual([16]);
    const flip = quotaRequest(plan, s, 21);
    expect(flip).toMatchObject({ kind: "exhausted", flipped: true, charge: { block: 1, attempt: 1, amount: 1000 } });
    s = flip.state;
    const again = quotaRequest(plan, s, 22);
    expect(again).toMatchObject({ kind: "exhausted", flipped: false, charge: null });
    s = quotaChargeSucceeded(s, 1);
    expect(allowance(plan, s)).toBe(30);
    const resumed = quotaRequest(plan, s, 23);
    expect(resumed).toMatchObject({ kind: "allow", used: 21, allowance: 30 });
  });

  it("warning thresholds: 80% of the base, then 80% of each block", () => {
    const hits = [];
    for (let used = 1; used <= 50; used++) if (warningThreshold(plan, used) !== null) hits.push(used);
    expect(hits).toEqual([16, 28, 38, 48]);
    expect(warningThreshold({ ...plan, baseQuota: 100_000, blockSize: 10_000 }, 80_000)).toBe(80_000);
    expect(warningThreshold({ ...plan, baseQuota: 7 }, 6)).toBe(6);
  });

  it("after a failed charge: stays exhausted, retries only after the delay, with a new attempt number, up to the cap", () => {
    let s = quotaRequest(plan, { ...EMPTY_QUOTA, used: 20 }, 0).state;
    s = quotaChargeFailed(s, 1, 100);
    expect(s.exhausted).toBe(true);
    expect(quotaRequest(plan, s, 100 + 3_599_999)).toMatchObject({ charge: null, heldForReview: false });
    const retry = quotaRequest(plan, s, 100 + 3_600_000);
    expect(retry).toMatchObject({ charge: { block: 1, attempt: 2 } });
    s = quotaChargeFailed(retry.state, 1, 4_000_000);
    const third = quotaRequest(plan, s, 8_000_000);
    expect(third).toMatchObject({ charge: { block: 1, attempt: 3 } });
    s = quotaChargeFailed(third.state, 1, 8_000_000);
    expect(quotaRequest(plan, s, 99_000_000)).toMatchObject({ kind: "exhausted", charge: null, heldForReview: true });
  });

  it("stale outcomes (for another block) change nothing", () => {
    const s = quotaRequest(plan, { ...EMPTY_QUOTA, used: 20 }, 0).state;
    expect(quotaChargeSucceeded(s, 2)).toBe(s);
    expect(quotaChargeFailed(s, 3, 1)).toBe(s);
  });

  it("idempotency keys derive from account, period and block; a new attempt after a definite failure gets its own", () => {
    expect(chargeIdempotencyKey("acc_1", "2026-11-01T00:00:00.000Z", 1, 1)).toBe("benchdata:acc_1:2026-11-01T00:00:00.000Z:block-1");
    expect(chargeIdempotencyKey("acc_1", "2026-11-01T00:00:00.000Z", 1, 2)).toBe("benchdata:acc_1:2026-11-01T00:00:00.000Z:block-1:attempt-2");
  });

  type Action = { kind: "req" } | { kind: "pay" } | { kind: "fail" } | { kind: "wait"; ms: number };
  const actionArb: fc.Arbitrary<Action> = fc.oneof(
    { weight: 8, arbitrary: fc.constant({ kind: "req" } as Action) },
    { weight: 1, arbitrary: fc.constant({ kind: "pay" } as Action) },
    { weight: 1, arbitrary: fc.constant({ kind: "fail" } as Action) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 4_000_000 }).map((ms) => ({ kind: "wait", ms }) as Action) },
  );

  it("property: never more than one charge outstanding, used never exceeds the allowance, each warning fires once, paid blocks reopen access", () => {
    fc.assert(
      fc.property(fc.array(actionArb, { maxLength: 300 }), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 15 }), (actions, base, block) => {
        const p: QuotaPlan = { ...plan, baseQuota: base, blockSize: block };
        let s: QuotaState = EMPTY_QUOTA;
        let now = 0;
        let outstanding: number | null = null;
        const warned = new Set<number>();
        let allowed = 0;
        for (const a of actions) {
          if (a.kind === "wait") now += a.ms;
          else if (a.kind === "req") {
            const step = quotaRequest(p, s, now);
            if (step.kind === "allow") {
              allowed++;
              if (step.warn !== null) {
                if (warned.has(step.warn)) return false;
                warned.add(step.warn);
              }
            } else if (step.charge) {
              if (outstanding !== null) return false; // a second charge while one is outstanding
              outstanding = step.charge.block;
              if (step.charge.block !== s.blocks + 1) return false;
            }
            s = step.state;
          } else if (outstanding !== null) {
            s = a.kind === "pay" ? quotaChargeSucceeded(s, outstanding) : quotaChargeFailed(s, outstanding, now);
            if (a.kind === "pay" && quotaRequest(p, s, now).kind !== "allow") return false;
            outstanding = null;
          }
          if (s.used > allowance(p, s)) return false;
          if (s.used !== allowed) return false;
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });
});

describe("billing periods", () => {
  it("are calendar months in UTC by default", () => {
    expect(billingPeriod(Date.UTC(2026, 10, 22, 13))).toEqual({ start: Date.UTC(2026, 10, 1), end: Date.UTC(2026, 11, 1) });
    expect(billingPeriod(Date.UTC(2026, 11, 31, 23, 59))).toEqual({ start: Date.UTC(2026, 11, 1), end: Date.UTC(2027, 0, 1) });
  });

  it("start on the anchor day, clamped to short months", () => {
    expect(billingPeriod(Date.UTC(2026, 10, 22), 15)).toEqual({ start: Date.UTC(2026, 10, 15), end: Date.UTC(2026, 11, 15) });
    expect(billingPeriod(Date.UTC(2026, 10, 10), 15)).toEqual({ start: Date.UTC(2026, 9, 15), end: Date.UTC(2026, 10, 15) });
    expect(billingPeriod(Date.UTC(2027, 1, 28, 12), 31)).toEqual({ start: Date.UTC(2027, 1, 28), end: Date.UTC(2027, 2, 31) });
    expect(billingPeriod(Date.UTC(2026, 0, 5), 10)).toEqual({ start: Date.UTC(2025, 11, 10), end: Date.UTC(2026, 0, 10) });
  });

  it("property: every instant lies in its period, and consecutive periods touch", () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }), fc.integer({ min: 1, max: 31 }), (t, anchor) => {
        const p = billingPeriod(t, anchor);
        const next = billingPeriod(p.end, anchor);
        return p.start <= t && t < p.end && next.start === p.end;
      }),
    );
  });
});

/** One thing that can happen to a period's quota: a live request, a charge's outcome, time passing, a person acting. */
type Event =
  | { readonly kind: "request" }
  | { readonly kind: "settle"; readonly paid: boolean }
  | { readonly kind: "wait"; readonly ms: number }
  | { readonly kind: "manual" }
  | { readonly kind: "release" };

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  { weight: 10, arbitrary: fc.constant({ kind: "request" as const }) },
  { weight: 3, arbitrary: fc.boolean().map((paid) => ({ kind: "settle" as const, paid })) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 5_000 }).map((ms) => ({ kind: "wait" as const, ms })) },
  { weight: 1, arbitrary: fc.constant({ kind: "manual" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "release" as const }) },
);

const planArb: fc.Arbitrary<QuotaPlan> = fc.record({
  baseQuota: fc.integer({ min: 0, max: 12 }),
  // 0 is the reported bug (admin API accepted it); the machine must stay safe even if a caller passes it.
  blockSize: fc.integer({ min: 0, max: 5 }),
  blockPrice: fc.integer({ min: 0, max: 50_000 }),
  retryAfterFailureMs: fc.integer({ min: 0, max: 3_000 }),
  maxAutoCharges: fc.integer({ min: 0, max: 6 }),
});

describe("quota state machine: money (issue 20)", () => {
  it("reproduction: a block of size 0 never charges — 3 calls, then 8 refusals, no charge, one hold", () => {
    const zero: QuotaPlan = { baseQuota: 3, blockSize: 0, blockPrice: 20_000, retryAfterFailureMs: 3_600_000, maxAutoCharges: 10 };
    let s: QuotaState = EMPTY_QUOTA;
    const kinds: string[] = [];
    const charges: ChargeRequest[] = [];
    const holds: string[] = [];
    for (let i = 0; i < 11; i++) {
      const step = quotaRequest(zero, s, i);
      kinds.push(step.kind);
      if (step.kind === "exhausted") {
        if (step.charge) charges.push(step.charge);
        if (step.heldNow) holds.push(step.heldNow);
      }
      s = step.state;
    }
    expect(kinds).toEqual([...Array(3).fill("allow"), ...Array(8).fill("exhausted")]);
    expect(charges).toEqual([]);
    expect(holds).toEqual(["block_buys_nothing"]);
    expect(quotaManualCharge(zero, s)).toBeNull();
  });

  it("property: paid charges never exceed what the calls beyond the quota require, every charge buys a call, and at most maxAutoCharges start by themselves", () => {
    fc.assert(
      fc.property(planArb, fc.array(eventArb, { maxLength: 120 }), (plan, events) => {
        let s: QuotaState = EMPTY_QUOTA;
        let now = 0;
        let demand = 0; // live requests made, admitted or refused
        let paid = 0;
        let automatic = 0; // charges started by requests since the last release
        let holds = 0;
        let outstanding: ChargeRequest | null = null;
        for (const e of events) {
          if (e.kind === "request") {
            demand += 1;
            const step = quotaRequest(plan, s, now);
            if (step.kind === "exhausted") {
              if (step.charge) {
                expect(outstanding).toBeNull();
                // The block buys at least one call: the allowance after it exceeds the calls used.
                expect(plan.blockSize).toBeGreaterThanOrEqual(1);
                expect(allowance(plan, { ...s, blocks: step.charge.block })).toBeGreaterThan(s.used);
                outstanding = step.charge;
                automatic += 1;
              }
              if (step.heldNow) holds += 1;
            }
            s = step.state;
          } else if (e.kind === "settle" && outstanding) {
            if (e.paid) {
              s = quotaChargeSucceeded(s, outstanding.block);
              paid += 1;
            } else s = quotaChargeFailed(s, outstanding.block, now);
            outstanding = null;
          } else if (e.kind === "wait") {
            now += e.ms;
          } else if (e.kind === "manual") {
            const m = quotaManualCharge(plan, s);
            if (m) {
              expect(outstanding).toBeNull();
              expect(allowance(plan, { ...s, blocks: m.charge.block })).toBeGreaterThan(s.used);
              outstanding = m.charge;
              s = m.state;
            }
          } else if (e.kind === "release") {
            s = quotaReleaseHold(s);
            automatic = 0;
            holds = 0;
          }
          expect(automatic).toBeLessThanOrEqual(plan.maxAutoCharges);
          // A hold is announced at most once until it is released.
          expect(holds).toBeLessThanOrEqual(1);
          // Calls admitted never exceed the allowance bought.
          expect(s.used).toBeLessThanOrEqual(allowance(plan, s));
        }
        const beyond = Math.max(0, demand - plan.baseQuota);
        const required = plan.blockSize >= 1 ? Math.ceil(beyond / plan.blockSize) : 0;
        expect(paid).toBeLessThanOrEqual(required);
      }),
      { numRuns: 2000 },
    );
  });
});
