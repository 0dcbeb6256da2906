/**
 * The operator keys that seal webhook signing secrets at rest (docs/webhooks.md, "Signing secrets at rest").
 * They never live in the database, so a copy of it (a backup) cannot sign events:
 * 1. `BENCHDATA_WEBHOOK_KEYS`: `id:base64` entries (32-byte keys), the first seals, all open;
 * 2. else `BENCHDATA_WEBHOOK_KEYS_FILE`: a file holding the same;
 * 3. else, for `sqlite:PATH`, the file `PATH.webhook-keys` beside the database, created (mode 0600) with a
 *    new key the first time, and only while the database holds no sealed secret; for `memory:` (and
 *    `sqlite::memory:`) a key that lives as long as the process;
 * 4. PostgreSQL has no such default (several hosts share one database): the start is refused (exit 2).
 * Whatever the source, `serve` refuses to start (exit 2) while a sealed secret opens under none of the keys;
 * when the key is truly lost, `benchdata webhooks drop-unopened` removes what it sealed.
 */
import { link, readFile, stat, unlink, writeFile } from "node:fs/promises";
import type { SecretBox, SecretKey, Storage } from "@benchdata/core";
import { checkWebhookSecrets, createSecretBox, cryptoRandom, describeUnopened, generateSecretKeyEntry, newSecretKeyId, parseSecretKeys, systemClock } from "@benchdata/core";
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
 * or the complete file, and exactly one key wins. The key id is unique (`newSecretKeyId`).
 */
