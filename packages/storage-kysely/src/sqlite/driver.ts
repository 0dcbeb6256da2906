/**
 * The SQLite driver of the runtime we run on, behind the one small synchronous interface the SQLite
 * store uses (better-sqlite3's, which the others are shaped to):
 *
 * - Node: better-sqlite3 (measured faster than `node:sqlite` on this workload; docs/benchmarks.md);
 * - Bun: `bun:sqlite` (better-sqlite3 is a Node addon Bun cannot load);
 * - Deno: `node:sqlite` (Deno cannot load addons built on the legacy Node addon API).
 *
 * Each driver is imported only on its runtime, so a Bun or Deno process never touches better-sqlite3.
 * Errors keep SQLite's result-code names in `code` (`SQLITE_BUSY`, `SQLITE_FULL`, …) on every driver,
 * so fail-closed mapping reads them the same way.
 */

export type SqliteValue = number | bigint | string | Uint8Array | null;
export type SqliteParams = readonly unknown[];

export interface SqliteRunResult {
  readonly changes: number;
  readonly lastInsertRowid: number | bigint;
}

export interface SqliteStatement {
  run(...params: SqliteParams): SqliteRunResult;
  get(...params: SqliteParams): unknown;
  all(...params: SqliteParams): unknown[];
  iterate(...params: SqliteParams): IterableIterator<unknown>;
  /** Rows as arrays of column values (in select order) instead of objects. */
  raw(toggle?: boolean): SqliteStatement;
}

export interface SqliteTransaction<A extends unknown[], R> {
  (...args: A): R;
  immediate(...args: A): R;
}

export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  pragma(source: string): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): SqliteTransaction<A, R>;
  close(): unknown;
  readonly open: boolean;
  readonly name: string;
  readonly memory: boolean;
}

export type SqliteDriverName = "better-sqlite3" | "bun:sqlite" | "node:sqlite";

export interface OpenSqliteOptions {
  /** How long to wait for another connection's write lock (ms). */
  readonly busyTimeoutMs?: number;
  /** Force a driver (tests and measurements); by default the runtime decides. */
  readonly driver?: SqliteDriverName;
}

/** The driver `openSqlite` uses on the runtime this code runs on. */
export function runtimeSqliteDriver(): SqliteDriverName {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  if (g.Deno !== undefined) return "node:sqlite";
  if (g.Bun !== undefined) return "bun:sqlite";
  // better-sqlite3 12 (the last that runs on Node 20) aborts the process on Node 24 and later when the garbage
  // collector frees a statement at the wrong moment ("Assertion failed: (env) != nullptr" in
  // RemoveEnvironmentCleanupHook, from Statement::~Statement; fixed in better-sqlite3 13, which needs Node-API
  // 10 and crashes on Node 20). Node 24 ships node:sqlite, which has no such addon: use it there.
  return nodeMajor() >= 24 ? "node:sqlite" : "better-sqlite3";
}

function nodeMajor(): number {
  const version = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
  return version === undefined ? 0 : Number(version.split(".")[0]);
}

/** Opens a SQLite database file (`""` = a private temporary file, `:memory:` = in memory) with the runtime's driver. */
export async function openSqlite(path: string, options: OpenSqliteOptions = {}): Promise<SqliteDatabase & { readonly driver: SqliteDriverName }> {
  const driver = options.driver ?? runtimeSqliteDriver();
  const timeout = options.busyTimeoutMs ?? 5000;
  if (driver === "better-sqlite3") {
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(path, { timeout }) as unknown as SqliteDatabase;
    return Object.assign(db, { driver });
  }
  if (driver === "bun:sqlite") {
    // A specifier the bundler must not resolve: it exists only inside Bun.
    const { Database } = (await import(/* @vite-ignore */ BUN_SQLITE)) as { Database: new (path: string, options: object) => BunDatabase };
    return wrapBun(new Database(path === "" ? "" : path, { create: true, strict: true }), path, timeout);
  }
  const { DatabaseSync } = (await import(/* @vite-ignore */ NODE_SQLITE)) as { DatabaseSync: new (path: string) => NodeDatabase };
  return wrapNode(new DatabaseSync(path), path, timeout);
}

const BUN_SQLITE = "bun:sqlite";
const NODE_SQLITE = "node:sqlite";

