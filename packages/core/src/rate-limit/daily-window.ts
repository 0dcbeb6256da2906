/** The per-account UTC-day limit beside the per-key window. */

const DAY_MS = 86_400_000;

/** The UTC day number (days since the epoch) of a time. */
export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/**
 * The id of an account's daily counter for an environment: the account's own id for live keys, `<account>/test`
 * for test keys. Each environment counts its own day (issue 20, item 2), so test traffic (whose keys sit in
 * browser code) can never use up the day of the account's live keys.
 */
export function dayCounterId(accountId: string, environment: "live" | "test" | undefined): string {
  return environment === "test" ? `${accountId}/test` : accountId;
}

/** The result of asking the daily counter to admit one request. */
export interface DailyDecision {
  readonly allowed: boolean;
  /** The day and count to store if the decision is applied. */
  readonly day: number;
  readonly count: number;
  readonly limit: number;
  readonly remaining: number;
  /** The next UTC midnight (Unix ms), when the count starts again. */
  readonly resetAt: number;
  /** When refused: milliseconds until the next UTC midnight; 0 when allowed. */
  readonly retryAfterMs: number;
}

/**
 * The day a request at `now` counts toward: its own UTC day, or the stored counter's when that is later. The
 * counter keeps one day and never moves back: a clock that steps back over midnight (NTP, or instances whose
 * clocks differ by milliseconds) would otherwise restart the day it left at 0 and, on the way forward again,
 * the later day too, admitting more than the limit and overwriting the kept history of the day it left.
 * Counting such a request toward the later day is the conservative answer (docs/architecture.md, "Admission").
 */
export function countedDay(storedDay: number | undefined, now: number): number {
  const day = utcDay(now);
  return storedDay !== undefined && storedDay > day ? storedDay : day;
}

/** Decides one request against the account's count for its current UTC day (`countedDay`); pure. */
export function dailyWindow(storedDay: number, storedCount: number, now: number, limit: number): DailyDecision {
  const day = countedDay(storedDay, now);
  const count = storedDay === day ? storedCount : 0;
  const resetAt = (day + 1) * DAY_MS;
  if (count >= limit) {
    return { allowed: false, day, count, limit, remaining: 0, resetAt, retryAfterMs: Math.max(1, resetAt - now) };
  }
  return { allowed: true, day, count: count + 1, limit, remaining: limit - count - 1, resetAt, retryAfterMs: 0 };
}

/** The day as it stands at `now`, nothing admitted: what `peekLimits` reports (a stored count of an earlier day is 0). */
export function dailyPeek(storedDay: number | undefined, storedCount: number, now: number, limit: number): { limit: number; remaining: number; resetAt: number } {
  const day = countedDay(storedDay, now);
  const count = storedDay === day ? storedCount : 0;
  return { limit, remaining: Math.max(0, limit - count), resetAt: (day + 1) * DAY_MS };
}
