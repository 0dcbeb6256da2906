import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storageConformance } from "@benchdata/core/testing";
import pg from "pg";
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from "kysely";
import { billingPeriod, chargeIdempotencyKey, createMemoryStorage, isId, isoTime, quotaWarningEvent, serializeEvent } from "@benchdata/core";
import type { AdmitInput, Storage } from "@benchdata/core";
import { openStorage } from "./open-storage.ts";
import type { OpenedStorage } from "./open-storage.ts";
import { POSTGRES_MIGRATIONS } from "./postgres/migrations/index.ts";
import { arrayLiteral, HEAD_OF_PENDING_WEBHOOK, PENDING_WEBHOOKS } from "./postgres/postgres-storage.ts";
import { createTestDatabase, pgAvailableForTests } from "./test-support/pg-test-database.ts";
import { postgresPruneBatch } from "./postgres/postgres-prune.ts";
import { PRUNE_SPECS, isIndexedTarget } from "./prune-spec.ts";
import { PRUNE_ORDER } from "@benchdata/core";
import { startTcpProxy } from "./test-support/tcp-proxy.ts";
import { storageExtras } from "./test-support/storage-extras.ts";

const pgOn = await pgAvailableForTests("postgres-storage");
const T0 = Date.UTC(2026, 10, 16, 12, 0, 0);
const dbs = new WeakMap<Storage, () => Promise<void>>();

async function freshStore(clock: "app" | "database"): Promise<OpenedStorage> {
  const t = await createTestDatabase();
  // Chunks of 7 stamps (128 by default): the windows of the suite cross chunk boundaries.
  const s = await openStorage(t.url, { clock, windowChunkSize: 7 });
  dbs.set(s, t.drop);
  await s.migrate();
  return s;
}

