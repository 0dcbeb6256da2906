/**
 * Upgrades from every earlier schema version, SQLite and PostgreSQL: a database is built at version N (its
 * released files 1..N, recorded in `benchdata_migrations` as the servers of that time did), filled with an
 * account, a console session, a live key, a day's usage and a webhook through SQL valid at that version (the
 * initial schema's columns, which every later version keeps), then opened and migrated by today's code. Through
 * the HTTP API it must still work: the key authenticates, the usage counts the old day, and the webhook's secret
 * signs its test event. From the version that made tombstones on, an erased account whose events were never purged
 * is finished by the pruning worker. The upgraded schema must equal a fresh database's, functions included.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Storage } from "@benchdata/core";
import {
  createPruneWorker,
  cryptoRandom,
  defineConfig,
  generateApiKey,
  generateSessionToken,
  generateSigningSecret,
  manualClock,
  newId,
  sendTestEvent,
  utcDay,
  verifySignature,
} from "@benchdata/core";
import type { WebhookRequest } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { openStorage } from "./open-storage.ts";
import { openSqlite } from "./sqlite/driver.ts";
import { SQLITE_MIGRATIONS } from "./sqlite/migrations/index.ts";
import { POSTGRES_MIGRATIONS } from "./postgres/migrations/index.ts";
import { createTestDatabase, pgAvailableForTests } from "./test-support/pg-test-database.ts";
import { postgresSchema, sqliteSchema } from "./test-support/schema-snapshot.ts";
import type { SchemaSnapshot } from "./test-support/schema-snapshot.ts";

const T0 = Date.parse("2026-11-10T12:00:00.000Z");
const LIVE = "http://api.benchdata.test";
const PERCENTILE = "/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5&period=2026-Q3";
const HOOK_URL = "https://hooks.example.com/benchdata";
/** Calls the old server counted today before the upgrade. */
const USED_TODAY = 7;

/** What an old server had written: one of each, with the secrets a client holds. */
function seedRecords() {
  const clock = manualClock(T0 - 86_400_000);
  const accountId = newId("acc", clock, cryptoRandom);
  const session = generateSessionToken(cryptoRandom);
  const key = generateApiKey("live", cryptoRandom);
  return {
    accountId,
    session,
    key,
    keyId: newId("key", clock, cryptoRandom),
    webhookId: newId("wh", clock, cryptoRandom),
    secret: generateSigningSecret(cryptoRandom),
    createdAt: T0 - 86_400_000,
    erasedId: newId("acc", clock, cryptoRandom),
  };
}
type Seed = ReturnType<typeof seedRecords>;

/** Events an erased account of the old server still had: its erasure was interrupted before its purge. */
const LEFT_EVENTS = 3;

/** A dialect's version that made `slug`. */
const versionOf = (list: readonly { id: string; version: number }[], slug: string): number => list.find((m) => m.id.endsWith(`-${slug}`))!.version;
/** The first version of each dialect with tombstones (status 'deleted', deleted_at), and with unfinished_erasures. */
const TOMBSTONES = { sqlite: versionOf(SQLITE_MIGRATIONS, "account-tombstones"), postgres: versionOf(POSTGRES_MIGRATIONS, "account-tombstones") };
const UNFINISHED = { sqlite: versionOf(SQLITE_MIGRATIONS, "unfinished-erasures"), postgres: versionOf(POSTGRES_MIGRATIONS, "unfinished-erasures") };

/**
 * The seed's rows in the initial schema's columns; from the version with tombstones on, an erased account with
 * events left, as that version's erasure left it when interrupted. `?` placeholders for SQLite, `$n` for PostgreSQL.
 */
