/**
 * The per-key sliding window: a log of admission times, so that in ANY rolling span of `windowMs` at most
 * `limit` requests are admitted (a fixed window, or a weighted two-window estimate, admits up to twice that
 * across a boundary). Only the newest `limit` stamps ever matter, so the log is bounded by the limit.
 */

/** The result of asking the window to admit one request at `now`. */
export interface SlidingWindowDecision {
  readonly allowed: boolean;
  /** The log to store if the decision is applied (admitted stamps inside the window, ascending, at most `limit`). */
  readonly stamps: number[];
  readonly limit: number;
  /** Requests still admissible right now after this decision. */
  readonly remaining: number;
  /** When (Unix ms) the oldest counted request leaves the window and a slot frees; `now + windowMs` when none is counted. */
  readonly resetAt: number;
  /** When refused: milliseconds until a request would be admitted (exact, > 0); 0 when allowed. */
  readonly retryAfterMs: number;
}

/** Decides one request against a key's admission log; pure: the caller stores `stamps` atomically when it applies the decision. */
export function slidingWindow(stamps: readonly number[], now: number, limit: number, windowMs: number): SlidingWindowDecision {
  const floor = now - windowMs;
  let first = 0;
  while (first < stamps.length && stamps[first]! <= floor) first++;
  const live = stamps.slice(first);
  if (limit <= 0) {
    return { allowed: false, stamps: live, limit, remaining: 0, resetAt: now + windowMs, retryAfterMs: windowMs };
  }
  if (live.length < limit) {
    live.push(now);
    // A clock that stepped back can leave a stamp newer than `now`; keep the log ordered.
    if (live.length > 1 && live[live.length - 2]! > now) live.sort((a, b) => a - b);
    if (live.length > limit) live.splice(0, live.length - limit);
    return { allowed: true, stamps: live, limit, remaining: limit - live.length, resetAt: live[0]! + windowMs, retryAfterMs: 0 };
  }
  // Full: a slot frees when the (len - limit + 1)-th oldest stamp leaves the window.
  const freesAt = live[live.length - limit]! + windowMs;
  return { allowed: false, stamps: live, limit, remaining: 0, resetAt: freesAt, retryAfterMs: Math.max(1, freesAt - now) };
}
