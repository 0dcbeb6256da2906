/** What each `Storage.prune` target reads in both SQL stores: its table, the index order it reads in, and its filter. */
import type { PruneTarget } from "@benchdata/core";

/** A prune target's rows, as one index range: `table` ordered by (`key`, `id`), only rows meeting `where`. */
export interface PruneSpec {
  readonly table: string;
  /** The time (Unix ms) or UTC day column the cutoff applies to. */
  readonly key: string;
  /** The unique column that orders rows of one `key` (the cursor's tie-break). */
  readonly id: string;
  /** The rows that may go at all (the partial index's predicate), if not all. */
  readonly where: string | null;
  /** The index whose range a batch reads (named in the plan tests). */
  readonly index: string;
}

/** The targets read by a cursor over an index range; usage analytics' tables are pruned oldest first by their primary key. */
export type IndexedPruneTarget = Exclude<PruneTarget, "key_usage_hours" | "key_usage_days">;

/** Whether a target is one of PRUNE_SPECS (else usage analytics', see key-usage/). */
export function isIndexedTarget(target: PruneTarget): target is IndexedPruneTarget {
  return target !== "key_usage_hours" && target !== "key_usage_days";
}

/** Every target's rows; migration 0023-retention-indexes (both dialects) creates these indexes. */
export const PRUNE_SPECS: Readonly<Record<IndexedPruneTarget, PruneSpec>> = {
  deliveries: { table: "deliveries", key: "created_at", id: "id", where: "status <> 'pending'", index: "deliveries_finished" },
  events: { table: "events", key: "created_at", id: "id", where: null, index: "events_by_time" },
  sessions: { table: "sessions", key: "expires_at", id: "token_hash", where: null, index: "sessions_by_expiry" },
  sign_in_links: { table: "sign_in_links", key: "expires_at", id: "token_hash", where: null, index: "sign_in_links_by_expiry" },
  day_counters: { table: "day_counters", key: "day", id: "account_id", where: null, index: "day_counters_by_day" },
  usage_days: { table: "usage_days", key: "day", id: "account_id", where: null, index: "usage_days_by_day" },
};
