/** Billing periods: calendar months in UTC, or months starting on an operator-chosen anchor day. */

/** A billing period as Unix ms bounds, [start, end). */
export interface BillingPeriod {
  readonly start: number;
  readonly end: number;
}

function anchored(year: number, month: number, anchorDay: number): number {
  // An anchor past the month's end (e.g. 31 in February) falls on the month's last day.
  const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(year, month, Math.min(anchorDay, last));
}

/** The billing period containing `now`; `anchorDay` 1 gives calendar months. */
export function billingPeriod(now: number, anchorDay: number = 1): BillingPeriod {
  const d = new Date(now);
  let y = d.getUTCFullYear();
  let m = d.getUTCMonth();
  let start = anchored(y, m, anchorDay);
  if (start > now) {
    m -= 1;
    if (m < 0) {
      m = 11;
      y -= 1;
    }
    start = anchored(y, m, anchorDay);
  }
  const nm = m === 11 ? 0 : m + 1;
  const ny = m === 11 ? y + 1 : y;
  return { start, end: anchored(ny, nm, anchorDay) };
}
