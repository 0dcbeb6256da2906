/**
 * `Storage.prune` on PostgreSQL: each batch is ONE statement (its own short transaction). It locks the target's
 * oldest rows by an index range, at most `limit` of them, with `FOR UPDATE SKIP LOCKED`, and deletes them: a row
 * another transaction holds (an admission's day counter, a delivery being retried, another instance's batch) is
 * skipped rather than waited for, so pruning never queues behind the hot path nor makes it wait more than the
 * statement takes, and instances pruning at once share the work instead of repeating it.
 */
import { sql } from "kysely";
import type { RawBuilder } from "kysely";
import type { PruneInput, PrunedTable, PruneResult } from "@benchdata/core";
import type { IndexedPruneTarget } from "../prune-spec.ts";
import { PRUNE_SPECS } from "../prune-spec.ts";
import type { Row } from "../rows.ts";
import { num } from "../rows.ts";

/** The statement of one batch, answering `examined`, `deleted`, `attempts` and the last row examined (`last_k`, `last_i`). */
export function postgresPruneBatch(input: PruneInput & { target: IndexedPruneTarget }): RawBuilder<unknown> {
  const { target } = input;
  const s = PRUNE_SPECS[target];
  const key = sql.ref(s.key);
  const id = sql.ref(s.id);
  // Days are integer columns, times bigint: the parameters take the column's type, so the index range applies.
  const type = sql.raw(s.key === "day" ? "integer" : "bigint");
  const filter = s.where !== null ? sql.raw(`${s.where} AND`) : sql``;
  const after = input.after != null ? sql`AND (${key}, ${id}) > (${input.after.key}::${type}, ${input.after.id})` : sql``;
  const count = target === "day_counters" ? sql`, count` : sql``;
  const batch = sql`SELECT ctid AS t, ${key} AS k, ${id} AS i ${count} FROM ${sql.table(s.table)}
                    WHERE ${filter} ${key} < ${input.before}::${type} ${after}
                    ORDER BY ${key}, ${id} LIMIT ${Math.max(0, Math.floor(input.limit))}::integer
                    FOR UPDATE SKIP LOCKED`;
  // The rows go by their tuple ids (a TID scan: no second index walk, and no join the planner could turn into a
  // scan of the table); the batch holds their locks, so no other transaction moves them meanwhile.
  const rows = sql`ctid = ANY (ARRAY(SELECT t FROM batch))`;
  const work =
    target === "deliveries"
      ? sql`attempts AS (DELETE FROM delivery_attempts WHERE delivery_id = ANY (ARRAY(SELECT i FROM batch)) RETURNING 1),
            gone AS (DELETE FROM deliveries WHERE ${rows} RETURNING 1)`
      : target === "events"
        ? // An event goes only when no delivery refers to it (deliveries_by_event: one seek each).
          sql`gone AS (DELETE FROM events e WHERE e.${rows} AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id) RETURNING 1)`
        : target === "day_counters"
          ? // The day's count moves to the usage history first, as the counter's roll-over trigger does.
            sql`kept AS (INSERT INTO usage_days (account_id, day, count) SELECT i, k, count FROM batch WHERE count > 0
                         ON CONFLICT (account_id, day) DO UPDATE SET count = excluded.count RETURNING 1),
                gone AS (DELETE FROM day_counters WHERE ${rows} RETURNING 1)`
          : sql`gone AS (DELETE FROM ${sql.table(s.table)} WHERE ${rows} RETURNING 1)`;
  const attempts = target === "deliveries" ? sql`(SELECT count(*) FROM attempts)::integer` : sql`0`;
  return sql`WITH batch AS (${batch}), ${work}
             SELECT (SELECT count(*) FROM batch)::integer AS examined, (SELECT count(*) FROM gone)::integer AS deleted, ${attempts} AS attempts,
                    (SELECT k FROM batch ORDER BY k DESC, i DESC LIMIT 1) AS last_k, (SELECT i FROM batch ORDER BY k DESC, i DESC LIMIT 1) AS last_i`;
}

/** What a batch's answer row says, in `PruneResult`'s shape. */
export function pruneResultOf(input: PruneInput, r: Row): PruneResult {
  const deleted: Partial<Record<PrunedTable, number>> = { [input.target]: num(r.deleted) };
  if (input.target === "deliveries") deleted.delivery_attempts = num(r.attempts);
  return { deleted, next: num(r.examined) === input.limit && r.last_i !== null ? { key: num(r.last_k), id: String(r.last_i) } : null };
}
