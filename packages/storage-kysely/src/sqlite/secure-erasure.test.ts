/**
 * Erasure on SQLite leaves no byte of what it deleted in the database file or its WAL: an account whose name,
 * audit entry, webhook URL, delivery answers and merchant snapshots carry a marker is erased through the HTTP API,
 * and the files are then read raw. The same erasure on a connection that ignores `secure_delete = ON` leaves the
 * marker in the file, which is what this test would catch. Its limit (docs/operations.md, "Erasing an account"):
 * copies SQLite left before the erasure, when a table outgrew its first page, are not what the erasure deletes, so
 * they stay until VACUUM rewrites the file.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Storage } from "@benchdata/core";
import { createPruneWorker, cryptoRandom, defineConfig, newId, quotaWarningEvent, systemClock } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { jsonCall } from "../test-support/json-call.ts";
import type { SqliteDatabase } from "./driver.ts";
import { openSqlite } from "./driver.ts";
import { configureSqlite, createSqliteStorage } from "./sqlite-storage.ts";

const ADMIN = "admin-token-for-secure-erasure-tests-0123";
const SANDBOX = "http://sandbox.benchdata.test";
/** What the erased account's records carry (lowercase: it is also in a host name). */
const ERASED = "zq7-erased-marker-4c1e";
/** What the account that stays carries: still in the file afterwards, so the reads do see live data. */
const KEPT = "kq9-kept-marker-7d2a";

