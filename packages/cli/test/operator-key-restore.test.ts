// The security review's reproduction (issue 26 §3), step by step through the real CLI: a SQLite database backed
// up without its `.webhook-keys` file and restored must not start (exit 2, naming how many sealed secrets need
// which key id) and must not get a new key file; a key file holding another key under the same id is refused the
// same way; `webhooks reseal` and `reseal --check` try the rows under the current key id too. With the right key
// back, the pending deliveries go out signed with the secret shown at creation. PostgreSQL: the same refusals
// for keys given in the environment.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, http, pgAvailable, startServe, tempDatabase } from "./helpers.ts";
import { consoleOf, eventIds, newAccount, receiver, signedBy, until } from "./restore-support.ts";

const ADMIN = "admin-token-for-key-restore-tests-0123456789";
const NO_KEYS = { BENCHDATA_WEBHOOK_KEYS: "", BENCHDATA_WEBHOOK_KEYS_FILE: "", BENCHDATA_ADMIN_TOKEN: ADMIN };
const dir = mkdtempSync(join(tmpdir(), "benchdata-key-restore-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CONFIG = join(dir, "config.json");
// Loopback receivers over http; unordered, retries a second apart: each delivery is attempted at once, and one
// still pending goes out soon after a restart.
writeFileSync(CONFIG, JSON.stringify({ webhooks: { allowHttp: true, allowPrivateNetworks: true, ordered: false, retryDelaysSeconds: [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1] } }));
const pgOn = await pgAvailable();

/** What a webhook created before the loss looks like from outside. */
interface Before {
  accountId: string;
  session: string;
  webhookId: string;
  secret: string;
  events: Set<string>;
}

/** Serves `db`, creates an account with a webhook to `rx` (answering 503: deliveries stay pending) and two keys (two events). */
async function populate(db: string, env: Record<string, string>, rx: { url: string; got: unknown[]; status: number }): Promise<Before> {
  rx.status = 503;
  const node = await startServe(["--db", db, "--config", CONFIG], env);
  try {
    const { accountId, session } = await newAccount(node.url, ADMIN, "Key Loss Co");
    const c = consoleOf(node.url, session);
    const hook = await c("POST", "/webhooks", { url: rx.url, events: ["key.created"] });
    expect(hook.status, hook.text).toBe(201);
    for (const name of ["one", "two"]) expect((await c("POST", "/keys", { name, environment: "test", scopes: ["benchmarks:read"] })).status).toBe(201);
    // Both attempted and refused: the deliveries wait for a retry.
    await until("both events attempted", () => eventIds(rx.got as never).size === 2);
    return { accountId, session, webhookId: hook.json.webhook_id, secret: hook.json.signing_secret, events: eventIds(rx.got as never) };
  } finally {
    expect(await node.stop()).toBe(0);
  }
}

describe("the key-loss reproduction ends in a refusal to start (SQLite)", () => {
  it("restored without its key file: exit 2 naming the count and key id, no key file written; reseal tries current-id rows; the real key delivers what was pending", async () => {
    const rx = await receiver();
    try {
      const live = join(dir, "live");
      mkdirSync(live);
      const liveDb = join(live, "bench.db");
      const before = await populate(`sqlite:${liveDb}`, NO_KEYS, rx);
      const keyFile = `${liveDb}.webhook-keys`;
      const keyText = readFileSync(keyFile, "utf8");
      const keyId = /^(k[0-9A-Z]{26}):/m.exec(keyText)![1]!;

      // 1. Back up the database without its key file (what the old advice led to).
      const restored = join(dir, "restored");
      mkdirSync(restored);
      for (const suffix of ["", "-wal"]) if (existsSync(liveDb + suffix)) copyFileSync(liveDb + suffix, join(restored, "bench.db" + suffix));
      const db = `sqlite:${join(restored, "bench.db")}`;
      const filesBefore = readdirSync(restored).sort();

      // 2. Restore and start: refused, naming how many sealed secrets need which key id; no new key file.
      const refused = cli(["serve", "--db", db, "--port", "0", "--host", "127.0.0.1", "--config", CONFIG], NO_KEYS);
      expect(refused.status, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(`the database holds 1 sealed webhook signing secret (1 needs key id ${keyId} (not configured))`);
      expect(refused.stderr).toContain("none was written");
      expect(existsSync(join(restored, "bench.db.webhook-keys"))).toBe(false);
      expect(readdirSync(restored).filter((f) => !f.endsWith("-shm") && !f.endsWith("-wal")).sort()).toEqual(filesBefore.filter((f) => !f.endsWith("-wal")));

      // 3-4. A key file with another key under the same id (what the date-derived id used to produce): refused too.
      const impostor = `# not the original\n${keyId}:${Buffer.alloc(32, 9).toString("base64")}\n`;
      writeFileSync(join(restored, "bench.db.webhook-keys"), impostor, { mode: 0o600 });
      const wrong = cli(["serve", "--db", db, "--port", "0", "--host", "127.0.0.1", "--config", CONFIG], NO_KEYS);
      expect(wrong.status, wrong.stderr).toBe(2);
      expect(wrong.stderr).toContain(`refusing to start: 1 of 1 sealed webhook signing secrets open under no configured operator key (1 needs key id ${keyId} (a key with that id is configured, but it is a different key)`);

      // 5. reseal no longer calls that fine: it opens rows under the current key id, and --check names them.
      const reseal = cli(["webhooks", "reseal", "--db", db], NO_KEYS);
      expect(reseal.status, reseal.stderr).toBe(1);
      expect(JSON.parse(reseal.stdout)).toEqual({ resealed: 0, unchanged: 0, failed: 1, key_id: keyId });
      const check = cli(["webhooks", "reseal", "--check", "--db", db], NO_KEYS);
      expect(check.status, check.stderr).toBe(1);
      expect(JSON.parse(check.stdout)).toEqual({ sealed: 1, failed: 1, key_ids: [keyId], failures: [{ webhook_id: before.webhookId, field: "current", key_id: keyId, reason: "a different key has that id" }] });
      expect(check.stderr).toContain(`1 of 1 sealed secrets do not open: 1 needs key id ${keyId}`);
      // Without any key file, --check fails the same row and still writes none.
      rmSync(join(restored, "bench.db.webhook-keys"));
      const none = cli(["webhooks", "reseal", "--check", "--db", db], NO_KEYS);
      expect([none.status, JSON.parse(none.stdout).failures[0].reason]).toEqual([1, "key not configured"]);
      expect(existsSync(join(restored, "bench.db.webhook-keys"))).toBe(false);

      // The operator finds the key: the check passes, serve starts, the pending deliveries go out signed with
      // the secret shown at creation, and a test event is answered 200 (it was 500 before the fix).
      writeFileSync(join(restored, "bench.db.webhook-keys"), keyText, { mode: 0o600 });
      const good = cli(["webhooks", "reseal", "--check", "--db", db], NO_KEYS);
      expect(good.status, good.stderr).toBe(0);
      expect(JSON.parse(good.stdout)).toMatchObject({ sealed: 1, failed: 0 });
      rx.status = 200;
      rx.got.length = 0;
      const node = await startServe(["--db", db, "--config", CONFIG], NO_KEYS);
      try {
        await until("the pending deliveries", () => [...before.events].every((id) => rx.got.some((r) => JSON.parse(r.body).id === id)));
        for (const r of rx.got) expect(await signedBy(before.secret, r)).toBe(true);
        const test = await consoleOf(node.url, before.session)("POST", "/webhooks/test");
        expect(test.status, test.text).toBe(200);
        expect(test.json.results).toEqual([expect.objectContaining({ webhook_id: before.webhookId, ok: true, response_status: 200 })]);
        await until("both deliveries succeeded", async () => {
          const d = await consoleOf(node.url, before.session)("GET", `/webhooks/${before.webhookId}/deliveries`);
          return d.json.data.length === 2 && d.json.data.every((x: { status: string }) => x.status === "succeeded");
        });
      } finally {
        expect(await node.stop()).toBe(0);
      }
    } finally {
      await rx.close();
    }
  }, 120_000);

  it("a fresh database still gets a key file on first start, under a unique id that is not the date", async () => {
    const ids: string[] = [];
    for (const name of ["fresh-a.db", "fresh-b.db"]) {
      const file = join(dir, name);
      const node = await startServe(["--db", `sqlite:${file}`], NO_KEYS);
      expect(await node.stop()).toBe(0);
      const text = readFileSync(`${file}.webhook-keys`, "utf8");
      expect(statSync(`${file}.webhook-keys`).mode & 0o777).toBe(0o600);
      ids.push(/^(k[0-9A-Z]{26}):[A-Za-z0-9+/]{43}=$/m.exec(text)![1]!);
    }
    expect(ids[0]).not.toBe(ids[1]);
    for (const id of ids) expect(id).not.toContain(new Date().toISOString().slice(0, 10).replaceAll("-", ""));
  }, 60_000);

  it("an existing date-style key id (kYYYYMMDD) keeps working", async () => {
    const file = join(dir, "dated.db");
    writeFileSync(`${file}.webhook-keys`, `k20261127:${Buffer.alloc(32, 3).toString("base64")}\n`, { mode: 0o600 });
    const rx = await receiver();
    try {
      const before = await populate(`sqlite:${file}`, NO_KEYS, rx);
      const check = cli(["webhooks", "reseal", "--check", "--db", `sqlite:${file}`], NO_KEYS);
      expect(check.status, check.stderr).toBe(0);
      expect(JSON.parse(check.stdout)).toMatchObject({ sealed: 1, failed: 0, key_ids: ["k20261127"] });
      expect(before.secret).toMatch(/^whsec_/);
    } finally {
      await rx.close();
    }
  }, 60_000);
});

describe.skipIf(!pgOn)("the key-loss reproduction ends in a refusal to start (PostgreSQL)", () => {
  it("keys in the environment: another key under the same id, or the id missing, is refused (exit 2); --check names the rows", async () => {
    const pgDb = await tempDatabase("benchdata_keyloss");
    const rx = await receiver();
    try {
      const KEY = `korig:${Buffer.alloc(32, 4).toString("base64")}`;
      const before = await populate(pgDb.url, { ...NO_KEYS, BENCHDATA_WEBHOOK_KEYS: KEY }, rx);
      const args = ["serve", "--db", pgDb.url, "--port", "0", "--host", "127.0.0.1", "--config", CONFIG];
      const sameId = cli(args, { ...NO_KEYS, BENCHDATA_WEBHOOK_KEYS: `korig:${Buffer.alloc(32, 5).toString("base64")}` });
      expect(sameId.status, sameId.stderr).toBe(2);
      expect(sameId.stderr).toContain("1 of 1 sealed webhook signing secrets open under no configured operator key (1 needs key id korig (a key with that id is configured, but it is a different key)");
      const otherId = cli(args, { ...NO_KEYS, BENCHDATA_WEBHOOK_KEYS: `knew:${Buffer.alloc(32, 5).toString("base64")}` });
      expect(otherId.status, otherId.stderr).toBe(2);
      expect(otherId.stderr).toContain("1 needs key id korig (not configured); configured: knew from BENCHDATA_WEBHOOK_KEYS");
      const check = cli(["webhooks", "reseal", "--check", "--db", pgDb.url], { ...NO_KEYS, BENCHDATA_WEBHOOK_KEYS: `korig:${Buffer.alloc(32, 5).toString("base64")}` });
      expect(check.status).toBe(1);
      expect(JSON.parse(check.stdout).failures).toEqual([{ webhook_id: before.webhookId, field: "current", key_id: "korig", reason: "a different key has that id" }]);
      // A new key first and the original after it: starts, and the pending deliveries go out under the old secret.
      rx.status = 200;
      rx.got.length = 0;
      const node = await startServe(["--db", pgDb.url, "--config", CONFIG], { ...NO_KEYS, BENCHDATA_WEBHOOK_KEYS: `knew:${Buffer.alloc(32, 5).toString("base64")},${KEY}` });
      try {
        await until("the pending deliveries", () => [...before.events].every((id) => rx.got.some((r) => JSON.parse(r.body).id === id)));
        for (const r of rx.got) expect(await signedBy(before.secret, r)).toBe(true);
      } finally {
        expect(await node.stop()).toBe(0);
      }
    } finally {
      await rx.close();
      await pgDb.drop();
    }
  }, 120_000);
});
