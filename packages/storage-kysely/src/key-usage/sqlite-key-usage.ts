/**
 * Usage analytics on SQLite. A flush is one IMMEDIATE transaction of three statements, each ONE multi-row additive
 * upsert over a JSON array parameter (hourly rows, daily rows, last uses): a SQLite statement writes one table, and
 * the transaction makes the three one atomic write (docs/analytics.md). Rows of keys that no longer exist (an erased
 * account's) are skipped by the same statements.
 */
import type { KeyUsageBatch, KeyUsageGroup, KeyUsageQuery, KeyUsageRow, PruneInput, PruneResult } from "@benchdata/core";
import type { SqliteStatement } from "../sqlite/driver.ts";
import type { Row } from "../rows.ts";
import { num } from "../rows.ts";
import { additiveSet, breakdownSql, flushRows, groupFromRow, LATENCY_COLUMNS } from "./key-usage-sql.ts";

const COLUMNS = ["start", "key_id", "endpoint", "outcome", "account_id", "calls", "max_ms", ...LATENCY_COLUMNS];

function upsertCounts(table: string): string {
  const values = COLUMNS.map((_, i) => `json_extract(j.value, '$[${i}]')`).join(", ");
  return `INSERT INTO ${table} (${COLUMNS.join(", ")})
          SELECT ${values} FROM json_each(?) j WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = json_extract(j.value, '$[1]'))
          ON CONFLICT (start, key_id, endpoint, outcome) DO UPDATE SET ${additiveSet(table, "max")}`;
}

const UPSERT_LAST_USED = `INSERT INTO key_last_used (key_id, account_id, at)
  SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]') FROM json_each(?) j
  WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = json_extract(j.value, '$[0]'))
  ON CONFLICT (key_id) DO UPDATE SET at = max(key_last_used.at, excluded.at)`;

const encode = (rows: readonly KeyUsageRow[]): string => JSON.stringify(rows.map((r) => [r.hour, r.keyId, r.endpoint, r.outcome, r.accountId, r.calls, r.maxMs, ...r.latency]));

/** The SQLite store's analytics methods over its prepared statements (`q`) and IMMEDIATE transactions (`immediate`). */
export function sqliteKeyUsage(
  q: (sql: string) => SqliteStatement,
  immediate: <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A) => R,
): {
  addKeyUsage(batch: KeyUsageBatch): void;
  keyUsage(query: KeyUsageQuery): KeyUsageGroup[];
  keysLastUsed(accountId: string): Record<string, number>;
  prune(input: PruneInput): PruneResult;
  purge(accountId: string, limit: number): number;
} {
  const add = immediate((batch: KeyUsageBatch): void => {
    const { hours, days } = flushRows(batch);
    if (hours.length > 0) {
      q(upsertCounts("key_usage_hours")).run(encode(hours));
      q(upsertCounts("key_usage_days")).run(encode(days));
    }
    if (batch.lastUsed.length > 0) q(UPSERT_LAST_USED).run(JSON.stringify(batch.lastUsed.map((l) => [l.keyId, l.accountId, l.at])));
  });
  const prune = immediate((input: PruneInput): PruneResult => {
    const table = input.target === "key_usage_hours" ? "key_usage_hours" : "key_usage_days";
    const limit = Math.max(0, Math.floor(input.limit));
    // The oldest rows by the primary key's order; every one examined is deleted.
    const last = q(`SELECT max(start) AS k, count(*) AS n FROM (SELECT start FROM ${table} WHERE start < ? ORDER BY start LIMIT ?)`).get(input.before, limit) as Row;
    const n = q(`DELETE FROM ${table} WHERE (start, key_id, endpoint, outcome) IN (SELECT start, key_id, endpoint, outcome FROM ${table} WHERE start < ? ORDER BY start LIMIT ?)`).run(input.before, limit).changes;
    return { deleted: { [input.target]: n }, next: num(last.n) === limit && limit > 0 ? { key: num(last.k), id: "" } : null };
  });
  const purge = immediate((accountId: string, limit: number): number => {
    let n = q("DELETE FROM key_last_used WHERE account_id = ?").run(accountId).changes;
    for (const table of ["key_usage_hours", "key_usage_days"]) {
      n += q(`DELETE FROM ${table} WHERE (start, key_id, endpoint, outcome) IN (SELECT start, key_id, endpoint, outcome FROM ${table} WHERE account_id = ? LIMIT ?)`).run(accountId, limit).changes;
      if (n > 0) return n;
    }
    return n;
  });
  return {
    addKeyUsage: add,
    keyUsage(query) {
      const params: Record<string, unknown> = {};
      let i = 0;
      const text = breakdownSql(query, "", (value) => {
        const name = `p${i++}`;
        params[name] = value;
        return `@${name}`;
      });
      return (q(text).all(params) as Row[]).map((r) => groupFromRow(r, query));
    },
    keysLastUsed(accountId) {
      const out: Record<string, number> = {};
      for (const r of q("SELECT key_id, at FROM key_last_used WHERE account_id = ?").all(accountId) as Row[]) out[String(r.key_id)] = num(r.at);
      return out;
    },
    prune,
    purge,
  };
}
