import { describe, expect, it } from "vitest";
import { manualClock } from "../clock/clock.ts";
import { defineConfig } from "../config/config.ts";
import type { LogFields, Logger } from "../log/logger.ts";
import { createMetricsRegistry } from "../metrics/metrics-registry.ts";
import { createMemoryStorage } from "../storage/memory-storage.ts";
import type { PruneInput, Storage } from "../storage/types.ts";
import { createPruneWorker } from "./prune-worker.ts";
import { PURGE_BATCH } from "./purge-batch.ts";
import { PRUNE_ORDER } from "./retention-cutoffs.ts";

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 27, 12);

type Line = { level: string; msg: string; fields: LogFields };
function recorder(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (msg: string, fields: LogFields = {}) => void lines.push({ level, msg, fields });
  return { lines, logger: { info: at("info"), warn: at("warn"), error: at("error") } };
}

/** A memory store with `n` sessions that expired `daysAgo` days before T0, recording every prune call. */
async function storeWithExpiredSessions(n: number, daysAgo: number): Promise<{ storage: Storage; calls: PruneInput[] }> {
  const inner = createMemoryStorage();
  await inner.createAccount({ id: "acc_p", name: "P", tier: "growth", createdAt: T0 - 100 * DAY, limits: {}, allowedCidrs: [], billing: {} });
  for (let i = 0; i < n; i++) await inner.createSession({ tokenHash: `h${i}`, accountId: "acc_p", createdAt: T0 - 100 * DAY, expiresAt: T0 - daysAgo * DAY - i });
  const calls: PruneInput[] = [];
  const storage: Storage = {
    ...inner,
    prune: (input) => {
      calls.push(input);
      return inner.prune(input);
    },
  };
  return { storage, calls };
}

