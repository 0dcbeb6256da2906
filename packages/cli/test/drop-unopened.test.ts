// A truly lost operator key (issue 26), through the real CLI on SQLite and PostgreSQL: webhooks sealed under key
// kA, one of them rotated under kB (its previous secret still under kA), the database restored with kB alone
// (SQLite: a copy beside a key file holding kB; PostgreSQL: kB in the environment).
// `serve` refuses to start and names `webhooks drop-unopened`; without --yes that command changes nothing and
// exits 2; with it, it deletes exactly the webhooks whose current secret kA sealed and ends the rotated one's
// overlap, one audit entry (actor cli) per change. Then `reseal --check` passes, `serve` starts, the customer's
// console shows why, and the webhooks left still sign their test deliveries.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, http, pgAvailable, startServe, tempDatabase } from "./helpers.ts";
import { consoleOf, newAccount, receiver, signedBy } from "./restore-support.ts";
import type { Receiver } from "./restore-support.ts";

const ADMIN = "admin-token-for-drop-unopened-tests-0123456789";
const KEY_A = `kA:${Buffer.alloc(32, 1).toString("base64")}`;
const KEY_B = `kB:${Buffer.alloc(32, 2).toString("base64")}`;
const keys = (list: string): Record<string, string> => ({ BENCHDATA_WEBHOOK_KEYS: list, BENCHDATA_WEBHOOK_KEYS_FILE: "", BENCHDATA_ADMIN_TOKEN: ADMIN });
const dir = mkdtempSync(join(tmpdir(), "benchdata-drop-unopened-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CONFIG = join(dir, "config.json");
writeFileSync(CONFIG, JSON.stringify({ webhooks: { allowHttp: true, allowPrivateNetworks: true } }));
const pgOn = await pgAvailable();

/** What was made before the loss: two accounts, their webhooks, and the secrets shown for those that survive. */
interface Made {
  x: { accountId: string; session: string };
  y: { accountId: string; session: string };
  /** X's webhook sealed under kA only. */
  lost: string;
  /** X's webhook rotated under kB: current under kB, previous under kA. */
  rotated: string;
  rotatedSecret: string;
  /** Y's webhook sealed under kA only. */
  yLost: string;
  /** Y's webhook created under kB. */
  yFine: string;
  yFineSecret: string;
}

/** Populates `db`: first served with kA alone, then with kB first (kA still opening) for the rotation and a new webhook. */
async function populate(db: string, rx: Receiver): Promise<Made> {
  const args = ["--db", db, "--config", CONFIG];
  const first = await startServe(args, keys(KEY_A));
  let x: Made["x"], y: Made["y"], lost: string, rotated: string, yLost: string;
  try {
    x = await newAccount(first.url, ADMIN, "Lost Key X");
    y = await newAccount(first.url, ADMIN, "Lost Key Y");
    const hook = async (session: string, name: string): Promise<{ id: string; secret: string }> => {
      const r = await consoleOf(first.url, session)("POST", "/webhooks", { url: `${rx.url}/${name}`, events: ["key.created"] });
      expect(r.status, r.text).toBe(201);
      return { id: r.json.webhook_id, secret: r.json.signing_secret };
    };
    lost = (await hook(x.session, "lost")).id;
    rotated = (await hook(x.session, "rotated")).id;
    yLost = (await hook(y.session, "y-lost")).id;
  } finally {
    expect(await first.stop()).toBe(0);
  }
  const second = await startServe(args, keys(`${KEY_B},${KEY_A}`));
  try {
    const rot = await consoleOf(second.url, x.session)("POST", `/webhooks/${rotated}/rotate-secret`);
    expect(rot.status, rot.text).toBe(200);
    const fine = await consoleOf(second.url, y.session)("POST", "/webhooks", { url: `${rx.url}/y-fine`, events: ["key.created"] });
    expect(fine.status, fine.text).toBe(201);
    return { x, y, lost, rotated, rotatedSecret: rot.json.signing_secret, yLost, yFine: fine.json.webhook_id, yFineSecret: fine.json.signing_secret };
  } finally {
    expect(await second.stop()).toBe(0);
  }
}

/** The five steps and the way out, on a database restored (`restore`: its URL, and the environment that gives it kB alone) after `populate` wrote `live`. */
async function lostKeyWayOut(live: string, restore: () => { db: string; onlyB: Record<string, string> }): Promise<void> {
  const rx = await receiver(200);
  try {
    const m = await populate(live, rx);
    const { db, onlyB } = restore();

    // Restored with kB alone: refused, and the refusal names the way out.
    const refused = cli(["serve", "--db", db, "--port", "0", "--host", "127.0.0.1", "--config", CONFIG], onlyB);
    expect(refused.status, refused.stderr).toBe(2);
    expect(refused.stderr).toContain("refusing to start: 3 of 5 sealed webhook signing secrets open under no configured operator key (3 need key id kA (not configured); configured: kB");
    expect(refused.stderr).toContain("`benchdata webhooks drop-unopened`");
    const checkBefore = cli(["webhooks", "reseal", "--check", "--db", db], onlyB);
    expect(checkBefore.status).toBe(1);
    expect(JSON.parse(checkBefore.stdout)).toMatchObject({ sealed: 5, failed: 3 });

    // Without --yes: what it would do, exit 2, nothing changed.
    const expected = {
      deleted: [
        { webhook_id: m.lost, account_id: m.x.accountId, url: `${rx.url}/lost`, key_id: "kA" },
        { webhook_id: m.yLost, account_id: m.y.accountId, url: `${rx.url}/y-lost`, key_id: "kA" },
      ].sort((a, b) => (a.webhook_id < b.webhook_id ? -1 : 1)),
      overlaps_ended: [{ webhook_id: m.rotated, account_id: m.x.accountId, key_id: "kA" }],
      key_ids: ["kB"],
    };
    const dry = cli(["webhooks", "drop-unopened", "--db", db], onlyB);
    expect(dry.status, dry.stderr).toBe(2);
    expect(JSON.parse(dry.stdout)).toEqual(expected);
    expect(dry.stderr).toContain(`would delete webhook ${m.lost} of account ${m.x.accountId} (${rx.url}/lost): its signing secret was sealed under key id kA, not configured`);
    expect(dry.stderr).toContain("nothing changed (no --yes)");
    expect(cli(["webhooks", "reseal", "--check", "--db", db], onlyB).stdout).toBe(checkBefore.stdout);

    // A key configured under kA's id that is not kA (a wrong copy): --yes refuses unless told twice; nothing changed.
    const wrongA = cli(["webhooks", "drop-unopened", "--yes", "--db", db], keys(`${KEY_B},kA:${Buffer.alloc(32, 9).toString("base64")}`));
    expect(wrongA.status, wrongA.stderr).toBe(2);
    expect(wrongA.stderr).toContain("need key id kA, and a key with that id is configured but opens none of them");
    expect(wrongA.stderr).toContain("--include-mismatched");
    expect(cli(["webhooks", "reseal", "--check", "--db", db], onlyB).stdout).toBe(checkBefore.stdout);

    // With --yes: exactly that, one stderr line per change, never a secret.
    const real = cli(["webhooks", "drop-unopened", "--yes", "--db", db], onlyB);
    expect(real.status, real.stderr).toBe(0);
    expect(JSON.parse(real.stdout)).toEqual(expected);
    const lines = real.stderr.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines.filter((l) => l.includes("drop-unopened: deleted webhook"))).toHaveLength(2);
    expect(lines.filter((l) => l.includes(`drop-unopened: ended the secret overlap of webhook ${m.rotated}`))).toHaveLength(1);
    for (const text of [real.stdout, real.stderr, dry.stdout, dry.stderr]) {
      expect(text).not.toContain("whsec_");
      expect(text).not.toContain("aesgcm1:");
    }
    const after = cli(["webhooks", "reseal", "--check", "--db", db], onlyB);
    expect(after.status, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toEqual({ sealed: 2, failed: 0, key_ids: ["kB"], failures: [] });
    const again = cli(["webhooks", "drop-unopened", "--yes", "--db", db], onlyB);
    expect([again.status, JSON.parse(again.stdout)]).toEqual([0, { deleted: [], overlaps_ended: [], key_ids: ["kB"] }]);
    expect(cli(["audit", "verify", "--db", db], onlyB).status).toBe(0);

    // serve starts; each customer sees what happened and why; what is left still signs.
    const node = await startServe(["--db", db, "--config", CONFIG], onlyB);
    try {
      const byCli = await http(`${node.url}/api/v1/admin/audit?actor=cli`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(byCli.status, byCli.text).toBe(200);
      expect(byCli.json.data.map((e: { action: string; target_id: string; account_id: string }) => [e.action, e.target_id, e.account_id]).sort()).toEqual(
        [
          ["webhook.delete", m.lost, m.x.accountId],
          ["webhook.delete", m.yLost, m.y.accountId],
          ["webhook.end_secret_overlap", m.rotated, m.x.accountId],
        ].sort(),
      );
      const x = consoleOf(node.url, m.x.session);
      expect((await x("GET", "/webhooks")).json.data.map((w: { webhook_id: string }) => w.webhook_id)).toEqual([m.rotated]);
      // The customer reads the operator's webhook changes, and why, in their own audit log.
      const seen = (await x("GET", "/audit")).json.data.filter((e: { actor: string; action: string }) => e.actor === "operator" && e.action.startsWith("webhook."));
      expect(seen.map((e: { action: string; target_id: string; changes: unknown }) => [e.action, e.target_id, e.changes]).sort()).toEqual(
        [
          ["webhook.delete", m.lost, { reason: "signing_secret_lost", key_id: "kA" }],
          ["webhook.end_secret_overlap", m.rotated, { reason: "signing_secret_lost", key_id: "kA" }],
        ].sort(),
      );
      for (const [session, webhookId, secret] of [
        [m.x.session, m.rotated, m.rotatedSecret],
        [m.y.session, m.yFine, m.yFineSecret],
      ] as const) {
        rx.got.length = 0;
        const test = await consoleOf(node.url, session)("POST", "/webhooks/test");
        expect(test.status, test.text).toBe(200);
        expect(test.json.results).toEqual([expect.objectContaining({ webhook_id: webhookId, ok: true, response_status: 200 })]);
        expect(rx.got).toHaveLength(1);
        expect(await signedBy(secret, rx.got[0]!)).toBe(true);
      }
    } finally {
      expect(await node.stop()).toBe(0);
    }
  } finally {
    await rx.close();
  }
}

describe("a truly lost operator key: webhooks drop-unopened is the way out (SQLite)", () => {
  it("restored beside a key file holding kB alone: refused; without --yes nothing changes (exit 2); with it the kA webhooks go and the overlap ends; then check, start and sign", async () => {
    const live = join(dir, "live");
    mkdirSync(live);
    const liveDb = join(live, "bench.db");
    await lostKeyWayOut(`sqlite:${liveDb}`, () => {
      const restored = join(dir, "restored");
      mkdirSync(restored);
      for (const suffix of ["", "-wal"]) if (existsSync(liveDb + suffix)) copyFileSync(liveDb + suffix, join(restored, `bench.db${suffix}`));
      // The key file the restored server finds beside it: kB, and kA nowhere.
      writeFileSync(join(restored, "bench.db.webhook-keys"), `${KEY_B}\n`, { mode: 0o600 });
      return { db: `sqlite:${join(restored, "bench.db")}`, onlyB: keys("") };
    });
  }, 120_000);
});

describe.skipIf(!pgOn)("a truly lost operator key: webhooks drop-unopened is the way out (PostgreSQL)", () => {
  it("kB alone in the environment: refused; without --yes nothing changes (exit 2); with it the kA webhooks go and the overlap ends; then check, start and sign", async () => {
    const pgDb = await tempDatabase("benchdata_dropunopened");
    try {
      await lostKeyWayOut(pgDb.url, () => ({ db: pgDb.url, onlyB: keys(KEY_B) }));
    } finally {
      await pgDb.drop();
    }
  }, 120_000);
});
