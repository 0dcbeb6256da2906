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
