/**
 * Migrations as released files, run by Kysely's Migrator. A migration is one file per dialect
 * (`sqlite/migrations/NNNN-slug.ts`, `postgres/migrations/NNNN-slug.ts`) exporting its `name` and `sql`;
 * once released its text never changes (`migrations-manifest.txt` holds each file's SHA-256, and a test
 * compares them), so a database made at any version went through exactly the statements listed for it.
 * How to add one: packages/storage-kysely/README.md.
 */
import type { Kysely } from "kysely";
import type { Migration as KyselyMigration, MigrationProvider } from "kysely/migration";

/** What a migration file exports. */
export interface MigrationFile {
  readonly name: string;
  /** The statements, run in the Migrator's transaction (PostgreSQL) or the caller's IMMEDIATE one (SQLite). */
  readonly sql: string;
}

/** One released migration: the file's stem (`NNNN-slug`, Kysely's migration name) and its number. */
export interface Migration extends MigrationFile {
  readonly id: string;
  /** The number before the slug; also recorded in `benchdata_migrations`, the bookkeeping of servers before Kysely. */
  readonly version: number;
}

/** The migrations of a dialect's index, ordered by id; ids must be `NNNN-slug` with distinct numbers. */
export function releasedMigrations(files: Readonly<Record<string, MigrationFile>>): readonly Migration[] {
  const list = Object.entries(files)
    .map(([id, f]) => {
      const m = /^(\d{4})-[a-z0-9-]+$/.exec(id);
      if (m === null) throw new Error(`migration id ${id} is not NNNN-slug`);
      return { id, version: Number(m[1]), name: f.name, sql: f.sql };
    })
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  for (let i = 1; i < list.length; i++) {
    if (list[i]!.version === list[i - 1]!.version) throw new Error(`migrations ${list[i - 1]!.id} and ${list[i]!.id} share a number`);
  }
  return list;
}

/** The static provider the Migrator reads: every migration's `up` runs its text through `run`. */
export function migrationProvider(list: readonly Migration[], run: (db: Kysely<any>, text: string) => Promise<void>): MigrationProvider {
  return {
    async getMigrations() {
      const out: Record<string, KyselyMigration> = {};
      for (const m of list) out[m.id] = { up: (db) => run(db, m.sql) };
      return out;
    },
  };
}

/** Kysely's bookkeeping tables (its defaults). */
export const KYSELY_MIGRATION_TABLE = "kysely_migration";
export const KYSELY_MIGRATION_LOCK_TABLE = "kysely_migration_lock";

/** Throws the Migrator's error, naming the migration that failed. */
export function migrationOutcome(
  outcome: { error?: unknown; results?: readonly { migrationName: string; status: string }[] },
  dialect: string,
): readonly string[] {
  const done = (outcome.results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
  if (outcome.error !== undefined) {
    const failed = (outcome.results ?? []).find((r) => r.status === "Error")?.migrationName;
    const detail = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
    throw new Error(`${dialect} migration ${failed ?? "(before any ran)"} failed: ${detail}`, { cause: outcome.error });
  }
  return done;
}