function seedStatements(s: Seed, dialect: "sqlite" | "postgres", version: number): [string, unknown[]][] {
  const pgMode = dialect === "postgres";
  const p = (n: number): string => (pgMode ? `$${n}` : "?");
  const list = (values: string[]): unknown => (pgMode ? values : JSON.stringify(values));
  const erased: [string, unknown[]][] =
    version < TOMBSTONES[dialect]
      ? []
      : [
          [
            `INSERT INTO accounts (id, name, tier, created_at, limits, allowed_cidrs, billing, status, deleted_at) VALUES (${p(1)}, '', 'growth', ${p(2)}, '{}', ${pgMode ? "'{}'" : "'[]'"}, '{}', 'deleted', ${p(3)})`,
            [s.erasedId, s.createdAt, s.createdAt + 1000],
          ],
          ...Array.from({ length: LEFT_EVENTS }, (_, i): [string, unknown[]] => [
            `INSERT INTO events (id, type, account_id, created_at, body) VALUES (${p(1)}, 'quota.warning', ${p(2)}, ${p(3)}, '{}')`,
            [`evt_left${i}_${s.erasedId}`, s.erasedId, s.createdAt + i],
          ]),
          ...(version < UNFINISHED[dialect] ? [] : [[`INSERT INTO unfinished_erasures (account_id) VALUES (${p(1)})`, [s.erasedId]] as [string, unknown[]]]),
        ];
  return [
    ...erased,
    [
      `INSERT INTO accounts (id, name, tier, created_at, limits, allowed_cidrs, billing) VALUES (${p(1)}, 'Upgraded Ltd', 'growth', ${p(2)}, '{}', ${pgMode ? "'{}'" : "'[]'"}, '{}')`,
      [s.accountId, s.createdAt],
    ],
    [`INSERT INTO sessions (token_hash, account_id, created_at, expires_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)})`, [s.session.hash, s.accountId, s.createdAt, T0 + 30 * 86_400_000]],
    [
      `INSERT INTO api_keys (id, account_id, name, environment, scopes, prefix, is_active, created_at) VALUES (${p(1)}, ${p(2)}, 'server', 'live', ${p(3)}, ${p(4)}, ${pgMode ? "true" : "1"}, ${p(5)})`,
      [s.keyId, s.accountId, list(["benchmarks:read"]), s.key.prefix, s.createdAt],
    ],
    [`INSERT INTO key_hashes (hash, key_id, retired) VALUES (${p(1)}, ${p(2)}, ${pgMode ? "false" : "0"})`, [s.key.hash, s.keyId]],
    [`INSERT INTO day_counters (account_id, day, count) VALUES (${p(1)}, ${p(2)}, ${p(3)})`, [s.accountId, utcDay(T0), USED_TODAY]],
    [
      `INSERT INTO webhooks (id, account_id, url, events, secret, created_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)})`,
      [s.webhookId, s.accountId, HOOK_URL, list(["quota.warning"]), s.secret, s.createdAt],
    ],
  ];
}

/** Through today's HTTP API on the upgraded store: the key answers, usage counts the old day, the old secret signs. */
async function checkThroughApi(storage: Storage, s: Seed): Promise<void> {
  const values = Array.from({ length: 40 }, (_, i) => 0.3 + i / 100);
  await storage.replaceCells([{ category: "saas", segment: "all", period: "2026-Q3", metric: "gross_margin", cell: { sorted: Float64Array.from(values), sampleSize: 40 } }], []);
  const clock = manualClock(T0 + 60_000);
  const config = defineConfig({ target: "host" });
  const sent: WebhookRequest[] = [];
  const transport = {
    async send(req: WebhookRequest) {
      sent.push(req);
      return { status: 200, body: "" };
    },
  };
  const resolve = async (): Promise<string[]> => ["93.184.216.34"];
  const app = createApp({
    storage,
    config,
    clock,
    webhooks: { checkUrl: async () => null, sendTest: (accountId: string) => sendTestEvent({ storage, clock, random: cryptoRandom, transport, resolve, config }, accountId) },
  });
  const call = async (method: string, path: string, token: string): Promise<{ status: number; body: any }> => {
    const r = await app.fetch(new Request(`${LIVE}${path}`, { method, headers: { authorization: `Bearer ${token}` } }));
    const text = await r.text();
    return { status: r.status, body: text === "" ? null : JSON.parse(text) };
  };

  const data = await call("GET", PERCENTILE, s.key.raw);
  expect(data.status, JSON.stringify(data.body)).toBe(200);
  const usage = await call("GET", "/api/v1/console/usage/summary", s.session.raw);
  expect(usage.status, JSON.stringify(usage.body)).toBe(200);
  expect(usage.body.today).toBe(USED_TODAY + 1);
  const test = await call("POST", "/api/v1/console/webhooks/test", s.session.raw);
  expect(test.status, JSON.stringify(test.body)).toBe(200);
  expect(test.body.results).toMatchObject([{ webhook_id: s.webhookId, ok: true }]);
  expect(sent).toHaveLength(1);
  expect(verifySignature(s.secret, sent[0]!.body, sent[0]!.headers["X-Service-Signature"])).toBe(true);
  expect(verifySignature(generateSigningSecret(cryptoRandom), sent[0]!.body, sent[0]!.headers["X-Service-Signature"])).toBe(false);
}