async function createKeyFile(path: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  const entry = generateSecretKeyEntry(cryptoRandom, newSecretKeyId(systemClock, cryptoRandom));
  await writeFile(
    tmp,
    `# benchdata operator key: seals webhook signing secrets. Without it they cannot be opened.\n# Keep a copy apart from the database's backups (docs/operations.md, "Backups and restore").\n${entry}\n`,
    { mode: 0o600, flag: "wx" },
  );
  try {
    await link(tmp, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

/** Operator keys found, and where from (never the keys in a log). */
export interface LoadedKeys {
  readonly box: SecretBox;
  readonly keys: readonly SecretKey[];
  readonly source: KeySource;
  readonly file?: string;
  /** What is wrong with the key file's protection (readable by others, another owner), for a warning at start. */
  readonly warnings: readonly string[];
}

/** What the environment and the database kind give before the database is opened: keys, or the SQLite key file that does not exist yet. */
export type FoundKeys = LoadedKeys | { readonly missing: string };

async function loaded(text: string, where: string, source: KeySource, file?: string): Promise<LoadedKeys> {
  const keys = parse(text, where);
  const warnings = file === undefined ? [] : await keyFileWarnings(file);
  return { box: await createSecretBox(keys, cryptoRandom), keys, source, warnings, ...(file !== undefined ? { file } : {}) };
}

/**
 * Whatever lets someone other than the process's user read the key file: a mode granting group or others any
 * access, or another owner. Warned about, not refused: the operator may share it on purpose (a group of hosts).
 */
export async function keyFileWarnings(file: string): Promise<string[]> {
  const warnings: string[] = [];
  const st = await stat(file);
  const mode = st.mode & 0o777;
  if ((mode & 0o077) !== 0) warnings.push(`its mode ${mode.toString(8).padStart(4, "0")} gives its group or other users access (chmod 600 ${file})`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) warnings.push(`it is owned by user id ${st.uid}, not by this process's user (${uid})`);
  return warnings;
}

/**
 * The operator keys for `db` from the environment or the default for the database kind, read before the
 * database is opened; throws ConfigError (exit 2) when PostgreSQL has no configured key, or a key is malformed.
 */
export async function findSecretKeys(db: string, env: NodeJS.ProcessEnv = process.env): Promise<FoundKeys> {
  if (env.BENCHDATA_WEBHOOK_KEYS) return loaded(env.BENCHDATA_WEBHOOK_KEYS, "BENCHDATA_WEBHOOK_KEYS", "env");
  if (env.BENCHDATA_WEBHOOK_KEYS_FILE) {
    const file = env.BENCHDATA_WEBHOOK_KEYS_FILE;
    const text = await readKeyFile(file, "BENCHDATA_WEBHOOK_KEYS_FILE");
    if (text === null) throw new ConfigError(`BENCHDATA_WEBHOOK_KEYS_FILE ${file} does not exist`);
    return loaded(text, file, "file", file);
  }
  if (db.startsWith("postgres:") || db.startsWith("postgresql:")) {
    throw new ConfigError(
      "PostgreSQL deployments must configure the operator key that seals webhook signing secrets: set BENCHDATA_WEBHOOK_KEYS=id:base64-of-32-bytes " +
        "(or BENCHDATA_WEBHOOK_KEYS_FILE=PATH), the same on every instance and kept out of the database (docs/webhooks.md)",
    );
  }
  const file = defaultKeyFile(db);
  // memory: the secrets die with the process, and so may the key.
  if (file === null) return loaded(generateSecretKeyEntry(cryptoRandom, "ephemeral"), "generated key", "ephemeral");
  const text = await readKeyFile(file, "the key file");
  return text === null ? { missing: file } : loaded(text, file, "database-file", file);
}

/**
 * The keys for an opened database. A missing SQLite key file is created only when the database holds no
 * sealed secret (a fresh one): a new key beside a restored database would open none of its secrets, so then
 * nothing is written and the start is refused (ConfigError, exit 2) naming how many need which key id.
 */
export async function ensureSecretKeys(found: FoundKeys, storage: Pick<Storage, "listWebhookSecrets">): Promise<LoadedKeys> {
  if (!("missing" in found)) return found;
  const check = await checkWebhookSecrets(storage, null);
  if (check.failed.length > 0) {
    throw new ConfigError(
      `${found.missing} does not exist, but the database holds ${check.failed.length} sealed webhook signing secret${check.failed.length === 1 ? "" : "s"} (${describeUnopened(check.failed)}). ` +
        "A new key would open none of them, so none was written. Put back the key file that was beside the database when they were sealed " +
        "(or set BENCHDATA_WEBHOOK_KEYS / BENCHDATA_WEBHOOK_KEYS_FILE to its keys) and start again (docs/operations.md, \"Backups and restore\"). " +
        "If the key is truly lost, `benchdata webhooks drop-unopened` deletes the webhooks it sealed (their owners create new ones), then start",
    );
  }
  await createKeyFile(found.missing);
  const text = (await readKeyFile(found.missing, "the key file")) ?? "";
  return loaded(text, found.missing, "generated-file", found.missing);
}

/**
 * Refuses (ConfigError, exit 2) when a sealed secret in the database opens under no configured key: serving
 * then would leave its deliveries pending for ever and seal new secrets beside ones nobody can open.
 */
export async function requireSecretsOpen(keys: LoadedKeys, storage: Pick<Storage, "listWebhookSecrets">): Promise<number> {
  const check = await checkWebhookSecrets(storage, keys.box);
  if (check.failed.length === 0) return check.sealed;
  const where = keys.source === "env" ? "BENCHDATA_WEBHOOK_KEYS" : (keys.file ?? keys.source);
  throw new ConfigError(
    `refusing to start: ${check.failed.length} of ${check.sealed} sealed webhook signing secrets open under no configured operator key (${describeUnopened(check.failed)}; configured: ${keys.keys.map((k) => k.id).join(", ")} from ${where}). ` +
      "Add the key they were sealed under (the first key seals, the others only open) and start again; `benchdata webhooks reseal --check` lists them. " +
      "If that key is truly lost, `benchdata webhooks drop-unopened` deletes the webhooks it sealed (their owners create new ones) and ends the overlaps it sealed, then start (docs/webhooks.md)",
  );
}
