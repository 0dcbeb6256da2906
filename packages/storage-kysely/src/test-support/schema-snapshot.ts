/**
 * A database's schema as sorted lines of text, for comparing two databases (or one with a fixture):
 * what the migrations made, without the bookkeeping tables. PostgreSQL's lines come from the catalogs
 * (columns with type, nullability, default, collation and storage; constraints; indexes; triggers with their
 * firing mode; sequences; table options) and, separately, the functions' definitions.
 */
import type pg from "pg";
import type { SqliteDatabase } from "../sqlite/driver.ts";

/** Tables the migration machinery keeps, not the migrations. */
const BOOKKEEPING = ["benchdata_migrations", "benchdata_functions", "kysely_migration", "kysely_migration_lock"];

export interface SchemaSnapshot {
  /** Tables, columns, constraints, indexes, triggers, sequences. */
  readonly tables: readonly string[];
  /** Function definitions (PostgreSQL; empty for SQLite). */
  readonly functions: readonly string[];
}

/** SQLite: every object's type, name and the statement that made it. */
export function sqliteSchema(db: SqliteDatabase): SchemaSnapshot {
  const rows = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").all() as {
    type: string;
    name: string;
    tbl_name: string;
    sql: string | null;
  }[];
  const tables = rows
    .filter((r) => !BOOKKEEPING.includes(r.tbl_name))
    .map((r) => `${r.type} ${r.name} on ${r.tbl_name}: ${(r.sql ?? "").replace(/\s+/g, " ")}`)
    .sort();
  return { tables, functions: [] };
}

/** PostgreSQL: the public schema's objects from the catalogs. */
export async function postgresSchema(c: pg.Client): Promise<SchemaSnapshot> {
  const lines = async (text: string): Promise<string[]> => (await c.query<{ l: string }>(text, [BOOKKEEPING])).rows.map((r) => r.l);
  const tables = [
    ...(await lines(`SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                            || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                            || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
                            || coalesce(' collate ' || co.collname, '') || ' storage ' || a.attstorage::text AS l
                     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                     LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <> 100
                     WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped AND c.relname <> ALL ($1)`)),
    ...(await lines(`SELECT 'table ' || c.relname || ' options ' || coalesce(array_to_string(c.reloptions, ','), '') AS l
                     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> ALL ($1)`)),
    ...(await lines(`SELECT 'constraint ' || cl.relname || '.' || con.conname || ' ' || pg_get_constraintdef(con.oid) AS l
                     FROM pg_constraint con JOIN pg_class cl ON cl.oid = con.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
                     WHERE n.nspname = 'public' AND cl.relname <> ALL ($1)`)),
    ...(await lines(`SELECT 'index ' || indexdef AS l FROM pg_indexes WHERE schemaname = 'public' AND tablename <> ALL ($1)`)),
    ...(await lines(`SELECT 'trigger ' || pg_get_triggerdef(t.oid) || ' enabled ' || t.tgenabled::text AS l
                     FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE n.nspname = 'public' AND NOT t.tgisinternal AND c.relname <> ALL ($1)`)),
    ...(await lines(`SELECT 'sequence ' || c.relname || coalesce(' owned by ' || dep.refobjid::regclass || '.' || a.attname, '') AS l
                     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     LEFT JOIN pg_depend dep ON dep.objid = c.oid AND dep.deptype = 'a' AND dep.classid = 'pg_class'::regclass
                     LEFT JOIN pg_attribute a ON a.attrelid = dep.refobjid AND a.attnum = dep.refobjsubid
                     WHERE n.nspname = 'public' AND c.relkind = 'S' AND ($1::text[] IS NOT NULL)`)),
  ].sort();
  const functions = (
    await lines(`SELECT pg_get_functiondef(p.oid) AS l FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                 WHERE n.nspname = 'public' AND ($1::text[] IS NOT NULL)`)
  ).sort();
  return { tables, functions };
}