describe("pruning worker", () => {
  it("a run prunes every target in bounded batches at the configured cutoffs, counts rows per table in /metrics, and logs once with what it deleted", async () => {
    const { storage, calls } = await storeWithExpiredSessions(7, 8);
    await storage.createSession({ tokenHash: "recent", accountId: "acc_p", createdAt: T0 - DAY, expiresAt: T0 - 6 * DAY });
    const metrics = createMetricsRegistry();
    const { logger, lines } = recorder();
    const clock = manualClock(T0);
    const worker = createPruneWorker({ storage, clock, config: defineConfig(), logger, metrics, batchSize: 3, pauseMs: 0 });
    const report = await worker.tick();
    expect(report).toMatchObject({ failed: false, stopped: false, deleted: { sessions: 7, deliveries: 0, events: 0, sign_in_links: 0, day_counters: 0, usage_days: 0, key_usage_hours: 0, key_usage_days: 0 } });
    // Sessions went 3, 3, 1; every other target took one batch.
    expect(calls.filter((c) => c.target === "sessions").map((c) => c.after?.id ?? null)).toEqual([null, "h4", "h1"]);
    expect(calls.map((c) => c.target)).toEqual(["deliveries", "events", "sessions", "sessions", "sessions", "sign_in_links", "day_counters", "usage_days", "key_usage_hours", "key_usage_days"]);
    expect(calls.every((c) => c.limit === 3)).toBe(true);
    expect(calls.find((c) => c.target === "sessions")!.before).toBe(T0 - 7 * DAY);
    expect(report.batches).toBe(calls.length);
    // The session that expired 6 days ago is kept (7 by default).
    expect((await worker.tick()).deleted.sessions).toBe(0);
    expect(await storage.prune({ target: "sessions", before: T0, limit: 10 })).toMatchObject({ deleted: { sessions: 1 } });

    expect(metrics.value("benchdata_retention_pruned_rows_total", { table: "sessions" })).toBe(7);
    expect(metrics.value("benchdata_retention_pruned_rows_total", { table: "deliveries" })).toBe(0);
    expect(metrics.value("benchdata_retention_runs_total", { outcome: "succeeded" })).toBe(2);
    expect(metrics.value("benchdata_retention_runs_total", { outcome: "failed" })).toBe(0);
    expect(metrics.value("benchdata_retention_last_success_timestamp_seconds")).toBe(T0 / 1000);
    expect(metrics.value("benchdata_retention_last_run_duration_seconds")).toBeGreaterThanOrEqual(0);
    const text = await metrics.render();
    expect(text).toContain('benchdata_retention_pruned_rows_total{table="delivery_attempts"} 0');
    expect(text).toContain("# TYPE benchdata_retention_last_success_timestamp_seconds gauge");
    const pruned = lines.filter((l) => l.msg === "retention: pruned");
    expect(pruned).toHaveLength(2);
    expect(pruned[0]).toMatchObject({ level: "info", fields: { sessions: 7, deliveries: 0, delivery_attempts: 0, events: 0, sign_in_links: 0, day_counters: 0, usage_days: 0, key_usage_hours: 0, key_usage_days: 0, batches: 10 } });
    expect(typeof pruned[0]!.fields.duration_ms).toBe("number");
  });

  it("an erasure the store still lists after a purge found nothing (SQLite: a reader holds the WAL) is not counted finished, and the others wait for the next run", async () => {
    const inner = createMemoryStorage();
    const ids = ["acc_e1", "acc_e2", "acc_e3"];
    for (const id of ids) await inner.createAccount({ id, name: id, tier: "growth", createdAt: T0 - DAY, limits: {}, allowedCidrs: [], billing: {} });
    for (const id of ids) await inner.deleteAccount({ accountId: id, now: T0 - 1000 });
    let held = true;
    const calls: string[] = [];
    const storage: Storage = {
      ...inner,
      // acc_e2's store cannot forget it while `held`: its purge finds nothing and it stays listed.
      purgeAccount: async (input) => {
        calls.push(`purge:${input.accountId}`);
        return input.accountId === "acc_e2" && held ? 0 : inner.purgeAccount(input);
      },
      prune: (input) => {
        calls.push(`prune:${input.target}`);
        return inner.prune(input);
      },
    };
    const metrics = createMetricsRegistry();
    const { logger, lines } = recorder();
    const worker = createPruneWorker({ storage, clock: manualClock(T0), config: defineConfig(), logger, metrics, batchSize: 10, pauseMs: 0 });
    const first = await worker.tick();
    expect(first).toMatchObject({ failed: false, erasures: { finished: 1, purged: 0 } });
    // acc_e3 is not tried in this run (one wait per run, not one per erasure); retention still runs.
    expect(calls).toEqual(["purge:acc_e1", "purge:acc_e2", ...PRUNE_ORDER.map((t) => `prune:${t}`)]);
    expect(await inner.unfinishedErasures({ limit: 10 })).toEqual(["acc_e2", "acc_e3"]);
    expect(metrics.value("benchdata_retention_erasures_finished_total")).toBe(1);
    expect(lines.some((l) => l.msg.startsWith("retention: an erasure's history is gone but the store could not yet forget it") && l.fields.account_id === "acc_e2")).toBe(true);
    held = false;
    expect((await worker.tick()).erasures).toEqual({ finished: 2, purged: 0 });
    expect(await inner.unfinishedErasures({ limit: 10 })).toEqual([]);
    expect(metrics.value("benchdata_retention_erasures_finished_total")).toBe(3);
  });

  it("unfinished erasures come first, read a page at a time and each purged in batches of PURGE_BATCH to the end; /metrics and the log count them; a finished one is not visited again", async () => {
    const inner = createMemoryStorage();
    const ids = ["acc_e1", "acc_e2", "acc_e3"];
    for (const id of [...ids, "acc_live"]) await inner.createAccount({ id, name: id, tier: "growth", createdAt: T0 - DAY, limits: {}, allowedCidrs: [], billing: {} });
    for (const id of ids) await inner.deleteAccount({ accountId: id, now: T0 - 1000 });
    // The memory store purges at once; here acc_e2 still has 2,500 records left, as a SQL store's interrupted erasure would.
    let left = 2500;
    const calls: string[] = [];
    const storage: Storage = {
      ...inner,
      purgeAccount: async (input) => {
        calls.push(`purge:${input.accountId}:${input.limit}`);
        if (input.accountId === "acc_e2" && left > 0) {
          const n = Math.min(left, input.limit);
          left -= n;
          return n;
        }
        return inner.purgeAccount(input);
      },
      prune: (input) => {
        calls.push(`prune:${input.target}`);
        return inner.prune(input);
      },
    };
    const metrics = createMetricsRegistry();
    const { logger, lines } = recorder();
    const worker = createPruneWorker({ storage, clock: manualClock(T0), config: defineConfig(), logger, metrics, batchSize: 2, pauseMs: 0 });
    const report = await worker.tick();
    expect(report).toMatchObject({ failed: false, erasures: { finished: 3, purged: 2500 } });
    // Pages of two ids; acc_e2 in batches of PURGE_BATCH until a call finds nothing; then the retention targets.
    expect(calls.slice(0, 6)).toEqual(["purge:acc_e1:1000", "purge:acc_e2:1000", "purge:acc_e2:1000", "purge:acc_e2:1000", "purge:acc_e2:1000", "purge:acc_e3:1000"]);
    expect(calls.slice(6)).toEqual(PRUNE_ORDER.map((t) => `prune:${t}`));
    expect(PURGE_BATCH).toBe(1000);
    expect(report.batches).toBe(calls.length);
    expect(await inner.unfinishedErasures({ limit: 10 })).toEqual([]);
    expect(metrics.value("benchdata_retention_pruned_rows_total", { table: "erased_history" })).toBe(2500);
    expect(metrics.value("benchdata_retention_erasures_finished_total")).toBe(3);
    expect(await metrics.render()).toContain('benchdata_retention_pruned_rows_total{table="erased_history"} 2500');
    expect(lines.filter((l) => l.msg.startsWith("retention: an erasure"))).toEqual([
      { level: "info", msg: "retention: an erasure had left history behind; purged it", fields: { account_id: "acc_e2", purged: 2500 } },
    ]);
    expect(lines.find((l) => l.msg === "retention: pruned")?.fields).toMatchObject({ erased_history: 2500, erasures_finished: 3 });

    calls.length = 0;
    expect((await worker.tick()).erasures).toEqual({ finished: 0, purged: 0 });
    expect(calls.filter((c) => c.startsWith("purge:"))).toEqual([]);
    expect(metrics.value("benchdata_retention_erasures_finished_total")).toBe(3);
  });

  it("a storage failure ends the run: counted as failed with its cause, logged as a warning, and the next run starts over", async () => {
    const { storage: inner } = await storeWithExpiredSessions(4, 10);
    let failures = 1;
    const storage: Storage = {
      ...inner,
      prune: async (input) => {
        if (input.target === "sessions" && failures-- > 0) throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
        return inner.prune(input);
      },
    };
    const metrics = createMetricsRegistry();
    const { logger, lines } = recorder();
    const worker = createPruneWorker({ storage, clock: manualClock(T0), config: defineConfig(), logger, metrics, pauseMs: 0 });
    expect(await worker.tick()).toMatchObject({ failed: true, deleted: { sessions: 0 } });
    expect(metrics.value("benchdata_retention_runs_total", { outcome: "failed" })).toBe(1);
    expect(metrics.value("benchdata_storage_errors_total", { cause: "SQLITE_BUSY" })).toBe(1);
    expect(metrics.value("benchdata_retention_last_success_timestamp_seconds")).toBe(0);
    expect(lines.filter((l) => l.level === "warn")).toMatchObject([{ msg: "retention: pruning failed; the next run starts over", fields: { target: "sessions", cause: "SQLITE_BUSY" } }]);
    expect(lines.filter((l) => l.msg === "retention: pruned")).toEqual([]);
    expect(await worker.tick()).toMatchObject({ failed: false, deleted: { sessions: 4 } });
    expect(metrics.value("benchdata_retention_runs_total", { outcome: "succeeded" })).toBe(1);
  });

  it("start() runs after the initial delay and then every interval; stop() ends a run between two batches and no run follows", async () => {
    const { storage, calls } = await storeWithExpiredSessions(50, 10);
    const { logger, lines } = recorder();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const slow: Storage = {
      ...storage,
      prune: async (input) => {
        if (input.target === "sessions" && input.after != null) await gate;
        return storage.prune(input);
      },
    };
    const worker = createPruneWorker({ storage: slow, clock: manualClock(T0), config: defineConfig(), logger, batchSize: 10, pauseMs: 0, initialDelayMs: 20, intervalMs: 60_000 });
    worker.start();
    expect(calls).toEqual([]);
    await new Promise((r) => setTimeout(r, 100));
    // The first run started on its own and waits in its second batch of sessions.
    expect(calls.map((c) => c.target)).toEqual(["deliveries", "events", "sessions"]);
    const stopped = worker.stop();
    release();
    await stopped;
    expect(lines.map((l) => [l.msg, l.fields.sessions])).toEqual([["retention: pruning stopped early", 20]]);
    const before = calls.length;
    await new Promise((r) => setTimeout(r, 50));
    expect(calls.length).toBe(before);
    // A tick after stop() is a whole run again.
    expect((await worker.tick()).deleted.sessions).toBe(30);
  });
});
