/**
 * Accounts an operator can find, export and erase, through the real HTTP API with TWO app instances over one
 * store (two connections to one SQLite file or one PostgreSQL database; two apps over one memory store): an
 * erasure through one instance stops the account's keys on the other at its very next request, although it
 * remembers them; its sessions and links stop; its charges and deliveries never go out; another account keeps
 * everything; one whose purge the database cut short is finished by the other instance's pruning worker.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Clock, PaymentProcessor, PaymentRequest, PruneWorkerStore, Storage, WebhookRequest } from "@benchdata/core";
import { createBillingWorker, createDeliveryWorker, createMetricsRegistry, createPruneWorker, cryptoRandom, defineConfig, quotaWarningEvent, simulatedProcessor, systemClock } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { StorageUnavailableError } from "./database-unavailable.ts";
import type { JsonReply } from "./test-support/json-call.ts";
import { jsonCall } from "./test-support/json-call.ts";
import { twoHandleStores } from "./test-support/two-handle-stores.ts";
import { BENCH, LIVE, PERCENTILE, SANDBOX, twoApps } from "./test-support/two-apps.ts";

const ADMIN = "admin-token-for-erasure-tests-0123456789";

const stores = await twoHandleStores("account-erasure-http");

type App = ReturnType<typeof createApp>;

/** `storage` with one method that first runs `before` (an erasure through the other instance), then itself. */
function racing(storage: Storage, method: keyof Storage, before: () => Promise<void>): Storage {
  return new Proxy(storage, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof value !== "function") return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (prop !== method) return bound;
      return async (...args: unknown[]) => {
        await before();
        return bound(...args);
      };
    },
  });
}

