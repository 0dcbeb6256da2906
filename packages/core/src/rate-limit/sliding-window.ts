/**
 * The per-key sliding window: a log of admission times, so that in ANY rolling span of `windowMs` at most
 * `limit` requests are admitted (a fixed window, or a weighted two-window estimate, admits up to twice that
 * across a boundary). Only the newest `limit` stamps ever matter, so the log is bounded by the limit.
 *
 * This file is the window's one statement. A store keeps the log however it likes (memory: an array kept in
 * place; SQLite: fixed-size chunks) and hands it over as a `WindowLog`; `slidingWindow` decides, and
 * `recordAdmission` applies an admitted decision through the log's two writes.
 */

/**
 * A key's admission log as a store keeps it: stamps at increasing indices, ascending in time, the newest at
 * `end − 1`. Stamps older than the window may be gone; only indices from a `firstAfter` answer on are read.
 */
export interface WindowLog {
  /** One past the newest stamp's index. */
  readonly end: number;
  /** The stamp at index `i`. */
  stampAt(i: number): number;
  /** The index of the first stamp newer than `floor` (the log is ascending); `end` when none is. */
  firstAfter(floor: number): number;
}

/** A log the store lets core change: the two writes an admission makes. */
export interface MutableWindowLog extends WindowLog {
  /** The stamps before index `first` left the window: the store may forget them. */
  dropBefore(first: number): void;
  /** Stores `stamp` at index `i`; `i === end` appends (and moves `end` by one). */
  setStamp(i: number, stamp: number): void;
}

/** The result of asking the window to admit one request at `now`. */
export interface WindowDecision {
  readonly allowed: boolean;
  /** The index of the first stamp inside the window: where the log starts once the decision is applied. */
  readonly first: number;
  readonly limit: number;
  /** Requests still admissible right now after this decision. */
  readonly remaining: number;
  /** When (Unix ms) the oldest counted request leaves the window and a slot frees; `now + windowMs` when none is counted. */
  readonly resetAt: number;
  /** When refused: milliseconds until a request would be admitted (exact, > 0); 0 when allowed. */
  readonly retryAfterMs: number;
}

/** A decision over a plain array of stamps, with the log to store if it is applied. */
export interface SlidingWindowDecision extends WindowDecision {
  /** The log to store if the decision is applied (admitted stamps inside the window, ascending). */
  readonly stamps: number[];
}

/** Decides one request at `now` against a key's admission log; pure: the store applies it with `recordAdmission`. */
export function slidingWindow(log: WindowLog, now: number, limit: number, windowMs: number): WindowDecision;
/** The same over a plain array of stamps (ascending): the decision and the log to store when it is applied. */
export function slidingWindow(stamps: readonly number[], now: number, limit: number, windowMs: number): SlidingWindowDecision;
export function slidingWindow(log: WindowLog | readonly number[], now: number, limit: number, windowMs: number): WindowDecision | SlidingWindowDecision {
  if (!isArray(log)) return decide(log, now, limit, windowMs);
  const array = new ArrayWindowLog([...log]);
  const d = decide(array, now, limit, windowMs);
  if (d.allowed) recordAdmission(array, d.first, now);
  return { ...d, stamps: array.stamps.slice(d.first) };
}

function isArray(log: WindowLog | readonly number[]): log is readonly number[] {
  return Array.isArray(log);
}

function decide(log: WindowLog, now: number, limit: number, windowMs: number): WindowDecision {
  const first = log.firstAfter(now - windowMs);
  const live = log.end - first;
  if (limit <= 0) return { allowed: false, first, limit, remaining: 0, resetAt: now + windowMs, retryAfterMs: windowMs };
  if (live < limit) {
    // `now` joins the log; the oldest counted stamp is then the first live one, or `now` (also when the clock stepped back).
    const oldest = live === 0 ? now : Math.min(log.stampAt(first), now);
    return { allowed: true, first, limit, remaining: limit - live - 1, resetAt: oldest + windowMs, retryAfterMs: 0 };
  }
  // Full: a slot frees when the (live − limit + 1)-th oldest stamp leaves the window.
  const freesAt = log.stampAt(log.end - limit) + windowMs;
  return { allowed: false, first, limit, remaining: 0, resetAt: freesAt, retryAfterMs: Math.max(1, freesAt - now) };
}

/** Applies an admitted decision: the stamps before `first` leave the log, `now` joins it in order. */
export function recordAdmission(log: MutableWindowLog, first: number, now: number): void {
  log.dropBefore(first);
  const end = log.end;
  let at = end;
  // A clock that stepped back can leave stamps newer than `now`; keep the log ascending.
  while (at > first && log.stampAt(at - 1) > now) at--;
  for (let j = end; j > at; j--) log.setStamp(j, log.stampAt(j - 1));
  log.setStamp(at, now);
}

/** The window as it stands at `now`, nothing admitted: what `peekLimits` reports. */
export function windowPeek(log: WindowLog, now: number, limit: number, windowMs: number): { limit: number; remaining: number; resetAt: number } {
  const first = log.firstAfter(now - windowMs);
  const live = log.end - first;
  // The slot that frees next: the (live − limit + 1)-th oldest stamp when full, else the oldest (none: a full window from now).
  const oldest = live >= limit && limit > 0 ? log.stampAt(log.end - limit) : live > 0 ? log.stampAt(first) : now;
  return { limit, remaining: Math.max(0, limit - live), resetAt: oldest + windowMs };
}

/** The index of the first stamp at or after `from` newer than `floor`, by binary search over an ascending array. */
export function firstAfterIn(stamps: ArrayLike<number>, from: number, to: number, floor: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (stamps[mid]! <= floor) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A log kept in one array (the memory store's form): `stamps[head..]` are the kept stamps, an index is a
 * position in the array. Admissions append and advance `head` instead of copying the log.
 */
export class ArrayWindowLog implements MutableWindowLog {
  constructor(
    readonly stamps: number[],
    public head = 0,
  ) {}
  get end(): number {
    return this.stamps.length;
  }
  stampAt(i: number): number {
    return this.stamps[i]!;
  }
  firstAfter(floor: number): number {
    return firstAfterIn(this.stamps, this.head, this.stamps.length, floor);
  }
  dropBefore(first: number): void {
    this.head = first;
  }
  setStamp(i: number, stamp: number): void {
    if (i === this.stamps.length) this.stamps.push(stamp);
    else this.stamps[i] = stamp;
  }
  /** Reclaims the dropped prefix once it outweighs the kept part (amortised O(1) per admission); indices shift. */
  compact(): void {
    if (this.head < 32 || this.head * 2 < this.stamps.length) return;
    this.stamps.copyWithin(0, this.head);
    this.stamps.length -= this.head;
    this.head = 0;
  }
}
