/** The memory store's usage analytics: hourly and daily rows in maps, summed in place (one process, so additive by construction). */
import type { KeyUsageBatch, KeyUsageGroup, KeyUsageGroupKey, KeyUsageQuery, KeyUsageRow, PruneInput, PruneResult } from "../storage/types.ts";
import { LATENCY_BUCKETS } from "./latency-buckets.ts";
import { OUTCOME_COUNT, USAGE_OUTCOMES } from "./usage-outcome.ts";
import type { UsageOutcome } from "./usage-outcome.ts";

const DAY_MS = 86_400_000;

interface StoredRow {
  readonly start: number;
  readonly accountId: string;
  readonly keyId: string;
  readonly endpoint: string;
  readonly outcome: UsageOutcome;
  calls: number;
  readonly latency: number[];
  maxMs: number;
}

/** Compares two strings code unit by code unit (SQLite's BINARY, PostgreSQL's "C" collation). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The order of usage groups: start, then key, endpoint and outcome as text (a null, summed-over, dimension compares equal). */
export function compareGroupKeys(a: KeyUsageGroupKey, b: KeyUsageGroupKey): number {
  return a.start - b.start || compareText(a.keyId ?? "", b.keyId ?? "") || compareText(a.endpoint ?? "", b.endpoint ?? "") || compareText(a.outcome ?? "", b.outcome ?? "");
}

/** The memory store's analytics methods, and their parts of `prune` and of an account's erasure. */
export interface MemoryKeyUsage {
  addKeyUsage(batch: KeyUsageBatch): Promise<void>;
  keyUsage(query: KeyUsageQuery): Promise<KeyUsageGroup[]>;
  keysLastUsed(accountId: string): Promise<Record<string, number>>;
  /** One batch of pruning of `key_usage_hours` or `key_usage_days`. */
  prune(input: PruneInput): PruneResult;
  /** Forgets everything of an account (its erasure). */
  erase(accountId: string): void;
}

/** Creates the memory store's analytics tables; rows of keys that no longer exist (`keyExists`: an erased account's) are not added. */
export function memoryKeyUsage(keyExists: (keyId: string) => boolean): MemoryKeyUsage {
  const hours = new Map<string, StoredRow>();
  const days = new Map<string, StoredRow>();
  const lastUsed = new Map<string, { accountId: string; at: number }>();

  const add = (table: Map<string, StoredRow>, start: number, r: KeyUsageRow): void => {
    const id = `${start} ${r.keyId} ${r.endpoint} ${r.outcome}`;
    const had = table.get(id);
    if (had === undefined) {
      table.set(id, { start, accountId: r.accountId, keyId: r.keyId, endpoint: r.endpoint, outcome: r.outcome, calls: r.calls, latency: [...r.latency], maxMs: r.maxMs });
      return;
    }
    had.calls += r.calls;
    for (let i = 0; i < LATENCY_BUCKETS; i++) had.latency[i]! += r.latency[i] ?? 0;
    had.maxMs = Math.max(had.maxMs, r.maxMs);
  };

  return {
    async addKeyUsage(batch) {
      for (const r of batch.rows) {
        if (!keyExists(r.keyId)) continue;
        add(hours, r.hour, r);
        add(days, r.hour - (r.hour % DAY_MS), r);
      }
      for (const l of batch.lastUsed) {
        if (!keyExists(l.keyId)) continue;
        const had = lastUsed.get(l.keyId);
        if (had === undefined || l.at > had.at) lastUsed.set(l.keyId, { accountId: l.accountId, at: l.at });
      }
    },

    async keyUsage(q) {
      const groups = new Map<string, KeyUsageGroup & { outcomes: number[]; latency: number[]; maxMs: number }>();
      for (const r of (q.granularity === "hour" ? hours : days).values()) {
        if (r.accountId !== q.accountId || r.start < q.from || r.start >= q.to) continue;
        if (q.keyId !== undefined && r.keyId !== q.keyId) continue;
        const key: KeyUsageGroupKey = { start: r.start, keyId: q.groupBy.key ? r.keyId : null, endpoint: q.groupBy.endpoint ? r.endpoint : null, outcome: q.groupBy.outcome ? r.outcome : null };
        if (q.after !== undefined && compareGroupKeys(key, q.after) <= 0) continue;
        const id = `${key.start} ${key.keyId} ${key.endpoint} ${key.outcome}`;
        let g = groups.get(id);
        if (g === undefined) groups.set(id, (g = { ...key, outcomes: new Array<number>(OUTCOME_COUNT).fill(0), latency: new Array<number>(LATENCY_BUCKETS).fill(0), maxMs: 0 }));
        g.outcomes[USAGE_OUTCOMES.indexOf(r.outcome)]! += r.calls;
        for (let i = 0; i < LATENCY_BUCKETS; i++) g.latency[i]! += r.latency[i]!;
        g.maxMs = Math.max(g.maxMs, r.maxMs);
      }
      return [...groups.values()].sort(compareGroupKeys).slice(0, Math.max(0, q.limit));
    },

    async keysLastUsed(accountId) {
      const out: Record<string, number> = {};
      for (const [keyId, l] of lastUsed) if (l.accountId === accountId) out[keyId] = l.at;
      return out;
    },

    prune(input) {
      const table = input.target === "key_usage_hours" ? hours : days;
      const old = [...table].filter(([, r]) => r.start < input.before).sort(([, a], [, b]) => a.start - b.start);
      const batch = old.slice(0, Math.max(0, Math.floor(input.limit)));
      for (const [id] of batch) table.delete(id);
      const last = batch[batch.length - 1];
      return { deleted: { [input.target]: batch.length }, next: last !== undefined && batch.length === input.limit ? { key: last[1].start, id: "" } : null };
    },

    erase(accountId) {
      for (const table of [hours, days]) for (const [id, r] of table) if (r.accountId === accountId) table.delete(id);
      for (const [keyId, l] of lastUsed) if (l.accountId === accountId) lastUsed.delete(keyId);
    },
  };
}
