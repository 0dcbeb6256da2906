/**
 * Erasure benchmark: how long erasing a large account holds SQLite's write lock. Seeds one account of a fresh
 * temporary SQLite file with `deliveries` deliveries (each with one attempt and its event) and `snapshots`
 * merchant snapshots, then times `deleteAccount` (the atomic part) and every `purgeAccount` step of 1,000 records
 * (what the admin API runs), and, on a second copy, the same history deleted one kind per transaction (what one
 * transaction would hold).
 *
 *   npx tsx --tsconfig packages/storage-kysely/tsconfig.json packages/storage-kysely/bench/erasure.bench.ts [--deliveries N] [--snapshots N]
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Storage } from "@benchdata/core";
import { openStorage } from "../src/open-storage.ts";
import { openSqlite } from "../src/sqlite/driver.ts";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
}

const DELIVERIES = flag("deliveries", 100_000);
const SNAPSHOTS = flag("snapshots", 200_000);
const T0 = Date.UTC(2026, 10, 1);
const ACCOUNT = "acc_01JBENCHERASURE0000000000";

/** Seeds the account's rows straight into the file, in one transaction. */
async function seed(path: string): Promise<void> {
  const s = await openStorage(`sqlite:${path}`);
  await s.migrate();
  await s.createAccount({ id: ACCOUNT, name: "Big Co", tier: "enterprise", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
  await s.close();
  const db = await openSqlite(path);
  db.transaction(() => {
    db.prepare("INSERT INTO webhooks (id, account_id, url, events, secret, created_at) VALUES ('wh_bench', ?, 'https://hooks.example.com/in', '[\"quota.warning\"]', 'whsec_x', ?)").run(ACCOUNT, T0);
    const event = db.prepare("INSERT INTO events (id, type, account_id, created_at, body) VALUES (?, 'quota.warning', ?, ?, ?)");
    const delivery = db.prepare("INSERT INTO deliveries (id, event_id, webhook_id, account_id, status, attempts, next_attempt_at, created_at) VALUES (?, ?, 'wh_bench', ?, 'succeeded', 1, NULL, ?)");
    const attempt = db.prepare("INSERT INTO delivery_attempts (delivery_id, attempt, at, status_code, latency_ms, error, response_body) VALUES (?, 1, ?, 200, 12, NULL, 'ok')");
    for (let i = 0; i < DELIVERIES; i++) {
      const id = String(i).padStart(26, "0");
      const body = JSON.stringify({ id: `evt_${id}`, type: "quota.warning", account_id: ACCOUNT, created_at: new Date(T0 + i).toISOString(), data: { calls_used: i } });
      event.run(`evt_${id}`, ACCOUNT, T0 + i, body);
      delivery.run(`dlv_${id}`, `evt_${id}`, ACCOUNT, T0 + i);
      attempt.run(`dlv_${id}`, T0 + i);
    }
    const snapshot = db.prepare("INSERT INTO merchant_snapshots (id, account_id, environment, merchant_id, category, segment, period, metrics, created_at) VALUES (?, ?, 'live', ?, 'saas', 'all', '2026-Q3', '{\"gross_margin\":0.5}', ?)");
    for (let i = 0; i < SNAPSHOTS; i++) snapshot.run(`vcfs_${String(i).padStart(26, "0")}`, ACCOUNT, `m-${i}`, T0 + i);
  }).immediate();
  db.close();
}

/** Milliseconds `fn` took. */
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Erases and purges in steps of `limit`; the atomic part's time and every step's. */
async function erase(s: Storage, limit: number): Promise<{ deleteMs: number; steps: number[] }> {
  const deleteMs = await timed(() => s.deleteAccount({ accountId: ACCOUNT, now: T0 + 10_000_000 }));
  const steps: number[] = [];
  for (;;) {
    let n = 0;
    steps.push(await timed(async () => (n = await s.purgeAccount({ accountId: ACCOUNT, limit }))));
    if (n === 0) break;
  }
  return { deleteMs, steps };
}

const dir = mkdtempSync(join(tmpdir(), "benchdata-erasure-"));
try {
  const path = join(dir, "seeded.db");
  const started = performance.now();
  await seed(path);
  copyFileSync(path, join(dir, "copy.db"));
  console.log(`seeded ${DELIVERIES} deliveries (each with an attempt and an event) and ${SNAPSHOTS} snapshots in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  for (const [file, limit, label] of [
    ["copy.db", 100_000_000, "one kind per transaction (as one transaction would hold)"],
    ["seeded.db", 1000, "in steps of 1,000 (the admin API)"],
  ] as const) {
    const s = await openStorage(`sqlite:${join(dir, file)}`);
    const { deleteMs, steps } = await erase(s, limit);
    await s.close();
    const sorted = [...steps].sort((x, y) => x - y);
    const total = deleteMs + steps.reduce((x, y) => x + y, 0);
    console.log(
      `${label}: deleteAccount ${deleteMs.toFixed(2)} ms; ${steps.length} purge steps, median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} ms, ` +
        `longest ${sorted[sorted.length - 1]!.toFixed(1)} ms; total ${(total / 1000).toFixed(2)} s`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
