/**
 * core's `slidingWindow` over an admission log kept as a Float64Array (ascending; stored as float64
 * little-endian bytes) without turning it into a JavaScript array and back: the hot path decides and writes
 * one log per request.
 */
import { encodeFloat64 } from "../cells/cell-codec.ts";

const LITTLE_ENDIAN = new Uint8Array(new Float64Array([1]).buffer)[7] === 0x3f;

/** A log's bytes as stored (float64 little-endian): a view of the array itself where the machine is little-endian. */
export function logBytes(log: Float64Array): Uint8Array {
  return LITTLE_ENDIAN ? new Uint8Array(log.buffer, log.byteOffset, log.byteLength) : encodeFloat64(log);
}

/** What `windowOverLog` decided: the same figures as core's SlidingWindowDecision, and the log to store when allowed. */
export interface LogDecision {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly resetAt: number;
  readonly retryAfterMs: number;
  /** The new log (the live stamps and `now`, ascending), or null when refused. */
  readonly log: Float64Array | null;
}

/** Decides one request at `now` against a log exactly as core's `slidingWindow` does. */
export function windowOverLog(stamps: Float64Array, now: number, limit: number, windowMs: number): LogDecision {
  const n = stamps.length;
  const floor = now - windowMs;
  // The log is ascending: binary search for the first stamp inside the window.
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (stamps[mid]! <= floor) lo = mid + 1;
    else hi = mid;
  }
  const live = n - lo;
  if (limit <= 0) return { allowed: false, remaining: 0, resetAt: now + windowMs, retryAfterMs: windowMs, log: null };
  if (live < limit) {
    const out = new Float64Array(live + 1);
    // `now` goes in order (a clock that stepped back can leave newer stamps in the log).
    let at = n;
    while (at > lo && stamps[at - 1]! > now) at--;
    out.set(stamps.subarray(lo, at), 0);
    out[at - lo] = now;
    out.set(stamps.subarray(at, n), at - lo + 1);
    return {
      allowed: true,
      remaining: limit - (live + 1),
      resetAt: out[0]! + windowMs,
      retryAfterMs: 0,
      log: out,
    };
  }
  // Full: a slot frees when the (live - limit + 1)-th oldest stamp leaves the window.
  const freesAt = stamps[n - limit]! + windowMs;
  return { allowed: false, remaining: 0, resetAt: freesAt, retryAfterMs: Math.max(1, freesAt - now), log: null };
}
