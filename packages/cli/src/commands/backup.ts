/**
 * `benchdata backup --db sqlite:PATH --to DIR --key-out FILE`: a consistent copy of a SQLite database while it is
 * served, and the operator key in FILE, which must lie outside DIR so that copying DIR off-site never carries the key
 * with the database (docs/operations.md, "Backups and restore").
 */
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readlinkSync, realpathSync, rmSync, statSync, writeSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { checkWebhookSecrets } from "@benchdata/core";
import { openSqlite, openStorage } from "@benchdata/storage-kysely";
import { dbUrl, parse, UsageError } from "../args.ts";
import type { Command } from "../command.ts";
import { out, printUsage } from "../command.ts";
import { findSecretKeys } from "../secret-keys.ts";

const USAGE = `Usage: benchdata backup --to DIR --key-out FILE [--db sqlite:PATH]

Copies a SQLite database while it is being served: one consistent snapshot (VACUUM INTO, one read
transaction; writers go on) to DIR/<database name>, mode 0600. The operator key sealing webhook
signing secrets goes to FILE, mode 0600, which must lie outside DIR (refused otherwise): whatever
copies DIR off-site must not carry the key. Move it to your secret store. The copy is then checked:
every sealed secret in it must open under that key. Prints a summary; exits 1 if the check fails.
Neither output may exist; if the copy fails, both are removed.
PostgreSQL is backed up with pg_dump and restored with pg_restore (docs/operations.md).`;

function sqlitePathOf(db: string): string {
  if (db.startsWith("postgres://") || db.startsWith("postgresql://")) {
    throw new UsageError("backup copies SQLite databases; back up PostgreSQL with pg_dump --format=custom and restore with pg_restore (docs/operations.md, \"Backups and restore\")");
  }
  const path = db.startsWith("sqlite:") ? db.slice("sqlite:".length).replace(/^\/\//, "") : "";
  if (path === "" || path === ":memory:") throw new UsageError(`--db must name a SQLite database file to back up, got "${db}"`);
  return path;
}

/** `path` with symbolic links resolved as far as it exists (the rest appended), so two names compare by place. */
function realPlace(path: string, depth = 0): string {
  const full = resolve(path);
  if (existsSync(full)) return realpathSync(full);
  const parent = dirname(full);
  if (parent === full) return full;
  const here = join(realPlace(parent, depth), basename(full));
  // A dangling link names where the directory will be created: follow it (bounded, as the kernel does).
  const link = lstatSync(here, { throwIfNoEntry: false });
  return link?.isSymbolicLink() && depth < 40 ? realPlace(resolve(dirname(here), readlinkSync(here)), depth + 1) : here;
}

/** The key must not land inside the backup directory: anything syncing DIR off-site would carry it. */
function refuseKeyInside(dir: string, keyOut: string): void {
  const rel = relative(realPlace(dir), realPlace(keyOut));
  if (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))) {
    throw new UsageError(`--key-out ${keyOut} lies inside --to ${dir}: the key must be kept apart from the database's backups (docs/operations.md, "Backups and restore")`);
  }
}

/** A new file, 0600 (it must not exist), holding `text`: VACUUM INTO fills an empty file and keeps its mode. */
function createPrivate(path: string, text = ""): void {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new UsageError(`${path} already exists: back up into a new or empty directory, and the key to a new file`);
    throw new UsageError(`cannot create ${path}: ${code ?? String(e)}`);
  }
  try {
    if (text !== "") writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { db: { type: "string" }, to: { type: "string" }, "key-out": { type: "string" } });
  if (values.help) return printUsage(USAGE);
  if (!values.to) throw new UsageError("--to DIR is required");
  if (!values["key-out"]) throw new UsageError("--key-out FILE is required: a file outside --to DIR for the operator key");
  const keyOut = values["key-out"];
  refuseKeyInside(values.to, keyOut);
  const db = dbUrl(values.db);
  const source = sqlitePathOf(db);
  statSync(source);
  const found = await findSecretKeys(db);
  const target = join(values.to, basename(source));
  // Both outputs are created before anything is copied, and whatever this run created is removed if it fails,
  // so a failed run leaves neither a copy without its key nor a placeholder that refuses the next run.
  const created: string[] = [];
  const madeDir = mkdirSync(values.to, { recursive: true, mode: 0o700 });
  let keyIds: readonly string[] = [];
  try {
    createPrivate(target);
    created.push(target);
    if (!("missing" in found)) {
      const lines = found.keys.map((k) => `${k.id}:${Buffer.from(k.key).toString("base64")}`);
      createPrivate(
        keyOut,
        `# benchdata operator key for ${basename(source)}, written by benchdata backup at ${new Date().toISOString()}.\n` +
          `# Keep it apart from the database backup. To restore: place it beside the database as <db>.webhook-keys\n# (mode 0600) or point BENCHDATA_WEBHOOK_KEYS_FILE at it.\n${lines.join("\n")}\n`,
      );
      created.push(keyOut);
      keyIds = found.keys.map((k) => k.id);
    }
    return await copyAndCheck(source, target, found, keyIds.length > 0 ? keyOut : null, keyIds);
  } catch (e) {
    for (const f of created) rmSync(f, { force: true });
    if (madeDir !== undefined) rmSync(madeDir, { recursive: true, force: true });
    throw e;
  }
}

async function copyAndCheck(source: string, target: string, found: Awaited<ReturnType<typeof findSecretKeys>>, keyFile: string | null, keyIds: readonly string[]): Promise<number> {
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
  if (keyFile !== null) process.stderr.write(`operator key written to ${keyFile} (keep it out of the database's backups)\n`);
  else if ("missing" in found) process.stderr.write(`no operator key file (${found.missing} does not exist): none written\n`);
  out({ database: target, bytes, key_file: keyFile, key_ids: keyIds, sealed_secrets: check.sealed, unopened: check.failed.length, duration_ms: Date.now() - started });
  if (check.failed.length > 0) {
    process.stderr.write(`benchdata backup: ${check.failed.length} sealed secrets in the copy open under none of the keys written: find the missing key before relying on this backup (benchdata webhooks reseal --check)\n`);
    return 1;
  }
  return 0;
}

export const backupCommand: Command = { usage: USAGE, run };
