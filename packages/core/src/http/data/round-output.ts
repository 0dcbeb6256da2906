/** How numbers leave the API: rounded to 6 decimal places, so float noise never reaches clients. */

/**
 * `x` rounded to 6 decimal places (ratios keep 4 significant digits down to 0.001; money keeps its cents).
 * Percentile ranks use `roundTo1` instead.
 */
export function roundOutput(x: number): number {
  if (!Number.isFinite(x) || Math.abs(x) >= 1e9) return x;
  const r = Math.round(x * 1e6) / 1e6;
  return r === 0 ? 0 : r;
}

/** A number as JSON text (`null` when not finite, as JSON.stringify writes it). */
export function jsonNumber(x: number): string {
  return Number.isFinite(x) ? String(x) : "null";
}

// What JSON.stringify would escape in a string: quotes, backslashes, control characters and (conservatively,
// since JSON.stringify escapes lone ones) any surrogate.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as the inside of its JSON text (`JSON.stringify(s)` without the quotes). */
export function jsonInner(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s).slice(1, -1) : s;
}