// ---- result codes -------------------------------------------------------------------------------

// SQLite's own messages for the primary result codes fail-closed mapping cares about (sqlite3ErrStr).
const CODE_BY_MESSAGE: readonly (readonly [RegExp, string])[] = [
  [/database table is locked/, "SQLITE_LOCKED"],
  [/database is locked/, "SQLITE_BUSY"],
  [/database or disk is full/, "SQLITE_FULL"],
  [/disk I\/O error/, "SQLITE_IOERR"],
  [/unable to open database file/, "SQLITE_CANTOPEN"],
  [/attempt to write a readonly database/, "SQLITE_READONLY"],
  [/file is not a database/, "SQLITE_NOTADB"],
  [/locking protocol/, "SQLITE_PROTOCOL"],
  [/UNIQUE constraint failed/, "SQLITE_CONSTRAINT_UNIQUE"],
  [/PRIMARY KEY constraint failed/, "SQLITE_CONSTRAINT_PRIMARYKEY"],
  [/constraint failed/, "SQLITE_CONSTRAINT"],
];
// Primary result codes by number (the low byte of an extended code).
const CODE_BY_NUMBER: Readonly<Record<number, string>> = { 5: "SQLITE_BUSY", 6: "SQLITE_LOCKED", 8: "SQLITE_READONLY", 10: "SQLITE_IOERR", 13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN", 15: "SQLITE_PROTOCOL", 19: "SQLITE_CONSTRAINT", 26: "SQLITE_NOTADB" };

/** Gives a driver's error better-sqlite3's `code` (`SQLITE_…`), found from its number or SQLite's message. */
export function withSqliteCode(e: unknown): unknown {
  if (typeof e !== "object" || e === null) return e;
  const err = e as { code?: unknown; errcode?: unknown; errno?: unknown; message?: unknown };
  if (typeof err.code === "string" && err.code.startsWith("SQLITE_") && err.code !== "SQLITE_ERROR") return e;
  const message = typeof err.message === "string" ? err.message : "";
  let code = CODE_BY_MESSAGE.find(([re]) => re.test(message))?.[1];
  if (code === undefined) {
    const n = typeof err.errcode === "number" ? err.errcode : typeof err.errno === "number" ? err.errno : undefined;
    if (n !== undefined) code = CODE_BY_NUMBER[n & 0xff];
  }
  if (code === undefined) return e;
  try {
    Object.defineProperty(e, "code", { value: code, configurable: true, writable: true, enumerable: true });
    return e;
  } catch {
    return Object.assign(new Error(message), { code, cause: e });
  }
}

function translated<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw withSqliteCode(e);
  }
}

// ---- shared pieces of the two shims --------------------------------------------------------------

// better-sqlite3 binds an array argument as the list of anonymous parameters; the others take them spread.
const spread = (params: SqliteParams): readonly unknown[] => (params.length === 1 && Array.isArray(params[0]) ? (params[0] as unknown[]) : params);

function* rawRows(rows: IterableIterator<unknown>): IterableIterator<unknown> {
  for (const row of rows) yield Object.values(row as object);
}

/** better-sqlite3's transaction functions: BEGIN (or a savepoint when nested), COMMIT, ROLLBACK on a throw. */
function transactions(exec: (sql: string) => void, inTransaction: () => boolean) {
  let depth = 0;
  return <A extends unknown[], R>(fn: (...args: A) => R): SqliteTransaction<A, R> => {
    const run =
      (begin: string) =>
      (...args: A): R => {
        if (depth > 0) {
          const name = `benchdata_sp${depth}`;
          exec(`SAVEPOINT ${name}`);
          depth++;
          try {
            const result = fn(...args);
            exec(`RELEASE ${name}`);
            return result;
          } catch (e) {
            exec(`ROLLBACK TO ${name}`);
            exec(`RELEASE ${name}`);
            throw e;
          } finally {
            depth--;
          }
        }
        exec(begin);
        depth++;
        try {
          const result = fn(...args);
          exec("COMMIT");
          return result;
        } catch (e) {
          if (inTransaction()) exec("ROLLBACK");
          throw e;
        } finally {
          depth--;
        }
      };
    return Object.assign(run("BEGIN"), { immediate: run("BEGIN IMMEDIATE") });
  };
}

