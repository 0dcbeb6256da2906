/** A RandomSource that draws from a refilled pool, so minting identifiers costs no system call per byte. */
import type { RandomSource } from "../clock/clock.ts";

/** Serves small requests from a pool of `size` bytes filled from `source`; large ones go straight to it. */
export function pooledRandom(source: RandomSource, size: number = 4096): RandomSource {
  const pool = new Uint8Array(size);
  let at = size;
  return {
    fill(bytes) {
      const n = bytes.length;
      if (n > size >> 2) return source.fill(bytes);
      if (at + n > size) {
        source.fill(pool);
        at = 0;
      }
      if (n === 1) bytes[0] = pool[at] as number;
      else bytes.set(pool.subarray(at, at + n));
      at += n;
      return bytes;
    },
  };
}