/** The pruning worker's first run after the upgrade finishes the old erasure (when there was one), and the next has nothing to do. */
async function checkErasureFinished(storage: Storage, s: Seed, tombstone: boolean): Promise<void> {
  expect(await storage.unfinishedErasures({ limit: 10 })).toEqual(tombstone ? [s.erasedId] : []);
  const worker = createPruneWorker({ storage, clock: manualClock(T0 + 60_000), config: defineConfig(), pauseMs: 0 });
  expect((await worker.tick()).erasures).toEqual(tombstone ? { finished: 1, purged: LEFT_EVENTS } : { finished: 0, purged: 0 });
  expect(await storage.accountEvents(s.erasedId, { limit: 10 })).toEqual([]);
  expect(await storage.unfinishedErasures({ limit: 10 })).toEqual([]);
  expect((await worker.tick()).erasures).toEqual({ finished: 0, purged: 0 });
}

describe("upgrades from every earlier SQLite schema version", () => {
  const dir = mkdtempSync(join(tmpdir(), "benchdata-upgrade-"));
  let fresh: SchemaSnapshot;
  beforeAll(async () => {
    const s = await openStorage(`sqlite:${join(dir, "fresh.db")}`);
    await s.migrate();
    await s.close();
    const db = await openSqlite(join(dir, "fresh.db"));
    fresh = sqliteSchema(db);
    db.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(SQLITE_MIGRATIONS.map((m) => m.version))("from version %i", async (version) => {
    const file = join(dir, `v${version}.db`);
    const seed = seedRecords();
    const db = await openSqlite(file);
    db.exec("CREATE TABLE benchdata_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    for (const m of SQLITE_MIGRATIONS.filter((x) => x.version <= version)) {
      db.exec(m.sql);
      db.prepare("INSERT INTO benchdata_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(m.version, m.name, seed.createdAt);
    }
    for (const [text, params] of seedStatements(seed, "sqlite", version)) db.prepare(text).run(...params);
    db.close();

    const storage = await openStorage(`sqlite:${file}`, { clock: "app" });
    try {
      await storage.migrate();
      await checkThroughApi(storage, seed);
      await checkErasureFinished(storage, seed, version >= TOMBSTONES.sqlite);
    } finally {
      await storage.close();
    }
    const after = await openSqlite(file);
    expect(sqliteSchema(after)).toEqual(fresh);
    after.close();
  });
});

const pgOn = await pgAvailableForTests("migrations-upgrade");

describe.skipIf(!pgOn)("upgrades from every earlier PostgreSQL schema version", () => {
  let fresh: SchemaSnapshot;
  beforeAll(async () => {
    const t = await createTestDatabase();
    const s = await openStorage(t.url);
    await s.migrate();
    await s.close();
    const c = new pg.Client({ connectionString: t.url });
    await c.connect();
    fresh = await postgresSchema(c);
    await c.end();
    await t.drop();
  });

  it.each(POSTGRES_MIGRATIONS.map((m) => m.version))("from version %i", async (version) => {
    const t = await createTestDatabase();
    const seed = seedRecords();
    const c = new pg.Client({ connectionString: t.url });
    await c.connect();
    try {
      await c.query("CREATE TABLE benchdata_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
      for (const m of POSTGRES_MIGRATIONS.filter((x) => x.version <= version)) {
        await c.query(m.sql);
        await c.query("INSERT INTO benchdata_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      }
      for (const [text, params] of seedStatements(seed, "postgres", version)) await c.query(text, params);

      const storage = await openStorage(t.url, { clock: "app" });
      try {
        await storage.migrate();
        await checkThroughApi(storage, seed);
        await checkErasureFinished(storage, seed, version >= TOMBSTONES.postgres);
      } finally {
        await storage.close();
      }
      expect(await postgresSchema(c)).toEqual(fresh);
    } finally {
      await c.end();
      await t.drop();
    }
  });
});