const dir = mkdtempSync(join(tmpdir(), "benchdata-secure-erasure-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How often `marker` occurs in the database file and in its WAL, read as raw bytes. */
function occurrences(file: string, marker: string): { db: number; wal: number } {
  const count = (path: string): number => {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch {
      return 0;
    }
    let n = 0;
    for (let i = bytes.indexOf(marker); i >= 0; i = bytes.indexOf(marker, i + 1)) n++;
    return n;
  };
  return { db: count(file), wal: count(`${file}-wal`) };
}

/** An account named after `marker` with a webhook, answered deliveries and snapshots that carry it too; its id. */
async function accountWithHistory(app: ReturnType<typeof createApp>, storage: Storage, marker: string, events: number): Promise<string> {
  const made = await jsonCall(app, "POST", `${SANDBOX}/api/v1/admin/accounts`, ADMIN, { name: `${marker} Ltd`, tier: "growth" });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const accountId: string = made.body.account_id;
  const t = Date.now();
  const clock = { now: () => t };
  await storage.createWebhook({ id: newId("wh", clock, cryptoRandom), accountId, url: `https://${marker}.example.com/in`, events: ["quota.warning"], secret: "whsec_test", createdAt: t }, 10);
  for (let i = 0; i < events; i++) {
    await storage.emitEvent(quotaWarningEvent(newId("evt", clock, cryptoRandom), accountId, t + i, { used: i, allowance: 10, threshold: 8, periodStart: t, periodEnd: t + 1 }), t + i);
  }
  for (const d of await storage.claimDeliveries({ now: t + 100, leaseMs: 60_000, limit: 100, perWebhook: 100 })) {
    const attempt = { attempt: d.attempt, at: t + 100, statusCode: 200, latencyMs: 1, error: null, responseBody: `${marker} received it` };
    expect(await storage.completeDelivery({ deliveryId: d.deliveryId, leaseToken: d.leaseToken, attempt, next: { status: "succeeded" } })).toBe(true);
  }
  for (let i = 0; i < 4; i++) {
    const snapshot = { id: newId("vcfs", clock, cryptoRandom), accountId, environment: "live" as const, merchantId: `${marker}-m${i}`, category: "saas" as const, segment: "all", period: "2026-Q2", metrics: { gross_margin: 0.5 }, createdAt: t };
    expect(await storage.saveSnapshot(snapshot)).toBeNull();
  }
  return accountId;
}

/** How a scene is set. */
interface Scene {
  /** The store's connection keeps secure_delete off when the store turns it on. */
  readonly ignoreSecureDelete: boolean;
  /** Events (each with a delivery and its answer) per account. */
  readonly events: number;
  /** The erased account's records are the first of each table (else the kept account's are). */
  readonly erasedFirst: boolean;
}

/** A store over a fresh file (its raw connection beside it) with a kept account and one to erase, made through the HTTP API. */
async function setScene(name: string, { ignoreSecureDelete, events, erasedFirst }: Scene) {
  const file = join(dir, `${name}.db`);
  const raw = await openSqlite(file);
  // The hot path's setting, whatever the driver's SQLite was built with: what the erasure turns on and restores.
  raw.pragma("secure_delete = OFF");
  const db: SqliteDatabase = !ignoreSecureDelete
    ? raw
    : new Proxy(raw, {
        get(target, prop) {
          if (prop === "pragma") return (source: string) => target.pragma(/^secure_delete\s*=\s*ON$/i.test(source) ? "secure_delete = OFF" : source);
          const value = Reflect.get(target, prop) as unknown;
          return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
  configureSqlite(db);
  const storage = createSqliteStorage(db);
  await storage.migrate();
  const app = createApp({ storage, config: defineConfig({ target: "host" }), adminToken: ADMIN, clock: systemClock });
  let erased = erasedFirst ? await accountWithHistory(app, storage, ERASED, events) : "";
  await accountWithHistory(app, storage, KEPT, events);
  if (!erasedFirst) erased = await accountWithHistory(app, storage, ERASED, events);
  const before = occurrences(file, ERASED);
  expect(before.db + before.wal, "the marker is in the files before the erasure").toBeGreaterThan(0);
  return { file, raw, storage, app, erased };
}

/** The scene, the erasure through the HTTP API, and what the files hold afterwards (read while the store is open). */
async function eraseAndRead(name: string, scene: Scene) {
  const { file, raw, storage, app, erased } = await setScene(name, scene);
  try {
    const r = await jsonCall(app, "DELETE", `${SANDBOX}/api/v1/admin/accounts/${erased}`, ADMIN);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.erasure.purged).toBeGreaterThan(0);
    expect(await storage.unfinishedErasures({ limit: 10 })).toEqual([]);
    return { file, erased: occurrences(file, ERASED), kept: occurrences(file, KEPT), secureDelete: raw.pragma("secure_delete") };
  } finally {
    await storage.close();
  }
}

describe("erasure on SQLite: the database file and its WAL keep no byte of what it deleted", () => {
  it("nothing of the erased account's name, audit entry, webhook, delivery answers or snapshots is left in the database file or the WAL; secure_delete is off again afterwards", async () => {
    const after = await eraseAndRead("secure", { ignoreSecureDelete: false, events: 12, erasedFirst: false });
    expect(after.erased).toEqual({ db: 0, wal: 0 });
    // The WAL was truncated, and the account that stays is still there.
    expect(after.kept.db).toBeGreaterThan(0);
    expect(after.kept.wal).toBe(0);
    expect(after.secureDelete).toEqual([{ secure_delete: 0 }]);
  });

  it("without secure_delete the same erasure leaves the marker in the file's free space (what the case above guards)", async () => {
    const after = await eraseAndRead("plain", { ignoreSecureDelete: true, events: 12, erasedFirst: false });
    expect(after.erased.db).toBeGreaterThan(0);
  });

  it("its limit: the copy SQLite left when a table outgrew its first page (before the erasure, secure_delete off) stays; VACUUM and a TRUNCATE checkpoint remove it", async () => {
    // 200 answers outgrow delivery_attempts' first page: that page becomes an interior page and keeps, in its unused
    // space, the bytes of the rows it held then, the erased account's. SQLite zeroes them only under secure_delete.
    const after = await eraseAndRead("outgrown", { ignoreSecureDelete: false, events: 200, erasedFirst: true });
    expect(after.erased.wal).toBe(0);
    expect(after.erased.db).toBeGreaterThan(0);
    const db = await openSqlite(after.file);
    try {
      db.exec("VACUUM");
      expect(db.pragma("wal_checkpoint(TRUNCATE)")).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);
    } finally {
      db.close();
    }
    expect(occurrences(after.file, ERASED)).toEqual({ db: 0, wal: 0 });
    expect(occurrences(after.file, KEPT).db).toBeGreaterThan(0);
  });

  it("a reader on an older snapshot keeps the checkpoint from finishing: the DELETE answers after a short wait, the erasure stays listed, and the pruning worker's next run truncates the WAL and forgets it", async () => {
    const { file, storage, app, erased } = await setScene("reader", { ignoreSecureDelete: false, events: 12, erasedFirst: false });
    const reader = await openSqlite(file);
    try {
      reader.exec("BEGIN");
      reader.prepare("SELECT count(*) FROM accounts").get();
      const began = performance.now();
      const r = await jsonCall(app, "DELETE", `${SANDBOX}/api/v1/admin/accounts/${erased}`, ADMIN);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      // The checkpoint gave up after about 200 ms, not the 5 s every other wait for a lock may take.
      expect(performance.now() - began).toBeLessThan(2500);
      expect(await storage.unfinishedErasures({ limit: 10 })).toEqual([erased]);
      expect(occurrences(file, ERASED).wal).toBeGreaterThan(0);
      // While the reader holds it, the worker's run finishes nothing and says so.
      const held = await createPruneWorker({ storage, clock: systemClock, config: defineConfig(), pauseMs: 0 }).tick();
      expect(held.erasures).toEqual({ finished: 0, purged: 0 });
      expect(await storage.unfinishedErasures({ limit: 10 })).toEqual([erased]);
      reader.exec("COMMIT");

      const report = await createPruneWorker({ storage, clock: systemClock, config: defineConfig(), pauseMs: 0 }).tick();
      expect(report.erasures).toEqual({ finished: 1, purged: 0 });
      expect(await storage.unfinishedErasures({ limit: 10 })).toEqual([]);
      expect(occurrences(file, ERASED)).toEqual({ db: 0, wal: 0 });
    } finally {
      reader.close();
      await storage.close();
    }
  });
});
