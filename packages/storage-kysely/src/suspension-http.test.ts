/**
 * Suspending an account (issue 13), through the real HTTP API, with TWO app instances over one store (two
 * connections to one SQLite file or one PostgreSQL database; two apps over one memory store): the operator
 * suspends through one instance and the other refuses the account's keys at its very next request although it
 * remembers them; console and sign-in are refused; webhooks and charges wait, nothing is deleted, and resuming
 * (through either instance) restores it all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogFields, PaymentProcessor, PaymentRequest, Storage, WebhookRequest } from "@benchdata/core";
import { createBillingWorker, createDeliveryWorker, cryptoRandom, defineConfig, simulatedProcessor, systemClock } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import type { JsonReply } from "./test-support/json-call.ts";
import { jsonCall } from "./test-support/json-call.ts";
import { twoHandleStores } from "./test-support/two-handle-stores.ts";
import { BENCH, LIVE, PERCENTILE, SANDBOX, twoApps } from "./test-support/two-apps.ts";

const ADMIN = "admin-token-for-suspension-tests-0123456789";

/** Each store kind opens two handles on one store. */
const stores = await twoHandleStores("suspension-http");

type App = ReturnType<typeof createApp>;

for (const [name, open] of Object.entries(stores)) {
  describe(`suspended accounts across two instances: ${name}`, () => {
    let handles: [Storage, Storage];
    let a: App;
    let b: App;
    let close: () => Promise<void>;
    const logged: { message: string; fields: LogFields | undefined }[] = [];
    const config = defineConfig({ target: "host", webhooks: { retryDelaysSeconds: [0, 30, 300] } });
    beforeAll(async () => {
      const logger = { info: (message: string, fields?: LogFields) => logged.push({ message, fields }), warn: (message: string, fields?: LogFields) => logged.push({ message, fields }), error: () => {} };
      ({ handles, a, b, close } = await twoApps(open, { config, adminToken: ADMIN, logger }));
    });
    afterAll(() => close());

    const call = (app: App, method: string, path: string, auth: string | null, body?: unknown, extra: Record<string, string> = {}, base = SANDBOX): Promise<JsonReply> =>
      jsonCall(app, method, `${base}${path}`, auth, body, extra);
    const admin = (app: App, method: string, path: string, body?: unknown) => call(app, method, `/api/v1/admin${path}`, ADMIN, body);
    const newAccount = async (tier: string): Promise<{ id: string; session: string }> => {
      const acc = await admin(a, "POST", "/accounts", { name: `Suspension ${tier}`, tier });
      expect(acc.status, JSON.stringify(acc.body)).toBe(201);
      return { id: acc.body.account_id, session: acc.body.session_token };
    };
    const newKey = async (session: string, environment = "test"): Promise<{ raw: string; id: string }> => {
      const k = await call(a, "POST", "/api/v1/console/keys", session, { name: "k", environment, scopes: ["benchmarks:read"] });
      expect(k.status, JSON.stringify(k.body)).toBe(201);
      return { raw: k.body.raw_key, id: k.body.key_id };
    };
    const signIn = (app: App, token: string) => call(app, "POST", "/api/v1/console/sign-in", null, { token }, { "x-benchdata-console": "1" });

    it("suspension: every key is refused at once on the other instance, even one it remembers; console and sign-in are refused; resuming restores it all", async () => {
      const acc = await newAccount("startup");
      const k1 = await newKey(acc.session);
      const k2 = await newKey(acc.session);
      const gone = await newKey(acc.session);
      expect((await call(a, "POST", `/api/v1/console/keys/${gone.id}/revoke`, acc.session)).status).toBe(200);
      // Both instances know both keys: their lookups are remembered.
      for (const app of [a, b]) for (const k of [k1, k2]) expect((await call(app, "GET", BENCH, k.raw)).status).toBe(200);
      const link = await admin(a, "POST", `/accounts/${acc.id}/sign-in-links`);
      expect(link.status).toBe(201);
      const linkToken = String(link.body.sign_in_path).split("#sign-in=")[1]!;

      const suspended = await admin(b, "POST", `/accounts/${acc.id}/suspend`, { reason: "  chargeback review  " });
      expect(suspended.status, JSON.stringify(suspended.body)).toBe(200);
      expect(suspended.body).toMatchObject({ account_id: acc.id, status: "suspended", suspended_reason: "chargeback review" });
      expect(Date.parse(suspended.body.suspended_at)).not.toBeNaN();

      // Instance A remembered both keys a moment ago; its very next requests are refused, with a clear code.
      for (const app of [a, b]) {
        for (const k of [k1, k2]) {
          const r = await call(app, "GET", BENCH, k.raw);
          expect(r.status).toBe(403);
          expect(r.body.code).toBe("account.suspended");
          expect(r.body.detail).toContain("suspended");
          expect(r.body.detail).not.toContain("chargeback");
        }
      }
      // A revoked key is still just revoked (its own refusal comes first).
      expect((await call(a, "GET", BENCH, gone.raw)).body.code).toBe("auth.inactive_key");
      // The console is refused on both, so no new key can be made; so is signing in, by session or by link.
      for (const app of [a, b]) {
        expect((await call(app, "GET", "/api/v1/console/keys", acc.session)).body.code).toBe("account.suspended");
        const made = await call(app, "POST", "/api/v1/console/keys", acc.session, { name: "new", environment: "test", scopes: ["benchmarks:read"] });
        expect(made.status).toBe(403);
        expect(made.body.code).toBe("account.suspended");
        const bySession = await signIn(app, acc.session);
        expect(bySession.status).toBe(403);
        expect(bySession.body.code).toBe("account.suspended");
      }
      const byLink = await signIn(b, linkToken);
      expect(byLink.status).toBe(403);
      expect(byLink.body.code).toBe("account.suspended");
      // The operator sees it (and suspending again keeps the first reason).
      expect((await admin(a, "GET", `/accounts/${acc.id}`)).body).toMatchObject({ status: "suspended", suspended_reason: "chargeback review" });
      expect((await admin(a, "POST", `/accounts/${acc.id}/suspend`, { reason: "other" })).body).toMatchObject({ status: "suspended", suspended_reason: "chargeback review" });
      const line = logged.find((l) => l.message.startsWith("account suspended by the operator") && l.fields?.account_id === acc.id);
      expect(line?.fields).toMatchObject({ reason: "chargeback review" });

      // Resuming through A: both instances admit the keys again (B remembered the suspended lookup).
      const resumed = await admin(a, "POST", `/accounts/${acc.id}/resume`);
      expect(resumed.status).toBe(200);
      expect(resumed.body).toMatchObject({ status: "active", suspended_at: null, suspended_reason: null });
      for (const app of [b, a]) for (const k of [k1, k2]) expect((await call(app, "GET", BENCH, k.raw)).status).toBe(200);
      expect((await call(b, "GET", BENCH, gone.raw)).body.code).toBe("auth.inactive_key");
      // Nothing was deleted: the same keys, the same session; the link was used up by the refused sign-in.
      const keys = await call(b, "GET", "/api/v1/console/keys", acc.session);
      expect(keys.status).toBe(200);
      expect(keys.body.data.map((k: { key_id: string; is_active: boolean }) => [k.key_id, k.is_active]).sort()).toEqual(
        [
          [k1.id, true],
          [k2.id, true],
          [gone.id, false],
        ].sort(),
      );
      expect((await signIn(a, acc.session)).status).toBe(200);
      expect((await signIn(a, linkToken)).body.code).toBe("console.invalid_sign_in");
      expect(logged.some((l) => l.message === "account resumed by the operator" && l.fields?.account_id === acc.id)).toBe(true);
    });

    it("suspend and resume: an unknown account is 404, a bad reason 422, an empty body is no reason, and the admin token is required", async () => {
      expect((await admin(a, "POST", "/accounts/acc_missing/suspend")).body.code).toBe("not_found");
      expect((await admin(a, "POST", "/accounts/acc_missing/resume")).status).toBe(404);
      const acc = await newAccount("developer");
      for (const body of [{ reason: "" }, { reason: "x".repeat(501) }, { reason: 5 }, { why: "x" }]) {
        const r = await admin(b, "POST", `/accounts/${acc.id}/suspend`, body);
        expect(r.status, JSON.stringify(body)).toBe(422);
        expect(r.body.code).toBe("validation.invalid_body");
      }
      expect((await call(a, "POST", `/api/v1/admin/accounts/${acc.id}/suspend`, "not-the-admin-token")).status).toBe(401);
      // Still active after all that.
      expect((await admin(a, "GET", `/accounts/${acc.id}`)).body.status).toBe("active");
      // No body at all, or an empty JSON one: suspended without a reason.
      const bare = await a.fetch(new Request(`${SANDBOX}/api/v1/admin/accounts/${acc.id}/suspend`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}` } }));
      expect(bare.status).toBe(200);
      expect(await bare.json()).toMatchObject({ status: "suspended", suspended_reason: null });
      expect((await admin(b, "POST", `/accounts/${acc.id}/resume`)).body.status).toBe("active");
      const empty = await a.fetch(
        new Request(`${SANDBOX}/api/v1/admin/accounts/${acc.id}/suspend`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: "" }),
      );
      expect(empty.status).toBe(200);
      const text = await a.fetch(
        new Request(`${SANDBOX}/api/v1/admin/accounts/${acc.id}/suspend`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "text/plain" }, body: "why" }),
      );
      expect(text.status).toBe(415);
    });

    it("webhooks pause: nothing is sent while suspended, nothing dies; resuming sends what waited, account.suspended then account.resumed", async () => {
      const acc = await newAccount("startup");
      const hook = await call(a, "POST", "/api/v1/console/webhooks", acc.session, { url: "https://hooks.example.com/in", events: ["key.created", "account.suspended", "account.resumed"] });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      const sent: WebhookRequest[] = [];
      // The worker runs on the other instance's store handle.
      const worker = createDeliveryWorker({
        storage: handles[1],
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
      const mine = () => sent.filter((r) => JSON.parse(r.body).account_id === acc.id).map((r) => r.headers["X-Service-Event-Type"] ?? r.headers["x-service-event-type"]);
      await newKey(acc.session);
      await worker.tick();
      expect(mine()).toEqual(["key.created"]);

      expect((await admin(a, "POST", `/accounts/${acc.id}/suspend`)).status).toBe(200);
      await worker.tick();
      await worker.tick();
      expect(mine()).toEqual(["key.created"]);
      const waiting = await handles[0].listDeliveries(acc.id, hook.body.webhook_id, 10);
      expect(waiting.map((d) => [d.eventType, d.status])).toEqual([
        ["account.suspended", "pending"],
        ["key.created", "succeeded"],
      ]);

      expect((await admin(b, "POST", `/accounts/${acc.id}/resume`)).status).toBe(200);
      // Ordered delivery (the default): one per tick, account.suspended before account.resumed.
      expect(await worker.tick()).toBe(1);
      expect(await worker.tick()).toBe(1);
      expect(mine()).toEqual(["key.created", "account.suspended", "account.resumed"]);
      const deliveries = await call(a, "GET", `/api/v1/console/webhooks/${hook.body.webhook_id}/deliveries`, acc.session);
      expect(deliveries.status).toBe(200);
      expect(deliveries.body.data.map((d: { status: string; attempts: unknown[] }) => [d.status, d.attempts.length])).toEqual([
        ["succeeded", 1],
        ["succeeded", 1],
        ["succeeded", 1],
      ]);
      const resumedBody = JSON.parse(sent.at(-1)!.body);
      expect(resumedBody).toMatchObject({ type: "account.resumed", account_id: acc.id });
      expect(Date.parse(resumedBody.data.resumed_at)).toBeGreaterThanOrEqual(Date.parse(resumedBody.data.suspended_at));
    });

    it("billing pauses: a suspended account's pending charge is not sent to the processor; resuming charges it and access resumes", async () => {
      const acc = await newAccount("growth");
      expect((await admin(a, "PATCH", `/accounts/${acc.id}`, { limits: { monthly_quota: 2 } })).status).toBe(200);
      const key = await newKey(acc.session, "live");
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(a, "GET", PERCENTILE, key.raw, undefined, {}, LIVE)).status);
      expect(statuses).toEqual([200, 200, 402]);
      const charged: PaymentRequest[] = [];
      const simulated = simulatedProcessor({ outcome: "succeed" });
      const processor: PaymentProcessor = {
        charge(request) {
          charged.push(request);
          return simulated.charge(request);
        },
      };
      const worker = createBillingWorker({ storage: handles[1], clock: systemClock, random: cryptoRandom, processor, config });

      expect((await admin(b, "POST", `/accounts/${acc.id}/suspend`, { reason: "unpaid" })).status).toBe(200);
      await worker.tick();
      await worker.tick();
      expect(charged.filter((c) => c.accountId === acc.id)).toEqual([]);
      expect((await handles[0].listInvoices(acc.id)).map((i) => i.status)).toEqual(["pending"]);

      expect((await admin(a, "POST", `/accounts/${acc.id}/resume`)).status).toBe(200);
      await worker.tick();
      expect(charged.filter((c) => c.accountId === acc.id)).toHaveLength(1);
      expect((await handles[0].listInvoices(acc.id)).map((i) => i.status)).toEqual(["paid"]);
      expect((await call(b, "GET", PERCENTILE, key.raw, undefined, {}, LIVE)).status).toBe(200);
    });
  });
}
