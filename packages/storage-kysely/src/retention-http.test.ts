/**
 * Retention (issue 26) through the real HTTP API on every store, two handles on one store (two connections to one
 * SQLite file or PostgreSQL database): traffic, webhooks and a charge on a simulated clock, then the pruning worker
 * 40 days later on the other handle. What retention no longer keeps is gone; what is still needed (a pending
 * delivery and its event, today's counter, the usage chart, invoices) is not, and `/metrics` and the log say what
 * was pruned. Two instances pruning at once delete every row once.
 */
import { describe, expect, it } from "vitest";
import type { LogFields, Logger, PruneReport, WebhookRequest } from "@benchdata/core";
import { createBillingWorker, createDeliveryWorker, createMetricsRegistry, createPruneWorker, cryptoRandom, defineConfig, manualClock, simulatedProcessor } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { twoHandleStores } from "./test-support/two-handle-stores.ts";

const ADMIN = "admin-token-for-retention-tests-0123456789";
const METRICS_TOKEN = "metrics-token-for-retention-tests-0123";
const SANDBOX = "http://sandbox.benchdata.test";
const LIVE = "http://api.benchdata.test";
const PERCENTILE = "/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5&period=2026-Q3";
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 9, 1, 12);

// The PostgreSQL handles decide days by the simulated clock too.
const stores = await twoHandleStores("retention-http", { clock: "app" });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Res = { status: number; body: any };
type App = ReturnType<typeof createApp>;

