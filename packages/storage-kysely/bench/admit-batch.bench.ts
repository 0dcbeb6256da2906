/**
 * Admission benchmark for PostgreSQL: what one `admit` costs in database CPU and in Node CPU when 50 callers
 * keep the batcher full, as a loaded server does. It creates a throwaway database, seeds 16 accounts of 50
 * keys, pre-fills every window with 150 live stamps, and then, per round, runs `--admissions` admissions
 * (test keys without quota, like the HTTP benchmark; `--live` for live keys with quota), each with the
 * `expect` of a remembered lookup, as the data pipeline sends them.
 *
 *   npx tsx --tsconfig packages/storage-kysely/tsconfig.json packages/storage-kysely/bench/admit-batch.bench.ts [--live] [--rounds N] [--admissions N] [--sql FILE]
 *
 * Database CPU is read from /proc twice: the benchmark's own backends (its pool's connections) and every
 * `postgres` process (including the WAL writer and whatever else the server is doing meanwhile). Each round
 * also reports the mean batch (transaction ids taken per admission). PREFILL=n sets the stamps per window.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import pg from "pg";
import type { AdmitInput, AdmitQuota, KeyLookup } from "@benchdata/core";
import { cpuMsOfCommand, cpuMsOfPids } from "../../../bench/lib/process-cpu.ts";
import { openStorage } from "../src/open-storage.ts";
import type { OpenedStorage } from "../src/open-storage.ts";
import { createTestDatabase } from "../src/test-support/pg-test-database.ts";

const ACCOUNTS = 16;
const KEYS_PER_ACCOUNT = 50;
const CALLERS = 50;
// Stamps per window (PREFILL=n to see what the window's size costs).
const PREFILL = Number(process.env.PREFILL ?? 150);

/** The server's current WAL position, in bytes. */
async function walLsn(client: pg.Client): Promise<number> {
  return Number((await client.query(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS b`)).rows[0].b);
}

/** The next transaction id: every batch that writes takes one, so the difference counts batches. */
async function nextXid(client: pg.Client): Promise<number> {
  return Number((await client.query(`SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS x`)).rows[0].x);
}

/** Creates the accounts and keys; returns each key's remembered lookup. */
async function seed(s: OpenedStorage): Promise<{ hash: string; lookup: KeyLookup }[]> {
  const keys: { hash: string; lookup: KeyLookup }[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const accountId = `acc_bench${String(a).padStart(2, "0")}`;
    await s.createAccount({ id: accountId, name: accountId, tier: "enterprise", createdAt: 0, limits: {}, allowedCidrs: [], billing: {} });
    for (let k = 0; k < KEYS_PER_ACCOUNT; k++) {
      const id = `key_${accountId}_${k}`;
      const hash = `h_${id}`;
      await s.createKey({
        key: { id, accountId, name: id, environment: "test", scopes: ["benchmarks:read"], prefix: "svc_test_xxx", isActive: true, createdAt: 0, rotatedAt: null, revokedAt: null },
        hash,
        maxKeys: KEYS_PER_ACCOUNT,
        eventId: `evt_${id}`,
      });
      const lookup = await s.findKeyByHash(hash);
      if (lookup === null) throw new Error(`key ${id} not found`);
      keys.push({ hash, lookup });
    }
  }
  return keys;
}

/** Every window back to `PREFILL` stamps spread over the last 50 s of the database's clock, and day rows to zero. */
async function prefill(client: pg.Client): Promise<void> {
  await client.query(`UPDATE rate_windows SET stamps = ARRAY(SELECT benchdata_clock_ms() - 50000 + (g * 50000 / $1) FROM generate_series(0, $1 - 1) AS g ORDER BY 1)`, [PREFILL]);
  await client.query(`UPDATE day_counters SET day = 0, count = 0`);
  await client.query(`VACUUM ANALYZE rate_windows, day_counters, quota_periods`);
}

/** One round: `total` admissions from `CALLERS` concurrent callers; returns the CPU each side spent. */
async function round(
  s: OpenedStorage,
  admin: pg.Client,
  keys: readonly { hash: string; lookup: KeyLookup }[],
  live: boolean,
  total: number,
  backends: readonly number[],
): Promise<{ dbOwnUs: number; dbAllUs: number; nodeUs: number; walBytes: number; ms: number; batch: number; kinds: Record<string, number> }> {
  const kinds: Record<string, number> = {};
  let next = 0;
  let serial = 0;
  const quota = (): AdmitQuota => ({
    anchorDay: 1,
    baseQuota: 1_000_000_000,
    blockSize: 1_000_000,
    blockPrice: 100,
    currency: "usd",
    retryAfterFailureMs: 3_600_000,
    maxAutoCharges: 10,
    warningEventId: `evt_w${serial}`,
    heldEventId: `evt_h${serial}`,
    invoiceId: `inv_${serial++}`,
  });
  const input = (i: number): AdmitInput => {
    const { hash, lookup } = keys[(i * 7919) % keys.length]!;
    return {
      now: Date.now(),
      keyId: lookup.key.id,
      accountId: lookup.account.id,
      perMinute: 1000,
      perDay: 2_000_000,
      windowMs: 60_000,
      quota: live ? quota() : null,
      expect: { keyHash: hash, version: lookup.version },
    };
  };
  const lsn0 = await walLsn(admin);
  const xid0 = await nextXid(admin);
  const dbOwn0 = cpuMsOfPids(backends);
  const dbAll0 = cpuMsOfCommand("postgres") ?? 0;
  const node0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (next < total) {
        const r = await s.admit(input(next++));
        kinds[r.kind] = (kinds[r.kind] ?? 0) + 1;
      }
    }),
  );
  const ms = performance.now() - t0;
  const node = process.cpuUsage(node0);
  const dbOwn = cpuMsOfPids(backends) - dbOwn0;
  const dbAll = (cpuMsOfCommand("postgres") ?? 0) - dbAll0;
  const walBytes = (await walLsn(admin)) - lsn0;
  const batches = (await nextXid(admin)) - xid0;
  return {
    dbOwnUs: (dbOwn * 1000) / total,
    dbAllUs: (dbAll * 1000) / total,
    nodeUs: (node.user + node.system) / total,
    walBytes: walBytes / total,
    ms,
    batch: total / Math.max(1, batches),
    kinds,
  };
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const { values } = parseArgs({ options: { live: { type: "boolean", default: false }, rounds: { type: "string", default: "5" }, admissions: { type: "string", default: "40000" }, sql: { type: "string" } } });
const live = values.live === true;
const rounds = Number(values.rounds);
const total = Number(values.admissions);

const t = await createTestDatabase();
const s = await openStorage(t.url, { clock: "database" });
const admin = new pg.Client({ connectionString: t.url });
try {
  await s.migrate();
  await admin.connect();
  // An experiment: SQL (a variant of a function, say) applied over the migrated schema.
  if (values.sql !== undefined) await admin.query(readFileSync(values.sql, "utf8"));
  let keys = await seed(s);
  if (live) {
    await admin.query(`UPDATE api_keys SET environment = 'live'`);
    keys = keys.map((k) => ({ ...k, lookup: { ...k.lookup, key: { ...k.lookup.key, environment: "live" as const } } }));
  }
  // Warm up: every pool connection open and its statements planned.
  await prefill(admin);
  await round(s, admin, keys, live, 2000, []);
  const backends = (await admin.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)).rows.map((r: { pid: number }) => r.pid);
  const results = [];
  for (let r = 0; r < rounds; r++) {
    await prefill(admin);
    const res = await round(s, admin, keys, live, total, backends);
    results.push(res);
    console.log(
      `round ${r + 1}: db own ${res.dbOwnUs.toFixed(1)} µs, db all ${res.dbAllUs.toFixed(1)} µs, node ${res.nodeUs.toFixed(1)} µs per admission; ` +
        `${Math.round(res.walBytes)} WAL bytes; ${Math.round((total / res.ms) * 1000)} admissions/s, ${res.batch.toFixed(1)} a batch; ${JSON.stringify(res.kinds)}`,
    );
  }
  console.log(
    `${live ? "live keys, quota" : "test keys"}: median db own ${median(results.map((r) => r.dbOwnUs)).toFixed(1)} µs, db all ${median(results.map((r) => r.dbAllUs)).toFixed(1)} µs, ` +
      `node ${median(results.map((r) => r.nodeUs)).toFixed(1)} µs, ${Math.round(median(results.map((r) => r.walBytes)))} WAL bytes per admission`,
  );
  const hot = (await admin.query(`SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname IN ('rate_windows', 'day_counters', 'quota_periods') ORDER BY 1`)).rows;
  console.log(`updates (HOT): ${hot.map((r: { relname: string; n_tup_upd: string; n_tup_hot_upd: string }) => `${r.relname} ${r.n_tup_upd} (${r.n_tup_hot_upd})`).join(", ")}`);
} finally {
  await admin.end();
  await s.close();
  await t.drop();
}
