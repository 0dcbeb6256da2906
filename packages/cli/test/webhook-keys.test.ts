// The operator key sealing webhook signing secrets, through the real CLI (issue 13): generated beside a SQLite
// database (0600) on first start, required for PostgreSQL (exit 2 with the reason), plain-text rows sealed on
// start, and `benchdata webhooks reseal` moving every row to a new key.
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { cli, http, startServe } from "./helpers.ts";

const ADMIN = "admin-token-for-webhook-key-tests-0123456789";
const NO_KEYS = { BENCHDATA_WEBHOOK_KEYS: "", BENCHDATA_WEBHOOK_KEYS_FILE: "", BENCHDATA_ADMIN_TOKEN: ADMIN };
const dir = mkdtempSync(join(tmpdir(), "benchdata-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// No DNS here: webhooks may point at loopback over http.
const CONFIG = join(dir, "config.json");
writeFileSync(CONFIG, JSON.stringify({ webhooks: { allowHttp: true, allowPrivateNetworks: true } }));

function secrets(file: string): { id: string; secret: string }[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT id, secret FROM webhooks ORDER BY id").all() as { id: string; secret: string }[];
  } finally {
    db.close();
  }
}

describe("operator key for webhook signing secrets (CLI)", () => {
  it("PostgreSQL without a configured key refuses to start: exit 2 and the reason, before connecting", () => {
    const r = cli(["serve", "--db", "postgres://postgres@127.0.0.1:1/nowhere", "--port", "0"], NO_KEYS);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("BENCHDATA_WEBHOOK_KEYS");
    expect(r.stderr).toContain("PostgreSQL");
    const bad = cli(["serve", "--db", "postgres://postgres@127.0.0.1:1/nowhere", "--port", "0"], { ...NO_KEYS, BENCHDATA_WEBHOOK_KEYS: "k1:dG9vc2hvcnQ=" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("32 bytes");
  });

  it("SQLite: serve creates a 0600 key file beside the database, seals secrets with it, seals old plain-text rows on start; reseal moves them to a new key", async () => {
    const file = join(dir, "hooks.db");
    const db = `sqlite:${file}`;
    const node = await startServe(["--db", db, "--config", CONFIG], NO_KEYS);
    let secret = "";
    let hookId = "";
    try {
      const keyFile = `${file}.webhook-keys`;
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      expect(readFileSync(keyFile, "utf8")).toMatch(/^k[0-9A-Z]{26}:[A-Za-z0-9+/]{43}=$/m);
      expect(node.logs.join("\n")).not.toContain(readFileSync(keyFile, "utf8").split("\n").find((l) => l.startsWith("k"))!.split(":")[1]);
      const acc = await http(`${node.url}/api/v1/admin/accounts`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}` }, body: { name: "Keys", tier: "growth" } });
      expect(acc.status, acc.text).toBe(201);
      const hook = await http(`${node.url}/api/v1/console/webhooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${acc.json.session_token}` },
        body: { url: "http://127.0.0.1:9/in", events: ["key.created"] },
      });
      expect(hook.status, hook.text).toBe(201);
      secret = hook.json.signing_secret;
      hookId = hook.json.webhook_id;
    } finally {
      expect(await node.stop()).toBe(0);
    }
    const [row] = secrets(file);
    expect(row!.id).toBe(hookId);
    expect(row!.secret).toMatch(/^aesgcm1:k[0-9A-Z]{26}:/);
    expect(row!.secret).not.toContain(secret.slice(6));

    // A row as an older version stored it: plain text. The next start seals it.
    const raw = new Database(file);
    raw.prepare("INSERT INTO webhooks (id, account_id, url, events, secret, created_at) VALUES ('wh_old', 'acc_x', 'https://h.example/x', '[\"key.created\"]', 'whsec_plain', 0)").run();
    raw.close();
    const restarted = await startServe(["--db", db, "--config", CONFIG], NO_KEYS);
    await restarted.stop();
    expect(secrets(file).find((r) => r.id === "wh_old")!.secret).toMatch(/^aesgcm1:k[0-9A-Z]{26}:/);

    // A new operator key first, the old one kept to open: reseal moves every row to the new one.
    const oldEntry = readFileSync(`${file}.webhook-keys`, "utf8").split("\n").find((l) => /^k[0-9A-Z]{26}:/.test(l))!;
    const newEntry = `k2099:${Buffer.alloc(32, 5).toString("base64")}`;
    const moved = cli(["webhooks", "reseal", "--db", db], { ...NO_KEYS, BENCHDATA_WEBHOOK_KEYS: `${newEntry},${oldEntry}` });
    expect(moved.status, moved.stderr).toBe(0);
    expect(JSON.parse(moved.stdout)).toEqual({ resealed: 2, unchanged: 0, failed: 0, key_id: "k2099" });
    expect(secrets(file).every((r) => r.secret.startsWith("aesgcm1:k2099:"))).toBe(true);
    // Without the old key, nothing under it would open: reseal says so and exits 1 (nothing is changed).
    const other = cli(["webhooks", "reseal", "--db", db], { ...NO_KEYS, BENCHDATA_WEBHOOK_KEYS: `k3:${Buffer.alloc(32, 6).toString("base64")}` });
    expect(other.status).toBe(1);
    expect(JSON.parse(other.stdout)).toMatchObject({ resealed: 0, failed: 2 });
    expect(cli(["webhooks", "frobnicate", "--db", db], NO_KEYS).status).toBe(2);
  }, 120_000);
});

describe("the key file and database files are private", () => {
  it("SQLite database, -wal and -shm are created 0600 whatever the umask; a key file readable by others or owned by another user is warned about at start", async () => {
    const file = join(dir, "private.db");
    // The child inherits the most permissive umask, so 0600 can only come from the server itself (under the
    // usual 022 a file created 0644 would already fail, but under 000 so would 0666).
    const before = process.umask(0o000);
    let node!: Awaited<ReturnType<typeof startServe>>;
    try {
      expect(process.umask()).toBe(0);
      node = await startServe(["--db", `sqlite:${file}`, "--config", CONFIG], NO_KEYS);
    } finally {
      process.umask(before);
    }
    try {
      // While serving, WAL mode has its -wal and -shm beside the database.
      for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}.webhook-keys`]) expect([f, statSync(f).mode & 0o777]).toEqual([f, 0o600]);
      expect(node.logs.join("\n")).not.toContain("not private");
    } finally {
      expect(await node.stop()).toBe(0);
    }
    chmodSync(`${file}.webhook-keys`, 0o644);
    // Only root can give a file away; elsewhere the ownership half is not exercised.
    const root = process.getuid?.() === 0;
    if (root) chownSync(`${file}.webhook-keys`, 65534, 65534);
    const loose = await startServe(["--db", `sqlite:${file}`, "--config", CONFIG], NO_KEYS);
    await loose.stop();
    const warn = loose.logs.map((l) => (l.startsWith("{") ? JSON.parse(l) : {})).find((e) => e.msg === "the operator key file is not private to this user");
    expect(warn).toMatchObject({ level: "warn", key_file: `${file}.webhook-keys` });
    expect(warn.problems).toContain("its mode 0644 gives its group or other users access");
    if (root) expect(warn.problems).toContain("owned by user id 65534");
    // BENCHDATA_WEBHOOK_KEYS_FILE is checked the same way.
    const viaEnv = await startServe(["--db", `sqlite:${file}`, "--config", CONFIG], { ...NO_KEYS, BENCHDATA_WEBHOOK_KEYS_FILE: `${file}.webhook-keys` });
    await viaEnv.stop();
    expect(viaEnv.logs.join("\n")).toContain("the operator key file is not private to this user");
  }, 60_000);
});
