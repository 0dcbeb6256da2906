/**
 * `x` rounded to one decimal, judged on its exact binary value with ties away from zero
 * (so 1.15, stored as 1.1499…, gives 1.1 where `Math.round(x * 10) / 10` would give 1.2).
 */
export function roundTo1(x: number): number {
  if (!Number.isFinite(x)) return x;
  // toFixed rounds the exact value of the double, which a multiply-then-round cannot.
  const r = Number(x.toFixed(1));
  return r === 0 ? 0 : r;
}
