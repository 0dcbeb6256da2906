/**
 * How much `POST /webhooks/{id}/recover` may re-queue, as a pure decision every store applies inside the
 * transaction that re-queues (docs/webhooks.md, "Recovering failed deliveries"). An account has an hourly
 * budget: at most `callsPerHour` calls and `deliveriesPerHour` re-queued deliveries, counted in a window that
 * opens at the first call after the previous one closed. The deliveries bound is what a receiver can be sent
 * because of recover calls, however many webhooks or calls there are; one call takes what is left of it.
 */

/** The account's budget as the store keeps it: when its window opened, and what was spent in it. */
export interface RecoverBudget {
  readonly windowStart: number;
  readonly calls: number;
  readonly requeued: number;
}

/** The operator's limits on recover calls (config `webhooks.recoverCallsPerHour` and `webhooks.recoverDeliveriesPerHour`). */
export interface RecoverPolicy {
  readonly callsPerHour: number;
  readonly deliveriesPerHour: number;
}

/** The length of a budget's window. */
export const RECOVER_WINDOW_MS = 3_600_000;

/** What a recover call at `now` may do: re-queue up to `limit` (then record `afterRecover`), or nothing until `retryAt`. */
export type RecoverStep =
  | { readonly kind: "allowed"; readonly limit: number; readonly budget: RecoverBudget }
  | { readonly kind: "refused"; readonly reason: "calls" | "deliveries"; readonly retryAt: number };

/** The decision for a call at `now` over the stored budget (null: none yet); a refusal changes nothing. */
export function recoverStep(stored: RecoverBudget | null, now: number, policy: RecoverPolicy): RecoverStep {
  // A window stays open until it ends, even for a caller whose clock is behind the one that opened it: a skewed
  // instance must not open a fresh budget early.
  const open = stored !== null && now < stored.windowStart + RECOVER_WINDOW_MS;
  const budget: RecoverBudget = open ? stored : { windowStart: now, calls: 0, requeued: 0 };
  const retryAt = budget.windowStart + RECOVER_WINDOW_MS;
  if (budget.calls >= policy.callsPerHour) return { kind: "refused", reason: "calls", retryAt };
  if (budget.requeued >= policy.deliveriesPerHour) return { kind: "refused", reason: "deliveries", retryAt };
  return { kind: "allowed", limit: policy.deliveriesPerHour - budget.requeued, budget };
}

/** The budget to store after an allowed call re-queued `requeued` deliveries (at most its `limit`). */
export function afterRecover(step: Extract<RecoverStep, { kind: "allowed" }>, requeued: number): RecoverBudget {
  const b = step.budget;
  return { windowStart: b.windowStart, calls: b.calls + 1, requeued: b.requeued + Math.min(requeued, step.limit) };
}
