/**
 * The operator keys that seal webhook signing secrets at rest (docs/webhooks.md, "Signing secrets at rest").
 * They never live in the database, so a copy of it (a backup) cannot sign events:
 * 1. `BENCHDATA_WEBHOOK_KEYS`: `id:base64` entries (32-byte keys), the first seals, all open;
 * 2. else `BENCHDATA_WEBHOOK_KEYS_FILE`: a file holding the same;
 * 3. else, for `sqlite:PATH`, the file `PATH.webhook-keys` beside the database, created (mode 0600) with a
 *    new key the first time; for `memory:` (and `sqlite::memory:`) a key that lives as long as the process;
 * 4. PostgreSQL has no such default (several hosts share one database): the start is refused (exit 2).
 */
import { link, readFile, unlink, writeFile } from "node:fs/promises";
import type { SecretBox } from "@benchdata/core";
import { createSecretBox, cryptoRandom, generateSecretKeyEntry, parseSecretKeys } from "@benchdata/core";
import { ConfigError } from "./config-file.ts";

/** Where the keys came from (for the start-up log; never the keys themselves). */
export type KeySource = "env" | "file" | "generated-file" | "database-file" | "ephemeral";

/** The SQLite database file a URL names, or null (memory, PostgreSQL). */
function sqlitePath(db: string): string | null {
  if (!db.startsWith("sqlite:")) return null;
  const path = db.slice("sqlite:".length).replace(/^\/\//, "");
  return path === "" || path === ":memory:" ? null : path;
}

/** The key file `serve` keeps beside a SQLite database. */
export function defaultKeyFile(db: string): string | null {
  const path = sqlitePath(db);
  return path === null ? null : `${path}.webhook-keys`;
}

function parse(text: string, where: string): ReturnType<typeof parseSecretKeys> {
  try {
    return parseSecretKeys(text);
  } catch (e) {
    throw new ConfigError(`${where}: ${(e as Error).message}`);
  }
}

async function readKeyFile(path: string, where: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new ConfigError(`${where} ${path} cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

/**
 * Creates the key file with one new key unless it exists, atomically: written whole to a private temporary
 * file (0600), then hard-linked into place, so a process starting at the same moment reads either nothing
 * or the complete file, and exactly one key wins.
 */
async function createKeyFile(path: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  const id = `k${new Date().toISOString().slice(0, 10).replaceAll("-", "")}`;
  await writeFile(tmp, `# benchdata operator key: seals webhook signing secrets. Keep it out of database backups.\n${generateSecretKeyEntry(cryptoRandom, id)}\n`, { mode: 0o600, flag: "wx" });
  try {
    await link(tmp, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

/**
 * The box sealing and opening webhook signing secrets for `db`, from the environment or the default for
 * the database kind. `generate` allows creating the SQLite key file (serve, reseal); throws ConfigError
 * (exit 2) when PostgreSQL has no configured key.
 */
export async function loadSecretBox(db: string, options: { generate?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<{ box: SecretBox; source: KeySource; file?: string }> {
  const env = options.env ?? process.env;
  if (env.BENCHDATA_WEBHOOK_KEYS) {
    return { box: await createSecretBox(parse(env.BENCHDATA_WEBHOOK_KEYS, "BENCHDATA_WEBHOOK_KEYS"), cryptoRandom), source: "env" };
  }
  if (env.BENCHDATA_WEBHOOK_KEYS_FILE) {
    const file = env.BENCHDATA_WEBHOOK_KEYS_FILE;
    const text = await readKeyFile(file, "BENCHDATA_WEBHOOK_KEYS_FILE");
    if (text === null) throw new ConfigError(`BENCHDATA_WEBHOOK_KEYS_FILE ${file} does not exist`);
    return { box: await createSecretBox(parse(text, file), cryptoRandom), source: "file", file };
  }
  if (db.startsWith("postgres:") || db.startsWith("postgresql:")) {
    throw new ConfigError(
      "PostgreSQL deployments must configure the operator key that seals webhook signing secrets: set BENCHDATA_WEBHOOK_KEYS=id:base64-of-32-bytes " +
        "(or BENCHDATA_WEBHOOK_KEYS_FILE=PATH), the same on every instance and kept out of the database (docs/webhooks.md)",
    );
  }
  const file = defaultKeyFile(db);
  if (file === null) {
    // memory: the secrets die with the process, and so may the key.
    return { box: await createSecretBox(parse(generateSecretKeyEntry(cryptoRandom, "ephemeral"), "generated key"), cryptoRandom), source: "ephemeral" };
  }
  let text = await readKeyFile(file, "the key file");
  let source: KeySource = "database-file";
  if (text === null) {
    if (!options.generate) throw new ConfigError(`no operator key: ${file} does not exist and BENCHDATA_WEBHOOK_KEYS is not set`);
    await createKeyFile(file);
    text = (await readKeyFile(file, "the key file")) ?? "";
    source = "generated-file";
  }
  return { box: await createSecretBox(parse(text, file), cryptoRandom), source, file };
}
