// `benchdata backup` under load (issue 26 §3): a real `benchdata serve` keeps answering data requests and
// writing webhook events while the backup runs; the copy restored onto a fresh folder with the key file the
// backup wrote starts, its usage lies between what was admitted before the backup began and what was sent
// before it ended (one snapshot inside that span) and then counts on exactly, every webhook signs with the
// secret shown at creation, and deliveries pending in the copy go out.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, REPO, cli, http, startServe } from "./helpers.ts";
import { consoleOf, newAccount, receiver, signedBy, underLoad, until } from "./restore-support.ts";

const ADMIN = "admin-token-for-backup-tests-0123456789abcd";
const NO_KEYS = { BENCHDATA_WEBHOOK_KEYS: "", BENCHDATA_WEBHOOK_KEYS_FILE: "", BENCHDATA_ADMIN_TOKEN: ADMIN };
const SANDBOX = { host: "sandbox.localhost" };
const dir = mkdtempSync(join(tmpdir(), "benchdata-backup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CONFIG = join(dir, "config.json");
writeFileSync(CONFIG, JSON.stringify({ target: "host", tiers: { growth: { perMinute: 1000000, perDay: 10000000 } }, webhooks: { allowHttp: true, allowPrivateNetworks: true, ordered: false, retryDelaysSeconds: [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1] } }));
const QUERY = "/data/v1/benchmarks/percentile?metric=gross_margin&value=0.15&category=saas";

function backup(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "backup", ...args], { cwd: REPO, env: { ...process.env, ...NO_KEYS, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c));
    child.stderr.on("data", (c: Buffer) => (stderr += c));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("benchdata backup (SQLite) under load", () => {
  it("restores onto a fresh folder: usage exact within the snapshot's span, webhooks sign, pending deliveries go out", async () => {
    const rx = await receiver(503);
    const liveDb = join(dir, "live", "bench.db");
    mkdirSync(join(dir, "live"));
    const node = await startServe(["--db", `sqlite:${liveDb}`, "--config", CONFIG], NO_KEYS);
    let admittedBeforeStart = 0;
    let sentBeforeEnd = 0;
    let secret = "";
    let webhookId = "";
    let session = "";
    let result: { code: number | null; stdout: string; stderr: string };
    try {
      ({ session } = await newAccount(node.url, ADMIN, "Backup Co"));
      const c = consoleOf(node.url, session);
      const hook = await c("POST", "/webhooks", { url: rx.url, events: ["key.created"] });
      expect(hook.status, hook.text).toBe(201);
      ({ webhook_id: webhookId, signing_secret: secret } = hook.json);
      const key = await c("POST", "/keys", { name: "load", environment: "test", scopes: ["benchmarks:read"] });
      expect(key.status, key.text).toBe(201);
      mkdirSync(join(dir, "vault"));
      ({ result, admittedBeforeStart, sentBeforeEnd } = await underLoad(node.url, session, key.json.raw_key, () => backup(["--db", `sqlite:${liveDb}`, "--to", join(dir, "backup"), "--key-out", join(dir, "vault", "bench.key")])));
    } finally {
      expect(await node.stop()).toBe(0);
    }
    expect(result!.code, result!.stderr).toBe(0);
    const summary = JSON.parse(result!.stdout);
    expect(summary).toMatchObject({ database: join(dir, "backup", "bench.db"), key_file: join(dir, "vault", "bench.key"), sealed_secrets: 1, unopened: 0 });
    expect(result!.stderr).toContain("the server keeps serving");
    for (const f of [summary.database, summary.key_file]) expect(statSync(f).mode & 0o777).toBe(0o600);

    // Restore onto a fresh folder; the key file goes beside the database as <db>.webhook-keys.
    const restored = join(dir, "restored");
    mkdirSync(restored);
    copyFileSync(summary.database, join(restored, "bench.db"));
    expect(existsSync(join(restored, "bench.db.webhook-keys"))).toBe(false);
    copyFileSync(summary.key_file, join(restored, "bench.db.webhook-keys"));
    const check = cli(["webhooks", "reseal", "--check", "--db", `sqlite:${join(restored, "bench.db")}`], NO_KEYS);
    expect(check.status, check.stderr).toBe(0);
    rx.status = 200;
    rx.got.length = 0;
    const back = await startServe(["--db", `sqlite:${join(restored, "bench.db")}`, "--config", CONFIG], NO_KEYS);
    try {
      const c = consoleOf(back.url, session);
      const usage = (await c("GET", "/usage/summary")).json;
      // One snapshot taken while the backup ran: everything admitted before it began is in, nothing sent after it ended.
      expect(usage.today).toBeGreaterThanOrEqual(admittedBeforeStart);
      expect(usage.today).toBeLessThanOrEqual(sentBeforeEnd);
      const keys = (await c("GET", "/keys")).json.data as { key_id: string }[];
      const fresh = await c("POST", "/keys", { name: "after restore", environment: "test", scopes: ["benchmarks:read"] });
      for (let i = 0; i < 7; i++) expect((await http(`${back.url}${QUERY}`, { headers: { ...SANDBOX, authorization: `Bearer ${fresh.json.raw_key}` } })).status).toBe(200);
      expect((await c("GET", "/usage/summary")).json.today).toBe(usage.today + 7);
      // Pending deliveries (refused before the backup) go out, every one signed with the secret shown at creation.
      await until("deliveries of every key in the copy", () => {
        const delivered = new Set(rx.got.map((r) => JSON.parse(r.body).data?.key_id));
        return keys.every((k) => delivered.has(k.key_id));
      }, 90_000); // a hundred or more retried deliveries: 30 s was too short on a loaded 2-core runner
      for (const r of rx.got) expect(await signedBy(secret, r)).toBe(true);
      const test = await c("POST", "/webhooks/test");
      expect(test.json.results).toEqual([expect.objectContaining({ webhook_id: webhookId, ok: true })]);
    } finally {
      expect(await back.stop()).toBe(0);
      await rx.close();
    }
  }, 180_000);
});

describe("benchdata backup keeps the key out of the backup and leaves nothing half made", () => {
  const KEYS = { BENCHDATA_WEBHOOK_KEYS: `k1:${Buffer.alloc(32, 5).toString("base64")}` };
  const base = join(dir, "outputs");
  mkdirSync(base, { recursive: true });
  const source = join(base, "small.db");
  beforeAll(() => {
    const made = cli(["migrate", "--db", `sqlite:${source}`], KEYS);
    expect(made.status, made.stderr).toBe(0);
  });

  it("refuses (exit 2) a --key-out inside --to, also through a symbolic link, and creates nothing", async () => {
    const to = join(base, "inside");
    symlinkSync(to, join(base, "alias"));
    for (const keyOut of [join(to, "key"), join(to, "sub", "key"), to, join(base, "alias", "key")]) {
      const r = await backup(["--db", `sqlite:${source}`, "--to", to, "--key-out", keyOut], KEYS);
      expect([keyOut, r.code], r.stderr).toEqual([keyOut, 2]);
      expect(r.stderr).toContain("lies inside --to");
      expect(existsSync(to)).toBe(false);
    }
    const missing = await backup(["--db", `sqlite:${source}`, "--to", to], KEYS);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--key-out FILE is required");
  });

  it("an existing --key-out is refused before anything is copied", async () => {
    const keyOut = join(base, "taken.key");
    writeFileSync(keyOut, "someone else's\n");
    const to = join(base, "taken");
    const r = await backup(["--db", `sqlite:${source}`, "--to", to, "--key-out", keyOut], KEYS);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${keyOut} already exists`);
    expect(existsSync(join(to, "small.db")), "no copy without its key").toBe(false);
    expect(existsSync(to)).toBe(false);
  });

  it("a failed copy removes both outputs, so the next run goes through", async () => {
    const broken = join(base, "broken.db");
    writeFileSync(broken, "this is not a SQLite database, VACUUM INTO fails on it ".repeat(100));
    const to = join(base, "retry");
    mkdirSync(to);
    const keyOut = join(base, "retry.key");
    const failed = await backup(["--db", `sqlite:${broken}`, "--to", to, "--key-out", keyOut], KEYS);
    expect(failed.code, failed.stderr).toBe(1);
    expect(existsSync(join(to, "broken.db"))).toBe(false);
    expect(existsSync(keyOut)).toBe(false);
    expect(existsSync(to), "a directory the run did not create stays").toBe(true);
    copyFileSync(source, broken);
    const ok = await backup(["--db", `sqlite:${broken}`, "--to", to, "--key-out", keyOut], KEYS);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ database: join(to, "broken.db"), key_file: keyOut, key_ids: ["k1"], unopened: 0 });
    for (const f of [join(to, "broken.db"), keyOut]) expect(statSync(f).mode & 0o777).toBe(0o600);
  });
});
