import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RecoverBudget, RecoverPolicy } from "./recover-budget.ts";
import { afterRecover, RECOVER_WINDOW_MS, recoverStep } from "./recover-budget.ts";

const T = Date.parse("2026-11-27T08:00:00Z");

describe("recoverStep", () => {
  it("opens a window at the first call, counts calls and re-queued deliveries in it, and refuses until it ends", () => {
    const policy: RecoverPolicy = { callsPerHour: 2, deliveriesPerHour: 100 };
    const first = recoverStep(null, T, policy);
    expect(first).toEqual({ kind: "allowed", limit: 100, budget: { windowStart: T, calls: 0, requeued: 0 } });
    if (first.kind !== "allowed") throw new Error("unreachable");
    const b1 = afterRecover(first, 60);
    expect(b1).toEqual({ windowStart: T, calls: 1, requeued: 60 });
    const second = recoverStep(b1, T + 10, policy);
    expect(second).toEqual({ kind: "allowed", limit: 40, budget: b1 });
    if (second.kind !== "allowed") throw new Error("unreachable");
    // A store reporting more than the limit cannot overdraw the budget.
    const b2 = afterRecover(second, 1000);
    expect(b2).toEqual({ windowStart: T, calls: 2, requeued: 100 });
    expect(recoverStep(b2, T + 20, policy)).toEqual({ kind: "refused", reason: "calls", retryAt: T + RECOVER_WINDOW_MS });
    expect(recoverStep({ ...b2, calls: 1 }, T + 20, policy)).toEqual({ kind: "refused", reason: "deliveries", retryAt: T + RECOVER_WINDOW_MS });
    expect(recoverStep(b2, T + RECOVER_WINDOW_MS, policy)).toMatchObject({ kind: "allowed", limit: 100, budget: { windowStart: T + RECOVER_WINDOW_MS, calls: 0 } });
  });

  it("a clock behind the one that opened the window does not open a fresh budget early", () => {
    const spent: RecoverBudget = { windowStart: T, calls: 10, requeued: 0 };
    expect(recoverStep(spent, T - 5_000, { callsPerHour: 10, deliveriesPerHour: 1000 })).toEqual({ kind: "refused", reason: "calls", retryAt: T + RECOVER_WINDOW_MS });
  });

  it("property: whatever the calls' times and what each re-queues, no window lets through more calls or deliveries than the policy, and windows never overlap", () => {
    fc.assert(
      fc.property(
        fc.record({ callsPerHour: fc.integer({ min: 1, max: 12 }), deliveriesPerHour: fc.integer({ min: 1, max: 2000 }) }),
        fc.array(fc.record({ dt: fc.integer({ min: -60_000, max: 40 * 60_000 }), found: fc.integer({ min: 0, max: 3000 }) }), { maxLength: 80 }),
        (policy, calls) => {
          let stored: RecoverBudget | null = null;
          let now = T;
          const windows = new Map<number, { calls: number; requeued: number }>();
          for (const c of calls) {
            now += c.dt;
            const step = recoverStep(stored, now, policy);
            if (step.kind === "refused") {
              expect(step.retryAt).toBeGreaterThan(now);
              continue;
            }
            expect(step.limit).toBeGreaterThan(0);
            // The store re-queues what it finds, at most the step's limit.
            const requeued = Math.min(c.found, step.limit);
            const next = afterRecover(step, requeued);
            if (stored !== null && next.windowStart !== stored.windowStart) expect(next.windowStart).toBeGreaterThanOrEqual(stored.windowStart + RECOVER_WINDOW_MS);
            stored = next;
            const w = windows.get(next.windowStart) ?? { calls: 0, requeued: 0 };
            w.calls += 1;
            w.requeued += requeued;
            windows.set(next.windowStart, w);
          }
          for (const w of windows.values()) {
            expect(w.calls).toBeLessThanOrEqual(policy.callsPerHour);
            expect(w.requeued).toBeLessThanOrEqual(policy.deliveriesPerHour);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
