import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storageConformance } from "@benchdata/core/testing";
import { openStorage } from "./open-storage.ts";
import type { OpenedStorage } from "./open-storage.ts";
import { storageExtras } from "./test-support/storage-extras.ts";
import { SQLITE_MIGRATIONS } from "./sqlite/sqlite-schema.ts";

const dir = mkdtempSync(join(tmpdir(), "benchdata-sqlite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (): string => join(dir, `store-${++n}.db`);

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

describe("sqlite specifics", () => {
  it("opens in WAL mode with synchronous=NORMAL, and migrating twice is a no-op", async () => {
    const path = file();
    const s = await openStorage(`sqlite:${path}`);
    expect(s.kind).toBe("sqlite");
    await s.migrate();
    await s.migrate();
    await s.close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.prepare("SELECT count(*) AS n FROM benchdata_migrations").get()).toEqual({ n: SQLITE_MIGRATIONS.length });
    db.close();
  });

  it("fail closed: a database locked beyond busy_timeout rejects with service.unavailable", async () => {
    const path = file();
    const s = await openStorage(`sqlite:${path}`, { busyTimeoutMs: 50 });
    await s.migrate();
    const other = new Database(path);
    other.exec("BEGIN EXCLUSIVE");
    try {
      await expect(s.createAccount({ id: "acc_x", name: "x", tier: "developer", createdAt: 0, limits: {}, allowedCidrs: [], billing: {} })).rejects.toMatchObject({ code: "service.unavailable", status: 503 });
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    await s.createAccount({ id: "acc_x", name: "x", tier: "developer", createdAt: 0, limits: {}, allowedCidrs: [], billing: {} });
    expect(await s.getAccount("acc_x")).toMatchObject({ id: "acc_x" });
    await s.close();
    await expect(s.getAccount("acc_x")).rejects.toMatchObject({ code: "service.unavailable" });
  });

  it("a second instance on the same file sees published cells within the cache TTL", async () => {
    const path = file();
    const a = await openStorage(`sqlite:${path}`, { cacheTtlMs: 100 });
    const b = await openStorage(`sqlite:${path}`, { cacheTtlMs: 100 });
    await a.migrate();
    expect(await b.benchmarks.latestPeriod("saas", "all", "quarterly")).toBeNull();
    await a.replaceCells([{ category: "saas", segment: "all", period: "2026-Q1", metric: "gross_margin", cell: { sorted: Float64Array.of(0.1, 0.2), sampleSize: 2 } }], []);
    await new Promise((r) => setTimeout(r, 150));
    expect(await b.benchmarks.latestPeriod("saas", "all", "quarterly")).toBe("2026-Q1");
    const cells = await b.benchmarks.cells("saas", "all", "2026-Q1", ["gross_margin"]);
    expect(Array.from(cells.get("gross_margin")!.sorted)).toEqual([0.1, 0.2]);
    await a.close();
    await b.close();
  });
});
