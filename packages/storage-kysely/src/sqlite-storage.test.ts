import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storageConformance } from "@benchdata/core/testing";
import { openStorage } from "./open-storage.ts";
import type { OpenedStorage } from "./open-storage.ts";
import { storageExtras } from "./test-support/storage-extras.ts";
import { SQLITE_MIGRATIONS } from "./sqlite/migrations/index.ts";
import { configureSqlite, SQLITE_CLAIM_HEADS } from "./sqlite/sqlite-storage.ts";
import { SQLITE_PRUNE_STATEMENTS, sqlitePruneBatch } from "./sqlite/sqlite-prune.ts";
import { PRUNE_SPECS, isIndexedTarget } from "./prune-spec.ts";
import { PRUNE_ORDER } from "@benchdata/core";
import { encodeLog } from "./sqlite/stamp-log.ts";
import { openSqlite } from "./sqlite/driver.ts";

const dir = mkdtempSync(join(tmpdir(), "benchdata-sqlite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (): string => join(dir, `store-${++n}.db`);

storageConformance("sqlite", {
  async create() {
    // Chunks of 7 stamps (128 by default): the suite's windows cross chunk boundaries.
    const s = await openStorage(`sqlite:${file()}`, { clock: "app", windowChunkSize: 7 });
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
    // Through the runtime's own driver, as the store: better-sqlite3 12 aborts on Node 24 when a statement is freed.
    const db = await openSqlite(path);
    expect(db.prepare("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(db.prepare("SELECT count(*) AS n FROM benchdata_migrations").get()).toEqual({ n: SQLITE_MIGRATIONS.length });
    db.close();
  });

  it("switching a new file to WAL is retried while SQLite answers SQLITE_BUSY (processes opening it at once), within the busy timeout", async () => {
    /** A connection whose WAL switch is refused `busy` times, as SQLite does when waiting could deadlock. */
    const fake = (busy: number) => {
      const pragmas: string[] = [];
      let refused = 0;
      const db = {
        name: "/srv/new.db",
        memory: false,
        pragma(source: string) {
          pragmas.push(source);
          if (source === "journal_mode = WAL" && refused < busy) {
            refused++;
            throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
          }
          return [];
        },
      } as unknown as Parameters<typeof configureSqlite>[0];
      return { db, pragmas };
    };
    const retried = fake(3);
    configureSqlite(retried.db, 5000);
    expect(retried.pragmas).toEqual(["busy_timeout = 5000", ...Array(4).fill("journal_mode = WAL"), "synchronous = NORMAL"]);
    // Refused for longer than the busy timeout: the error is the caller's, as any SQLITE_BUSY past it.
    const t = Date.now();
    expect(() => configureSqlite(fake(Number.MAX_SAFE_INTEGER).db, 60)).toThrow(/database is locked/);
    expect(Date.now() - t).toBeLessThan(1000);
    // Any other error is not retried.
    const other = { name: "/srv/x.db", memory: false, pragma: (s: string) => { if (s.startsWith("journal_mode")) throw Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" }); } } as unknown as Parameters<typeof configureSqlite>[0];
    expect(() => configureSqlite(other, 5000)).toThrow(/disk I\/O error/);
  });

  it("a name search lowercases as JavaScript does: ASCII names are ruled out in SQL, every other name is matched in full, as on the memory store", async () => {
    const s = await openStorage(`sqlite:${file()}`);
    await s.migrate();
    const names = ["ÉCOLE Data", "Über Analytics", "plain über", "Straße GmbH", "Acme École", "ACME", "İstanbul Ltd"];
    for (const [i, name] of names.entries()) {
      await s.createAccount({ id: `acc_search${i}`, name, tier: "growth", createdAt: 1_700_000_000_000 + i, limits: {}, allowedCidrs: [], billing: {} });
    }
    const found = async (text: string) => (await s.listAccounts({ limit: 100, nameContains: text })).map((a) => a.name);
    const expected = (text: string) => names.filter((n) => n.toLowerCase().includes(text.toLowerCase()));
    for (const text of ["école", "ÉCOLE", "über", "ÜBER", "acme", "STRASSE", "straße", "i̇stanbul", "a", "é", "zzz"]) {
      expect(await found(text), text).toEqual(expected(text));
    }
    expect(await found("école")).toEqual(["ÉCOLE Data", "Acme École"]);
    expect(await found("ÜBER")).toEqual(["Über Analytics", "plain über"]);
    await s.close();
  });

  it("a key's whole log written before schema 9 is honoured at its next admission, then kept in chunks", async () => {
    const path = file();
    const s = await openStorage(`sqlite:${path}`, { clock: "app", windowChunkSize: 4 });
    await s.migrate();
    const T = Date.UTC(2026, 10, 25, 12);
    await s.createAccount({ id: "acc_old", name: "Old", tier: "growth", createdAt: T, limits: {}, allowedCidrs: [], billing: {} });
    // The row an older server leaves: the whole log as one blob, no head/next.
    const raw = await openSqlite(path);
    raw.prepare("INSERT INTO rate_windows (key_id, stamps) VALUES (?, ?)").run("key_old", encodeLog(Array.from({ length: 10 }, (_, i) => T + i * 1000)));
    raw.close();
    const admit = (now: number, perMinute: number) => s.admit({ now, keyId: "key_old", accountId: "acc_old", perMinute, perDay: 1000, windowMs: 60_000, quota: null });
    expect(await admit(T + 20_000, 10)).toMatchObject({ kind: "rate_limited", retryAfterMs: 40_000 });
    expect(await admit(T + 20_001, 11)).toMatchObject({ kind: "allowed", minute: { remaining: 0, resetAt: T + 60_000 } });
    expect(await admit(T + 60_000, 11)).toMatchObject({ kind: "allowed", minute: { remaining: 0, resetAt: T + 61_000 } });
    await s.close();
    const check = await openSqlite(path);
    const row = check.prepare("SELECT length(stamps) AS n, head, next FROM rate_windows WHERE key_id = 'key_old'").get() as { n: number; head: number; next: number };
    expect(row).toEqual({ n: 0, head: 1, next: 12 });
    const chunks = check.prepare("SELECT chunk FROM window_chunks WHERE key_id = 'key_old' ORDER BY chunk").all() as { chunk: number }[];
    expect(chunks.map((c) => c.chunk)).toEqual([0, 1, 2]);
    check.close();
  });

  it("within a day an admission batch writes only the day counter's count; a new day rewrites its day and keeps the last one", async () => {
    const path = file();
    const s = await openStorage(`sqlite:${path}`, { clock: "app" });
    await s.migrate();
    const T = Date.UTC(2026, 10, 25, 12);
    await s.createAccount({ id: "acc_day", name: "Day", tier: "growth", createdAt: T, limits: {}, allowedCidrs: [], billing: {} });
    // Counts every UPDATE whose SET names `day` (what rewrites the (day, account_id) index and wakes the history trigger).
    const raw = await openSqlite(path);
    raw.exec("CREATE TABLE day_sets (n INTEGER NOT NULL); INSERT INTO day_sets VALUES (0);");
    raw.exec("CREATE TRIGGER count_day_sets AFTER UPDATE OF day ON day_counters BEGIN UPDATE day_sets SET n = n + 1; END;");
    const admit = (now: number) => s.admit({ now, keyId: "key_day", accountId: "acc_day", perMinute: 100, perDay: 1000, windowMs: 60_000, quota: null });
    for (let i = 0; i < 3; i++) expect(await admit(T + i * 1000)).toMatchObject({ kind: "allowed", day: { remaining: 1000 - (i + 1) } });
    expect(raw.prepare("SELECT n FROM day_sets").get()).toEqual({ n: 0 });
    expect(raw.prepare("SELECT day, count FROM day_counters WHERE account_id = 'acc_day'").get()).toEqual({ day: Math.floor(T / 86_400_000), count: 3 });
    expect(await admit(T + 86_400_000)).toMatchObject({ kind: "allowed", day: { remaining: 999 } });
    expect(raw.prepare("SELECT n FROM day_sets").get()).toEqual({ n: 1 });
    expect(raw.prepare("SELECT day, count FROM day_counters WHERE account_id = 'acc_day'").get()).toEqual({ day: Math.floor(T / 86_400_000) + 1, count: 1 });
    expect(raw.prepare("SELECT day, count FROM usage_days WHERE account_id = 'acc_day'").all()).toEqual([{ day: Math.floor(T / 86_400_000), count: 3 }]);
    raw.close();
    await s.close();
  });

  it("an ordered claim reads each webhook's head through deliveries_pending_by_webhook, never the deliveries queued behind a head waiting for its retry", async () => {
    const path = file();
    const s = await openStorage(`sqlite:${path}`, { clock: "app" });
    await s.migrate();
    const T = Date.UTC(2026, 10, 26, 12);
    await s.createAccount({ id: "acc_q", name: "Q", tier: "growth", createdAt: T, limits: {}, allowedCidrs: [], billing: {} });
    await s.createWebhook({ id: "wh_q", accountId: "acc_q", url: "https://x.example/h", events: ["quota.warning"], secret: "whsec_x", createdAt: T }, 5);
    const emit = (i: number) => s.emitEvent({ id: `evt_q${i}`, type: "quota.warning", accountId: "acc_q", createdAt: new Date(T).toISOString(), data: { calls_used: i, monthly_limit: 2, threshold: 1, period_start: "x", period_end: "y" } }, T);
    await emit(0);
    const [head] = await s.claimDeliveries({ now: T, leaseMs: 60_000, limit: 10, perWebhook: 4, ordered: true });
    expect(await s.completeDelivery({ deliveryId: head!.deliveryId, leaseToken: head!.leaseToken, attempt: { attempt: 1, at: T, statusCode: 500, latencyMs: 1, error: "http_status", responseBody: "" }, next: { status: "pending", at: T + 30_000 } })).toBe(true);
    for (let i = 1; i <= 2000; i++) await emit(i);
    expect(await s.claimDeliveries({ now: T + 1000, leaseMs: 60_000, limit: 10, perWebhook: 4, ordered: true })).toEqual([]);
    await s.close();
    // With statistics gathered over the queue, the plan still reaches deliveries only by that index's seeks (and
    // LIMIT 1 scans) and the rowid: the old plan walked deliveries_due over every due delivery.
    const raw = await openSqlite(path);
    raw.exec("ANALYZE");
    const plan = (raw.prepare(`EXPLAIN QUERY PLAN ${SQLITE_CLAIM_HEADS}`).all({ now: T + 1000 }) as { detail: string }[]).map((r) => r.detail);
    raw.close();
    const deliveryAccesses = plan.filter((d) => /^(SCAN|SEARCH) (deliveries|d|p)\b/.test(d));
    expect(deliveryAccesses.length).toBeGreaterThanOrEqual(3);
    for (const d of deliveryAccesses) expect(d).toMatch(/USING (COVERING )?INDEX deliveries_pending_by_webhook|USING INTEGER PRIMARY KEY/);
    expect(plan.filter((d) => d.includes("deliveries_due"))).toEqual([]);
  });

  it("retention: a batch of pruning reads its table's oldest rows by an index range and deletes each by key, never scanning or sorting a table (EXPLAIN QUERY PLAN)", async () => {
    const path = file();
    const s = await openStorage(`sqlite:${path}`, { clock: "app" });
    await s.migrate();
    await s.close();
    // 5,000 rows in every table pruning reads, statistics gathered: the plans a busy database gets.
    const raw = await openSqlite(path);
    const T = Date.UTC(2026, 0, 1);
    raw.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
      INSERT INTO events (id, type, account_id, created_at, body) SELECT printf('evt_%08d', i), 'quota.warning', 'acc_' || (i % 50), ${T} + i * 1000, '{}' FROM n;
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
      INSERT INTO deliveries (id, event_id, webhook_id, account_id, status, attempts, created_at)
        SELECT printf('dlv_%08d', i), printf('evt_%08d', i), 'wh_' || (i % 50), 'acc_' || (i % 50), CASE WHEN i % 10 = 0 THEN 'pending' ELSE 'succeeded' END, 1, ${T} + i * 1000 FROM n;
      INSERT INTO delivery_attempts (delivery_id, attempt, at, status_code, latency_ms, error, response_body) SELECT id, 1, created_at, 200, 1, NULL, 'ok' FROM deliveries;
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
      INSERT INTO sessions (token_hash, account_id, created_at, expires_at) SELECT 'h' || i, 'acc_1', ${T}, ${T} + i * 1000 FROM n;
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
      INSERT INTO sign_in_links (token_hash, account_id, created_at, expires_at) SELECT 'l' || i, 'acc_1', ${T}, ${T} + i * 1000 FROM n;
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
      INSERT INTO day_counters (account_id, day, count) SELECT 'acc_' || i, 20000 + i % 400, 5 FROM n;
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
      INSERT INTO usage_days (account_id, day, count) SELECT 'acc_' || (i % 50), 20000 + i / 50, 5 FROM n;
      ANALYZE;`);
    const planOf = (text: string, params: unknown): string[] => (raw.prepare(`EXPLAIN QUERY PLAN ${text}`).all(params as never) as { detail: string }[]).map((r) => r.detail);
    for (const target of PRUNE_ORDER.filter(isIndexedTarget)) {
      const { index } = PRUNE_SPECS[target];
      const plan = planOf(sqlitePruneBatch(target), { before: T + 4_000_000, k: T, i: "x", limit: 500 });
      expect(plan[0], target).toMatch(new RegExp(`^SEARCH t USING (COVERING )?INDEX ${index} \\(\\(.*\\)>\\(\\?,\\?\\) AND .*<\\?\\)$`));
      expect(plan.filter((d) => d.startsWith("SCAN") || d.includes("TEMP B-TREE")), target).toEqual([]);
      if (target === "events") expect(plan).toContain("SEARCH d USING COVERING INDEX deliveries_by_event (event_id=?)");
    }
    for (const [name, text] of Object.entries(SQLITE_PRUNE_STATEMENTS)) {
      const plan = planOf(text, text.includes("INSERT") ? ["acc_1", 1, 1] : text.includes("AND day") ? ["acc_1", 1] : ["x"]);
      expect(plan.filter((d) => d.startsWith("SCAN")), name).toEqual([]);
      if (!text.startsWith("INSERT")) expect(plan.join(" | "), name).toMatch(/^SEARCH \w+ USING (COVERING )?(INDEX \w+|PRIMARY KEY) \(/);
    }
    raw.close();
  });

  it("fail closed: a database locked beyond busy_timeout rejects with service.unavailable", async () => {
    const path = file();
    const s = await openStorage(`sqlite:${path}`, { busyTimeoutMs: 50 });
    await s.migrate();
    // Locked through the store's own driver: two SQLite libraries in one process (better-sqlite3's and
    // node:sqlite, on Node 24) do not see each other's POSIX locks.
    const other = await openSqlite(path);
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
