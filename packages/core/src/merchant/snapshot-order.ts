/** Which of a merchant's snapshots an analysis uses: the latest period, and the one before it. */
import { parsePeriod, periodDates } from "../data/period.ts";

/** What ordering snapshots needs of them. */
export interface PeriodStamped {
  readonly period: string;
  readonly createdAt: number;
}

/** The last day of a period (`YYYY-MM-DD`, which sorts as text), or "" for an unparsable one. */
function endOf(period: string): string {
  const p = parsePeriod(period);
  return p === null ? "" : periodDates(p).end;
}

/** Orders snapshots by the end of their period, then by upload time. */
function later(a: PeriodStamped, b: PeriodStamped): boolean {
  const ea = endOf(a.period);
  const eb = endOf(b.period);
  return ea !== eb ? ea > eb : a.createdAt > b.createdAt;
}

/** The snapshot whose period ends last (2026-Q3 and 2026-09 end together: then the newer upload), or null. */
export function latestSnapshot<S extends PeriodStamped>(snapshots: readonly S[]): S | null {
  let best: S | null = null;
  for (const s of snapshots) if (best === null || later(s, best)) best = s;
  return best;
}

/**
 * The snapshot a trend compares `current` with: the latest one of the same granularity (quarters with
 * quarters, months with months) whose period is earlier; null when there is none.
 */
export function previousSnapshot<S extends PeriodStamped>(snapshots: readonly S[], current: PeriodStamped): S | null {
  const granularity = parsePeriod(current.period)?.granularity;
  let best: S | null = null;
  for (const s of snapshots) {
    // Periods of one granularity order correctly as text.
    if (parsePeriod(s.period)?.granularity !== granularity || !(s.period < current.period)) continue;
    if (best === null || s.period > best.period) best = s;
  }
  return best;
}
