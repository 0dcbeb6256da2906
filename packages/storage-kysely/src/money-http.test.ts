/**
 * Money, through the real HTTP API on every store (issue 20, item 1): a block that buys nothing is refused at
 * the door and never charged behind it, and automatic charges stop at a ceiling per period, paid ones included.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Storage } from "@benchdata/core";
import { createBillingWorker, createMemoryStorage, cryptoRandom, defineConfig, manualClock, simulatedProcessor } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { openStorage } from "./open-storage.ts";
import { createTestDatabase, pgAvailableForTests } from "./test-support/pg-test-database.ts";

const ADMIN = "admin-token-for-money-tests-0123456789";
const LIVE = "http://api.benchdata.test";
const T0 = Date.parse("2026-11-10T12:00:00.250Z");
const PERCENTILE = "/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5&period=2026-Q3";

const pgOn = await pgAvailableForTests("money-http");
const dir = mkdtempSync(join(tmpdir(), "benchdata-money-"));
let dropPg: (() => Promise<void>) | null = null;
const stores: Record<string, () => Promise<Storage>> = {
  memory: async () => createMemoryStorage(),
  sqlite: async () => openStorage(`sqlite:${join(dir, `money-${Math.random().toString(36).slice(2)}.db`)}`, { clock: "app" }),
};
if (pgOn) {
  stores.postgres = async () => {
    const t = await createTestDatabase();
    dropPg = t.drop;
    return openStorage(t.url, { clock: "app" });
  };
}
afterAll(async () => {
  await dropPg?.();
  rmSync(dir, { recursive: true, force: true });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Res = { status: number; body: any };

for (const [name, open] of Object.entries(stores)) {
  describe(`money through HTTP: ${name}`, () => {
    let storage: Storage;
    const clock = manualClock(T0);
    const config = defineConfig({ billing: { maxAutoChargesPerPeriod: 2, retryAfterFailureSeconds: 60 } });
    let app: ReturnType<typeof createApp>;
    beforeAll(async () => {
      storage = await open();
      await storage.migrate?.();
      const values = Array.from({ length: 40 }, (_, i) => 0.3 + i / 100);
      await storage.replaceCells([{ category: "saas", segment: "all", period: "2026-Q3", metric: "gross_margin", cell: { sorted: Float64Array.from(values), sampleSize: 40 } }], []);
      app = createApp({ storage, clock, config, adminToken: ADMIN });
    });
    afterAll(async () => {
      await storage.close?.();
    });

    const call = async (method: string, path: string, auth: string, body?: unknown): Promise<Res> => {
      const headers: Record<string, string> = { authorization: `Bearer ${auth}` };
      if (body !== undefined) headers["content-type"] = "application/json";
      const r = await app.fetch(new Request(`${LIVE}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
      const text = await r.text();
      return { status: r.status, body: text === "" ? null : JSON.parse(text) };
    };
    const admin = (method: string, path: string, body?: unknown) => call(method, `/api/v1/admin${path}`, ADMIN, body);
    const growthAccount = async (): Promise<{ id: string; session: string; key: string }> => {
      const a = await admin("POST", "/accounts", { name: "Money", tier: "growth" });
      expect(a.status).toBe(201);
      const k = await call("POST", "/api/v1/console/keys", a.body.session_token, { name: "live", environment: "live", scopes: ["benchmarks:read"] });
      expect(k.status).toBe(201);
      return { id: a.body.account_id, session: a.body.session_token, key: k.body.raw_key };
    };
    const worker = () => createBillingWorker({ storage, clock, random: cryptoRandom, processor: simulatedProcessor({ outcome: "succeed" }), config });

    it("the admin API refuses a block_size below 1, a negative price and a quota that would overflow, naming the field; the account is unchanged", async () => {
      const { id } = await growthAccount();
      const cases: [Record<string, number>, string][] = [
        [{ monthly_quota: 3, block_size: 0 }, "block_size"],
        [{ block_size: -5 }, "block_size"],
        [{ block_price: -1 }, "block_price"],
        [{ monthly_quota: 2 ** 53 }, "monthly_quota"],
        [{ block_size: 1e15 }, "block_size"],
      ];
      for (const [limits, field] of cases) {
        const r = await admin("PATCH", `/accounts/${id}`, { limits });
        expect(r.status, JSON.stringify(limits)).toBe(422);
        expect(r.body.code).toBe("validation.invalid_body");
        expect(r.body.detail).toContain(field);
      }
      const a = await admin("GET", `/accounts/${id}`);
      expect(a.body.limit_overrides).toEqual({});
      expect(a.body.limits.block_size).toBe(500_000);
    });

    it("reproduction: a growth account with quota 3 and a block of size 0 (set behind the door) gets 402 quota.held and is charged nothing", async () => {
      const { id, session, key } = await growthAccount();
      // The exact reproduction, with the account's limits written straight to storage as an older server could have.
      await storage.updateAccount(id, { limits: { monthlyQuota: 3, blockSize: 0 } });
      const statuses: number[] = [];
      const codes: string[] = [];
      const w = worker();
      for (let i = 0; i < 11; i++) {
        const r = await call("GET", PERCENTILE, key);
        statuses.push(r.status);
        if (r.status !== 200) codes.push(r.body.code);
        await w.tick();
      }
      expect(statuses).toEqual([...Array(3).fill(200), ...Array(8).fill(402)]);
      expect(new Set(codes)).toEqual(new Set(["quota.held"]));
      expect((await call("GET", "/api/v1/console/invoices", session)).body).toEqual({ data: [] });
      expect(await storage.listInvoices(id)).toEqual([]);
      const retry = await call("POST", "/api/v1/console/billing/retry", session);
      expect(retry.status).toBe(409);
      const usage = await call("GET", "/api/v1/console/usage/summary", session);
      expect(usage.body).toMatchObject({ month: 3, monthly_limit: 3, token_balance: 0 });
    });

    it("automatic charges stop at billing.maxAutoChargesPerPeriod, paid ones included: 402 quota.held, one quota.held event, and the operator's release resumes them", async () => {
      const { id, session, key } = await growthAccount();
      const hook = await call("POST", "/api/v1/console/webhooks", session, { url: "https://hooks.example.com/in", events: ["quota.held"] });
      expect(hook.status).toBe(201);
      expect((await admin("PATCH", `/accounts/${id}`, { limits: { monthly_quota: 3, block_size: 2, block_price: 20_000 } })).status).toBe(200);
      const w = worker();
      const seen: number[] = [];
      const codes: string[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await call("GET", PERCENTILE, key);
        seen.push(r.status);
        if (r.status === 402) codes.push(r.body.code);
        await w.tick();
      }
      // 3 base calls; 402 + a paid block of 2; 2 calls; 402 + a second paid block; 2 calls; then held for good.
      expect(seen).toEqual([200, 200, 200, 402, 200, 200, 402, 200, 200, 402, 402, 402]);
      expect(codes).toEqual(["quota.exhausted", "quota.exhausted", "quota.held", "quota.held", "quota.held"]);
      const invoices = (await storage.listInvoices(id)).map((inv) => [inv.block, inv.status, inv.amount]);
      expect(invoices.sort()).toEqual([
        [1, "paid", 20_000],
        [2, "paid", 20_000],
      ]);
      const deliveries = await storage.claimDeliveries({ now: clock.now(), leaseMs: 60_000, limit: 100, perWebhook: 100 });
      const held = deliveries.map((d) => JSON.parse(d.body)).filter((b) => b.account_id === id && b.type === "quota.held");
      expect(held).toHaveLength(1);
      expect(held[0].data).toMatchObject({ reason: "charge_limit", calls_used: 7, monthly_limit: 7, automatic_charges: 2 });

      const released = await admin("POST", `/accounts/${id}/billing/release`);
      expect(released).toMatchObject({ status: 200, body: { account_id: id, released: true } });
      const after = await call("GET", PERCENTILE, key);
      expect(after.status).toBe(402);
      expect(after.body.code).toBe("quota.exhausted");
      await w.tick();
      expect((await call("GET", PERCENTILE, key)).status).toBe(200);
      expect((await storage.listInvoices(id)).filter((inv) => inv.status === "paid")).toHaveLength(3);
    });
  });
}
