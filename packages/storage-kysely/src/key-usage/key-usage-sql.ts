/**
 * Usage analytics in both SQL stores (tables: migration 0025-usage-analytics of each dialect): the rows a flush writes (hourly as given, daily merged here, sorted so concurrent writers lock rows in one
 * order), and the query of a breakdown. Each store runs them its own way (sqlite-key-usage.ts, postgres-key-usage.ts).
 */
import { LATENCY_BUCKETS, OUTCOME_COUNT, USAGE_OUTCOMES } from "@benchdata/core";
import type { KeyUsageBatch, KeyUsageGroup, KeyUsageQuery, KeyUsageRow, UsageOutcome } from "@benchdata/core";
import type { Row } from "../rows.ts";
import { num } from "../rows.ts";

const DAY_MS = 86_400_000;

/** The latency bucket columns, `l0` … `l13`. */
export const LATENCY_COLUMNS: readonly string[] = Array.from({ length: LATENCY_BUCKETS }, (_, i) => `l${i}`);

/** A flush's rows, each table's sorted by primary key: the hourly ones as given, the daily ones summed per UTC day. */
export function flushRows(batch: KeyUsageBatch): { hours: KeyUsageRow[]; days: KeyUsageRow[] } {
  const byDay = new Map<string, KeyUsageRow>();
  for (const r of batch.rows) {
    const day = r.hour - (r.hour % DAY_MS);
    const id = `${day} ${r.keyId} ${r.endpoint} ${r.outcome}`;
    const had = byDay.get(id);
    byDay.set(
      id,
      had === undefined
        ? { ...r, hour: day }
        : { ...had, calls: had.calls + r.calls, latency: had.latency.map((n, i) => n + (r.latency[i] ?? 0)), maxMs: Math.max(had.maxMs, r.maxMs) },
    );
  }
  const order = (a: KeyUsageRow, b: KeyUsageRow): number =>
    a.hour - b.hour || (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0) || (a.endpoint < b.endpoint ? -1 : a.endpoint > b.endpoint ? 1 : 0) || (a.outcome < b.outcome ? -1 : a.outcome > b.outcome ? 1 : 0);
  return { hours: [...batch.rows].sort(order), days: [...byDay.values()].sort(order) };
}

/** The SET list of an additive upsert of `table` (`max` is the dialect's two-argument maximum). */
export function additiveSet(table: string, max: string): string {
  return [
    `calls = ${table}.calls + excluded.calls`,
    `max_ms = ${max}(${table}.max_ms, excluded.max_ms)`,
    ...LATENCY_COLUMNS.map((c) => `${c} = ${table}.${c} + excluded.${c}`),
  ].join(", ");
}

/**
 * The SELECT of a breakdown; `bind(value)` returns the placeholder of a parameter in the store's own style.
 * `collate` is what makes text compare code unit by code unit (PostgreSQL's ` COLLATE "C"`; SQLite's default).
 */
export function breakdownSql(q: KeyUsageQuery, collate: string, bind: (value: unknown) => string): string {
  const table = q.granularity === "hour" ? "key_usage_hours" : "key_usage_days";
  const dims: string[] = ["start"];
  if (q.groupBy.key) dims.push("key_id");
  if (q.groupBy.endpoint) dims.push("endpoint");
  if (q.groupBy.outcome) dims.push("outcome");
  const ordered = dims.map((d) => (d === "start" ? d : `${d}${collate}`)).join(", ");
  const where = [`account_id = ${bind(q.accountId)}`, `start >= ${bind(q.from)}`, `start < ${bind(q.to)}`];
  if (q.keyId !== undefined) where.push(`key_id = ${bind(q.keyId)}`);
  if (q.after !== undefined) {
    const values: unknown[] = [q.after.start];
    if (q.groupBy.key) values.push(q.after.keyId ?? "");
    if (q.groupBy.endpoint) values.push(q.after.endpoint ?? "");
    if (q.groupBy.outcome) values.push(q.after.outcome ?? "");
    // A row's grouped columns are its group's: the rows past the cursor are the rows of the groups past it.
    where.push(`(${ordered}) > (${values.map((v, i) => `${bind(v)}${i === 0 ? "" : collate}`).join(", ")})`);
  }
  const select = [
    ...dims,
    ...USAGE_OUTCOMES.map((o, i) => `sum(CASE WHEN outcome = '${o}' THEN calls ELSE 0 END) AS o${i}`),
    ...LATENCY_COLUMNS.map((c) => `sum(${c}) AS ${c}`),
    "max(max_ms) AS max_ms",
  ];
  return `SELECT ${select.join(", ")} FROM ${table} WHERE ${where.join(" AND ")} GROUP BY ${dims.join(", ")} ORDER BY ${ordered} LIMIT ${bind(Math.max(0, Math.floor(q.limit)))}`;
}

/** A breakdown row as a group. */
export function groupFromRow(r: Row, q: KeyUsageQuery): KeyUsageGroup {
  return {
    start: num(r.start),
    keyId: q.groupBy.key ? String(r.key_id) : null,
    endpoint: q.groupBy.endpoint ? String(r.endpoint) : null,
    outcome: q.groupBy.outcome ? (String(r.outcome) as UsageOutcome) : null,
    outcomes: Array.from({ length: OUTCOME_COUNT }, (_, i) => num(r[`o${i}`])),
    latency: LATENCY_COLUMNS.map((c) => num(r[c])),
    maxMs: num(r.max_ms),
  };
}
