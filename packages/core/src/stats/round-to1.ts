/**
 * `x` rounded to one decimal, judged on its exact binary value with ties away from zero
 * (so 1.15, stored as 1.1499…, gives 1.1 where `Math.round(x * 10) / 10` would give 1.2).
 */
export function roundTo1(x: number): number {
  const y = x * 10;
  // Away from a tie, the product decides: its rounding error (at most |y|·2⁻⁵³, under 2e-4 below 1e12) cannot
  // carry it across the half, so it rounds to the tenth x's exact value rounds to, and r / 10 is the double
  // nearest that tenth, as parsing toFixed's text gives. This path is a large share of a percentile request.
  if (Math.abs(y) < 1e12) {
    const r = Math.round(y);
    if (Math.abs(y - r) < 0.499) return r === 0 ? 0 : r / 10;
  }
  if (!Number.isFinite(x)) return x;
  // Near a tie (or at huge magnitudes) toFixed rounds the exact value of the double, which a multiply cannot.
  const r = Number(x.toFixed(1));
  return r === 0 ? 0 : r;
}