for (const [name, open] of Object.entries(stores)) {
  describe(`accounts erased across two instances: ${name}`, () => {
    let handles: [Storage, Storage];
    let a: App;
    let b: App;
    let close: () => Promise<void>;
    const config = defineConfig({ target: "host", webhooks: { retryDelaysSeconds: [0, 30, 300] } });
    beforeAll(async () => ({ handles, a, b, close } = await twoApps(open, { config, adminToken: ADMIN })));
    afterAll(() => close());

    const call = (app: App, method: string, path: string, auth: string | null, body?: unknown, extra: Record<string, string> = {}, base = SANDBOX): Promise<JsonReply> =>
      jsonCall(app, method, `${base}${path}`, auth, body, extra);
    const admin = (app: App, method: string, path: string, body?: unknown) => call(app, method, `/api/v1/admin${path}`, ADMIN, body);
    const newAccount = async (name: string, tier = "growth"): Promise<{ id: string; session: string }> => {
      const acc = await admin(a, "POST", "/accounts", { name, tier });
      expect(acc.status, JSON.stringify(acc.body)).toBe(201);
      return { id: acc.body.account_id, session: acc.body.session_token };
    };
    const newKey = async (session: string, environment = "test"): Promise<string> => {
      const k = await call(a, "POST", "/api/v1/console/keys", session, { name: "k", environment, scopes: ["benchmarks:read"] });
      expect(k.status, JSON.stringify(k.body)).toBe(201);
      return k.body.raw_key;
    };

    it("an erasure through one instance refuses the account's keys at the other's very next request (though it remembers them); sessions and sign-in links stop; another account is untouched", async () => {
      const acc = await newAccount("Erased Co");
      const keep = await newAccount("Kept Co");
      const k1 = await newKey(acc.session);
      const k2 = await newKey(acc.session);
      const kept = await newKey(keep.session);
      // Both instances know every key: their lookups are remembered (and, on PostgreSQL, verified at the epoch).
      for (let i = 0; i < 2; i++) for (const app of [a, b]) for (const k of [k1, k2, kept]) expect((await call(app, "GET", BENCH, k)).status).toBe(200);
      const link = await admin(a, "POST", `/accounts/${acc.id}/sign-in-links`);
      const linkToken = String(link.body.sign_in_path).split("#sign-in=")[1]!;

      const erased = await admin(b, "DELETE", `/accounts/${acc.id}`);
      expect(erased.status, JSON.stringify(erased.body)).toBe(200);
      expect(erased.body).toMatchObject({ account_id: acc.id, deleted: true });

      // Instance A remembered the keys a moment ago; its very next requests are refused, as for keys that never were.
      for (const app of [a, b]) {
        for (const k of [k1, k2]) {
          const r = await call(app, "GET", BENCH, k);
          expect(r.status).toBe(401);
          expect(r.body.code).toBe("auth.unknown_key");
        }
      }
      for (const app of [a, b]) {
        expect((await call(app, "GET", "/api/v1/console/keys", acc.session)).body.code).toBe("console.invalid_session");
        const made = await call(app, "POST", "/api/v1/console/keys", acc.session, { name: "new", environment: "test", scopes: ["benchmarks:read"] });
        expect(made.body.code).toBe("console.invalid_session");
      }
      expect((await call(a, "POST", "/api/v1/console/sign-in", null, { token: linkToken }, { "x-benchdata-console": "1" })).body.code).toBe("console.invalid_sign_in");
      expect((await admin(a, "GET", `/accounts/${acc.id}`)).status).toBe(404);
      expect(erased.body.erasure).toMatchObject({ status: "erased", erased_now: true });
      expect((await admin(a, "DELETE", `/accounts/${acc.id}`)).body).toEqual({ ...erased.body, erasure: { status: "erased", erased_now: false, purged: 0 } });

      // The other account goes on as before, on both instances.
      for (const app of [a, b]) expect((await call(app, "GET", BENCH, kept)).status).toBe(200);
      expect((await call(a, "GET", "/api/v1/console/keys", keep.session)).status).toBe(200);
      const listed = await admin(a, "GET", "/accounts?status=deleted");
      expect(listed.body.data.map((x: { account_id: string }) => x.account_id)).toContain(acc.id);
      expect((await admin(b, "GET", "/accounts?q=kept%20co")).body.data.map((x: { account_id: string }) => x.account_id)).toEqual([keep.id]);
    });

    it("a merchant snapshot, a console session or a sign-in link whose account is erased in between is refused, and nothing of it is stored", async () => {
      const acc = await newAccount("Racing Co");
      const k = await call(a, "POST", "/api/v1/console/keys", acc.session, { name: "m", environment: "test", scopes: ["merchant:write"] });
      expect(k.status, JSON.stringify(k.body)).toBe(201);
      const erase = async (): Promise<void> => {
        expect((await admin(b, "DELETE", `/accounts/${acc.id}`)).status).toBe(200);
      };
      // The key was checked; the account is erased (through the other instance) before the snapshot is stored.
      const snapApp = createApp({ config, adminToken: ADMIN, storage: racing(handles[0], "saveSnapshot", erase) });
      const snap = await call(snapApp, "POST", "/data/v1/merchant/vcfs", k.body.raw_key, { merchant_id: "m-1", category: "saas", period: "2026-Q3", metrics: { gross_margin: 0.5 } });
      expect(snap.status, JSON.stringify(snap.body)).toBe(401);
      expect(snap.body).toMatchObject({ code: "auth.unknown_key", status: 401 });
      for (const s of handles) expect(await s.accountSnapshots(acc.id, { limit: 10 })).toEqual([]);

      // The admin API found the account; it is erased before the session or link is stored.
      for (const [method, path] of [
        ["createSession", "sessions"],
        ["createSignInLink", "sign-in-links"],
      ] as const) {
        const other = await newAccount(`Racing ${method}`);
        const racer = createApp({
          config,
          adminToken: ADMIN,
          storage: racing(handles[0], method, async () => {
            expect((await admin(b, "DELETE", `/accounts/${other.id}`)).status).toBe(200);
          }),
        });
        const r = await admin(racer, "POST", `/accounts/${other.id}/${path}`);
        expect(r.status, JSON.stringify(r.body)).toBe(404);
        expect(r.body.code).toBe("not_found");
        for (const s of handles) expect(await s.accountSessions(other.id)).toEqual([]);
      }
    });

    it("a decline that arrives after the erasure records the outcome without the decline reason; the erasure is never dated before the last invoice", async () => {
      const acc = await newAccount("Declined Co");
      expect((await admin(a, "PATCH", `/accounts/${acc.id}`, { limits: { monthly_quota: 1 }, billing: { customer_ref: "cus_y", payment_method_ref: "pm_y" } })).status).toBe(200);
      const key = await newKey(acc.session, "live");
      expect((await call(a, "GET", PERCENTILE, key, undefined, {}, LIVE)).status).toBe(200);
      expect((await call(a, "GET", PERCENTILE, key, undefined, {}, LIVE)).status).toBe(402);
      const [pending] = await handles[1].listInvoices(acc.id);
      expect(pending?.status).toBe("pending");
      // The erasing instance's clock runs 10 minutes behind the one that wrote the invoice.
      const behind: Clock = { now: () => Date.now() - 600_000 };
      const lagging = createApp({ config, adminToken: ADMIN, storage: handles[1], clock: behind });
      let erasedAt = "";
      const processor: PaymentProcessor = {
        async charge(request) {
          // The processor answers after the account was erased (the charge was claimed before).
          const r = await admin(lagging, "DELETE", `/accounts/${request.accountId}`);
          expect(r.status).toBe(200);
          erasedAt = r.body.deleted_at;
          return { status: "failed", processorRef: "pi_late", reason: "insufficient_funds" };
        },
      };
      const worker = createBillingWorker({ storage: handles[0], clock: systemClock, random: cryptoRandom, processor, config });
      await worker.tick();
      const [after] = await handles[1].listInvoices(acc.id);
      expect(after).toMatchObject({ id: pending!.id, status: "failed", processorRef: "pi_late", failureReason: null });
      expect(Date.parse(erasedAt)).toBeGreaterThanOrEqual(pending!.createdAt);
      const tomb = (await admin(a, "GET", "/accounts?status=deleted&limit=100")).body.data.find((x: { account_id: string }) => x.account_id === acc.id);
      expect(tomb.deleted_at).toBe(erasedAt);
    });

    it("a control character in the search, an impossible date or a malformed account id is 422 {detail, code, status}, never a store's error", async () => {
      await newAccount("Searchable Co");
      const bad: [string, string][] = [
        ["/accounts?q=a%00b", "q"],
        ["/accounts?q=%1B%5B31m", "q"],
        ["/accounts?q=tab%09ed", "q"],
        ["/accounts?q=%C2%85", "q"],
        ["/accounts?created_after=2026-02-30T00:00:00Z", "created_after"],
        ["/accounts?created_before=2026-04-31T12:00:00Z", "created_before"],
        ["/accounts?created_after=2026-11-01T24:00:00Z", "created_after"],
        ["/accounts?created_before=2025-02-29T00:00:00Z", "created_before"],
        ["/accounts/acc_a%00b/export", "account_id"],
        ["/accounts/acc_%20x", "account_id"],
        ["/accounts/acc_%E2%80%AEx/export", "account_id"],
        ["/accounts/not-an-id", "account_id"],
      ];
      for (const [path, name] of bad) {
        for (const method of path.includes("?") || path.endsWith("/export") ? ["GET"] : ["GET", "DELETE"]) {
          const r = await admin(a, method, path);
          expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(422);
          expect(r.body).toMatchObject({ code: "validation.invalid_parameter", status: 422 });
          expect(r.body.detail).toContain(`\`${name}\``);
        }
      }
      // Real dates (a leap day) and well-formed unknown ids are answered as before.
      expect((await admin(a, "GET", "/accounts?created_after=2028-02-29T23:59:59Z")).status).toBe(200);
      expect((await admin(a, "GET", "/accounts/acc_missing/export")).status).toBe(404);
    });

    it("two erasures at once on two instances: neither answers before nothing of the history is left", async () => {
      const acc = await newAccount("Twice Co");
      const t = Date.now();
      for (let i = 0; i < 2600; i++) {
        await handles[0].emitEvent(quotaWarningEvent(`evt_two${String(i).padStart(24, "0")}`, acc.id, t + i, { used: i, allowance: 10, threshold: 8, periodStart: t, periodEnd: t + 1 }), t + i);
      }
      const leftWhenAnswered: number[] = [];
      const erase = (app: App) =>
        admin(app, "DELETE", `/accounts/${acc.id}`).then(async (r) => {
          leftWhenAnswered.push((await handles[0].accountEvents(acc.id, { limit: 10 })).length);
          return r;
        });
      const answers = await Promise.all([erase(a), erase(b)]);
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      expect(answers.map((r) => r.body.erasure.status)).toEqual(["erased", "erased"]);
      expect(answers.filter((r) => r.body.erasure.erased_now)).toHaveLength(1);
      expect(leftWhenAnswered).toEqual([0, 0]);
      // (The memory store deletes the history in the erasure's own step: nothing is left to purge.)
      expect(answers[0]!.body.erasure.purged + answers[1]!.body.erasure.purged).toBe(name === "memory" ? 0 : 2600);
    });

    it("an erasure whose purge the database failed answers 503; the pruning worker on the other instance finishes it, /metrics counts it, and never visits it again", async () => {
      const acc = await newAccount("Interrupted Co");
      const t = Date.now();
      for (let i = 0; i < 1500; i++) {
        await handles[0].emitEvent(quotaWarningEvent(`evt_cut${String(i).padStart(23, "0")}`, acc.id, t + i, { used: i, allowance: 10, threshold: 8, periodStart: t, periodEnd: t + 1 }), t + i);
      }
      const history = (await handles[1].accountEvents(acc.id, { limit: 10_000 })).length;
      expect(history).toBeGreaterThanOrEqual(1500);
      // The erasure's atomic step commits; the database fails at its first purge step.
      const failing = new Proxy(handles[0], {
        get(target, prop) {
          if (prop === "purgeAccount") return async () => Promise.reject(new StorageUnavailableError(Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })));
          const value = Reflect.get(target, prop) as unknown;
          return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      const cut = await admin(createApp({ config, adminToken: ADMIN, storage: failing }), "DELETE", `/accounts/${acc.id}`);
      expect(cut.status, JSON.stringify(cut.body)).toBe(503);
      expect((await admin(a, "GET", `/accounts/${acc.id}`)).status).toBe(404);
      // The memory store deletes the history in the erasure's own step; the SQL stores have all of it left.
      expect((await handles[1].accountEvents(acc.id, { limit: 10_000 })).length).toBe(name === "memory" ? 0 : history);
      expect(await handles[1].unfinishedErasures({ limit: 100 })).toEqual([acc.id]);

      // Nobody deletes the account again: the other instance's pruning worker finishes the erasure.
      const token = "metrics-token-for-erasure-tests-0123456";
      const registry = createMetricsRegistry();
      const pruningApp = createApp({ config: defineConfig({ ...config, metrics: { token } }), adminToken: ADMIN, storage: handles[1], metrics: registry });
      const purgedBy: string[] = [];
      const storage: PruneWorkerStore = {
        prune: (input) => handles[1].prune(input),
        unfinishedErasures: (input) => handles[1].unfinishedErasures(input),
        purgeAccount: (input) => {
          purgedBy.push(input.accountId);
          return handles[1].purgeAccount(input);
        },
      };
      const worker = createPruneWorker({ storage, clock: systemClock, config, metrics: registry, pauseMs: 0 });
      const report = await worker.tick();
      expect(report).toMatchObject({ failed: false, erasures: { finished: 1, purged: name === "memory" ? 0 : history } });
      for (const h of handles) expect(await h.accountEvents(acc.id, { limit: 10 })).toEqual([]);
      expect(await handles[0].unfinishedErasures({ limit: 100 })).toEqual([]);
      const scrape = await (await pruningApp.fetch(new Request(`${SANDBOX}/metrics`, { headers: { authorization: `Bearer ${token}` } }))).text();
      expect(scrape).toContain(`benchdata_retention_pruned_rows_total{table="erased_history"} ${report.erasures.purged}\n`);
      expect(scrape).toContain("benchdata_retention_erasures_finished_total 1\n");

      purgedBy.length = 0;
      expect((await worker.tick()).erasures).toEqual({ finished: 0, purged: 0 });
      expect(purgedBy).toEqual([]);
      // Deleting it now answers as for any finished erasure.
      const again = await admin(b, "DELETE", `/accounts/${acc.id}`);
      expect(again.body.erasure).toEqual({ status: "erased", erased_now: false, purged: 0 });
    });

    it("a charge not yet made when the account is erased is never made; its invoice stays, failed as account_deleted", async () => {
      const acc = await newAccount("Unpaid Co");
      expect((await admin(a, "PATCH", `/accounts/${acc.id}`, { limits: { monthly_quota: 2 }, billing: { customer_ref: "cus_x", payment_method_ref: "pm_x" } })).status).toBe(200);
      const key = await newKey(acc.session, "live");
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(a, "GET", PERCENTILE, key, undefined, {}, LIVE)).status);
      expect(statuses).toEqual([200, 200, 402]);
      expect((await handles[1].listInvoices(acc.id)).map((i) => i.status)).toEqual(["pending"]);

      expect((await admin(a, "DELETE", `/accounts/${acc.id}`)).status).toBe(200);
      const charged: PaymentRequest[] = [];
      const simulated = simulatedProcessor({ outcome: "succeed" });
      const processor: PaymentProcessor = {
        charge(request) {
          charged.push(request);
          return simulated.charge(request);
        },
      };
      const worker = createBillingWorker({ storage: handles[1], clock: systemClock, random: cryptoRandom, processor, config });
      await worker.tick();
      await worker.tick();
      expect(charged.filter((c) => c.accountId === acc.id)).toEqual([]);
      expect((await handles[0].listInvoices(acc.id)).map((i) => [i.status, i.failureReason, i.amount])).toEqual([["failed", "account_deleted", 20000]]);
    });

    it("the delivery worker sends nothing of an erased account, pending or due later", async () => {
      const acc = await newAccount("Hooked Co");
      const hook = await call(a, "POST", "/api/v1/console/webhooks", acc.session, { url: "https://hooks.example.com/in", events: ["key.created"] });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      await newKey(acc.session);
      await newKey(acc.session);
      expect((await admin(b, "DELETE", `/accounts/${acc.id}`)).status).toBe(200);
      const sent: WebhookRequest[] = [];
      const worker = createDeliveryWorker({
        storage: handles[0],
        clock: systemClock,
        config,
        resolve: async () => ["93.184.216.34"],
        transport: {
          async send(req) {
            sent.push(req);
            return { status: 200, body: "ok" };
          },
        },
      });
      await worker.tick();
      await worker.tick();
      expect(sent.filter((r) => JSON.parse(r.body).account_id === acc.id)).toEqual([]);
      expect(await handles[1].accountDeliveries(acc.id, { limit: 10 })).toEqual([]);
    });

    it("the export holds each webhook's health and secret overlap (failing since, dead deliveries in a row, the previous secret's expiry), never a secret", async () => {
      const acc = await newAccount("Health Co");
      const failing = await call(a, "POST", "/api/v1/console/webhooks", acc.session, { url: "https://down.example.com/in", events: ["key.created"] });
      const rotated = await call(a, "POST", "/api/v1/console/webhooks", acc.session, { url: "https://up.example.com/in", events: ["quota.warning"] });
      expect([failing.status, rotated.status]).toEqual([201, 201]);
      const rotation = await call(a, "POST", `/api/v1/console/webhooks/${rotated.body.webhook_id}/rotate-secret`, acc.session);
      expect(rotation.status, JSON.stringify(rotation.body)).toBe(200);
      await newKey(acc.session);
      // The key.created delivery fails at every attempt (0 s, 30 s, 300 s), then is dead.
      let at = Date.now();
      const first = at;
      const worker = createDeliveryWorker({
        storage: handles[0],
        clock: { now: () => at },
        config,
        resolve: async () => ["93.184.216.34"],
        transport: { send: async () => ({ status: 500, body: "down" }) },
      });
      for (const step of [0, 30_000, 300_000]) {
        at += step;
        await worker.tick();
      }
      const [delivery] = await handles[1].listDeliveries(acc.id, failing.body.webhook_id, 10);
      expect(delivery).toMatchObject({ status: "dead" });
      const doc = (await admin(b, "GET", `/accounts/${acc.id}/export`)).body;
      const byId = new Map(doc.webhooks.map((w: { webhook_id: string }) => [w.webhook_id, w]));
      expect(byId.get(failing.body.webhook_id)).toMatchObject({ status: "active", failing_since: new Date(first).toISOString(), dead_streak: 1, previous_secret_expires_at: null });
      expect(byId.get(rotated.body.webhook_id)).toMatchObject({ failing_since: null, dead_streak: 0, previous_secret_expires_at: rotation.body.previous_secret_expires_at });
      const text = JSON.stringify(doc);
      for (const secret of [rotated.body.signing_secret, rotation.body.signing_secret, failing.body.signing_secret]) expect(text).not.toContain(secret);
    });

    it("export on one instance, erasure on the other: the document holds the account's pages (over the page size); afterwards nothing of it is left but the tombstone and its invoices", async () => {
      const acc = await newAccount("Big Co");
      await newKey(acc.session);
      const hook = await call(a, "POST", "/api/v1/console/webhooks", acc.session, { url: "https://hooks.example.com/in", events: ["quota.warning"] });
      expect(hook.status).toBe(201);
      const t = Date.now();
      for (let i = 0; i < 620; i++) {
        await handles[0].emitEvent(quotaWarningEvent(`evt_big${String(i).padStart(23, "0")}`, acc.id, t + i, { used: i, allowance: 10, threshold: 8, periodStart: t, periodEnd: t + 1 }), t + i);
      }
      const r = await a.fetch(new Request(`${SANDBOX}/api/v1/admin/accounts/${acc.id}/export`, { headers: { authorization: `Bearer ${ADMIN}` } }));
      expect(r.status).toBe(200);
      const doc = JSON.parse(await r.text());
      expect(doc.format).toBe("benchdata.account-export/1");
      expect(doc.events).toHaveLength(621);
      expect(doc.deliveries).toHaveLength(620);
      expect(doc.keys).toHaveLength(1);

      expect((await admin(b, "DELETE", `/accounts/${acc.id}`)).status).toBe(200);
      for (const s of handles) {
        expect(await s.accountEvents(acc.id, { limit: 10 })).toEqual([]);
        expect(await s.accountDeliveries(acc.id, { limit: 10 })).toEqual([]);
        expect(await s.listKeys(acc.id)).toEqual([]);
      }
      expect((await admin(a, "GET", `/accounts/${acc.id}/export`)).status).toBe(404);
    });
  });
}