/** A throwaway database at an older schema version (its migrations applied as that version's server did), then `seed` on it. */
async function databaseAtVersion(version: number, seed?: (client: pg.Client) => Promise<void>): Promise<Awaited<ReturnType<typeof createTestDatabase>>> {
  const t = await createTestDatabase();
  const client = new pg.Client({ connectionString: t.url });
  await client.connect();
  try {
    await client.query("CREATE TABLE benchdata_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
    for (const m of POSTGRES_MIGRATIONS.filter((x) => x.version <= version)) {
      await client.query(m.sql);
      await client.query("INSERT INTO benchdata_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
    }
    await seed?.(client);
  } finally {
    await client.end();
  }
  return t;
}

async function dispose(s: Storage): Promise<void> {
  await s.close();
  await dbs.get(s)?.();
}

/** `body` on a throwaway migrated database, through storage (app clock) and a plain client; both closed and the database dropped after. */
async function withDatabase(body: (up: OpenedStorage, c: pg.Client) => Promise<void>): Promise<void> {
  const t = await createTestDatabase();
  const up = await openStorage(t.url, { clock: "app" });
  const c = new pg.Client({ connectionString: t.url });
  try {
    await up.migrate();
    await c.connect();
    await body(up, c);
  } finally {
    await c.end();
    await up.close();
    await t.drop();
  }
}

if (pgOn) {
  storageConformance("postgres", { create: () => freshStore("app"), destroy: dispose });
}

describe.skipIf(!pgOn)("postgres extras", () => {
  let s: OpenedStorage;
  beforeAll(async () => {
    s = await freshStore("app");
  });
  afterAll(async () => {
    await dispose(s);
  });
  storageExtras("postgres", () => s);
});

describe.skipIf(!pgOn)("postgres specifics", () => {
  let s: OpenedStorage;
  beforeAll(async () => {
    s = await freshStore("database");
  });
  afterAll(async () => {
    await dispose(s);
  });

  async function account(): Promise<{ accountId: string; keyId: string }> {
    const accountId = `acc_${Math.random().toString(36).slice(2)}`;
    const keyId = `key_${Math.random().toString(36).slice(2)}`;
    await s.createAccount({ id: accountId, name: "A", tier: "growth", createdAt: 0, limits: {}, allowedCidrs: [], billing: {} });
    return { accountId, keyId };
  }

  it("clock database: callers whose clocks disagree by ±2 minutes share one window, on the database's time", async () => {
    const { accountId, keyId } = await account();
    const base = { keyId, accountId, perMinute: 2, perDay: 100, windowMs: 60_000, quota: null };
    const early = await s.admit({ ...base, now: Date.now() - 120_000 });
    const late = await s.admit({ ...base, now: Date.now() + 120_000 });
    const third = await s.admit({ ...base, now: Date.now() + 120_000 });
    expect(early.kind).toBe("allowed");
    expect(late.kind).toBe("allowed");
    // With app clocks, the late caller's window would not contain the early stamp, and this would pass.
    expect(third.kind).toBe("rate_limited");
    for (const r of [early, late, third]) expect(Math.abs(r.now - Date.now())).toBeLessThan(5_000);
    expect(third.kind === "rate_limited" && third.retryAfterMs).toBeGreaterThan(55_000);
    expect(third.kind === "rate_limited" && third.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it("clock database: usage and quota periods follow the database's day and month", async () => {
    const { accountId, keyId } = await account();
    const r = await s.admit({ keyId, accountId, perMinute: 10, perDay: 100, windowMs: 60_000, now: 0, quota: { anchorDay: 1, baseQuota: 10, blockSize: 10, blockPrice: 100, currency: "usd", retryAfterFailureMs: 1000, maxAutoCharges: 3, warningEventId: "evt_w", invoiceId: "inv_i", heldEventId: "evt_h" } });
    const now = new Date();
    expect(r).toMatchObject({ kind: "allowed", quota: { used: 1, periodStart: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) } });
    const u = await s.usage(accountId, 0, 1, 10, 10);
    expect(u).toMatchObject({ today: 1, month: 1, periodStart: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) });
  });

  it("the quota.warning body written in SQL is serializeEvent(quotaWarningEvent(...)) byte for byte, and invoices carry core's idempotency key", async () => {
    const app = await freshStore("app");
    try {
      const { accountId, keyId } = { accountId: "acc_\"quoted\\", keyId: "key_1" };
      await app.createAccount({ id: accountId, name: "A", tier: "growth", createdAt: 0, limits: {}, allowedCidrs: [], billing: {} });
      await app.createWebhook({ id: "wh_1", accountId, url: "https://x.example/h", events: ["quota.warning"], secret: "whsec_x", createdAt: 0 }, 5);
      // An anchor day of 31 in a 30-day month and a base quota whose 80% is fractional.
      const quota = { anchorDay: 31, baseQuota: 7, blockSize: 3, blockPrice: 100, currency: "usd", retryAfterFailureMs: 1000, maxAutoCharges: 3, warningEventId: "evt_w1", invoiceId: "inv_1", heldEventId: "evt_h1" };
      const now = Date.UTC(2026, 10, 20, 9, 30, 15, 123);
      const period = billingPeriod(now, 31);
      expect(period).toEqual({ start: Date.UTC(2026, 9, 31), end: Date.UTC(2026, 10, 30) });
      let warned: number | null = null;
      for (let i = 1; i <= 8; i++) {
        const r = await app.admit({ keyId, accountId, perMinute: 100, perDay: 100, windowMs: 60_000, now: now + i, quota: { ...quota, warningEventId: `evt_w${i}` } });
        if (r.kind === "allowed" && r.quota?.warned) {
          warned = i;
          expect(r.quota).toMatchObject({ periodStart: period.start, periodEnd: period.end });
        }
        if (i === 8) expect(r).toMatchObject({ kind: "quota_exhausted", flipped: true, chargeInvoiceId: "inv_1" });
      }
      expect(warned).toBe(6);
      const [d] = await app.claimDeliveries({ now: now + 100, leaseMs: 1000, limit: 10, perWebhook: 10 });
      expect(d!.body).toBe(serializeEvent(quotaWarningEvent("evt_w6", accountId, now + 6, { used: 6, allowance: 7, threshold: 6, periodStart: period.start, periodEnd: period.end })));
      const [inv] = await app.listInvoices(accountId);
      expect(inv!.idempotencyKey).toBe(chargeIdempotencyKey(accountId, isoTime(period.start), 1, 1));
      expect(inv).toMatchObject({ periodStart: isoTime(period.start), periodEnd: isoTime(period.end), callsUsed: 7, block: 1, attempt: 1 });
    } finally {
      await dispose(app);
    }
  });

  it("upgrading a database with deliveries from before dlv_<ULID> ids: they stay claimable, ahead of newer ones, and new ids are dlv_<ULID>", async () => {
    const t = await databaseAtVersion(3, async (client) => {
      // A pending delivery as the version-2 outbox wrote it: dlv_ + the event's id + a sequence number.
      await client.query(`INSERT INTO accounts (id, name, tier, created_at) VALUES ('acc_old', 'Old', 'growth', 0);
        INSERT INTO webhooks (id, account_id, url, events, secret, created_at) VALUES ('wh_old', 'acc_old', 'https://h.example/x', '{quota.warning}', 'whsec_x', 0);
        INSERT INTO events (id, type, account_id, created_at, body) VALUES ('evt_01OLD', 'quota.warning', 'acc_old', 1000, '{}');
        INSERT INTO deliveries (id, event_id, webhook_id, account_id, status, attempts, next_attempt_at, created_at)
          VALUES ('dlv_01OLD000001', 'evt_01OLD', 'wh_old', 'acc_old', 'pending', 0, 1000, 1000);`);
    });
    const up = await openStorage(t.url, { clock: "app" });
    try {
      await up.migrate();
      const data = { calls_used: 1, monthly_limit: 2, threshold: 1, period_start: "x", period_end: "y" };
      await up.emitEvent({ id: "evt_new", type: "quota.warning", accountId: "acc_old", createdAt: isoTime(1000), data }, 1000);
      const claimed = await up.claimDeliveries({ now: 2000, leaseMs: 1000, limit: 10, perWebhook: 10 });
      expect(claimed.map((d) => [d.eventId, d.attempt])).toEqual([["evt_01OLD", 1], ["evt_new", 1]]);
      expect(claimed[0]!.deliveryId).toBe("dlv_01OLD000001");
      expect(isId("dlv", claimed[1]!.deliveryId)).toBe(true);
    } finally {
      await up.close();
      await t.drop();
    }
  });

  it("upgrading from version 4: older keys and accounts get their window and day rows and version 0, and the old single-admission function still decides", async () => {
    const t = await databaseAtVersion(4, async (client) => {
      await client.query(`INSERT INTO accounts (id, name, tier, created_at) VALUES ('acc_old', 'Old', 'growth', 0);
        INSERT INTO api_keys (id, account_id, name, environment, scopes, prefix, is_active, created_at) VALUES ('key_old', 'acc_old', 'k', 'test', '{benchmarks:read}', 'svc_test_old', true, 0);
        INSERT INTO key_hashes (hash, key_id) VALUES ('h_old', 'key_old');`);
    });
    const up = await openStorage(t.url, { clock: "app" });
    const check = new pg.Client({ connectionString: t.url });
    try {
      await up.migrate();
      await check.connect();
      const rows = await check.query("SELECT (SELECT count(*) FROM rate_windows WHERE key_id = 'key_old')::int AS w, (SELECT count(*) FROM day_counters WHERE account_id = 'acc_old')::int AS d");
      expect(rows.rows[0]).toEqual({ w: 1, d: 1 });
      const found = await up.findKeyByHash("h_old");
      expect(found?.version).toBe(0);
      const base = { keyId: "key_old", accountId: "acc_old", perMinute: 2, perDay: 10, windowMs: 60_000, quota: null };
      expect(await up.admit({ ...base, now: T0, expect: { keyHash: "h_old", version: 0 } })).toMatchObject({ kind: "allowed", minute: { remaining: 1 } });
      // A server of the previous version calls benchdata_admit during a rolling upgrade: same decisions, same rows.
      const old = await check.query("SELECT benchdata_admit($1, 'key_old', 'acc_old', 2, 10, 60000, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) AS r", [T0 + 1]);
      expect(old.rows[0].r).toMatchObject({ kind: "allowed", minute: { remaining: 0 }, day: { remaining: 8 } });
      expect(await up.admit({ ...base, now: T0 + 2 })).toMatchObject({ kind: "rate_limited", window: "minute" });
    } finally {
      await check.end();
      await up.close();
      await t.drop();
    }
  });

  it("upgrading from version 5: a server of that version still gets AdmitResult's JSON from benchdata_admit_batch, deciding on the same windows", async () => {
    const t = await databaseAtVersion(5);
    const up = await openStorage(t.url, { clock: "app" });
    const check = new pg.Client({ connectionString: t.url });
    try {
      await up.migrate();
      await check.connect();
      await up.createAccount({ id: "acc_v5", name: "A", tier: "growth", createdAt: 0, limits: {}, allowedCidrs: [], billing: {} });
      const key = { id: "key_v5", accountId: "acc_v5", name: "k", environment: "test" as const, scopes: ["benchmarks:read" as const], prefix: "svc_test_v5", isActive: true, createdAt: 0, rotatedAt: null, revokedAt: null };
      await up.createKey({ key, hash: "h_v5", maxKeys: 5, eventId: "evt_v5" });
      expect(await up.admit({ keyId: "key_v5", accountId: "acc_v5", perMinute: 2, perDay: 10, windowMs: 60_000, now: T0, quota: null })).toMatchObject({ kind: "allowed" });
      // As version 5's postgres-storage.ts sends a batch: an allowed, a rate-limited, a stale one and a quota admission.
      const old = await check.query(
        `SELECT benchdata_admit_batch($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::integer[], $6::bigint[], $7::text[], $8::bigint[], $9::boolean[],
                $10::integer[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::bigint[], $16::integer[], $17::text[], $18::text[]) AS r`,
        [
          [T0 + 1, T0 + 2, T0 + 3, T0 + 4], ["key_v5", "key_v5", "key_v5", "key_q5"], ["acc_v5", "acc_v5", "acc_v5", "acc_v5"], [2, 2, 2, 5], [10, 10, 10, 10],
          [60_000, 60_000, 60_000, 60_000], [null, null, "h_v5", null], [null, null, 7, null], [false, false, false, true], [null, null, null, 1],
          [null, null, null, 100], [null, null, null, 10], [null, null, null, 500], [null, null, null, "usd"], [null, null, null, 1000], [null, null, null, 3],
          [null, null, null, "evt_w5"], [null, null, null, "inv_5"],
        ],
      );
      const day = { limit: 10, resetAt: Date.UTC(2026, 10, 17) };
      expect(old.rows[0].r).toEqual([
        { kind: "allowed", now: T0 + 1, minute: { limit: 2, remaining: 0, resetAt: T0 + 60_000 }, day: { ...day, remaining: 7 }, quota: null },
        { kind: "rate_limited", now: T0 + 2, window: "minute", minute: { limit: 2, remaining: 0, resetAt: T0 + 60_000 }, day: { ...day, remaining: 7 }, retryAfterMs: 59_998 },
        { kind: "stale", now: T0 + 3 },
        {
          kind: "allowed",
          now: T0 + 4,
          minute: { limit: 5, remaining: 4, resetAt: T0 + 4 + 60_000 },
          // Decided first: a batch goes through its admissions in account and key order.
          day: { ...day, remaining: 8 },
          quota: { used: 1, allowance: 100, periodStart: Date.UTC(2026, 10, 1), periodEnd: Date.UTC(2026, 11, 1), warned: null },
        },
      ]);
      // The old single admission goes through the same wrapper.
      const single = await check.query("SELECT benchdata_admit($1, 'key_v5', 'acc_v5', 2, 10, 60000, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) AS r", [T0 + 5]);
      expect(single.rows[0].r).toMatchObject({ kind: "rate_limited", window: "minute", day: { remaining: 7 } });
      expect(await up.admit({ keyId: "key_v5", accountId: "acc_v5", perMinute: 3, perDay: 10, windowMs: 60_000, now: T0 + 6, quota: null })).toMatchObject({ kind: "allowed", minute: { remaining: 0 }, day: { remaining: 6 } });
    } finally {
      await check.end();
      await up.close();
      await t.drop();
    }
  });

  it("a key given with two accounts in one batch (a caller's mistake) keeps one window, as in the memory store", async () => {
    const app = await freshStore("app");
    try {
      const base = { keyId: "key_shared", perMinute: 2, perDay: 100, windowMs: 60_000, now: T0, quota: null };
      const results = await Promise.all([app.admit({ ...base, accountId: "acc_b" }), app.admit({ ...base, accountId: "acc_a" }), app.admit({ ...base, accountId: "acc_b" })]);
      expect(results.map((r) => r.kind).sort()).toEqual(["allowed", "allowed", "rate_limited"]);
      expect(await app.admit({ ...base, accountId: "acc_a", now: T0 + 1 })).toMatchObject({ kind: "rate_limited" });
    } finally {
      await dispose(app);
    }
  });

  it("a key's whole log written before schema 14 is honoured at its next admission, then kept in chunks; peekLimits reads both forms", async () => {
    await withDatabase(async (up, c) => {
      await up.createAccount({ id: "acc_old", name: "Old", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
      // The row an older server leaves: the whole log in the array, no head/next.
      await c.query("INSERT INTO rate_windows (key_id, stamps) VALUES ('key_old', $1::bigint[])", [Array.from({ length: 300 }, (_, i) => T0 + i * 100)]);
      const admit = (now: number, perMinute: number) => up.admit({ now, keyId: "key_old", accountId: "acc_old", perMinute, perDay: 1000, windowMs: 60_000, quota: null });
      const peek = (now: number, perMinute: number) => up.peekLimits({ now, keyId: "key_old", accountId: "acc_old", perMinute, perDay: 1000, windowMs: 60_000 });
      expect((await peek(T0 + 40_000, 300)).minute).toEqual({ limit: 300, remaining: 0, resetAt: T0 + 60_000 });
      expect(await admit(T0 + 40_000, 300)).toMatchObject({ kind: "rate_limited", retryAfterMs: 20_000 });
      expect(await admit(T0 + 40_001, 301)).toMatchObject({ kind: "allowed", minute: { remaining: 0, resetAt: T0 + 60_000 } });
      expect(await admit(T0 + 60_000, 301)).toMatchObject({ kind: "allowed", minute: { remaining: 0, resetAt: T0 + 60_100 } });
      expect((await peek(T0 + 60_000, 10)).minute).toEqual({ limit: 10, remaining: 0, resetAt: T0 + 29_200 + 60_000 });
      expect((await peek(T0 + 60_000, 400)).minute).toEqual({ limit: 400, remaining: 99, resetAt: T0 + 60_100 });
      const row = (await c.query("SELECT cardinality(stamps) AS n, head, next FROM rate_windows WHERE key_id = 'key_old'")).rows[0];
      expect([Number(row.n), Number(row.head), Number(row.next)]).toEqual([0, 1, 302]);
      const chunks = (await c.query("SELECT chunk FROM window_chunks WHERE key_id = 'key_old' ORDER BY chunk")).rows.map((r) => Number(r.chunk));
      expect(chunks).toEqual([0, 1, 2]);
    });
  });

  it("one batch's days counted line up with its admissions: a clock behind its account's stored day, not first in the batch", async () => {
    await withDatabase(async (up, c) => {
      const midnight = Date.UTC(2026, 10, 17);
      const day = midnight / 86_400_000;
      for (const id of ["acc_x", "acc_y"]) await up.createAccount({ id, name: id, tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
      const input = (accountId: string, keyId: string, now: number): AdmitInput => ({ now, keyId, accountId, perMinute: 10, perDay: 5, windowMs: 60_000, quota: null });
      // acc_y's counter moves to the new day; then, in one statement, acc_x at 5 s before midnight (its own day)
      // and acc_y 1 ms before it (a clock behind: counted toward acc_y's stored, later day).
      expect((await up.admit(input("acc_y", "key_y", midnight))).kind).toBe("allowed");
      const n = (x: unknown): unknown[] => [x, x];
      const answer = await c.query(
        `SELECT benchdata_admit_arrays('{acc_x,acc_y}', $1::bigint[], '{key_x,key_y}', '{acc_x,acc_y}', '{10,10}', '{5,5}', '{60000,60000}',
                $2::text[], $3::bigint[], '{f,f}', $3::integer[], $3::bigint[], $3::bigint[], $3::bigint[], $2::text[], $3::bigint[],
                $3::integer[], $2::text[], $2::text[]) AS r`,
        [[midnight - 5000, midnight - 1], n(null), n(null)],
      );
      expect(answer.rows[0].r[1]).toEqual([1, 1]);
      expect(answer.rows[0].r[8]).toEqual([null, day]);
      // Through the store: each admission reports its own counted day's reset, in whatever batches they go.
      const [x, y] = await Promise.all([up.admit(input("acc_x", "key_x", midnight - 4000)), up.admit(input("acc_y", "key_y", midnight - 1))]);
      expect(x).toMatchObject({ kind: "allowed", day: { remaining: 3, resetAt: midnight } });
      expect(y).toMatchObject({ kind: "allowed", day: { remaining: 2, resetAt: midnight + 86_400_000 } });
    });
  });

  it("one batch holding a key under two accounts decides the later account's turn on the window the batch left", async () => {
    // Through the function itself, so the admissions are certainly one batch (the Node side may split them).
    // Accounts are handled in order: acc_a's key_s, then acc_a's key_z (key_s's window leaves the hand), then
    // acc_b's two key_s admissions, which must see acc_a's, not the window as the statement first read it.
    await withDatabase(async (up, c) => {
      const n = (x: unknown): unknown[] => [x, x, x, x];
      const answer = await c.query(
        `SELECT benchdata_admit_arrays('{acc_a,acc_b}', $1::bigint[], '{key_s,key_s,key_z,key_s}', '{acc_b,acc_a,acc_a,acc_b}', '{2,2,2,2}',
                '{100,100,100,100}', '{60000,60000,60000,60000}', $2::text[], $3::bigint[], '{f,f,f,f}', $3::integer[], $3::bigint[],
                $3::bigint[], $3::bigint[], $2::text[], $3::bigint[], $3::integer[], $2::text[], $2::text[]) AS r`,
        [[T0, T0 + 1, T0 + 2, T0 + 3], n(null), n(null)],
      );
      // [clock, kinds, …]: 1 allowed, 2 refused by the minute window.
      expect(answer.rows[0].r[1]).toEqual([1, 1, 1, 2]);
      // Each key's log: its stamps at indices head … next − 1 (the chunks, in index order).
      const stored = await c.query(`SELECT r.key_id, coalesce(array_agg(u.s ORDER BY w.chunk, u.o) FILTER (WHERE u.s IS NOT NULL), '{}') AS stamps
                                      FROM rate_windows r LEFT JOIN window_chunks w ON w.key_id = r.key_id
                                      LEFT JOIN LATERAL unnest(w.stamps) WITH ORDINALITY AS u(s, o) ON w.chunk * 128 + u.o - 1 BETWEEN r.head AND r.next - 1
                                     GROUP BY r.key_id ORDER BY r.key_id`);
      expect(stored.rows.map((r) => [r.key_id, r.stamps.map(Number)])).toEqual([
        ["key_s", [T0, T0 + 1]],
        ["key_z", [T0 + 2]],
      ]);
    });
  });

  it("one batch stepping an account's quota many times, on both sides of a period boundary, decides as the memory store one by one", async () => {
    // Through the function itself, so the admissions are certainly one batch: the account's quota rows are held
    // and stepped in memory and written back when the batch moves between them and at its end.
    await withDatabase(async (up, c) => {
      const mem = createMemoryStorage();
      const account = { id: "acc_q", name: "Quota", tier: "growth" as const, createdAt: T0, limits: {}, allowedCidrs: [], billing: {} };
      await up.createAccount(account);
      await mem.createAccount(account);
      // Anchor day 1: the period turns over at 1 December 00:00 UTC. The times alternate sides, so the batch moves
      // between the two quota rows; November's sees the warning (4th use), exhaustion with a charge (6th) and
      // refusals with that charge pending; December's a warning, and the batch ends on it.
      const boundary = Date.UTC(2026, 11, 1);
      const offsets = [-9, 1, -8, 2, -7, -6, 3, -5, -4, 4, -3, -2, -1, 5];
      const inputs: AdmitInput[] = offsets.map((o, i) => ({
        now: boundary + o * 1000,
        keyId: "key_q",
        accountId: "acc_q",
        perMinute: 100,
        perDay: 1000,
        windowMs: 60_000,
        quota: { anchorDay: 1, baseQuota: 5, blockSize: 2, blockPrice: 700, currency: "usd", retryAfterFailureMs: 20_000, maxAutoCharges: 3, warningEventId: `evt_q${i}`, invoiceId: `inv_q${i}`, heldEventId: `evt_h${i}` },
      }));
      const expected = [];
      for (const input of inputs) expected.push(await mem.admit(input));
      const col = <T,>(f: (q: NonNullable<AdmitInput["quota"]>, input: AdmitInput) => T): T[] => inputs.map((x) => f(x.quota!, x));
      const answer = await c.query(
        `SELECT benchdata_admit_arrays('{acc_q}', $1::bigint[], $2::text[], $3::text[], $4::integer[], $5::integer[], $6::bigint[], $7::text[], $8::bigint[],
                $9::boolean[], $10::integer[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::bigint[], $16::integer[], $17::text[], $18::text[]) AS r`,
        [
          col((_, x) => x.now), col((_, x) => x.keyId), col((_, x) => x.accountId), col((_, x) => x.perMinute), col((_, x) => x.perDay), col((_, x) => x.windowMs),
          col(() => null), col(() => null), col(() => true), col((q) => q.anchorDay), col((q) => q.baseQuota), col((q) => q.blockSize), col((q) => q.blockPrice),
          col((q) => q.currency), col((q) => q.retryAfterFailureMs), col((q) => q.maxAutoCharges), col((q) => q.warningEventId), col((q) => q.invoiceId),
        ],
      );
      const [, kinds, , , , , whole] = answer.rows[0].r as [number, number[], unknown, unknown, unknown, unknown, unknown[]];
      expect(kinds).toEqual(inputs.map(() => 4));
      expect(whole).toEqual(expected);
      expect(expected.map((r) => r.kind)).toContain("quota_exhausted");
      // What the batch left in the rows, the invoices and the warnings.
      for (const now of [boundary - 1000, boundary + 1000]) expect(await up.usage("acc_q", now, 1, 5, 2)).toEqual(await mem.usage("acc_q", now, 1, 5, 2));
      expect(await up.listInvoices("acc_q")).toEqual(await mem.listInvoices("acc_q"));
      const warnings = await c.query("SELECT id FROM events WHERE type = 'quota.warning' ORDER BY id");
      const warned = expected.flatMap((r, i) => ("quota" in r && r.quota !== null && r.quota.warned !== null ? [inputs[i]!.quota!.warningEventId] : []));
      expect(warned).toEqual(["evt_q5", "evt_q9"]);
      expect(warnings.rows.map((r) => r.id)).toEqual(warned);
    });
  });

  it("a batch's quota admissions with an anchor day outside 1-31 each get their own billing period, as core's billingPeriod gives it", async () => {
    // Servers only send anchor days 1-31, for which periods tile time and the batch reuses the one it last
    // worked out. Other anchors do not tile (a period need not contain its time), so each is worked out again.
    await withDatabase(async (up, c) => {
      await up.createAccount({ id: "acc_z", name: "Zero", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
      const nows = [Date.UTC(2026, 11, 31, 5), Date.UTC(2026, 10, 30, 10)];
      const two = (x: unknown): unknown[] => [x, x];
      await c.query(
        `SELECT benchdata_admit_arrays('{acc_z}', $1::bigint[], '{key_z,key_z}', '{acc_z,acc_z}', '{10,10}', '{100,100}', '{60000,60000}',
                $2::text[], $3::bigint[], '{t,t}', '{0,0}', '{5,5}', '{2,2}', '{700,700}', '{usd,usd}', '{20000,20000}', '{3,3}',
                '{evt_z0,evt_z1}', '{inv_z0,inv_z1}') AS r`,
        [nows, two(null), two(null)],
      );
      const rows = await c.query("SELECT period_start, used FROM quota_periods WHERE account_id = 'acc_z' ORDER BY period_start");
      const starts = [...new Set(nows.map((now) => billingPeriod(now, 0).start))].sort((a, b) => a - b);
      expect(starts).toHaveLength(2);
      expect(rows.rows.map((r) => [Number(r.period_start), Number(r.used)])).toEqual(starts.map((start) => [start, 1]));
      // The per-admission step of earlier versions is gone: the batch does it.
      expect((await c.query("SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'benchdata_admit_quota'")).rows[0].n).toBe(0);
    });
  });

  it("durability: a batch without billing changes commits asynchronously, one with a quota admission (or inside a transaction that wrote) synchronously", async () => {
    await withDatabase(async (up, c) => {
      const batch = (quota: boolean): Promise<unknown> =>
        c.query(
          `SELECT benchdata_admit_arrays('{acc_d}', ARRAY[$1::bigint], '{key_d}', '{acc_d}', '{5}', '{10}', '{60000}', '{NULL}', '{NULL}', ARRAY[$2::boolean],
                  '{1}', '{100}', '{10}', '{500}', '{usd}', '{1000}', '{3}', '{evt_d}', '{inv_d}')`,
          [T0, quota],
        );
      const commitMode = async (before: string | null, quota: boolean): Promise<string> => {
        await c.query("BEGIN");
        if (before !== null) await c.query(before);
        await batch(quota);
        const mode = (await c.query("SHOW synchronous_commit")).rows[0].synchronous_commit as string;
        await c.query("ROLLBACK");
        return mode;
      };
      expect(await commitMode(null, false)).toBe("off");
      expect(await commitMode(null, true)).toBe("on");
      expect(await commitMode("UPDATE data_version SET version = version + 1", false)).toBe("on");
    });
  });

  it("two servers batching admissions for keys of shared accounts at once: exactly the daily limit per account, no deadlock", async () => {
    const t = await createTestDatabase();
    const a = await openStorage(t.url, { clock: "app" });
    const b = await openStorage(t.url, { clock: "app" });
    try {
      await a.migrate();
      const accounts = ["acc_p1", "acc_p2", "acc_p3", "acc_p4"];
      const keys: { id: string; accountId: string; hash: string }[] = [];
      for (const accountId of accounts) {
        await a.createAccount({ id: accountId, name: accountId, tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
        for (let k = 0; k < 10; k++) {
          const id = `key_${accountId}_${k}`;
          await a.createKey({ key: { id, accountId, name: id, environment: "test", scopes: ["benchmarks:read"], prefix: "svc_test_xxx", isActive: true, createdAt: T0, rotatedAt: null, revokedAt: null }, hash: `h_${id}`, maxKeys: 50, eventId: `evt_${id}` });
          keys.push({ id, accountId, hash: `h_${id}` });
        }
      }
      const results = await Promise.all(
        Array.from({ length: 800 }, (_, i) => {
          const key = keys[(i * 7) % keys.length]!;
          const store = i % 2 === 0 ? a : b;
          return store.admit({ now: T0 + (i % 13), keyId: key.id, accountId: key.accountId, perMinute: 1000, perDay: 120, windowMs: 60_000, quota: null, expect: { keyHash: key.hash, version: 0 } }).then((r) => ({ accountId: key.accountId, kind: r.kind }));
        }),
      );
      for (const accountId of accounts) {
        const mine = results.filter((r) => r.accountId === accountId);
        expect(mine.filter((r) => r.kind === "allowed").length, accountId).toBe(120);
        expect(mine.filter((r) => r.kind !== "allowed" && r.kind !== "rate_limited"), accountId).toEqual([]);
      }
    } finally {
      await a.close();
      await b.close();
      await t.drop();
    }
  });

  it("an account without a day row (made by an older server): concurrent batches from two servers still admit exactly the per-minute limit", async () => {
    const t = await createTestDatabase();
    const a = await openStorage(t.url, { clock: "app" });
    const b = await openStorage(t.url, { clock: "app" });
    const raw = new pg.Client({ connectionString: t.url });
    try {
      await a.migrate();
      await raw.connect();
      for (let round = 0; round < 5; round++) {
        const acc = `acc_old${round}`;
        const key = `key_old${round}`;
        // As a server of the previous version wrote them: no day row; the key's window row from migration 5 or createKey.
        await raw.query(`INSERT INTO accounts (id, name, tier, created_at) VALUES ($1, 'Old', 'growth', 0)`, [acc]);
        await raw.query(`INSERT INTO rate_windows (key_id, stamps) VALUES ($1, '{}')`, [key]);
        const input = { now: T0, keyId: key, accountId: acc, perMinute: 1, perDay: 100, windowMs: 60_000, quota: null };
        const results = await Promise.all([a.admit(input), b.admit(input), a.admit(input), b.admit(input)]);
        expect(results.filter((r) => r.kind === "allowed").length, acc).toBe(1);
      }
    } finally {
      await raw.end();
      await a.close();
      await b.close();
      await t.drop();
    }
  });

  it("an admission PostgreSQL rejects (a limit out of range) fails alone, not the batch it came in", async () => {
    const s = await freshStore("app");
    try {
      const ok = { now: T0, keyId: "key_fine", accountId: "acc_fine", perMinute: 10, perDay: 100, windowMs: 60_000, quota: null };
      const bad = { now: T0, keyId: "key_bad", accountId: "acc_bad", perMinute: 10, perDay: 3_000_000_000, windowMs: 60_000, quota: null };
      const [first, second] = await Promise.allSettled([s.admit(ok), s.admit(bad)]);
      expect(first).toMatchObject({ status: "fulfilled", value: { kind: "allowed" } });
      expect(second.status).toBe("rejected");
    } finally {
      await dispose(s);
    }
  });

  it("ordered claims follow seq among committed deliveries only: one numbered in a transaction still open does not hold back a later-numbered one committed first (docs/webhooks.md, Ordering)", async () => {
    await withDatabase(async (up, c) => {
      await up.createAccount({ id: "acc_o", name: "O", tier: "growth", createdAt: 0, limits: {}, allowedCidrs: [], billing: {} });
      await up.createWebhook({ id: "wh_o", accountId: "acc_o", url: "https://x.example/h", events: ["quota.warning"], secret: "whsec_x", createdAt: 0 }, 5);
      const claim = async (now: number) => (await up.claimDeliveries({ now, leaseMs: 60_000, limit: 10, perWebhook: 4, ordered: true })).map((d) => d.eventId);
      const succeeded = (eventId: string) => c.query("UPDATE deliveries SET status = 'succeeded', lease_token = NULL, lease_until = 0, next_attempt_at = NULL WHERE event_id = $1", [eventId]);
      // A transaction writes an event (its delivery takes its seq now) and stays open; another writes one and commits.
      await c.query("BEGIN");
      await c.query("SELECT benchdata_insert_event('evt_early', 'quota.warning', 'acc_o', $1::bigint, '{}')", [T0]);
      await up.emitEvent({ id: "evt_late", type: "quota.warning", accountId: "acc_o", createdAt: new Date(T0).toISOString(), data: { calls_used: 1, monthly_limit: 2, threshold: 1, period_start: "x", period_end: "y" } }, T0);
      // The later-numbered one goes first: the claim cannot see the earlier one.
      expect(await claim(T0)).toEqual(["evt_late"]);
      await c.query("COMMIT");
      const seqs = (await c.query("SELECT event_id, seq FROM deliveries WHERE webhook_id = 'wh_o' ORDER BY seq")).rows.map((r) => r.event_id);
      expect(seqs).toEqual(["evt_early", "evt_late"]);
      // Once committed, the earlier-numbered one waits while the later one is in flight (one at a time), then goes.
      expect(await claim(T0 + 1)).toEqual([]);
      await succeeded("evt_late");
      expect(await claim(T0 + 2)).toEqual(["evt_early"]);
      await succeeded("evt_early");
      // Both committed before a claim: seq order, whatever the commit order (here the reverse of it).
      await c.query("BEGIN");
      await c.query("SELECT benchdata_insert_event('evt_a', 'quota.warning', 'acc_o', $1::bigint, '{}')", [T0]);
      await up.emitEvent({ id: "evt_b", type: "quota.warning", accountId: "acc_o", createdAt: new Date(T0).toISOString(), data: { calls_used: 1, monthly_limit: 2, threshold: 1, period_start: "x", period_end: "y" } }, T0);
      await c.query("COMMIT");
      expect(await claim(T0 + 3)).toEqual(["evt_a"]);
    });
  });

  it("an ordered claim reads each webhook's head by index seeks, never the deliveries queued behind a head waiting for its retry (EXPLAIN ANALYZE)", async () => {
    await withDatabase(async (up, c) => {
      await up.createAccount({ id: "acc_q", name: "Q", tier: "growth", createdAt: 0, limits: {}, allowedCidrs: [], billing: {} });
      await up.createWebhook({ id: "wh_q", accountId: "acc_q", url: "https://x.example/h", events: ["quota.warning"], secret: "whsec_x", createdAt: 0 }, 5);
      await c.query("SELECT benchdata_insert_event('evt_head', 'quota.warning', 'acc_q', $1::bigint, '{}')", [T0]);
      const [head] = await up.claimDeliveries({ now: T0, leaseMs: 60_000, limit: 10, perWebhook: 4, ordered: true });
      expect(await up.completeDelivery({ deliveryId: head!.deliveryId, leaseToken: head!.leaseToken, attempt: { attempt: 1, at: T0, statusCode: 500, latencyMs: 1, error: "http_status", responseBody: "" }, next: { status: "pending", at: T0 + 30_000 } })).toBe(true);
      await c.query("SELECT benchdata_insert_event('evt_q' || i, 'quota.warning', 'acc_q', $1::bigint, '{}') FROM generate_series(1, 2000) AS i", [T0]);
      await c.query("ANALYZE deliveries");
      expect(await up.claimDeliveries({ now: T0 + 1000, leaseMs: 60_000, limit: 10, perWebhook: 4, ordered: true })).toEqual([]);
      // The heads as the claim finds them (its own fragments), analysed: the rows read from deliveries stay a handful.
      const compiler = new Kysely<unknown>({
        dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler() },
      });
      const query = sql`EXPLAIN (ANALYZE, FORMAT JSON) WITH RECURSIVE ${PENDING_WEBHOOKS}
                        SELECT h.id FROM pending_webhooks pw CROSS JOIN LATERAL (${HEAD_OF_PENDING_WEBHOOK}) h WHERE h.next_attempt_at <= ${T0 + 1000}::bigint`.compile(compiler);
      const plan = (await c.query(query.sql, [...query.parameters])).rows[0]["QUERY PLAN"][0].Plan;
      const reads: { node: string; rows: number }[] = [];
      const walk = (n: Record<string, unknown>): void => {
        if (n["Relation Name"] === "deliveries") reads.push({ node: String(n["Node Type"]), rows: (Number(n["Actual Rows"]) + Number(n["Rows Removed by Filter"] ?? 0)) * Number(n["Actual Loops"]) });
        for (const child of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      walk(plan);
      expect(reads.length).toBeGreaterThanOrEqual(2);
      for (const r of reads) expect(r.node).toMatch(/^Index (Only )?Scan$/);
      expect(reads.reduce((sum, r) => sum + r.rows, 0)).toBeLessThan(10);
      await compiler.destroy();
    });
  });

  it("retention: a batch of pruning locks its table's oldest rows by an index range and deletes them by tuple id, reading at most `limit` rows of any table (EXPLAIN ANALYZE)", async () => {
    await withDatabase(async (_up, c) => {
      // 20,000 rows in every table pruning reads, statistics gathered: the plans a busy database gets.
      const T = Date.UTC(2026, 0, 1);
      await c.query(`INSERT INTO events (id, type, account_id, created_at, body) SELECT 'evt_' || lpad(i::text, 8, '0'), 'quota.warning', 'acc_' || (i % 50), ${T} + i * 1000, '{}' FROM generate_series(1, 20000) i`);
      await c.query(`INSERT INTO deliveries (id, event_id, webhook_id, account_id, status, attempts, created_at)
                     SELECT 'dlv_' || lpad(i::text, 8, '0'), 'evt_' || lpad(i::text, 8, '0'), 'wh_' || (i % 50), 'acc_' || (i % 50), CASE WHEN i % 10 = 0 THEN 'pending' ELSE 'succeeded' END, 1, ${T} + i * 1000
                     FROM generate_series(1, 20000) i`);
      await c.query(`INSERT INTO delivery_attempts (delivery_id, attempt, at, status_code, latency_ms, error, response_body) SELECT id, 1, created_at, 200, 1, NULL, 'ok' FROM deliveries`);
      await c.query(`INSERT INTO sessions (token_hash, account_id, created_at, expires_at) SELECT 'h' || i, 'acc_1', ${T}, ${T} + i * 1000 FROM generate_series(1, 20000) i`);
      await c.query(`INSERT INTO sign_in_links (token_hash, account_id, created_at, expires_at) SELECT 'l' || i, 'acc_1', ${T}, ${T} + i * 1000 FROM generate_series(1, 20000) i`);
      await c.query(`INSERT INTO day_counters (account_id, day, count) SELECT 'acc_' || i, 20000 + i % 400, 5 FROM generate_series(1, 20000) i`);
      await c.query(`INSERT INTO usage_days (account_id, day, count) SELECT 'acc_' || (i % 50), 20000 + i / 50, 5 FROM generate_series(1, 20000) i`);
      await c.query("ANALYZE");
      const compiler = new Kysely<unknown>({
        dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler() },
      });
      const limit = 500;
      for (const target of PRUNE_ORDER.filter(isIndexedTarget)) {
        const days = PRUNE_SPECS[target].key === "day";
        for (const after of [null, days ? { key: 20_100, id: "x" } : { key: T + 5_000_000, id: "x" }]) {
          const query = postgresPruneBatch({ target, before: days ? 20_300 : T + 15_000_000, limit, after }).compile(compiler);
          // Analysed for real (the deletions run), then rolled back.
          await c.query("BEGIN");
          const plan = (await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${query.sql}`, [...query.parameters])).rows[0]["QUERY PLAN"][0].Plan;
          await c.query("ROLLBACK");
          const reads: { relation: string; node: string; index: string | undefined; rows: number }[] = [];
          const walk = (n: Record<string, unknown>): void => {
            if (n["Relation Name"] !== undefined && n["Node Type"] !== "ModifyTable") {
              reads.push({ relation: String(n["Relation Name"]), node: String(n["Node Type"]), index: n["Index Name"] as string | undefined, rows: (Number(n["Actual Rows"]) + Number(n["Rows Removed by Filter"] ?? 0)) * Number(n["Actual Loops"]) });
            }
            for (const child of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
          };
          walk(plan);
          const label = `${target} after ${after === null ? "nothing" : "a cursor"}: ${JSON.stringify(reads)}`;
          expect(reads.find((r) => r.index === PRUNE_SPECS[target].index), label).toMatchObject({ relation: PRUNE_SPECS[target].table, rows: limit });
          for (const r of reads) {
            expect(r.node, label).toMatch(/^(Index (Only )?Scan|Tid Scan)$/);
            expect(r.rows, label).toBeLessThanOrEqual(limit);
          }
          if (target === "deliveries") expect(reads.map((r) => r.index ?? r.node)).toEqual(expect.arrayContaining(["delivery_attempts_by_delivery", "Tid Scan"]));
          if (target === "events") expect(reads.map((r) => r.index)).toContain("deliveries_by_event");
        }
      }
      await compiler.destroy();
    });
  }, 60_000);

  it("an account updated behind storage's back (an older server, psql) still moves its version", async () => {
    const t = await createTestDatabase();
    const s = await openStorage(t.url, { clock: "app" });
    const raw = new pg.Client({ connectionString: t.url });
    try {
      await s.migrate();
      await raw.connect();
      await s.createAccount({ id: "acc_v", name: "V", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
      await s.createKey({ key: { id: "key_v", accountId: "acc_v", name: "k", environment: "test", scopes: ["benchmarks:read"], prefix: "svc_test_vvv", isActive: true, createdAt: T0, rotatedAt: null, revokedAt: null }, hash: "h_v", maxKeys: 5, eventId: "evt_v" });
      const before = (await s.findKeyByHash("h_v"))!.version;
      await raw.query(`UPDATE accounts SET allowed_cidrs = '{10.0.0.0/8}' WHERE id = 'acc_v'`);
      const after = await s.findKeyByHash("h_v");
      expect(after!.version).not.toBe(before);
      expect(after!.account.allowedCidrs).toEqual(["10.0.0.0/8"]);
      expect(await s.admit({ now: T0, keyId: "key_v", accountId: "acc_v", perMinute: 10, perDay: 10, windowMs: 60_000, quota: null, expect: { keyHash: "h_v", version: before } })).toMatchObject({ kind: "stale" });
    } finally {
      await raw.end();
      await s.close();
      await t.drop();
    }
  });

  describe("admission epoch: a server skips the key check of a lookup it verified while no key or hash has changed", () => {
    const ACC = "acc_epoch";
    const setup = async (): Promise<{ a: OpenedStorage; b: OpenedStorage; psql: pg.Client; done: () => Promise<void> }> => {
      const t = await createTestDatabase();
      const a = await openStorage(t.url, { clock: "app" });
      const b = await openStorage(t.url, { clock: "app" });
      const psql = new pg.Client({ connectionString: t.url });
      await a.migrate();
      await psql.connect();
      await a.createAccount({ id: ACC, name: "A", tier: "growth", createdAt: 0, limits: {}, allowedCidrs: [], billing: {} });
      for (let k = 1; k <= 8; k++) {
        const id = `key_e${k}`;
        const key = { id, accountId: ACC, name: id, environment: "test" as const, scopes: ["benchmarks:read" as const], prefix: "svc_test_e", isActive: true, createdAt: 0, rotatedAt: null, revokedAt: null };
        await b.createKey({ key, hash: `h_${id}`, maxKeys: 20, eventId: `evt_${id}` });
      }
      return { a, b, psql, done: async () => (await psql.end(), await a.close(), await b.close(), await t.drop()) };
    };
    let now = T0;
    const admit = (s: OpenedStorage, id: string, hash = `h_${id}`): Promise<string> =>
      s.admit({ keyId: id, accountId: ACC, perMinute: 1000, perDay: 10_000, windowMs: 60_000, now: now++, quota: null, expect: { keyHash: hash, version: 0 } }).then((r) => r.kind);

    it("a rotation, revocation or any change in psql, committed on another connection, makes the old key stale on the very next batch", async () => {
      const { a, b, psql, done } = await setup();
      try {
        // Each change follows two admissions on `a`: the second was trusted at the epoch the first read.
        const changed = async (id: string, change: () => Promise<unknown>): Promise<string> => {
          expect(await admit(a, id)).toBe("allowed");
          expect(await admit(a, id)).toBe("allowed");
          await change();
          return admit(a, id);
        };
        expect(await changed("key_e1", () => b.rotateKey({ accountId: ACC, keyId: "key_e1", newHash: "h_key_e1_new", newPrefix: "svc_test_n", now, eventId: "evt_r1" }))).toBe("stale");
        expect(await admit(a, "key_e1", "h_key_e1_new")).toBe("allowed");
        expect(await changed("key_e2", () => b.revokeKey({ accountId: ACC, keyId: "key_e2", now, eventId: "evt_v2" }))).toBe("stale");
        expect(await changed("key_e3", () => psql.query("UPDATE key_hashes SET retired = true WHERE key_id = 'key_e3'"))).toBe("stale");
        expect(await changed("key_e4", () => psql.query("UPDATE api_keys SET account_id = 'acc_elsewhere' WHERE id = 'key_e4'"))).toBe("stale");
        expect(await changed("key_e5", () => psql.query("DELETE FROM key_hashes WHERE key_id = 'key_e5'"))).toBe("stale");
        expect(await changed("key_e6", () => psql.query("UPDATE key_hashes SET key_id = 'key_e7' WHERE key_id = 'key_e6'"))).toBe("stale");
        // Even as a logical replication subscriber applies changes (session_replication_role = replica).
        expect(await changed("key_e7", () => psql.query("BEGIN; SET LOCAL session_replication_role = replica; UPDATE api_keys SET is_active = false WHERE id = 'key_e7'; COMMIT"))).toBe("stale");
        expect(await changed("key_e8", () => psql.query("TRUNCATE key_hashes"))).toBe("stale");
      } finally {
        await done();
      }
    });

    it("the skip is real, and only the epoch allows it: a change that does not move it is not seen by a server that verified the key, but is by an older server", async () => {
      const { a, b, psql, done } = await setup();
      try {
        expect(await admit(a, "key_e1")).toBe("allowed");
        await psql.query("BEGIN; ALTER TABLE key_hashes DISABLE TRIGGER key_hashes_admission_epoch; UPDATE key_hashes SET retired = true WHERE key_id = 'key_e1'; ALTER TABLE key_hashes ENABLE ALWAYS TRIGGER key_hashes_admission_epoch; COMMIT");
        // Trusted without the join (which would find the hash retired)...
        expect(await admit(a, "key_e1")).toBe("allowed");
        // ...while a server of version 6 (no epoch) is always checked by it.
        const old = await psql.query(
          `SELECT benchdata_admit_arrays('{${ACC}}', '{${now}}', '{key_e1}', '{${ACC}}', '{1000}', '{10000}', '{60000}', '{h_key_e1}', '{0}', '{f}',
                  '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}', '{NULL}') -> 1 ->> 0 AS kind`,
        );
        expect(old.rows[0].kind).toBe("0");
        // Another instance, which never verified the key, checks it.
        expect(await admit(b, "key_e1")).toBe("stale");
      } finally {
        await done();
      }
    });
  });

  it("the hot path's array literals reach PostgreSQL exactly: quotes, backslashes, commas, braces, NULL as text, empty strings", async () => {
    const t = await createTestDatabase();
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    try {
      const texts = ['plain', 'with "quotes"', "back\\slash", "a,b", "{braces}", "NULL", "null", "", " spaced ", "ünïcødé", null];
      const got = await client.query("SELECT $1::text[] AS t, $2::bigint[] AS n, $3::boolean[] AS b", [arrayLiteral(texts), arrayLiteral([0, -5, 9007199254740991, null]), arrayLiteral([true, false, null])]);
      expect(got.rows[0].t).toEqual(texts);
      expect(got.rows[0].n).toEqual(["0", "-5", "9007199254740991", null]);
      expect(got.rows[0].b).toEqual([true, false, null]);
      expect(() => arrayLiteral([Number.NaN])).toThrow(/finite/);
    } finally {
      await client.end();
      await t.drop();
    }
  });

  it("fail closed: a server at a dead port rejects quickly with service.unavailable, never hangs", async () => {
    const dead = await openStorage("postgres://postgres@127.0.0.1:1/test", { connectTimeoutMs: 1000 });
    const t0 = Date.now();
    await expect(dead.getAccount("acc_x")).rejects.toMatchObject({ code: "service.unavailable", status: 503 });
    await expect(dead.admit({ keyId: "k", accountId: "a", perMinute: 1, perDay: 1, windowMs: 60_000, now: 0, quota: null })).rejects.toMatchObject({ code: "service.unavailable" });
    await expect(dead.benchmarks.latestPeriod("saas", "all", "quarterly")).rejects.toMatchObject({ code: "service.unavailable" });
    expect(Date.now() - t0).toBeLessThan(3000);
    await dead.close();
  });

  it("fail closed, then recovers: while the server is gone calls reject with service.unavailable; when it returns the pool reconnects by itself", async () => {
    const t = await createTestDatabase();
    const target = new URL(t.url);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const via = new URL(t.url);
    via.port = String(proxy.port);
    const s2 = await openStorage(via.toString(), { connectTimeoutMs: 1000 });
    try {
      await s2.migrate();
      await s2.createAccount({ id: "acc_r", name: "R", tier: "growth", createdAt: 0, limits: {}, allowedCidrs: [], billing: {} });
      await proxy.down();
      const t0 = Date.now();
      await expect(s2.getAccount("acc_r")).rejects.toMatchObject({ code: "service.unavailable" });
      await expect(s2.admit({ keyId: "k", accountId: "acc_r", perMinute: 5, perDay: 5, windowMs: 60_000, now: 0, quota: null })).rejects.toMatchObject({ code: "service.unavailable" });
      expect(Date.now() - t0).toBeLessThan(3000);
      await proxy.up();
      expect(await s2.getAccount("acc_r")).toMatchObject({ id: "acc_r" });
      expect((await s2.admit({ keyId: "k", accountId: "acc_r", perMinute: 5, perDay: 5, windowMs: 60_000, now: 0, quota: null })).kind).toBe("allowed");
    } finally {
      await s2.close();
      await proxy.close();
      await t.drop();
    }
  });
});