function isMemoryPath(path: string): boolean {
  return path === ":memory:" || path.startsWith("file::memory:");
}

// ---- bun:sqlite ---------------------------------------------------------------------------------

interface BunStatement {
  run(...params: unknown[]): SqliteRunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
  values(...params: unknown[]): unknown[][];
}
interface BunDatabase {
  prepare(sql: string): BunStatement;
  exec(sql: string): unknown;
  close(): void;
  readonly inTransaction: boolean;
}

function wrapBun(db: BunDatabase, path: string, timeoutMs: number): SqliteDatabase & { readonly driver: SqliteDriverName } {
  let open = true;
  const statement = (s: BunStatement, raw: boolean): SqliteStatement => ({
    run: (...p) => translated(() => s.run(...spread(p))),
    // bun:sqlite answers null for no row; better-sqlite3 answers undefined.
    get: (...p) => translated(() => (raw ? s.values(...spread(p))[0] : (s.get(...spread(p)) ?? undefined))),
    all: (...p) => translated(() => (raw ? s.values(...spread(p)) : s.all(...spread(p)))),
    iterate: (...p) => translated(() => (raw ? rawRows(s.iterate(...spread(p))) : s.iterate(...spread(p)))),
    raw: (toggle = true) => statement(s, toggle),
  });
  const exec = (sql: string): void => void translated(() => db.exec(sql));
  const wrapped: SqliteDatabase & { readonly driver: SqliteDriverName } = {
    driver: "bun:sqlite",
    name: path,
    memory: isMemoryPath(path),
    get open() {
      return open;
    },
    prepare: (sql) => statement(translated(() => db.prepare(sql)), false),
    exec,
    pragma: (source) => translated(() => db.prepare(`PRAGMA ${source}`).all()),
    transaction: transactions(exec, () => db.inTransaction),
    close: () => {
      open = false;
      db.close();
    },
  };
  wrapped.pragma(`busy_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
  return wrapped;
}

// ---- node:sqlite (Deno) -------------------------------------------------------------------------

interface NodeStatement {
  run(...params: unknown[]): SqliteRunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
}
interface NodeDatabase {
  prepare(sql: string): NodeStatement;
  exec(sql: string): void;
  close(): void;
  readonly isOpen?: boolean;
  readonly isTransaction?: boolean;
}

// node:sqlite returns rows with a null prototype; the store only reads named fields, so they are used as they are.
function wrapNode(db: NodeDatabase, path: string, timeoutMs: number): SqliteDatabase & { readonly driver: SqliteDriverName } {
  let open = true;
  let inTx = false;
  const statement = (s: NodeStatement, raw: boolean): SqliteStatement => ({
    run: (...p) => translated(() => s.run(...spread(p))),
    get: (...p) => translated(() => {
      const row = s.get(...spread(p));
      return raw && row !== undefined ? Object.values(row as object) : row;
    }),
    all: (...p) => translated(() => (raw ? s.all(...spread(p)).map((r) => Object.values(r as object)) : s.all(...spread(p)))),
    iterate: (...p) => translated(() => (raw ? rawRows(s.iterate(...spread(p))) : s.iterate(...spread(p)))),
    raw: (toggle = true) => statement(s, toggle),
  });
  const exec = (sql: string): void =>
    translated(() => {
      db.exec(sql);
      // Tracked here because not every node:sqlite (Deno's included) exposes isTransaction.
      if (/^\s*BEGIN/i.test(sql)) inTx = true;
      else if (/^\s*(COMMIT|END|ROLLBACK)\s*$/i.test(sql)) inTx = false;
    });
  const wrapped: SqliteDatabase & { readonly driver: SqliteDriverName } = {
    driver: "node:sqlite",
    name: path,
    memory: isMemoryPath(path),
    get open() {
      return open;
    },
    prepare: (sql) => statement(translated(() => db.prepare(sql)), false),
    exec,
    pragma: (source) => translated(() => db.prepare(`PRAGMA ${source}`).all()),
    transaction: transactions(exec, () => db.isTransaction ?? inTx),
    close: () => {
      open = false;
      db.close();
    },
  };
  wrapped.pragma(`busy_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
  return wrapped;
}
