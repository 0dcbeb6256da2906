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

/** The first and last day of a period as ISO dates (`YYYY-MM-DD`, both inclusive): 2026-Q3 → 2026-07-01 to 2026-09-30. */
export function periodDates(p: Period): { readonly start: string; readonly end: string } {
  const first = p.granularity === "quarterly" ? (p.index - 1) * 3 + 1 : p.index;
  const last = p.granularity === "quarterly" ? p.index * 3 : p.index;
  const leap = (p.year % 4 === 0 && p.year % 100 !== 0) || p.year % 400 === 0;
  const lastDay = last === 2 ? (leap ? 29 : 28) : last === 4 || last === 6 || last === 9 || last === 11 ? 30 : 31;
  const pad = (n: number): string => String(n).padStart(2, "0");
  const year = String(p.year).padStart(4, "0");
  return { start: `${year}-${pad(first)}-01`, end: `${year}-${pad(last)}-${pad(lastDay)}` };
}
