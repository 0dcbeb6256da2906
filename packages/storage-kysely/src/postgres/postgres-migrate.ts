/**
 * PostgreSQL schema upgrades: the released migrations through Kysely's Migrator, then the functions
 * (functions.ts) when the database holds an older revision of them, all under one session advisory lock,
 * so several instances starting at once upgrade the database once.
 *
 * Servers before the Migrator kept `benchdata_migrations` (version, name). Its rows are adopted into
 * `kysely_migration` on the first start of this code, and every migration applied here is recorded there
 * too, so an older server that starts against the upgraded database finds its migrations applied and
 * runs none again (docs/operations.md, "Upgrading").
 */
import { createHash } from "node:crypto";
import { sql } from "kysely";
import { Migrator } from "kysely/migration";
import type { Kysely } from "kysely";
import { silentLogger } from "@benchdata/core";
import type { Logger } from "@benchdata/core";
import { KYSELY_MIGRATION_TABLE, migrationOutcome, migrationProvider } from "../migration.ts";
import { POSTGRES_MIGRATIONS } from "./migrations/index.ts";
import { FUNCTIONS_REVISION, POSTGRES_FUNCTIONS } from "./functions.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the Migrator runs raw SQL only
type AnyDb = Kysely<any>;

/** Session advisory lock held while migrating (the key servers before the Migrator used too). */
const MIGRATION_LOCK = 7_286_931_002_114_551n;

/** SHA-256 (hex) of the functions' text, recorded with their revision. */
export const FUNCTIONS_SHA256 = createHash("sha256").update(POSTGRES_FUNCTIONS).digest("hex");

/** Runs the migrations not yet applied, then the functions if the database's are older, under a session advisory lock. */
export async function migratePostgres(db: AnyDb, logger: Logger = silentLogger): Promise<void> {
  await db.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK}::bigint)`.execute(conn);
    try {
      await adoptLegacyBookkeeping(conn);
      const migrator = new Migrator({
        db: conn,
        provider: migrationProvider(POSTGRES_MIGRATIONS, async (trx, text) => {
          await sql.raw(text).execute(trx);
        }),
        // Servers before the Migrator applied missing versions in any order (20 landed after 21).
        allowUnorderedMigrations: true,
      });
      const applied = migrationOutcome(await migrator.migrateToLatest(), "postgres");
      for (const id of applied) {
        const m = POSTGRES_MIGRATIONS.find((x) => x.id === id)!;
        await sql`INSERT INTO benchdata_migrations (version, name) VALUES (${m.version}, ${m.name}) ON CONFLICT (version) DO NOTHING`.execute(conn);
        logger.info("storage migration applied", { dialect: "postgres", version: m.version, migration: m.id, name: m.name });
      }
      await applyFunctions(conn, logger);
    } finally {
      await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK}::bigint)`.execute(conn);
    }
  });
}

/**
 * Makes sure both bookkeeping tables exist, and records in Kysely's every migration the old table lists
 * (with its time). Idempotent: run on every start, it adds nothing once adopted.
 */
async function adoptLegacyBookkeeping(conn: AnyDb): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS benchdata_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`.execute(conn);
  // Kysely's own definition of its table (Migrator creates it the same way when it is missing).
  await sql`CREATE TABLE IF NOT EXISTS ${sql.table(KYSELY_MIGRATION_TABLE)} (name varchar(255) NOT NULL PRIMARY KEY, timestamp varchar(255) NOT NULL)`.execute(conn);
  const { rows } = await sql<{ version: number; applied_at: Date }>`SELECT version, applied_at FROM benchdata_migrations`.execute(conn);
  for (const r of rows) {
    const m = POSTGRES_MIGRATIONS.find((x) => x.version === r.version);
    // A version this server does not know belongs to a newer server: the Migrator refuses below if Kysely's table
    // lists one it does not know; the old table alone (an older-style newer server) cannot be adopted.
    if (m === undefined) throw new Error(`postgres schema version ${r.version} is newer than this server knows (benchdata_migrations): upgrade the server`);
    await sql`INSERT INTO ${sql.table(KYSELY_MIGRATION_TABLE)} (name, timestamp) VALUES (${m.id}, ${new Date(r.applied_at).toISOString()}) ON CONFLICT (name) DO NOTHING`.execute(conn);
  }
}

/**
 * Applies POSTGRES_FUNCTIONS in one transaction when the database records no revision, an older one, or this
 * revision with other text (a development database); a newer revision is left alone (a newer server's, during
 * a rolling upgrade). The caller holds the migration lock.
 */
async function applyFunctions(conn: AnyDb, logger: Logger): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS benchdata_functions (
              id integer PRIMARY KEY CHECK (id = 1),
              revision integer NOT NULL,
              sha256 text NOT NULL,
              applied_at timestamptz NOT NULL DEFAULT now())`.execute(conn);
  const { rows } = await sql<{ revision: number; sha256: string }>`SELECT revision, sha256 FROM benchdata_functions WHERE id = 1`.execute(conn);
  const held = rows[0];
  if (held !== undefined && (held.revision > FUNCTIONS_REVISION || (held.revision === FUNCTIONS_REVISION && held.sha256 === FUNCTIONS_SHA256))) return;
  await conn.transaction().execute(async (trx) => {
    await sql.raw(POSTGRES_FUNCTIONS).execute(trx);
    await sql`INSERT INTO benchdata_functions (id, revision, sha256) VALUES (1, ${FUNCTIONS_REVISION}, ${FUNCTIONS_SHA256})
              ON CONFLICT (id) DO UPDATE SET revision = excluded.revision, sha256 = excluded.sha256, applied_at = now()`.execute(trx);
  });
  logger.info("storage functions applied", { dialect: "postgres", revision: FUNCTIONS_REVISION, sha256: FUNCTIONS_SHA256.slice(0, 12) });
}
