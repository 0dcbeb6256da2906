/**
 * `Storage.prune` on SQLite: each batch is one IMMEDIATE transaction that reads the target's oldest rows by an
 * index range (at most `limit` of them) and deletes them by primary key, so it holds the write lock for about a
 * millisecond per few hundred rows. Admissions in this process cannot interleave (better-sqlite3 is synchronous)
 * and those of other processes wait on the file lock as for any writer; the admission memo notices the deletions
 * (total_changes, data_version) and reads afresh.
 */
import type { PruneInput, PrunedTable, PruneResult } from "@benchdata/core";
import type { SqliteStatement } from "./driver.ts";
import type { Row } from "../rows.ts";
import { num } from "../rows.ts";
import type { IndexedPruneTarget } from "../prune-spec.ts";
import { PRUNE_SPECS } from "../prune-spec.ts";

/** The rows a batch of `target` examines: the oldest `@limit` below `@before`, after (`@k`, `@i`), by the target's index. */
export function sqlitePruneBatch(target: IndexedPruneTarget): string {
  const s = PRUNE_SPECS[target];
  // An event may go only when no delivery refers to it any more (deliveries_by_event answers by one seek).
  const extra = target === "events" ? ", NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = t.id) AS free" : target === "day_counters" ? ", t.count" : "";
  return `SELECT t.${s.key} AS k, t.${s.id} AS i${extra} FROM ${s.table} t
          WHERE ${s.where !== null ? `${s.where} AND ` : ""}t.${s.key} < @before AND (t.${s.key}, t.${s.id}) > (@k, @i)
          ORDER BY t.${s.key}, t.${s.id} LIMIT @limit`;
}

/** How a batch deletes each row it examined (and keeps a day counter's count first): by primary key or its own index. */
export const SQLITE_PRUNE_STATEMENTS = {
  attempts: "DELETE FROM delivery_attempts WHERE delivery_id = ?",
  delivery: "DELETE FROM deliveries WHERE id = ?",
  event: "DELETE FROM events WHERE id = ?",
  session: "DELETE FROM sessions WHERE token_hash = ?",
  link: "DELETE FROM sign_in_links WHERE token_hash = ?",
  // The day's count moves to the usage history first (as the counter's roll-over trigger does), so dailyUsage still reports the day.
  keepDay: "INSERT INTO usage_days (account_id, day, count) VALUES (?, ?, ?) ON CONFLICT (account_id, day) DO UPDATE SET count = excluded.count",
  dayCounter: "DELETE FROM day_counters WHERE account_id = ?",
  usageDay: "DELETE FROM usage_days WHERE account_id = ? AND day = ?",
} as const;

/** The store's `prune` of PRUNE_SPECS' targets, over its prepared statements (`q`) and IMMEDIATE transactions (`immediate`). */
export function sqlitePrune(q: (sql: string) => SqliteStatement, immediate: <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A) => R): (input: PruneInput) => PruneResult {
  const S = SQLITE_PRUNE_STATEMENTS;
  return immediate((input: PruneInput): PruneResult => {
    // Without a cursor, from before every row (times and days are never that low).
    const after = input.after ?? { key: Number.MIN_SAFE_INTEGER, id: "" };
    const target = input.target as IndexedPruneTarget;
    const rows = q(sqlitePruneBatch(target)).all({ before: input.before, k: after.key, i: after.id, limit: Math.max(0, Math.floor(input.limit)) }) as Row[];
    const deleted: Partial<Record<PrunedTable, number>> = {};
    const count = (table: PrunedTable, n: number): void => {
      deleted[table] = (deleted[table] ?? 0) + n;
    };
    for (const r of rows) {
      switch (input.target) {
        case "deliveries":
          count("delivery_attempts", q(S.attempts).run(r.i).changes);
          count("deliveries", q(S.delivery).run(r.i).changes);
          break;
        case "events":
          if (num(r.free) === 1) count("events", q(S.event).run(r.i).changes);
          break;
        case "sessions":
          count("sessions", q(S.session).run(r.i).changes);
          break;
        case "sign_in_links":
          count("sign_in_links", q(S.link).run(r.i).changes);
          break;
        case "day_counters":
          if (num(r.count) > 0) q(S.keepDay).run(r.i, r.k, r.count);
          count("day_counters", q(S.dayCounter).run(r.i).changes);
          break;
        case "usage_days":
          count("usage_days", q(S.usageDay).run(r.i, r.k).changes);
          break;
      }
    }
    const last = rows[rows.length - 1];
    return { deleted, next: last !== undefined && rows.length === input.limit ? { key: num(last.k), id: String(last.i) } : null };
  });
}
