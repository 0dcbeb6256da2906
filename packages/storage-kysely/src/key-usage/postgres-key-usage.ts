/**
 * Usage analytics on PostgreSQL. A flush is ONE statement: three additive upserts (hourly rows, daily rows, last
 * uses) as data-modifying CTEs over `unnest` of column arrays, so two instances' flushes add up whatever their
 * timing. Rows go in primary-key order (flushRows), so concurrent flushes lock shared rows in one order. Rows of keys
 * that no longer exist (an erased account's) are skipped by the same statement.
 */
import { CompiledQuery, sql } from "kysely";
import type { Kysely } from "kysely";
import type { KeyUsageBatch, KeyUsageGroup, KeyUsageQuery, KeyUsageRow, PruneInput, PruneResult } from "@benchdata/core";
import type { Row } from "../rows.ts";
import { num } from "../rows.ts";
import { additiveSet, breakdownSql, flushRows, groupFromRow, LATENCY_COLUMNS } from "./key-usage-sql.ts";

type Db = Kysely<Record<string, never>>;

const COLUMNS = ["start", "key_id", "endpoint", "outcome", "account_id", "calls", "max_ms", ...LATENCY_COLUMNS];
const TYPES = ["bigint", "text", "text", "text", "text", "bigint", "double precision", ...LATENCY_COLUMNS.map(() => "bigint")];

/** The column arrays of rows, in COLUMNS order. */
function columnsOf(rows: readonly KeyUsageRow[]): unknown[][] {
  return [
    rows.map((r) => r.hour),
    rows.map((r) => r.keyId),
    rows.map((r) => r.endpoint),
    rows.map((r) => r.outcome),
    rows.map((r) => r.accountId),
    rows.map((r) => r.calls),
    rows.map((r) => r.maxMs),
    ...LATENCY_COLUMNS.map((_, i) => rows.map((r) => r.latency[i] ?? 0)),
  ];
}

/** The one statement of a flush, with its parameters (`$1` …). */
function flushStatement(batch: KeyUsageBatch): CompiledQuery {
  const { hours, days } = flushRows(batch);
  const params: unknown[] = [];
  const bind = (value: unknown, type: string): string => `$${params.push(value)}::${type}[]`;
  const upsert = (name: string, table: string, rows: readonly KeyUsageRow[]): string => {
    const arrays = columnsOf(rows).map((values, i) => bind(values, TYPES[i]!));
    return `${name} AS (INSERT INTO ${table} (${COLUMNS.join(", ")})
              SELECT * FROM unnest(${arrays.join(", ")}) AS u(${COLUMNS.join(", ")})
              WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = u.key_id)
              ON CONFLICT (start, key_id, endpoint, outcome) DO UPDATE SET ${additiveSet(table, "greatest")} RETURNING 1)`;
  };
  const last = [...batch.lastUsed].sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0));
  const lastUsed = `l AS (INSERT INTO key_last_used (key_id, account_id, at)
              SELECT * FROM unnest(${bind(last.map((l) => l.keyId), "text")}, ${bind(last.map((l) => l.accountId), "text")}, ${bind(last.map((l) => l.at), "bigint")}) AS u(key_id, account_id, at)
              WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = u.key_id)
              ON CONFLICT (key_id) DO UPDATE SET at = greatest(key_last_used.at, excluded.at) RETURNING 1)`;
  const text = `WITH ${upsert("h", "key_usage_hours", hours)}, ${upsert("d", "key_usage_days", days)}, ${lastUsed}
                SELECT (SELECT count(*) FROM h) AS hours, (SELECT count(*) FROM d) AS days, (SELECT count(*) FROM l) AS last_used`;
  return CompiledQuery.raw(text, params);
}

/** The PostgreSQL store's analytics methods over its Kysely handle. */
export function postgresKeyUsage(db: Db): {
  addKeyUsage(batch: KeyUsageBatch): Promise<void>;
  keyUsage(query: KeyUsageQuery): Promise<KeyUsageGroup[]>;
  keysLastUsed(accountId: string): Promise<Record<string, number>>;
  prune(input: PruneInput): Promise<PruneResult>;
  /** Part of an erased account's analytics (one statement); how many rows it deleted. */
  purge(trx: Db, accountId: string, limit: number): Promise<number>;
} {
  return {
    async addKeyUsage(batch) {
      if (batch.rows.length === 0 && batch.lastUsed.length === 0) return;
      await db.executeQuery(flushStatement(batch));
    },
    async keyUsage(query) {
      const params: unknown[] = [];
      const text = breakdownSql(query, ' COLLATE "C"', (value) => `$${params.push(value)}${typeof value === "number" ? "::bigint" : "::text"}`);
      const r = await db.executeQuery<Row>(CompiledQuery.raw(text, params));
      return r.rows.map((row) => groupFromRow(row, query));
    },
    async keysLastUsed(accountId) {
      const out: Record<string, number> = {};
      const r = await sql<Row>`SELECT key_id, at FROM key_last_used WHERE account_id = ${accountId}`.execute(db);
      for (const row of r.rows) out[String(row.key_id)] = num(row.at);
      return out;
    },
    async prune(input) {
      const table = sql.table(input.target === "key_usage_hours" ? "key_usage_hours" : "key_usage_days");
      const limit = Math.max(0, Math.floor(input.limit));
      // The oldest rows by the primary key's order, locked or skipped as the other targets' batches (postgres-prune.ts).
      const r = await sql<Row>`WITH batch AS (SELECT ctid AS t, start FROM ${table} WHERE start < ${input.before}::bigint ORDER BY start LIMIT ${limit}::integer FOR UPDATE SKIP LOCKED),
                                    gone AS (DELETE FROM ${table} WHERE ctid = ANY (ARRAY(SELECT t FROM batch)) RETURNING 1)
                               SELECT (SELECT count(*) FROM batch)::integer AS examined, (SELECT count(*) FROM gone)::integer AS deleted, (SELECT max(start) FROM batch) AS last_k`.execute(db);
      const row = r.rows[0]!;
      return { deleted: { [input.target]: num(row.deleted) }, next: num(row.examined) === limit && limit > 0 ? { key: num(row.last_k), id: "" } : null };
    },
    async purge(trx, accountId, limit) {
      const r = await sql<Row>`WITH l AS (DELETE FROM key_last_used WHERE account_id = ${accountId} RETURNING 1),
                                    h AS (DELETE FROM key_usage_hours WHERE ctid = ANY (ARRAY(SELECT ctid FROM key_usage_hours WHERE account_id = ${accountId} LIMIT ${limit}::integer)) RETURNING 1),
                                    d AS (DELETE FROM key_usage_days WHERE ctid = ANY (ARRAY(SELECT ctid FROM key_usage_days WHERE account_id = ${accountId} LIMIT ${limit}::integer)) RETURNING 1)
                               SELECT ((SELECT count(*) FROM l) + (SELECT count(*) FROM h) + (SELECT count(*) FROM d))::integer AS n`.execute(trx);
      return num(r.rows[0]!.n);
    },
  };
}