async function call(app: App, method: string, path: string, auth: string | null, body?: unknown, base = SANDBOX): Promise<Res> {
  const headers: Record<string, string> = auth === null ? {} : { authorization: `Bearer ${auth}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const r = await app.fetch(new Request(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
  const text = await r.text();
  return { status: r.status, body: text === "" ? null : text.startsWith("{") ? JSON.parse(text) : text };
}

function recorder(): { logger: Logger; lines: { msg: string; fields: LogFields }[] } {
  const lines: { msg: string; fields: LogFields }[] = [];
  const at = (msg: string, fields: LogFields = {}) => void lines.push({ msg, fields });
  return { lines, logger: { info: at, warn: at, error: at } };
}

const NOTHING: PruneReport["deleted"] = { deliveries: 0, delivery_attempts: 0, events: 0, sessions: 0, sign_in_links: 0, day_counters: 0, usage_days: 0, key_usage_hours: 0, key_usage_days: 0 };

for (const [name, open] of Object.entries(stores)) {
  describe(`retention through HTTP: ${name}`, () => {
    it("40 days on: the delivery log, expired sessions and links, and a past day counter are pruned; a pending delivery and its event, today's counter, the usage chart and the invoice stay; /metrics and the log show it", async () => {
      const [h0, h1] = await open();
      try {
        const clock = manualClock(T0);
        // A failed attempt waits 60 days for the next: a delivery still pending well past the horizon.
        const config = defineConfig({ metrics: { token: METRICS_TOKEN }, webhooks: { retryDelaysSeconds: [0, 60 * 86_400] } });
        const values = Array.from({ length: 40 }, (_, i) => 0.3 + i / 100);
        await h0.replaceCells([{ category: "saas", segment: "all", period: "2026-Q3", metric: "gross_margin", cell: { sorted: Float64Array.from(values), sampleSize: 40 } }], []);
        const metrics = createMetricsRegistry();
        const { logger, lines } = recorder();
        const app = createApp({ storage: h0, clock, config, adminToken: ADMIN });
        // The pruning instance: its own connection, app and registry.
        const pruningApp = createApp({ storage: h1, clock, config, adminToken: ADMIN, metrics });

        const acc = await call(app, "POST", "/api/v1/admin/accounts", ADMIN, { name: "Retention", tier: "startup" });
        expect(acc.status).toBe(201);
        const accountId: string = acc.body.account_id;
        const firstSession: string = acc.body.session_token;
        expect((await call(app, "PATCH", `/api/v1/admin/accounts/${accountId}`, ADMIN, { limits: { monthly_quota: 2 } })).status).toBe(200);
        expect((await call(app, "POST", `/api/v1/admin/accounts/${accountId}/sign-in-links`, ADMIN)).status).toBe(201);
        const hook = async (url: string, events: string[]): Promise<string> => {
          const r = await call(app, "POST", "/api/v1/console/webhooks", firstSession, { url, events });
          expect(r.status, JSON.stringify(r.body)).toBe(201);
          return r.body.webhook_id;
        };
        const up = await hook("https://up.example.com/in", ["key.created", "key.revoked", "invoice.paid"]);
        const down = await hook("https://down.example.com/in", ["key.revoked"]);
        const newKey = async (environment: string): Promise<{ raw: string; id: string }> => {
          const k = await call(app, "POST", "/api/v1/console/keys", firstSession, { name: "k", environment, scopes: ["benchmarks:read"] });
          expect(k.status).toBe(201);
          return { raw: k.body.raw_key, id: k.body.key_id };
        };
        const test = await newKey("test");
        const live = await newKey("live");
        const revoked = await newKey("test");
        expect((await call(app, "POST", `/api/v1/console/keys/${revoked.id}/revoke`, firstSession)).status).toBe(200);

        const sent: WebhookRequest[] = [];
        let downIsUp = false;
        const deliveries = createDeliveryWorker({
          storage: h1,
          clock,
          config,
          resolve: async () => ["93.184.216.34"],
          transport: {
            async send(req) {
              sent.push(req);
              return req.url.hostname === "down.example.com" && !downIsUp ? { status: 500, body: "down" } : { status: 200, body: "ok" };
            },
          },
        });
        const drain = async (): Promise<void> => {
          while ((await deliveries.tick()) > 0);
        };
        for (let i = 0; i < 3; i++) expect((await call(app, "GET", PERCENTILE, test.raw)).status).toBe(200);
        const liveStatuses: number[] = [];
        for (let i = 0; i < 3; i++) liveStatuses.push((await call(app, "GET", PERCENTILE, live.raw, undefined, LIVE)).status);
        expect(liveStatuses).toEqual([200, 200, 402]);
        await createBillingWorker({ storage: h1, clock, random: cryptoRandom, processor: simulatedProcessor({ outcome: "succeed" }), config }).tick();
        await drain();
        const day0 = (await call(app, "GET", "/api/v1/console/usage/summary", firstSession)).body;
        // The refused request used its day slot (rate limits count it) but no call of the quota.
        expect(day0).toMatchObject({ today: 6, month: 2 });
        const revokedEvent = sent.find((r) => r.url.hostname === "down.example.com")!.headers["X-Service-Event-Id"];
        expect(revokedEvent).toMatch(/^evt_/);

        // 40 days later: the first session expired 10 days ago (kept 7), the deliveries are 40 days old (kept 30).
        clock.advance(40 * DAY);
        const session: string = (await call(app, "POST", `/api/v1/admin/accounts/${accountId}/sessions`, ADMIN)).body.session_token;
        for (let i = 0; i < 2; i++) expect((await call(app, "GET", PERCENTILE, test.raw)).status).toBe(200);
        const pruner = createPruneWorker({ storage: h1, clock, config, logger, metrics, pauseMs: 0 });
        const report = await pruner.tick();
        expect(report.failed).toBe(false);
        // Every delivery to `up` (3 key.created, key.revoked, invoice.paid) and its attempt; the events they freed and
        // those nobody subscribed to (quota.warning, quota.exhausted); the first session and the unused link; the
        // live keys' counter of day 0 (the test keys' counted today).
        expect(report.deleted).toEqual({ deliveries: 5, delivery_attempts: 5, events: 6, sessions: 1, sign_in_links: 1, day_counters: 1, usage_days: 0, key_usage_hours: 0, key_usage_days: 0 });

        expect((await call(app, "GET", `/api/v1/console/webhooks/${up}/deliveries`, session)).body.data).toEqual([]);
        const waiting = (await call(app, "GET", `/api/v1/console/webhooks/${down}/deliveries`, session)).body.data;
        expect(waiting).toHaveLength(1);
        expect(waiting[0]).toMatchObject({ event_id: revokedEvent, event_type: "key.revoked", status: "pending" });
        expect(waiting[0].attempts).toHaveLength(1);
        // The chart still shows day 0 whole (the live keys' count moved to the history), and today.
        const daily = (await call(app, "GET", "/api/v1/console/usage/daily?days=90", session)).body.data as { date: string; calls: number }[];
        expect(daily).toHaveLength(90);
        expect(daily.find((d) => d.date === "2026-10-01")!.calls).toBe(day0.today);
        expect(daily.at(-1)).toEqual({ date: "2026-11-10", calls: 2 });
        expect(daily.reduce((n, d) => n + d.calls, 0)).toBe(day0.today + 2);
        expect((await call(app, "GET", "/api/v1/console/usage/summary", session)).body).toMatchObject({ today: 2, environments: { test: { today: 2 }, live: { today: 0 } } });
        const invoices = (await call(app, "GET", "/api/v1/console/invoices", session)).body.data;
        expect(invoices).toMatchObject([{ status: "paid" }]);
        expect((await call(app, "GET", "/api/v1/console/keys", firstSession)).status).toBe(401);

        const scrape = (await call(pruningApp, "GET", "/metrics", METRICS_TOKEN)).body as string;
        for (const [table, n] of Object.entries(report.deleted)) expect(scrape).toContain(`benchdata_retention_pruned_rows_total{table="${table}"} ${n}\n`);
        expect(scrape).toContain('benchdata_retention_runs_total{outcome="succeeded"} 1\n');
        expect(scrape).toContain(`benchdata_retention_last_success_timestamp_seconds ${(T0 + 40 * DAY) / 1000}\n`);
        expect(lines).toMatchObject([{ msg: "retention: pruned", fields: { ...report.deleted, batches: report.batches } }]);
        // Nothing more to prune; the pending delivery goes when due, its event's body intact.
        expect((await pruner.tick()).deleted).toEqual(NOTHING);
        clock.advance(21 * DAY);
        downIsUp = true;
        await drain();
        const late = sent.at(-1)!;
        expect(late.url.hostname).toBe("down.example.com");
        expect(JSON.parse(late.body)).toMatchObject({ id: revokedEvent, type: "key.revoked", data: { key_id: revoked.id } });
      } finally {
        await h0.close();
        if (h1 !== h0) await h1.close();
      }
    });

    it("two instances pruning at once (two connections) delete every row once, and their counts add up", async () => {
      const [h0, h1] = await open();
      try {
        await h0.createAccount({ id: "acc_twice", name: "Twice", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
        await h0.createWebhook({ id: "wh_twice", accountId: "acc_twice", url: "https://up.example.com/in", events: ["quota.warning"], secret: "whsec_x", createdAt: T0 }, 10);
        for (let i = 0; i < 300; i++) {
          await h0.emitEvent({ id: `evt_twice_${String(i).padStart(4, "0")}`, type: "quota.warning", accountId: "acc_twice", createdAt: new Date(T0).toISOString(), data: { calls_used: i, monthly_limit: 9, threshold: 8, period_start: "x", period_end: "y" } }, T0 + i);
        }
        for (;;) {
          const claimed = await h0.claimDeliveries({ now: T0 + 1000, leaseMs: 60_000, limit: 100, perWebhook: 100 });
          if (claimed.length === 0) break;
          for (const d of claimed) {
            await h0.completeDelivery({ deliveryId: d.deliveryId, leaseToken: d.leaseToken, attempt: { attempt: 1, at: T0 + 1000, statusCode: 200, latencyMs: 1, error: null, responseBody: "ok" }, next: { status: "succeeded" } });
          }
        }
        const clock = manualClock(T0 + 40 * DAY);
        const config = defineConfig();
        const workers = [h0, h1].map((storage) => createPruneWorker({ storage, clock, config, batchSize: 25, pauseMs: 0 }));
        const reports = await Promise.all(workers.map((w) => w.tick()));
        expect(reports.map((r) => r.failed)).toEqual([false, false]);
        const sum = (table: keyof PruneReport["deleted"]) => reports.reduce((n, r) => n + r.deleted[table], 0);
        expect([sum("deliveries"), sum("delivery_attempts"), sum("events")]).toEqual([300, 300, 300]);
        expect((await workers[1]!.tick()).deleted).toEqual(NOTHING);
        expect(await h1.listDeliveries("acc_twice", "wh_twice", 10)).toEqual([]);
      } finally {
        await h0.close();
        if (h1 !== h0) await h1.close();
      }
    });
  });
}
