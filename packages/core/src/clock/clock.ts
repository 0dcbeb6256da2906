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

/** ISO 8601 UTC with milliseconds and `Z`, the contract's timestamp form. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
