/**
 * `benchdata backup --db sqlite:PATH --to DIR`: a consistent copy of a SQLite database while it is served, and the
 * operator key in a separate file named so it is not stored with the copy (docs/operations.md, "Backups and restore").
 */
import { closeSync, mkdirSync, openSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { checkWebhookSecrets } from "@benchdata/core";
import { openSqlite, openStorage } from "@benchdata/storage-kysely";
import { dbUrl, parse, UsageError } from "../args.ts";
import type { Command } from "../command.ts";
import { out, printUsage } from "../command.ts";
import { findSecretKeys } from "../secret-keys.ts";

/** The name of the key file a backup writes: it says where it must not go. */
export const KEY_FILE_NAME = "benchdata-operator-key.DO-NOT-STORE-WITH-BACKUP";

const USAGE = `Usage: benchdata backup --to DIR [--key-out FILE] [--db sqlite:PATH]

Copies a SQLite database while it is being served: one consistent snapshot (VACUUM INTO, one read
transaction; writers go on) to DIR/<database name>, mode 0600. The operator key sealing webhook
signing secrets goes to a separate file, DIR/${KEY_FILE_NAME} (or --key-out FILE), mode 0600:
move it to your secret store, never into the database's backups. The copy is then checked: every sealed
secret in it must open under that key. Prints a summary; exits 1 if the check fails.
PostgreSQL is backed up with pg_dump and restored with pg_restore (docs/operations.md).`;

function sqlitePathOf(db: string): string {
  if (db.startsWith("postgres://") || db.startsWith("postgresql://")) {
    throw new UsageError("backup copies SQLite databases; back up PostgreSQL with pg_dump --format=custom and restore with pg_restore (docs/operations.md, \"Backups and restore\")");
  }
  const path = db.startsWith("sqlite:") ? db.slice("sqlite:".length).replace(/^\/\//, "") : "";
  if (path === "" || path === ":memory:") throw new UsageError(`--db must name a SQLite database file to back up, got "${db}"`);
  return path;
}

/** A new empty file, 0600 (it must not exist): VACUUM INTO fills an empty file and keeps its mode. */
function createPrivate(path: string): void {
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") throw new UsageError(`${path} already exists: back up into a new or empty directory`);
    throw e;
  }
}

async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { db: { type: "string" }, to: { type: "string" }, "key-out": { type: "string" } });
  if (values.help) return printUsage(USAGE);
  if (!values.to) throw new UsageError("--to DIR is required");
  if (values["key-out"] === "") throw new UsageError("--key-out needs a file name");
  const db = dbUrl(values.db);
  const source = sqlitePathOf(db);
  statSync(source);
  const found = await findSecretKeys(db);
  mkdirSync(values.to, { recursive: true, mode: 0o700 });
  const target = join(values.to, basename(source));
  const keyOut = values["key-out"] ?? join(values.to, KEY_FILE_NAME);
  createPrivate(target);
  const started = Date.now();
  process.stderr.write(`backing up ${source} to ${target} (one snapshot; the server keeps serving)…\n`);
  const conn = await openSqlite(source, { busyTimeoutMs: 5000 });
  try {
    conn.prepare("VACUUM INTO ?").run(target);
  } finally {
    conn.close();
  }
  const bytes = statSync(target).size;
  process.stderr.write(`database copied: ${bytes} bytes in ${Date.now() - started} ms; checking its webhook secrets…\n`);
  const copy = await openStorage(`sqlite:${target}`);
  let check;
  try {
    check = await checkWebhookSecrets(copy, "missing" in found ? null : found.box);
  } finally {
    await copy.close();
  }
  let keyIds: readonly string[] = [];
  if (!("missing" in found)) {
    createPrivate(keyOut);
    const lines = found.keys.map((k) => `${k.id}:${Buffer.from(k.key).toString("base64")}`);
    writeFileSync(
      keyOut,
      `# benchdata operator key for ${basename(source)}, written by benchdata backup at ${new Date().toISOString()}.\n` +
        `# Keep it apart from the database backup. To restore: place it beside the database as <db>.webhook-keys\n# (mode 0600) or point BENCHDATA_WEBHOOK_KEYS_FILE at it.\n${lines.join("\n")}\n`,
    );
    keyIds = found.keys.map((k) => k.id);
    process.stderr.write(`operator key written to ${keyOut} (keep it out of the database's backups)\n`);
  } else process.stderr.write(`no operator key file (${found.missing} does not exist): none written\n`);
  out({ database: target, bytes, key_file: keyIds.length > 0 ? keyOut : null, key_ids: keyIds, sealed_secrets: check.sealed, unopened: check.failed.length, duration_ms: Date.now() - started });
  if (check.failed.length > 0) {
    process.stderr.write(`benchdata backup: ${check.failed.length} sealed secrets in the copy open under none of the keys written: find the missing key before relying on this backup (benchdata webhooks reseal --check)\n`);
    return 1;
  }
  return 0;
}

export const backupCommand: Command = { usage: USAGE, run };
