/**
 * The storage conformance suite (and the SQL stores' extra checks) on whichever runtime runs this file:
 * `bun test`, or `deno test` with the vitest stand-in of scripts/deno. Node runs the same suites through
 * vitest in src/*-storage.test.ts. BENCHDATA_STORES picks the stores (memory,sqlite,postgres).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Storage } from "../../../core/src/index.ts";
import { storageConformance } from "../../../core/src/testing/index.ts";
import { openStorage } from "../../src/open-storage.ts";
import type { OpenedStorage } from "../../src/open-storage.ts";
import { openSqlite, runtimeSqliteDriver } from "../../src/sqlite/driver.ts";
import { createTestDatabase } from "../../src/test-support/pg-test-database.ts";
import { storageExtras } from "../../src/test-support/storage-extras.ts";

const stores = (process.env.BENCHDATA_STORES ?? "memory,sqlite,postgres").split(",");
const expected = process.env.BENCHDATA_EXPECT_SQLITE_DRIVER;
const dir = mkdtempSync(join(tmpdir(), "benchdata-runtime-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (): string => join(dir, `store-${++n}.db`);

if (stores.includes("memory")) storageConformance("memory", { create: async () => openStorage("memory:") });

if (stores.includes("sqlite")) {
  describe(`sqlite on this runtime (${runtimeSqliteDriver()})`, () => {
    it("openStorage picks the runtime's own driver", async () => {
      const s = await openStorage(`sqlite:${file()}`);
      try {
        await s.migrate();
        expect(s.driver).toBe(runtimeSqliteDriver());
        if (expected) expect(s.driver).toBe(expected);
      } finally {
        await s.close();
      }
    });

    it("fails closed: a database locked beyond busy_timeout rejects with service.unavailable, then recovers", async () => {
      const path = file();
      const s = await openStorage(`sqlite:${path}`, { busyTimeoutMs: 50 });
      await s.migrate();
      const other = await openSqlite(path);
      other.exec("BEGIN EXCLUSIVE");
      const account = (id: string) => ({ id, name: "x", tier: "developer" as const, createdAt: 0, limits: {}, allowedCidrs: [], billing: {} });
      try {
        await expect(s.createAccount(account("acc_01JDRUNTIME000000000000001"))).rejects.toMatchObject({ code: "service.unavailable", status: 503 });
      } finally {
        other.exec("ROLLBACK");
        other.close();
      }
      await s.createAccount(account("acc_01JDRUNTIME000000000000002"));
      expect((await s.getAccount("acc_01JDRUNTIME000000000000002"))?.name).toBe("x");
      await s.close();
    });

    it("a transaction that throws leaves nothing behind, and nested ones roll back only their part", async () => {
      const db = await openSqlite(file());
      try {
        db.exec("CREATE TABLE t (v INTEGER NOT NULL)");
        const add = db.prepare("INSERT INTO t (v) VALUES (?)");
        const inner = db.transaction((v: number) => {
          add.run(v);
          throw new Error("inner");
        });
        const outer = db.transaction(() => {
          add.run(1);
          try {
            inner(2);
          } catch {
            // the savepoint rolled back 2 only
          }
          add.run(3);
        });
        outer.immediate();
        expect(db.prepare("SELECT v FROM t ORDER BY v").raw(true).all()).toEqual([[1], [3]]);
        const failing = db.transaction(() => {
          add.run(4);
          throw new Error("whole");
        });
        expect(() => failing.immediate()).toThrow("whole");
        expect((db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(2);
        expect(db.prepare("SELECT v FROM t WHERE v = ?").get(99)).toBeUndefined();
      } finally {
        db.close();
      }
    });
  });

  storageConformance("sqlite", {
    async create() {
      const s = await openStorage(`sqlite:${file()}`, { clock: "app" });
      await s.migrate();
      return s;
    },
  });
  describe("sqlite extras", () => {
    let s: OpenedStorage;
    beforeAll(async () => {
      s = await openStorage(`sqlite:${file()}`, { clock: "app" });
      await s.migrate();
    });
    afterAll(() => s.close());
    storageExtras("sqlite", () => s);
  });
}

if (stores.includes("postgres")) {
  const drops = new WeakMap<Storage, () => Promise<void>>();
  const fresh = async (): Promise<OpenedStorage> => {
    const t = await createTestDatabase();
    const s = await openStorage(t.url, { clock: "app" });
    drops.set(s, t.drop);
    await s.migrate();
    return s;
  };
  const dispose = async (s: Storage): Promise<void> => {
    await s.close();
    await drops.get(s)?.();
  };
  storageConformance("postgres", { create: fresh, destroy: dispose });
  describe("postgres extras", () => {
    let s: OpenedStorage;
    beforeAll(async () => {
      s = await fresh();
    });
    afterAll(() => dispose(s));
    storageExtras("postgres", () => s);
  });
}
