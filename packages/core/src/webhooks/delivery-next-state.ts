/** The retry schedule of webhook deliveries as a pure decision. */

/** What becomes of a delivery after an attempt. */
export type DeliveryNext = { readonly status: "succeeded" } | { readonly status: "dead" } | { readonly status: "pending"; readonly at: number };

/**
 * The state after attempt number `attempt` (1-based) ended at `now`. `retryDelaysSeconds[i]` is the delay
 * before attempt i+1 (the first is 0, immediate), so the list's length is the number of attempts: after a
 * failed attempt n, attempt n+1 is due `retryDelaysSeconds[n]` seconds later, and after the last the
 * delivery is dead. With the defaults [0, 30, 300, 1800, 7200]: five attempts, never a sixth.
 */
export function deliveryNextState(attempt: number, succeeded: boolean, now: number, retryDelaysSeconds: readonly number[]): DeliveryNext {
  if (succeeded) return { status: "succeeded" };
  const delay = retryDelaysSeconds[attempt];
  if (delay === undefined) return { status: "dead" };
  return { status: "pending", at: now + Math.round(delay * 1000) };
}

/**
 * The wait a `Retry-After` header asks for, in ms from `now`: delay-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`); null when absent or unreadable. A date in the past asks for no wait.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (typeof value !== "string") return null;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  if (!/[A-Za-z]/.test(v)) return null;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * The state after a failed attempt whose receiver asked to wait (429 or 503 with `Retry-After`): the next
 * attempt is no earlier than the schedule's and no earlier than the receiver asked, but never later than the
 * schedule's last step after `now`. It still counts: after the last attempt the delivery is dead.
 */
export function deliveryNextStateAfterWait(attempt: number, now: number, retryDelaysSeconds: readonly number[], waitMs: number): DeliveryNext {
  const next = deliveryNextState(attempt, false, now, retryDelaysSeconds);
  if (next.status !== "pending") return next;
  const capMs = Math.round(Math.max(...retryDelaysSeconds) * 1000);
  return { status: "pending", at: Math.max(next.at, now + Math.min(waitMs, capMs)) };
}
