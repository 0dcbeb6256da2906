// PostgreSQL backup under load (issue 26 §3), exactly as docs/operations.md ("PostgreSQL: pg_dump and
// pg_restore") says: `pg_dump --format=custom` of the live database while a real `benchdata serve` answers data
// requests and writes webhook events, `createdb` + `pg_restore --no-owner` into a fresh database,
// `benchdata webhooks reseal --check` with the operator key from the environment (exit 0), then `serve`. The
// restored usage lies between what was admitted before the dump began and what was sent before it ended (one
// snapshot inside that span) and then counts on exactly, every webhook signs with the secret shown at creation,
// and deliveries pending in the dump go out.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, http, pgAvailable, startServe, tempDatabase } from "./helpers.ts";
import { consoleOf, newAccount, receiver, signedBy, underLoad, until } from "./restore-support.ts";

const ADMIN = "admin-token-for-pg-backup-tests-0123456789ab";
// A PostgreSQL deployment gives its operator key in the environment; the dump never holds it.
const KEYS = { BENCHDATA_WEBHOOK_KEYS: `kpgbackup:${randomBytes(32).toString("base64")}`, BENCHDATA_WEBHOOK_KEYS_FILE: "", BENCHDATA_ADMIN_TOKEN: ADMIN };
const SANDBOX = { host: "sandbox.localhost" };
const dir = mkdtempSync(join(tmpdir(), "benchdata-pg-backup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CONFIG = join(dir, "config.json");
// A delivery in flight when pg_dump takes its snapshot is restored under the dead server's lease and goes out
// once that lease ends (timeoutSeconds + 15 s after its claim): a 2 s timeout keeps that wait within the test.
writeFileSync(CONFIG, JSON.stringify({ target: "host", tiers: { growth: { perMinute: 1000000, perDay: 10000000 } }, webhooks: { timeoutSeconds: 2, allowHttp: true, allowPrivateNetworks: true, ordered: false, retryDelaysSeconds: [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1] } }));
const QUERY = "/data/v1/benchmarks/percentile?metric=gross_margin&value=0.15&category=saas";
const pgOn = await pgAvailable();

/** Runs a PostgreSQL client tool without blocking the event loop (the server under load keeps answering). */
function tool(cmd: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c));
    child.on("error", (e) => resolve({ code: -1, stderr: String(e) }));
    child.on("exit", (code) => resolve({ code, stderr }));
  });
}

describe.skipIf(!pgOn)("PostgreSQL backup with pg_dump under load, pg_restore onto a fresh database", () => {
  it("restores: usage exact within the dump's span, webhooks sign, pending deliveries go out", async () => {
    const live = await tempDatabase("benchdata_pgbackup");
    const u = new URL(live.url);
    const newdb = `${u.pathname.slice(1)}_restored`;
    const restoredUrl = Object.assign(new URL(live.url), { pathname: `/${newdb}` }).toString();
    const hostArgs = ["-h", u.hostname, "-p", u.port || "5432", "-U", decodeURIComponent(u.username) || "postgres"];
    const rx = await receiver(503);
    try {
      const node = await startServe(["--db", live.url, "--config", CONFIG], KEYS);
      let admittedBeforeStart = 0;
      let sentBeforeEnd = 0;
        let secret = "";
      let webhookId = "";
      let session = "";
      let dump: { code: number | null; stderr: string };
      const dumpFile = join(dir, "bench.pgdump");
      try {
        ({ session } = await newAccount(node.url, ADMIN, "PG Backup Co"));
        const c = consoleOf(node.url, session);
        const hook = await c("POST", "/webhooks", { url: rx.url, events: ["key.created"] });
        expect(hook.status, hook.text).toBe(201);
        ({ webhook_id: webhookId, signing_secret: secret } = hook.json);
        const key = await c("POST", "/keys", { name: "load", environment: "test", scopes: ["benchmarks:read"] });
        expect(key.status, key.text).toBe(201);
        ({ result: dump, admittedBeforeStart, sentBeforeEnd } = await underLoad(node.url, session, key.json.raw_key, () => tool("pg_dump", ["--format=custom", `--file=${dumpFile}`, live.url])));
      } finally {
        expect(await node.stop()).toBe(0);
      }
      expect(dump!.code, dump!.stderr).toBe(0);

      // Restore onto a fresh database, check the sealed secrets open under the key, serve.
      const created = await tool("createdb", [...hostArgs, newdb]);
      expect(created.code, created.stderr).toBe(0);
      const restored = await tool("pg_restore", ["--no-owner", `--dbname=${restoredUrl}`, dumpFile]);
      expect(restored.code, restored.stderr).toBe(0);
      const check = cli(["webhooks", "reseal", "--check", "--db", restoredUrl], KEYS);
      expect(check.status, check.stderr).toBe(0);
      rx.status = 200;
      rx.got.length = 0;
      const back = await startServe(["--db", restoredUrl, "--config", CONFIG], KEYS);
      try {
        const c = consoleOf(back.url, session);
        const usage = (await c("GET", "/usage/summary")).json;
        // One snapshot taken while pg_dump ran: everything admitted before it began is in, nothing sent after it ended.
        expect(usage.today).toBeGreaterThanOrEqual(admittedBeforeStart);
        expect(usage.today).toBeLessThanOrEqual(sentBeforeEnd);
        const keys = (await c("GET", "/keys")).json.data as { key_id: string }[];
        const fresh = await c("POST", "/keys", { name: "after restore", environment: "test", scopes: ["benchmarks:read"] });
        expect(fresh.status, fresh.text).toBe(201);
        for (let i = 0; i < 7; i++) expect((await http(`${back.url}${QUERY}`, { headers: { ...SANDBOX, authorization: `Bearer ${fresh.json.raw_key}` } })).status).toBe(200);
        expect((await c("GET", "/usage/summary")).json.today).toBe(usage.today + 7);
        // Pending deliveries (refused before the dump) go out, every one signed with the secret shown at creation.
        await until("deliveries of every key in the dump", () => {
          const delivered = new Set(rx.got.map((r) => JSON.parse(r.body).data?.key_id));
          return keys.every((k) => delivered.has(k.key_id));
        }, 60_000);
        for (const r of rx.got) expect(await signedBy(secret, r)).toBe(true);
        const test = await c("POST", "/webhooks/test");
        expect(test.json.results).toEqual([expect.objectContaining({ webhook_id: webhookId, ok: true })]);
      } finally {
        expect(await back.stop()).toBe(0);
      }
    } finally {
      await rx.close();
      await live.drop();
      spawnSync("dropdb", [...hostArgs, "--if-exists", "--force", newdb]);
    }
  }, 180_000);
});
