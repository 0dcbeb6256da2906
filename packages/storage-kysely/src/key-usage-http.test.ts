/**
 * Usage analytics per key (issue 27) through the real HTTP API on every store: counts by key, endpoint, outcome and
 * hour are exact after a flush; two instances on one store add up; a failing flush never refuses or slows a request,
 * is logged and retried; `last_used_at` is the minute of the key's latest request; the breakdown pages, validates
 * and is the operator's too; the pruning worker removes rows past retention.
 */
import { describe, expect, it } from "vitest";
import type { KeyUsageBatch, LogFields, Logger, Storage } from "@benchdata/core";
import { createPruneWorker, defineConfig, manualClock } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { jsonCall } from "./test-support/json-call.ts";
import { twoHandleStores } from "./test-support/two-handle-stores.ts";

const ADMIN = "admin-token-for-analytics-tests-0123456789";
const SANDBOX = "http://sandbox.benchdata.test";
const OK_PATH = "/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5";
const BAD_METRIC = "/data/v1/benchmarks/percentile?category=saas&metric=nope&value=0.5";
const PERCENTILE = "GET /data/v1/benchmarks/percentile";
const T0 = Date.UTC(2026, 10, 20, 10, 17, 42);
const HOUR = 3_600_000;
const DAY = 86_400_000;

const stores = await twoHandleStores("key-usage-http");

type App = ReturnType<typeof createApp>;

function recorder(): { logger: Logger; warnings: { msg: string; fields: LogFields }[] } {
  const warnings: { msg: string; fields: LogFields }[] = [];
  return { warnings, logger: { info() {}, warn: (msg, fields = {}) => void warnings.push({ msg, fields }), error() {} } };
}

async function setup(app: App, perMinute = 1000): Promise<{ session: string; accountId: string; key: (name: string) => Promise<{ raw: string; id: string }> }> {
  const acc = await jsonCall(app, "POST", `${SANDBOX}/api/v1/admin/accounts`, ADMIN, { name: "Analytics", tier: "startup" });
  expect(acc.status).toBe(201);
  const accountId: string = acc.body.account_id;
  expect((await jsonCall(app, "PATCH", `${SANDBOX}/api/v1/admin/accounts/${accountId}`, ADMIN, { limits: { per_minute: perMinute } })).status).toBe(200);
  const session: string = acc.body.session_token;
  const key = async (name: string): Promise<{ raw: string; id: string }> => {
    const k = await jsonCall(app, "POST", `${SANDBOX}/api/v1/console/keys`, session, { name, environment: "test", scopes: ["benchmarks:read"] });
    expect(k.status).toBe(201);
    return { raw: k.body.raw_key, id: k.body.key_id };
  };
  return { session, accountId, key };
}

async function get(app: App, path: string, raw: string | null): Promise<number> {
  return (await app.fetch(new Request(SANDBOX + path, { headers: raw === null ? {} : { authorization: `Bearer ${raw}` } }))).status;
}

/** Every group of a breakdown, page by page (`limit` per page). */
async function allGroups(app: App, session: string, query: string, limit = 500, path = "/api/v1/console/usage/breakdown"): Promise<{ start: string; key_id: string | null; endpoint: string | null; outcome: string | null; calls: number }[]> {
  const out = [];
  let cursor: string | null = null;
  do {
    const r = await jsonCall(app, "GET", `${SANDBOX}${path}?${query}&limit=${limit}${cursor === null ? "" : `&cursor=${cursor}`}`, session);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...r.body.data);
    cursor = r.body.next_cursor;
    expect(r.body.has_more).toBe(cursor !== null);
  } while (cursor !== null);
  return out;
}

