/**
 * When a failing webhook is disabled, as a pure decision every store applies inside the transaction that
 * records an attempt (memory calls it; SQLite and PostgreSQL mirror it).
 */
import type { WebhookDisabledReason } from "../events/events.ts";

/** A webhook's failure history: when its current run of failures began, and its dead deliveries in a row. */
export interface WebhookHealth {
  readonly failingSince: number | null;
  readonly deadStreak: number;
}

/**
 * The history after an attempt made at `at`, and whether the (active) webhook is now disabled: at once on
 * `gone` (410); else once every attempt has failed for `disableAfterMs`, or after `disableAfterDead` dead
 * deliveries in a row (each 0: never). A success clears the history.
 */
export function webhookHealthAfter(
  h: WebhookHealth,
  a: { readonly succeeded: boolean; readonly dead: boolean; readonly gone: boolean; readonly at: number },
  policy: { readonly disableAfterMs: number; readonly disableAfterDead: number },
): WebhookHealth & { readonly disable: WebhookDisabledReason | null } {
  if (a.succeeded) return { failingSince: null, deadStreak: 0, disable: null };
  const failingSince = h.failingSince ?? a.at;
  const deadStreak = h.deadStreak + (a.dead || a.gone ? 1 : 0);
  let disable: WebhookDisabledReason | null = null;
  if (a.gone) disable = "gone";
  else if (policy.disableAfterMs > 0 && a.at - failingSince >= policy.disableAfterMs) disable = "failing";
  else if (policy.disableAfterDead > 0 && deadStreak >= policy.disableAfterDead) disable = "dead_deliveries";
  return { failingSince, deadStreak, disable };
}

/**
 * The start of a run of failures once its account, suspended at `suspendedAt`, is resumed at `now`: moved
 * forward by the time suspended (no attempt is made meanwhile, so the pause must not count toward
 * `disableAfterMs`), never past `now`.
 */
export function failingSinceAfterPause(failingSince: number | null, suspendedAt: number, now: number): number | null {
  return failingSince === null ? null : Math.min(failingSince + Math.max(0, now - suspendedAt), now);
}
