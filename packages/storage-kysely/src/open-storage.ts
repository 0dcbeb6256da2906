/** `openStorage(url)`: the storage a `--db` URL names, SQLite or PostgreSQL (or the in-memory store). */
import { closeSync, openSync } from "node:fs";
import pg from "pg";
import type { Logger, Storage } from "@benchdata/core";
import { createMemoryStorage } from "@benchdata/core";
import { createPostgresStorage } from "./postgres/postgres-storage.ts";
import { openSqlite } from "./sqlite/driver.ts";
import type { SqliteDriverName } from "./sqlite/driver.ts";
import { configureSqlite, createSqliteStorage } from "./sqlite/sqlite-storage.ts";

/** Options of `openStorage`. */
export interface OpenStorageOptions {
  /**
   * Which clock decides windows, UTC days and billing periods: `database` (the default for PostgreSQL:
   * one clock for every instance) or `app` (the `now` each call is given; the default for SQLite).
   */
  readonly clock?: "database" | "app";
  readonly logger?: Logger;
  /** How long decoded benchmark cells are trusted before checking for a newer import (ms, default 1000). */
  readonly cacheTtlMs?: number;
  /** PostgreSQL: the most connections the pool opens (default 10). */
  readonly poolSize?: number;
  /** PostgreSQL: how long to wait for a connection before failing with `service.unavailable` (ms, default 3000). */
  readonly connectTimeoutMs?: number;
  /** PostgreSQL: a client-side limit on one query (ms, default 30000), so a vanished server cannot hang a request. */
  readonly queryTimeoutMs?: number;
  /** SQLite: how long to wait for another process's write lock (ms, default 5000). */
  readonly busyTimeoutMs?: number;
  /** SQL stores: stamps per chunk of a key's admission log (default 128). Tests use small ones to cross chunk boundaries. */
  readonly windowChunkSize?: number;
}

/** An opened storage, its kind and the driver under it (SQLite's depends on the runtime). */
export type OpenedStorage = Storage & { readonly kind: "sqlite" | "postgres" | "memory"; readonly driver?: SqliteDriverName | "pg" };

/** The kind of storage a URL names, or null when it names none. */
export function storageKindOf(url: string): OpenedStorage["kind"] | null {
  if (url === "memory:" || url === "memory") return "memory";
  if (url.startsWith("sqlite:")) return "sqlite";
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) return "postgres";
  return null;
}

/**
 * Creates a new SQLite database file readable by its owner only (0600), whatever the umask. SQLite gives the
 * `-wal` and `-shm` files it creates beside it the database file's mode, so they are private too. An existing
 * file is left as it is (the operator chose its mode); `:memory:` and URI names are not files.
 */
function createPrivateFile(path: string): void {
  if (path === ":memory:" || path.startsWith("file:")) return;
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
}

/**
 * Opens `sqlite:PATH` (WAL, on the runtime's own driver: better-sqlite3 on Node, bun:sqlite on Bun, node:sqlite on Deno), `postgres://…` (a pg Pool) or `memory:`. The schema is not
 * touched: call `migrate()` (safe to run from several instances at once).
 */
export async function openStorage(url: string, options: OpenStorageOptions = {}): Promise<OpenedStorage> {
  const kind = storageKindOf(url);
  if (kind === "memory") return { ...createMemoryStorage(), kind: "memory" };
  if (kind === "sqlite") {
    // sqlite:PATH, sqlite://PATH and sqlite:///abs/path all name a file; sqlite::memory: a private in-memory database.
    const path = url.slice("sqlite:".length).replace(/^\/\//, "");
    if (path === "") throw new Error("sqlite: URL without a path (use sqlite:./benchdata.db)");
    createPrivateFile(path);
    const db = await openSqlite(path, { busyTimeoutMs: options.busyTimeoutMs ?? 5000 });
    configureSqlite(db, options.busyTimeoutMs ?? 5000);
    const storage = createSqliteStorage(db, { clock: options.clock ?? "app", ...(options.logger ? { logger: options.logger } : {}), ...(options.cacheTtlMs !== undefined ? { cacheTtlMs: options.cacheTtlMs } : {}), ...(options.windowChunkSize !== undefined ? { windowChunkSize: options.windowChunkSize } : {}) });
    return Object.assign(storage, { driver: db.driver });
  }
  if (kind === "postgres") {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 3000,
      query_timeout: options.queryTimeoutMs ?? 30_000,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
    });
    const storage = createPostgresStorage(pool, { clock: options.clock ?? "database", ...(options.logger ? { logger: options.logger } : {}), ...(options.cacheTtlMs !== undefined ? { cacheTtlMs: options.cacheTtlMs } : {}), ...(options.windowChunkSize !== undefined ? { windowChunkSize: options.windowChunkSize } : {}) });
    return Object.assign(storage, { driver: "pg" as const });
  }
  throw new Error(`unsupported storage URL ${JSON.stringify(url.replace(/\/\/[^@/]*@/, "//…@"))}: use sqlite:PATH, postgres://… or memory:`);
}
