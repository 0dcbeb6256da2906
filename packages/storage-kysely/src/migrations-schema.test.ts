/**
 * What the Migrator makes: the released files through 0023 give exactly the schema the code before the
 * Migrator made (fixtures dumped from it), a fresh database gets every file, an old database's bookkeeping is
 * adopted, several instances starting at once upgrade once, and the PostgreSQL functions are applied after the
 * migrations only when their revision is newer than the database's.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openStorage } from "./open-storage.ts";
import { openSqlite } from "./sqlite/driver.ts";
import type { SqliteDatabase } from "./sqlite/driver.ts";
import { migrateSqlite } from "./sqlite/sqlite-migrate.ts";
import { SQLITE_MIGRATIONS } from "./sqlite/migrations/index.ts";
import { POSTGRES_MIGRATIONS } from "./postgres/migrations/index.ts";
import { FUNCTIONS_REVISION, POSTGRES_FUNCTIONS } from "./postgres/functions.ts";
import { createTestDatabase, pgAvailableForTests } from "./test-support/pg-test-database.ts";
import { postgresSchema, sqliteSchema } from "./test-support/schema-snapshot.ts";

const fixture = (dialect: string): string[] =>
  readFileSync(fileURLToPath(new URL(`./test-support/schema-23.${dialect}.txt`, import.meta.url)), "utf8").trim().split("\n");
const ids = (list: readonly { id: string }[]): string[] => list.map((m) => m.id);

async function sqliteDb(): Promise<SqliteDatabase> {
  return openSqlite(":memory:");
}

/** A SQLite database as a server before the Migrator left it at `version`: its files applied, benchdata_migrations only. */
async function sqliteAtVersion(version: number): Promise<SqliteDatabase> {
  const db = await sqliteDb();
  db.exec("CREATE TABLE benchdata_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  for (const m of SQLITE_MIGRATIONS.filter((x) => x.version <= version)) {
    db.exec(m.sql);
    db.prepare("INSERT INTO benchdata_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(m.version, m.name, Date.UTC(2026, 0, m.version));
  }
  return db;
}

describe("sqlite migrations", () => {
  it("the released files through 0023 make exactly the schema of the code before the Migrator", async () => {
    const db = await sqliteDb();
    for (const m of SQLITE_MIGRATIONS.filter((x) => x.version <= 23)) db.exec(m.sql);
    expect(sqliteSchema(db).tables).toEqual(fixture("sqlite"));
    db.close();
  });

  it("migrate() on a fresh database runs every file once and records it in both bookkeeping tables; again, nothing", async () => {
    const fresh = await sqliteDb();
    await migrateSqlite(fresh);
    await migrateSqlite(fresh);
    const byHand = await sqliteDb();
    for (const m of SQLITE_MIGRATIONS) byHand.exec(m.sql);
    expect(sqliteSchema(fresh)).toEqual(sqliteSchema(byHand));
    expect((fresh.prepare("SELECT name FROM kysely_migration ORDER BY name").all() as { name: string }[]).map((r) => r.name)).toEqual(ids(SQLITE_MIGRATIONS));
    expect((fresh.prepare("SELECT version FROM benchdata_migrations ORDER BY version").all() as { version: number }[]).map((r) => r.version)).toEqual(
      SQLITE_MIGRATIONS.map((m) => m.version),
    );
    fresh.close();
    byHand.close();
  });

  it("a database of a server before the Migrator: its versions are adopted (with their times), the rest applied", async () => {
    const db = await sqliteAtVersion(12);
    await migrateSqlite(db);
    const rows = db.prepare("SELECT name, timestamp FROM kysely_migration ORDER BY name").all() as { name: string; timestamp: string }[];
    expect(rows.map((r) => r.name)).toEqual(ids(SQLITE_MIGRATIONS));
    expect(rows.find((r) => r.name === "0012-account-status")!.timestamp).toBe(new Date(Date.UTC(2026, 0, 12)).toISOString());
    const fresh = await sqliteDb();
    await migrateSqlite(fresh);
    expect(sqliteSchema(db)).toEqual(sqliteSchema(fresh));
    db.close();
    fresh.close();
  });

  it("a database recording a version this server does not know is refused, and left as it was", async () => {
    const db = await sqliteAtVersion(9);
    db.prepare("INSERT INTO benchdata_migrations (version, name, applied_at) VALUES (9999, 'from the future', 0)").run();
    const before = sqliteSchema(db);
    await expect(migrateSqlite(db)).rejects.toThrow(/schema version 9999 is newer than this server knows/);
    expect(sqliteSchema(db)).toEqual(before);
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'kysely_migration'").get()).toEqual({ n: 0 });
    db.close();
  });

  it("two handles of one process migrating one file at once: both succeed, each migration applied once", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(`${tmpdir()}/benchdata-migrate-`);
    try {
      const a = await openStorage(`sqlite:${dir}/db.sqlite`);
      const b = await openStorage(`sqlite:${dir}/db.sqlite`);
      await Promise.all([a.migrate(), b.migrate()]);
      await Promise.all([a.close(), b.close()]);
      const db = await openSqlite(`${dir}/db.sqlite`);
      expect(db.prepare("SELECT count(*) AS n FROM kysely_migration").get()).toEqual({ n: SQLITE_MIGRATIONS.length });
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const pgOn = await pgAvailableForTests("migrations-schema");

/** `body` with a throwaway database and a client on it; dropped after. */
async function withPg(body: (url: string, c: pg.Client) => Promise<void>): Promise<void> {
  const t = await createTestDatabase();
  const c = new pg.Client({ connectionString: t.url });
  await c.connect();
  try {
    await body(t.url, c);
  } finally {
    await c.end();
    await t.drop();
  }
}

async function migrated(url: string): Promise<void> {
  const s = await openStorage(url);
  try {
    await s.migrate();
  } finally {
    await s.close();
  }
}

describe.skipIf(!pgOn)("postgres migrations", () => {
  it("the released files through 0023 make exactly the tables of the code before the Migrator; every file, then the functions, what migrate() makes", async () => {
    await withPg(async (_url, c) => {
      for (const m of POSTGRES_MIGRATIONS.filter((x) => x.version <= 23)) await c.query(m.sql);
      expect((await postgresSchema(c)).tables).toEqual(fixture("postgres"));
    });
    await withPg(async (url, c) => {
      await migrated(url);
      await migrated(url);
      const viaMigrator = await postgresSchema(c);
      await withPg(async (_u, byHand) => {
        for (const m of POSTGRES_MIGRATIONS) await byHand.query(m.sql);
        await byHand.query(POSTGRES_FUNCTIONS);
        expect(viaMigrator).toEqual(await postgresSchema(byHand));
      });
      expect((await c.query("SELECT name FROM kysely_migration ORDER BY name")).rows.map((r) => r.name)).toEqual(ids(POSTGRES_MIGRATIONS));
      expect((await c.query("SELECT version FROM benchdata_migrations ORDER BY version")).rows.map((r) => r.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
    });
  });

  it("a database of a server before the Migrator (versions applied out of order included) is adopted and upgraded to the fresh schema", async () => {
    await withPg(async (url, c) => {
      // 21 was applied before 20 by servers of that time: the version landed later.
      await c.query("CREATE TABLE benchdata_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
      for (const m of POSTGRES_MIGRATIONS.filter((x) => x.version <= 21 && x.version !== 20)) {
        await c.query(m.sql);
        await c.query("INSERT INTO benchdata_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      }
      await migrated(url);
      const upgraded = await postgresSchema(c);
      expect((await c.query("SELECT name FROM kysely_migration ORDER BY name")).rows.map((r) => r.name)).toEqual(ids(POSTGRES_MIGRATIONS));
      await withPg(async (freshUrl, fresh) => {
        await migrated(freshUrl);
        expect(upgraded).toEqual(await postgresSchema(fresh));
      });
    });
  });

  it("a database recording a version this server does not know is refused, and left as it was", async () => {
    await withPg(async (url, c) => {
      await migrated(url);
      await c.query("INSERT INTO benchdata_migrations (version, name) VALUES (9999, 'from the future')");
      await expect(migrated(url)).rejects.toThrow(/schema version 9999 is newer than this server knows/);
      await c.query("DELETE FROM benchdata_migrations WHERE version = 9999");
      await c.query("INSERT INTO kysely_migration (name, timestamp) VALUES ('9999-from-the-future', '2030-01-01T00:00:00.000Z')");
      await expect(migrated(url)).rejects.toThrow(/9999-from-the-future is missing/);
    });
  });

  it("functions: applied after the migrations with their revision, again only when the database's revision is older", async () => {
    await withPg(async (url, c) => {
      await migrated(url);
      const row = async () => (await c.query("SELECT revision, sha256, applied_at FROM benchdata_functions")).rows;
      const first = await row();
      expect(first).toHaveLength(1);
      expect(first[0].revision).toBe(FUNCTIONS_REVISION);
      // A function changed behind the server's back stays changed while the recorded revision is this one...
      await c.query("CREATE OR REPLACE FUNCTION benchdata_clock_ms() RETURNS bigint LANGUAGE sql VOLATILE AS $$ SELECT 42::bigint $$");
      await migrated(url);
      expect((await c.query("SELECT benchdata_clock_ms() AS v")).rows[0].v).toBe("42");
      expect(await row()).toEqual(first);
      // ...and newer revisions (a newer server's, in a rolling upgrade) are not replaced by older ones...
      await c.query("UPDATE benchdata_functions SET revision = $1", [FUNCTIONS_REVISION + 1]);
      await migrated(url);
      expect((await c.query("SELECT benchdata_clock_ms() AS v")).rows[0].v).toBe("42");
      // ...but an older revision is: the whole text again.
      await c.query("UPDATE benchdata_functions SET revision = $1", [FUNCTIONS_REVISION - 1]);
      await migrated(url);
      expect(Number((await c.query("SELECT benchdata_clock_ms() AS v")).rows[0].v)).toBeGreaterThan(Date.UTC(2026, 0, 1));
      expect((await row())[0].revision).toBe(FUNCTIONS_REVISION);
    });
  });

  it("several instances starting at once on an empty database: one upgrade, every instance ready", async () => {
    await withPg(async (url, c) => {
      const stores = await Promise.all([1, 2, 3, 4].map(() => openStorage(url)));
      try {
        await Promise.all(stores.map((s) => s.migrate()));
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
      expect((await c.query("SELECT count(*)::int AS n FROM kysely_migration")).rows[0].n).toBe(POSTGRES_MIGRATIONS.length);
      expect((await c.query("SELECT count(*)::int AS n FROM benchdata_functions")).rows[0].n).toBe(1);
    });
  });
});
