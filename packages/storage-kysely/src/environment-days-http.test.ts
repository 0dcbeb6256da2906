/**
 * Each environment counts its own day (issue 20, item 2), through the real HTTP API with two app instances on
 * one store (memory; two connections to one SQLite file; two to one PostgreSQL database). The reproduction: with
 * `per_day` lowered to 5, five test-key requests from a web page (an `Origin` header) used up the account's day,
 * and the live key then got 429 with `Retry-After: 30001`. Now the live key still gets 200, the sixth test request
 * is refused, and the usage summary shows each environment's day.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Storage } from "@benchdata/core";
import { defineConfig, manualClock } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { twoHandleStores } from "./test-support/two-handle-stores.ts";

const ADMIN = "admin-token-for-environment-days-0123456789";
const LIVE = "http://api.benchdata.test";
const SANDBOX = "http://sandbox.benchdata.test";
const T0 = Date.parse("2026-11-10T12:00:00.250Z");
const PERCENTILE = "/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5&period=2026-Q3";

/** Each store kind opens two handles on one store. */
const stores = await twoHandleStores("environment-days-http", { clock: "app" });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Res = { status: number; body: any; headers: Headers };
type App = ReturnType<typeof createApp>;

for (const [name, open] of Object.entries(stores)) {
  describe(`each environment counts its own day: ${name}`, () => {
    let handles: [Storage, Storage];
    let a: App;
    let b: App;
    const clock = manualClock(T0);
    beforeAll(async () => {
      handles = await open();
      const values = Array.from({ length: 40 }, (_, i) => 0.3 + i / 100);
      await handles[0].replaceCells([{ category: "saas", segment: "all", period: "2026-Q3", metric: "gross_margin", cell: { sorted: Float64Array.from(values), sampleSize: 40 } }], []);
      const config = defineConfig({ target: "host" });
      a = createApp({ storage: handles[0], config, clock, adminToken: ADMIN });
      b = createApp({ storage: handles[1], config, clock, adminToken: ADMIN });
    });
    afterAll(async () => {
      await handles[0].close();
      if (handles[1] !== handles[0]) await handles[1].close();
    });

    const call = async (app: App, base: string, method: string, path: string, auth: string, body?: unknown, extra: Record<string, string> = {}): Promise<Res> => {
      const headers: Record<string, string> = { authorization: `Bearer ${auth}`, ...extra };
      if (body !== undefined) headers["content-type"] = "application/json";
      const r = await app.fetch(new Request(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
      const text = await r.text();
      return { status: r.status, body: text === "" ? null : JSON.parse(text), headers: r.headers };
    };

    it("per_day 5: five test-key requests from a web page, then the live key still gets 200; each environment is refused only at its own limit", async () => {
      const acc = await call(a, LIVE, "POST", "/api/v1/admin/accounts", ADMIN, { name: "Env days", tier: "growth" });
      expect(acc.status).toBe(201);
      const id = acc.body.account_id as string;
      const session = acc.body.session_token as string;
      expect((await call(a, LIVE, "PATCH", `/api/v1/admin/accounts/${id}`, ADMIN, { limits: { per_day: 5 } })).status).toBe(200);
      const key = async (environment: string): Promise<string> => {
        const k = await call(a, LIVE, "POST", "/api/v1/console/keys", session, { name: environment, environment, scopes: ["benchmarks:read"] });
        expect(k.status).toBe(201);
        return k.body.raw_key as string;
      };
      const test = await key("test");
      const live = await key("live");

      // Five test requests from a browser, spread over both instances.
      for (let i = 0; i < 5; i++) {
        clock.advance(1000);
        const r = await call(i % 2 === 0 ? a : b, SANDBOX, "GET", PERCENTILE, test, undefined, { origin: "https://shop.example" });
        expect(r.status, `test request ${i + 1}: ${JSON.stringify(r.body)}`).toBe(200);
      }
      // The test environment's day is used up; the sixth is refused with the day window.
      clock.advance(1000);
      const sixth = await call(b, SANDBOX, "GET", PERCENTILE, test, undefined, { origin: "https://shop.example" });
      expect([sixth.status, sixth.body.code]).toEqual([429, "rate_limit.exceeded"]);
      expect(sixth.body.detail).toMatch(/day/i);

      // The live key is not affected: five 200s on either instance, then its own day is used up.
      for (let i = 0; i < 5; i++) {
        clock.advance(1000);
        const r = await call(i % 2 === 0 ? b : a, LIVE, "GET", PERCENTILE, live);
        expect(r.status, `live request ${i + 1}: ${JSON.stringify(r.body)}`).toBe(200);
        expect(r.headers.get("x-ratelimit-remaining")).not.toBeNull();
      }
      clock.advance(1000);
      expect((await call(a, LIVE, "GET", PERCENTILE, live)).status).toBe(429);

      // The usage summary shows each environment's day; `today` stays the account's total.
      const usage = await call(b, LIVE, "GET", "/api/v1/console/usage/summary", session);
      expect(usage.status).toBe(200);
      expect(usage.body).toMatchObject({ today: 10, daily_limit: 5, environments: { live: { today: 5, daily_limit: 5 }, test: { today: 5, daily_limit: 5 } } });
      const daily = await call(a, LIVE, "GET", "/api/v1/console/usage/daily?days=1", session);
      expect(daily.body.data).toEqual([{ date: "2026-11-10", calls: 10 }]);

      // The next UTC day both environments start again, and yesterday's history keeps both.
      clock.set(Date.parse("2026-11-11T00:00:01Z"));
      expect((await call(a, SANDBOX, "GET", PERCENTILE, test, undefined, { origin: "https://shop.example" })).status).toBe(200);
      expect((await call(b, LIVE, "GET", PERCENTILE, live)).status).toBe(200);
      const next = await call(a, LIVE, "GET", "/api/v1/console/usage/daily?days=2", session);
      expect(next.body.data).toEqual([
        { date: "2026-11-10", calls: 10 },
        { date: "2026-11-11", calls: 2 },
      ]);
    });
  });
}
