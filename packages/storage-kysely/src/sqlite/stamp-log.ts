/**
 * The stored form of a run of admission stamps (a chunk of a key's log, window-chunks.ts; before schema 9,
 * a key's whole log).
 *
 * Stored form. A log of whole milliseconds whose consecutive stamps are at most 65,535 ms apart (every live
 * log of a 60-second window on a millisecond clock) is stored compactly: a tag byte 0x01, the first stamp as
 * float64 little-endian, then each gap to the next stamp as uint16 little-endian — 2 bytes a stamp instead of
 * 8, so a busy key's row stays small and a batch's commit writes less. Any other log is stored as plain
 * float64 little-endian values (as every log was before). The two cannot be confused: a compact blob's length
 * (9 + 2 × (n − 1)) is odd, a plain one's a multiple of 8.
 */
import { decodeFloat64, encodeFloat64 } from "../cells/cell-codec.ts";

const COMPACT_TAG = 0x01;
const MAX_GAP = 0xffff;
const NO_BYTES = new Uint8Array(0);

/** A log's stored bytes: compact where it can be (see above), plain float64 otherwise. */
export function encodeLog(log: ArrayLike<number>): Uint8Array {
  const n = log.length;
  if (n === 0) return NO_BYTES;
  let compact = Number.isInteger(log[0]);
  for (let i = 1; compact && i < n; i++) {
    const gap = log[i]! - log[i - 1]!;
    compact = gap >= 0 && gap <= MAX_GAP && Number.isInteger(gap);
  }
  if (!compact) return encodeFloat64(log);
  const out = new Uint8Array(9 + 2 * (n - 1));
  out[0] = COMPACT_TAG;
  new DataView(out.buffer).setFloat64(1, log[0]!, true);
  for (let i = 1, at = 9; i < n; i++, at += 2) {
    const gap = log[i]! - log[i - 1]!;
    out[at] = gap & 0xff;
    out[at + 1] = gap >>> 8;
  }
  return out;
}

/** The log stored in `bytes` (either form). */
export function decodeLog(bytes: Uint8Array): Float64Array {
  if (bytes.length % 2 === 0) return decodeFloat64(bytes);
  if (bytes[0] !== COMPACT_TAG) throw new Error(`corrupt admission log of ${bytes.length} bytes`);
  const n = (bytes.length - 9) / 2 + 1;
  const out = new Float64Array(n);
  let stamp = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getFloat64(1, true);
  out[0] = stamp;
  for (let i = 1, at = 9; i < n; i++, at += 2) out[i] = stamp += bytes[at]! | (bytes[at + 1]! << 8);
  return out;
}
