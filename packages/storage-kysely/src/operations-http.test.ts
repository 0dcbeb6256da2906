/**
 * Operations through the app's HTTP handler on every store (issue 18): `/readyz` follows storage and draining,
 * and storage faults that a storage layer already turned into 503s are logged with their cause (SQLITE_FULL,
 * ECONNREFUSED), rate-limited, and so is the recovery.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { LogFields, Logger, Storage } from "@benchdata/core";
import { createMemoryStorage, defineConfig } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { openStorage } from "./open-storage.ts";
import { configureSqlite, createSqliteStorage } from "./sqlite/sqlite-storage.ts";
import { createTestDatabase, pgAvailableForTests } from "./test-support/pg-test-database.ts";

const ADMIN = "admin-token-for-ops-tests-0123456789";
const METRICS_TOKEN = "metrics-token-for-tests-0123456789";
const HOST = "http://sandbox.benchdata.test";
const PERCENTILE = "/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5";

const pgOn = await pgAvailableForTests("operations-http");
const dir = mkdtempSync(join(tmpdir(), "benchdata-ops-"));
const drops: (() => Promise<void>)[] = [];
const stores: Record<string, () => Promise<Storage>> = {
  memory: async () => createMemoryStorage(),
  sqlite: async () => openStorage(`sqlite:${join(dir, `ops-${Math.random().toString(36).slice(2)}.db`)}`),
};
if (pgOn) {
  stores.postgres = async () => {
    const t = await createTestDatabase();
    drops.push(t.drop);
    return openStorage(t.url);
  };
}
afterAll(async () => {
  for (const drop of drops) await drop();
  rmSync(dir, { recursive: true, force: true });
});

type Line = { level: string; msg: string } & LogFields;
function recorder(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (msg: string, fields: LogFields = {}) => void lines.push({ level, msg, ...fields });
  return { lines, logger: { info: at("info"), warn: at("warn"), error: at("error") } };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function get(app: { fetch(r: Request): Promise<Response> }, path: string, auth?: string): Promise<{ status: number; headers: Headers; body: any }> {
  const r = await app.fetch(new Request(HOST + path, auth ? { headers: { authorization: `Bearer ${auth}` } } : {}));
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: text.startsWith("{") ? JSON.parse(text) : text };
}

/** An account and a test key through the admin and console APIs. */
async function testKey(app: { fetch(r: Request): Promise<Response> }): Promise<string> {
  const post = async (path: string, auth: string, body: unknown): Promise<{ status: number; body: Record<string, string> }> => {
    const r = await app.fetch(new Request(HOST + path, { method: "POST", headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" }, body: JSON.stringify(body) }));
    return { status: r.status, body: (await r.json()) as Record<string, string> };
  };
  const account = await post("/api/v1/admin/accounts", ADMIN, { name: "Ops", tier: "enterprise" });
  expect(account.status).toBe(201);
  const key = await post("/api/v1/console/keys", account.body.session_token!, { name: "k", environment: "test", scopes: ["benchmarks:read"] });
  expect(key.status).toBe(201);
  return key.body.raw_key!;
}

for (const [name, open] of Object.entries(stores)) {
  describe(`readiness through HTTP: ${name}`, () => {
    it("/readyz is 200 while storage answers, 503 `draining` once drain() is called; /healthz stays 200", async () => {
      const storage = await open();
      await storage.migrate();
      try {
        const app = createApp({ storage, adminToken: ADMIN });
        expect(await get(app, "/readyz")).toMatchObject({ status: 200, body: { ready: true } });
        expect(app.draining).toBe(false);
        app.drain();
        expect(app.draining).toBe(true);
        const r = await get(app, "/readyz");
        expect(r).toMatchObject({ status: 503, body: { ready: false, reason: "draining", code: "service.unavailable", status: 503 } });
        expect(r.headers.get("cache-control")).toBe("no-store");
        expect(await get(app, "/healthz")).toMatchObject({ status: 200, body: { ok: true } });
        // Draining still serves: a load balancer needs time to notice.
        expect((await get(app, PERCENTILE, await testKey(app))).status).toBe(200);
      } finally {
        await storage.close();
      }
    });

    it("GET /metrics: off without metrics.token (404); with it, only that bearer token reads the counters", async () => {
      const storage = await open();
      await storage.migrate();
      try {
        const off = createApp({ storage, adminToken: ADMIN });
        expect(await get(off, "/metrics")).toMatchObject({ status: 404, body: { code: "not_found" } });
        const app = createApp({ storage, adminToken: ADMIN, config: defineConfig({ metrics: { token: METRICS_TOKEN }, tiers: { enterprise: { perMinute: 2 } } }) });
        const missing = await get(app, "/metrics");
        expect(missing).toMatchObject({ status: 401, body: { code: "metrics.invalid_token" } });
        expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);
        expect((await get(app, "/metrics", METRICS_TOKEN + "x")).status).toBe(401);
        expect((await get(app, "/metrics", ADMIN)).status).toBe(401);

        const key = await testKey(app);
        expect((await get(app, PERCENTILE, key)).status).toBe(200);
        expect((await get(app, PERCENTILE, key)).status).toBe(200);
        expect((await get(app, PERCENTILE, key)).status).toBe(429);
        expect((await get(app, "/no/such/path")).status).toBe(404);
        expect((await get(app, "/readyz")).status).toBe(200);
        const r = await get(app, "/metrics", METRICS_TOKEN);
        expect(r.status).toBe(200);
        expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
        const text = r.body as string;
        const sample = (line: string): number | undefined => {
          const found = text.split("\n").find((l) => l.startsWith(line + " "));
          return found === undefined ? undefined : Number(found.slice(line.length + 1));
        };
        expect(sample('benchdata_http_requests_total{route="/data/v1/benchmarks/percentile",method="GET",status_class="2xx"}')).toBe(2);
        expect(sample('benchdata_http_requests_total{route="/data/v1/benchmarks/percentile",method="GET",status_class="4xx"}')).toBe(1);
        expect(sample('benchdata_http_request_duration_seconds_count{route="/data/v1/benchmarks/percentile",method="GET"}')).toBe(3);
        expect(sample('benchdata_http_request_duration_seconds_bucket{route="/data/v1/benchmarks/percentile",method="GET",le="+Inf"}')).toBe(3);
        expect(sample('benchdata_http_requests_total{route="/api/v1/console/keys",method="POST",status_class="2xx"}')).toBe(1);
        expect(sample('benchdata_http_requests_total{route="(unmatched)",method="*",status_class="4xx"}')).toBe(1);
        expect(sample('benchdata_http_requests_total{route="/readyz",method="GET",status_class="2xx"}')).toBe(1);
        expect(sample('benchdata_admissions_refused_total{reason="rate_limit"}')).toBe(1);
        expect(sample('benchdata_admissions_refused_total{reason="quota"}')).toBe(0);
        expect(sample('benchdata_unavailable_total{cause="storage"}')).toBe(0);
        expect(sample("benchdata_webhook_outbox_depth")).toBe(0);
        expect(sample("benchdata_storage_up")).toBe(1);
        expect(sample("benchdata_draining")).toBe(0);
        if (name === "postgres") {
          expect(sample("benchdata_storage_pool_size")).toBe(10);
          expect(sample("benchdata_storage_pool_waiting")).toBe(0);
          expect(sample("benchdata_storage_pool_in_use")).toBeGreaterThanOrEqual(0);
        } else expect(sample("benchdata_storage_pool_size")).toBeUndefined();
        // Every sample line is `name{labels} number`.
        for (const line of text.split("\n")) if (line !== "" && !line.startsWith("#")) expect(line).toMatch(/^[a-z_]+(\{.*\})? [0-9.e+-]+$/);
      } finally {
        await storage.close();
      }
    });

    it("the storage gauges read the outbox depth (and the pool, on PostgreSQL)", async () => {
      const storage = await open();
      await storage.migrate();
      try {
        const gauges = await storage.gauges!();
        expect(gauges.outboxDepth).toBe(0);
        if (name === "postgres") expect(gauges).toMatchObject({ poolSize: 10, poolWaiting: 0 });
      } finally {
        await storage.close();
      }
    });
  });
}

describe("faults are logged with their cause", () => {
  it("SQLite full: the 503s name SQLITE_FULL in the log (one line, not one per request), and the recovery is logged", async () => {
    const db = new Database(join(dir, "full.db"));
    configureSqlite(db, 5000);
    const storage = createSqliteStorage(db);
    await storage.migrate();
    const { logger, lines } = recorder();
    const app = createApp({ storage, logger, adminToken: ADMIN, config: defineConfig({ tiers: { enterprise: { perMinute: 100_000 } } }) });
    const key = await testKey(app);
    expect((await get(app, PERCENTILE, key)).status).toBe(200);
    // The file may not grow by one more page: every admission writes, so one soon needs a page it cannot have.
    db.pragma(`max_page_count = ${db.pragma("page_count", { simple: true }) as number}`);
    const statuses: number[] = [];
    for (let i = 0; i < 3000 && statuses.filter((s) => s === 503).length < 50; i++) {
      const r = await get(app, PERCENTILE, key);
      statuses.push(r.status);
      if (r.status === 503) {
        expect(r.body).toMatchObject({ code: "service.unavailable", status: 503 });
        expect(r.headers.get("retry-after")).toBe("1");
      }
    }
    expect(new Set(statuses)).toEqual(new Set([200, 503]));
    const faults = lines.filter((l) => l.level === "error");
    expect(faults.length).toBeGreaterThanOrEqual(1);
    expect(faults.length).toBeLessThan(5); // 50 failures, rate-limited
    expect(faults[0]).toMatchObject({ msg: "storage unavailable: answering 503", cause: "SQLITE_FULL", operation: "admit" });
    expect(String(faults[0]!.error)).toMatch(/full/i);

    db.pragma("max_page_count = 1073741823");
    expect((await get(app, PERCENTILE, key)).status).toBe(200);
    const recovered = lines.filter((l) => l.msg === "storage recovered");
    expect(recovered).toHaveLength(1);
    expect(recovered[0]).toMatchObject({ level: "info", last_cause: "SQLITE_FULL" });
    expect(recovered[0]!.failures_total).toBeGreaterThanOrEqual(50);
    expect(app.metrics.value("benchdata_storage_errors_total", { cause: "SQLITE_FULL" })).toBeGreaterThanOrEqual(50);
    expect(app.metrics.value("benchdata_unavailable_total", { cause: "storage" })).toBe(statuses.filter((s) => s === 503).length);
    await storage.close();
  });

  it("PostgreSQL unreachable: /readyz answers 503 `storage_unavailable` and the log says ECONNREFUSED", async () => {
    const storage = await openStorage("postgres://postgres@127.0.0.1:1/nothing", { connectTimeoutMs: 1000 });
    const { logger, lines } = recorder();
    const app = createApp({ storage, logger, adminToken: ADMIN });
    try {
      const r = await get(app, "/readyz");
      expect(r).toMatchObject({ status: 503, body: { ready: false, reason: "storage_unavailable" } });
      expect(lines.filter((l) => l.level === "error")).toEqual([expect.objectContaining({ msg: "storage unavailable: answering 503", operation: "ping", cause: "ECONNREFUSED" })]);
      // A console call on the same dead store is 503 too, logged only as a summary later (same cause, same run).
      expect((await get(app, "/api/v1/console/keys", "bds_sess_" + "x".repeat(48))).status).toBe(503);
    } finally {
      await storage.close();
    }
  });
});
