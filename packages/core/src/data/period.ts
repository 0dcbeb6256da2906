/** Benchmark periods: quarterly `YYYY-Qn` and monthly `YYYY-MM`, as the contract fixes them. */

/** How a period is counted. */
export type Granularity = "quarterly" | "monthly";

/** A parsed period: its granularity, year and index within the year (quarter 1–4 or month 1–12). */
export interface Period {
  readonly granularity: Granularity;
  readonly year: number;
  readonly index: number;
}

const QUARTER = /^(\d{4})-Q([1-4])$/;
const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** Parses `YYYY-Qn` or `YYYY-MM`; anything else gives `null`. */
export function parsePeriod(text: string): Period | null {
  let m = QUARTER.exec(text);
  if (m) return { granularity: "quarterly", year: Number(m[1]), index: Number(m[2]) };
  m = MONTH.exec(text);
  if (m) return { granularity: "monthly", year: Number(m[1]), index: Number(m[2]) };
  return null;
}

/** The canonical text of a period. */
export function formatPeriod(p: Period): string {
  return p.granularity === "quarterly"
    ? `${p.year}-Q${p.index}`
    : `${p.year}-${String(p.index).padStart(2, "0")}`;
}

/** The period `steps` after `p` (negative goes back). */
export function shiftPeriod(p: Period, steps: number): Period {
  const per = p.granularity === "quarterly" ? 4 : 12;
  const ordinal = p.year * per + (p.index - 1) + steps;
  return { granularity: p.granularity, year: Math.floor(ordinal / per), index: (ordinal % per) + 1 };
}

/** Orders two period strings of one granularity (their canonical texts sort correctly). */
export function comparePeriods(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