/** A store whose analytics writes fail while `failing.on` is true; everything else is the store's own. */
function failingWrites(storage: Storage): { storage: Storage; failing: { on: boolean }; attempts: KeyUsageBatch[] } {
  const failing = { on: true };
  const attempts: KeyUsageBatch[] = [];
  const wrapped = new Proxy(storage, {
    get(target, prop, receiver) {
      if (prop === "addKeyUsage") {
        return (batch: KeyUsageBatch) => {
          attempts.push(batch);
          return failing.on ? Promise.reject(Object.assign(new Error("connection refused"), { code: "ECONNREFUSED" })) : target.addKeyUsage(batch);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  return { storage: wrapped, failing, attempts };
}

for (const [name, open] of Object.entries(stores)) {
  describe(`usage analytics through HTTP: ${name}`, () => {
    it("counts by key, endpoint, outcome and hour are exact after a flush; an unknown key is counted under no key; last_used_at is the latest request's minute", async () => {
      const [h0] = await open();
      try {
        const clock = manualClock(T0);
        const app = createApp({ storage: h0, clock, config: defineConfig({ analytics: { flushSeconds: 3600 } }), adminToken: ADMIN });
        const { session, key } = await setup(app, 4);
        const a = await key("a");
        const b = await key("b");
        // Key a: 4 admitted (3 × 200, one 422), then 2 refused by its per-minute limit (429).
        for (let i = 0; i < 3; i++) expect(await get(app, OK_PATH, a.raw)).toBe(200);
        expect(await get(app, BAD_METRIC, a.raw)).toBe(422);
        expect(await get(app, OK_PATH, a.raw)).toBe(429);
        expect(await get(app, OK_PATH, a.raw)).toBe(429);
        // Key b: one 200 in the next hour; revoked, then one 401.
        clock.advance(HOUR);
        expect(await get(app, OK_PATH, b.raw)).toBe(200);
        expect((await jsonCall(app, "POST", `${SANDBOX}/api/v1/console/keys/${b.id}/revoke`, session)).status).toBe(200);
        clock.advance(90_000);
        expect(await get(app, OK_PATH, b.raw)).toBe(401);
        // No key of this account: not counted anywhere.
        expect(await get(app, OK_PATH, "svc_test_" + "A".repeat(48))).toBe(401);
        expect(await get(app, OK_PATH, null)).toBe(401);

        // Nothing is written before the flush.
        expect((await allGroups(app, session, "from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z")).length).toBe(0);
        expect(await app.analytics!.flush()).toBe(true);

        const h10 = "2026-11-20T10:00:00.000Z";
        const h11 = "2026-11-20T11:00:00.000Z";
        const groups = await allGroups(app, session, "from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z");
        expect(groups.map((g) => [g.start, g.key_id, g.endpoint, g.outcome, g.calls])).toEqual(
          [
            [h10, a.id, PERCENTILE, "2xx", 3],
            [h10, a.id, PERCENTILE, "422", 1],
            [h10, a.id, PERCENTILE, "429", 2],
            [h11, b.id, PERCENTILE, "2xx", 1],
            [h11, b.id, PERCENTILE, "401/403", 1],
          ].sort((x, y) => (x[0]! < y[0]! ? -1 : x[0]! > y[0]! ? 1 : x[1]! < y[1]! ? -1 : x[1]! > y[1]! ? 1 : x[3]! < y[3]! ? -1 : 1)),
        );
        // By key only, by day: the outcome split, errors and 429s, and latency percentiles.
        const byKey = await jsonCall(app, "GET", `${SANDBOX}/api/v1/console/usage/breakdown?granularity=day&group_by=key&from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z`, session);
        expect(byKey.status).toBe(200);
        const rowA = byKey.body.data.find((r: { key_id: string }) => r.key_id === a.id);
        expect(rowA).toMatchObject({ start: "2026-11-20T00:00:00.000Z", endpoint: null, outcome: null, calls: 6, errors: 1, rate_limited: 2 });
        expect(rowA.outcomes).toMatchObject({ "2xx": 3, "422": 1, "429": 2, "401/403": 0 });
        expect(rowA.latency_ms.p95).toBeGreaterThan(0);
        expect(rowA.latency_ms.p50).toBeLessThanOrEqual(rowA.latency_ms.p99);

        // last_used_at: the minute of each key's latest request, whatever its outcome (b's last was refused).
        const keys = await jsonCall(app, "GET", `${SANDBOX}/api/v1/console/keys`, session);
        const used = Object.fromEntries(keys.body.data.map((k: { key_id: string; last_used_at: string | null }) => [k.key_id, k.last_used_at]));
        expect(used[a.id]).toBe("2026-11-20T10:17:00.000Z");
        expect(used[b.id]).toBe("2026-11-20T11:19:00.000Z");
        const fresh = await key("never");
        expect((await jsonCall(app, "GET", `${SANDBOX}/api/v1/console/keys/${fresh.id}`, session)).body.last_used_at).toBeNull();
        await app.analytics!.close();
      } finally {
        await h0.close();
      }
    });

    it("two instances on one store add up, also flushing at the same moment", async () => {
      const [h0, h1] = await open();
      try {
        const clock = manualClock(T0);
        const config = defineConfig({ analytics: { flushSeconds: 3600 } });
        const app0 = createApp({ storage: h0, clock, config, adminToken: ADMIN });
        const app1 = createApp({ storage: h1, clock, config, adminToken: ADMIN });
        const { session, key } = await setup(app0);
        const k = await key("shared");
        for (let round = 0; round < 3; round++) {
          await Promise.all([...Array.from({ length: 7 }, () => get(app0, OK_PATH, k.raw)), ...Array.from({ length: 5 }, () => get(app1, OK_PATH, k.raw))]);
          expect(await get(app1, BAD_METRIC, k.raw)).toBe(422);
          expect(await Promise.all([app0.analytics!.flush(), app1.analytics!.flush()])).toEqual([true, true]);
        }
        const groups = await allGroups(app1, session, "group_by=outcome&from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z");
        expect(groups.map((g) => [g.outcome, g.calls])).toEqual([
          ["2xx", 36],
          ["422", 3],
        ]);
        const days = await allGroups(app0, session, "granularity=day&group_by=&from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z");
        expect(days.map((g) => g.calls)).toEqual([39]);
      } finally {
        await h0.close();
        if (h1 !== h0) await h1.close();
      }
    });

    it("a failing flush never refuses or slows a request: it is logged, kept, and written whole by the next one", async () => {
      const [h0] = await open();
      try {
        const clock = manualClock(T0);
        const { storage, failing, attempts } = failingWrites(h0);
        const { logger, warnings } = recorder();
        const app = createApp({ storage, clock, logger, config: defineConfig({ analytics: { flushSeconds: 3600 } }), adminToken: ADMIN });
        const { session, key } = await setup(app);
        const k = await key("k");
        for (let i = 0; i < 5; i++) expect(await get(app, OK_PATH, k.raw)).toBe(200);
        expect(await app.analytics!.flush()).toBe(false);
        expect(attempts.length).toBe(1);
        expect(warnings.find((w) => w.msg.startsWith("analytics: writing the usage aggregate failed"))?.fields).toMatchObject({ cause: "ECONNREFUSED", rows: 1 });
        // Requests meanwhile: served as fast as before (no write is awaited on the request path), and counted.
        const started = performance.now();
        for (let i = 0; i < 20; i++) expect(await get(app, OK_PATH, k.raw)).toBe(200);
        expect((performance.now() - started) / 20).toBeLessThan(200);
        clock.advance(HOUR);
        expect(await get(app, BAD_METRIC, k.raw)).toBe(422);
        expect(await app.analytics!.flush()).toBe(false);
        failing.on = false;
        expect(await app.analytics!.flush()).toBe(true);
        const groups = await allGroups(app, session, "from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z&group_by=outcome");
        expect(groups.map((g) => [g.start, g.outcome, g.calls])).toEqual([
          ["2026-11-20T10:00:00.000Z", "2xx", 25],
          ["2026-11-20T11:00:00.000Z", "422", 1],
        ]);
        // Written once: a later flush has nothing to add.
        expect(await app.analytics!.flush()).toBe(true);
        expect((await allGroups(app, session, "from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z&group_by=")).reduce((n, g) => n + g.calls, 0)).toBe(26);
      } finally {
        await h0.close();
      }
    });

    it("the breakdown pages with a cursor, refuses bad ranges in the contract's shape, and is the operator's too", async () => {
      const [h0] = await open();
      try {
        const clock = manualClock(T0);
        const app = createApp({ storage: h0, clock, config: defineConfig({ analytics: { flushSeconds: 3600 } }), adminToken: ADMIN });
        const { session, accountId, key } = await setup(app);
        const keys = [await key("a"), await key("b"), await key("c")];
        for (let h = 0; h < 4; h++) {
          for (const k of keys) {
            expect(await get(app, OK_PATH, k.raw)).toBe(200);
            expect(await get(app, BAD_METRIC, k.raw)).toBe(422);
          }
          clock.advance(HOUR);
        }
        await app.analytics!.flush();
        const q = "from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z";
        const whole = await allGroups(app, session, q);
        expect(whole.length).toBe(4 * 3 * 2);
        for (const limit of [1, 5, 7]) expect(await allGroups(app, session, q, limit)).toEqual(whole);
        expect(await allGroups(app, session, `${q}&group_by=key`, 2)).toEqual(await allGroups(app, session, `${q}&group_by=key`));
        const one = await allGroups(app, session, `${q}&key_id=${keys[1]!.id}&group_by=key`);
        expect(one.map((g) => [g.key_id, g.calls])).toEqual(Array.from({ length: 4 }, () => [keys[1]!.id, 2]));

        const admin = await jsonCall(app, "GET", `${SANDBOX}/api/v1/admin/accounts/${accountId}/usage/breakdown?${q}`, ADMIN);
        expect(admin.status).toBe(200);
        expect(admin.body.data).toEqual(whole);
        expect((await jsonCall(app, "GET", `${SANDBOX}/api/v1/admin/accounts/acc_01JNOSUCHACCOUNT0000000000/usage/breakdown`, ADMIN)).status).toBe(404);

        const bad = async (query: string, code: string): Promise<void> => {
          const r = await jsonCall(app, "GET", `${SANDBOX}/api/v1/console/usage/breakdown?${query}`, session);
          expect(r.status, query).toBe(422);
          expect(r.body, query).toMatchObject({ code, status: 422 });
          expect(typeof r.body.detail).toBe("string");
        };
        await bad("from=2026-10-01T00:00:00Z&to=2026-11-20T00:00:00Z", "validation.out_of_range");
        await bad("granularity=day&from=2025-10-01T00:00:00Z&to=2026-11-20T00:00:00Z", "validation.out_of_range");
        await bad("from=2026-11-20T00:00:00Z&to=2026-11-19T00:00:00Z", "validation.invalid_parameter");
        await bad("group_by=key,nope", "validation.invalid_parameter");
        await bad("group_by=key,key", "validation.invalid_parameter");
        await bad("granularity=minute", "validation.invalid_parameter");
        await bad("cursor=not-a-cursor", "validation.invalid_parameter");
        await bad("limit=0", "validation.out_of_range");
        await bad("from=yesterday", "validation.invalid_parameter");
      } finally {
        await h0.close();
      }
    });

    it("retention: the pruning worker deletes hourly rows past analyticsHourlyDays and daily rows past analyticsDailyDays", async () => {
      const [h0] = await open();
      try {
        const clock = manualClock(T0);
        const config = defineConfig({ analytics: { flushSeconds: 3600 }, retention: { analyticsHourlyDays: 2, analyticsDailyDays: 31 } });
        const app = createApp({ storage: h0, clock, config, adminToken: ADMIN });
        const { accountId, key } = await setup(app);
        const k = await key("k");
        // Read through the admin API: the console session has expired 40 days on.
        const byAdmin = (query: string) => allGroups(app, ADMIN, query, 500, `/api/v1/admin/accounts/${accountId}/usage/breakdown`);
        for (const step of [0, DAY, 40 * DAY]) {
          clock.set(T0 + step);
          expect(await get(app, OK_PATH, k.raw)).toBe(200);
        }
        await app.analytics!.flush();
        const report = await createPruneWorker({ storage: h0, clock, config, batchSize: 1, pauseMs: 0 }).tick();
        expect(report.failed).toBe(false);
        // Hours: T0 and T0 + 1 day are more than 2 days old at T0 + 40 days. Days: T0's day is more than 31 days old.
        expect(report.deleted).toMatchObject({ key_usage_hours: 2, key_usage_days: 2 });
        const hours = await byAdmin(`group_by=&from=${new Date(T0 + 39 * DAY).toISOString()}&to=${new Date(T0 + 41 * DAY).toISOString()}`);
        expect(hours.map((g) => g.calls)).toEqual([1]);
        const days = await byAdmin(`granularity=day&group_by=&from=${new Date(T0 - DAY).toISOString()}&to=${new Date(T0 + 41 * DAY).toISOString()}`);
        expect(days.map((g) => g.calls)).toEqual([1]);
      } finally {
        await h0.close();
      }
    });
  });
}
