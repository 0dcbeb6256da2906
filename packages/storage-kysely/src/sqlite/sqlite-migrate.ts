/**
 * SQLite schema upgrades: the released migrations through Kysely's Migrator, over the store's own
 * synchronous handle, inside one `BEGIN IMMEDIATE` transaction: several processes starting at once queue
 * on the file's write lock, and the second finds the migrations applied. (Kysely's SQLite adapter takes no
 * lock of its own and runs DDL outside transactions; the IMMEDIATE transaction gives both.)
 *
 * Servers before the Migrator kept `benchdata_migrations` (version, name, applied_at); its rows are adopted
 * into `kysely_migration`, and every migration applied here is recorded there too, so an older server finds
 * its migrations applied (docs/operations.md, "Upgrading").
 */
import { Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from "kysely";
import { Migrator } from "kysely/migration";
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from "kysely";
import { silentLogger } from "@benchdata/core";
import type { Logger } from "@benchdata/core";
import { KYSELY_MIGRATION_TABLE, migrationOutcome, migrationProvider } from "../migration.ts";
import type { SqliteDatabase } from "./driver.ts";
import { SQLITE_MIGRATIONS } from "./migrations/index.ts";

/** Kysely's queries on the handle: the Migrator's bookkeeping only (the migrations themselves go through `exec`). */
class HandleConnection implements DatabaseConnection {
  constructor(private readonly db: SqliteDatabase) {}
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const stmt = this.db.prepare(query.sql);
    const params = query.parameters as unknown[];
    if (/^\s*(select|with|pragma)\b/i.test(query.sql) || /\breturning\b/i.test(query.sql)) return { rows: stmt.all(...params) as R[] };
    const r = stmt.run(...params);
    return { rows: [], numAffectedRows: BigInt(r.changes) };
  }
  // eslint-disable-next-line require-yield -- the Migrator never streams
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming is not used by migrations");
  }
}

/** A driver over the one open handle: no pooling, no transactions (the caller holds the IMMEDIATE one), no close. */
class HandleDriver implements Driver {
  private readonly conn: HandleConnection;
  constructor(db: SqliteDatabase) {
    this.conn = new HandleConnection(db);
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.conn;
  }
  async beginTransaction(): Promise<void> {
    throw new Error("SQLite migrations run in the caller's transaction");
  }
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

/**
 * Migrations of this process, one after another: a second handle's BEGIN IMMEDIATE would wait synchronously for
 * the first one's lock, which the first cannot release while the thread waits.
 */
let queue: Promise<void> = Promise.resolve();

/** Runs the SQLite migrations not yet applied, under one IMMEDIATE transaction (several processes may start at once). */
export function migrateSqlite(db: SqliteDatabase, logger: Logger = silentLogger): Promise<void> {
  const run = queue.then(() => migrateNow(db, logger));
  queue = run.catch(() => {});
  return run;
}

async function migrateNow(db: SqliteDatabase, logger: Logger): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the Migrator runs raw SQL only
  const kysely = new Kysely<any>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new HandleDriver(db),
      createIntrospector: (k) => new SqliteIntrospector(k),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
  db.exec("BEGIN IMMEDIATE");
  try {
    adoptLegacyBookkeeping(db);
    const migrator = new Migrator({
      db: kysely,
      provider: migrationProvider(SQLITE_MIGRATIONS, async (_db, text) => {
        db.exec(text);
      }),
      allowUnorderedMigrations: true,
    });
    const applied = migrationOutcome(await migrator.migrateToLatest(), "sqlite");
    const record = db.prepare("INSERT INTO benchdata_migrations (version, name, applied_at) VALUES (?, ?, ?) ON CONFLICT (version) DO NOTHING");
    for (const id of applied) {
      const m = SQLITE_MIGRATIONS.find((x) => x.id === id)!;
      record.run(m.version, m.name, Date.now());
      logger.info("storage migration applied", { dialect: "sqlite", version: m.version, migration: m.id, name: m.name });
    }
    db.exec("COMMIT");
  } catch (e) {
    try {
      db.exec("ROLLBACK");
    } catch {
      // SQLite already rolled it back (a failed COMMIT, a full disk): the error that did it is the one to report.
    }
    throw e;
  }
}

/** Both bookkeeping tables exist, and Kysely's lists every migration the old one does. Idempotent. */
function adoptLegacyBookkeeping(db: SqliteDatabase): void {
  db.exec("CREATE TABLE IF NOT EXISTS benchdata_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  // Kysely's own definition of its table (the Migrator creates it the same way when it is missing).
  db.exec(`CREATE TABLE IF NOT EXISTS ${KYSELY_MIGRATION_TABLE} (name varchar(255) NOT NULL PRIMARY KEY, timestamp varchar(255) NOT NULL)`);
  const adopt = db.prepare(`INSERT INTO ${KYSELY_MIGRATION_TABLE} (name, timestamp) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`);
  for (const r of db.prepare("SELECT version, applied_at FROM benchdata_migrations").all() as { version: number; applied_at: number }[]) {
    const m = SQLITE_MIGRATIONS.find((x) => x.version === Number(r.version));
    if (m === undefined) throw new Error(`sqlite schema version ${r.version} is newer than this server knows (benchdata_migrations): upgrade the server`);
    adopt.run(m.id, new Date(Number(r.applied_at)).toISOString());
  }
}
