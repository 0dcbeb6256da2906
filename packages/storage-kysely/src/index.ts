/**
 * @benchdata/storage-kysely: benchdata's Storage in SQLite (embedded, the default) or PostgreSQL, with
 * migrations in code, and the streaming importer of live observations.
 */
export type { OpenedStorage, OpenStorageOptions } from "./open-storage.ts";
export { openStorage, storageKindOf } from "./open-storage.ts";
export type { SqlStorage } from "./sql-storage.ts";
export type { SqliteStorageOptions } from "./sqlite/sqlite-storage.ts";
export { configureSqlite, createSqliteStorage } from "./sqlite/sqlite-storage.ts";
export { migrateSqlite } from "./sqlite/sqlite-migrate.ts";
export { openSqlite, runtimeSqliteDriver, withSqliteCode } from "./sqlite/driver.ts";
export type { OpenSqliteOptions, SqliteDatabase, SqliteDriverName, SqliteStatement } from "./sqlite/driver.ts";
export type { PostgresStorageOptions } from "./postgres/postgres-storage.ts";
export { createPostgresStorage } from "./postgres/postgres-storage.ts";
export { isPostgresUnavailable, isSqliteUnavailable, StorageUnavailableError } from "./database-unavailable.ts";
export type { ImportOptions, ImportSummary } from "./import/import-observations.ts";
export { formatOfPath, importFile, importObservations } from "./import/import-observations.ts";
export type { ImportFormat, ImportSource } from "./import/read-rows.ts";
export { ImportError } from "./import/validate-observation.ts";
export { decodeFloat64, encodeFloat64 } from "./cells/cell-codec.ts";
