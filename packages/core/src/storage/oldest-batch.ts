/** The rows a batch of pruning examines, picked from an in-memory collection (the memory store's `prune`). */
import type { PruneCursor, PruneInput } from "./types.ts";

/**
 * The oldest `input.limit` rows whose key is below `input.before` and that come after `input.after`, in
 * (key, id) order, as an index range of the SQL stores reads them; `next` is the last of them when the batch is full.
 */
export function oldestBatch<T>(rows: Iterable<T>, keyOf: (row: T) => number, idOf: (row: T) => string, input: PruneInput): { rows: T[]; next: PruneCursor | null } {
  const after = input.after ?? null;
  const picked: { key: number; id: string; row: T }[] = [];
  for (const row of rows) {
    const key = keyOf(row);
    const id = idOf(row);
    if (!(key < input.before)) continue;
    if (after !== null && (key < after.key || (key === after.key && id <= after.id))) continue;
    picked.push({ key, id, row });
  }
  picked.sort((a, b) => a.key - b.key || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const batch = picked.slice(0, Math.max(0, input.limit));
  const last = batch[batch.length - 1];
  return { rows: batch.map((p) => p.row), next: last !== undefined && batch.length === input.limit ? { key: last.key, id: last.id } : null };
}
