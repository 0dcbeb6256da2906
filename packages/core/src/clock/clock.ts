/** Time and randomness as capabilities, so decisions never read the wall clock or a global RNG themselves. */

/** A source of the current time in Unix milliseconds. */
export interface Clock {
  now(): number;
}

/** A source of cryptographically strong random bytes. */
export interface RandomSource {
  /** Fills `bytes` with random bytes and returns it. */
  fill(bytes: Uint8Array): Uint8Array;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** Web Crypto's `getRandomValues`, available in every runtime benchdata supports. */
export const cryptoRandom: RandomSource = {
  fill(bytes) {
    // getRandomValues refuses more than 65536 bytes at once.
    for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
    return bytes;
  },
};

/** A clock that only moves when told to: for tests and simulations. */
export interface ManualClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
}

/** Creates a ManualClock starting at `start` (Unix ms). */
export function manualClock(start: number): ManualClock {
  let t = start;
  return {
    now: () => t,
    set(ms) {
      t = ms;
    },
    advance(ms) {
      t += ms;
    },
  };
}

const ISO_FIELDS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/;

/**
 * Whether an ISO 8601 timestamp names a time that exists: a day the month has (no 2026-02-30, which
 * `Date.parse` would silently move to 2 March), hours 0-23, minutes and seconds 0-59. Checks the fields only;
 * the form itself is the caller's schema's.
 */
export function isCalendarTime(text: string): boolean {
  const m = ISO_FIELDS.exec(text);
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? "0"].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return false;
  return day >= 1 && new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
}

/** ISO 8601 UTC with milliseconds and `Z`, the contract's timestamp form. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
