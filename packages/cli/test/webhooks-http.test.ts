/**
 * Webhooks through the real HTTP API on every store, delivered by the real worker over node:http to real
 * local receivers (issue 17; issue 13 "signing secrets in plain text"): secrets sealed at rest, receivers
 * steering delivery, disabling, recovery, ordering and secret rotation.
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verify as octokitVerify } from "@octokit/webhooks-methods";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { SecretBox, Storage } from "@benchdata/core";
import { createDeliveryWorker, createMemoryStorage, createSecretBox, cryptoRandom, defineConfig, manualClock, newId, parseSecretKeys, quotaWarningEvent, resealWebhookSecrets } from "@benchdata/core";
import type { DeepPartial, ServiceConfig } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { openStorage } from "@benchdata/storage-kysely";
import { nodeResolve, nodeTransport } from "@benchdata/adapter-node";
import { pgAvailable, tempDatabase } from "./helpers.ts";

const ADMIN = "admin-token-for-webhook-tests-0123456789";
const BASE = "http://api.benchdata.test";
const T0 = Date.parse("2026-11-10T12:00:00.000Z");
const KEY1 = `k1:${Buffer.alloc(32, 1).toString("base64")}`;
const KEY2 = `k2:${Buffer.alloc(32, 2).toString("base64")}`;

const pgOn = await pgAvailable();
const drops: (() => Promise<void>)[] = [];
const stores: Record<string, () => Promise<Storage>> = {
  memory: async () => createMemoryStorage(),
  sqlite: async () => openStorage(`sqlite::memory:`, { clock: "app" }),
};
if (pgOn) {
  stores.postgres = async () => {
    const t = await tempDatabase("benchdata_hooks");
    drops.push(t.drop);
    return openStorage(t.url, { clock: "app" });
  };
}
afterAll(async () => {
  for (const d of drops) await d();
});

/** One request a receiver got. */
interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real receiver on loopback: answers each request with `answer` (default 200) and records it. */
async function receiver(answer: (r: Received, n: number) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 })): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      got.push(r);
      const a = answer(r, got.length);
      res.writeHead(a.status, a.headers ?? {});
      res.end("ok");
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, got, close: () => new Promise((done) => server.close(() => done())) };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Res = { status: number; body: any };

for (const [name, open] of Object.entries(stores)) {
  describe(`webhooks through HTTP to real receivers: ${name}`, () => {
    let storage: Storage;
    const clock = manualClock(T0);
    const config: ServiceConfig = defineConfig({ webhooks: { allowHttp: true, allowPrivateNetworks: true, timeoutSeconds: 5 } } as DeepPartial<ServiceConfig>);
    let box: SecretBox;
    let app: ReturnType<typeof createApp>;
    const transport = nodeTransport();
    beforeAll(async () => {
      storage = await open();
      await storage.migrate();
      box = await createSecretBox(parseSecretKeys(KEY1), cryptoRandom);
      app = createApp({ storage, clock, config, adminToken: ADMIN, webhooks: { secretBox: box } });
    });
    afterAll(async () => {
      transport.close();
      await storage.close();
    });

    const call = async (method: string, path: string, auth: string, body?: unknown): Promise<Res> => {
      const headers: Record<string, string> = { authorization: `Bearer ${auth}` };
      if (body !== undefined) headers["content-type"] = "application/json";
      const r = await app.fetch(new Request(`${BASE}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
      const text = await r.text();
      return { status: r.status, body: text === "" ? null : JSON.parse(text) };
    };
    const account = async (): Promise<{ id: string; session: string }> => {
      const a = await call("POST", "/api/v1/admin/accounts", ADMIN, { name: "Hooks", tier: "growth" });
      expect(a.status).toBe(201);
      return { id: a.body.account_id, session: a.body.session_token };
    };
    const console_ = (session: string) => (method: string, path: string, body?: unknown) => call(method, `/api/v1/console${path}`, session, body);
    const worker = (over: { secretBox?: SecretBox; config?: ServiceConfig } = {}) =>
      createDeliveryWorker({ storage, clock, transport, resolve: nodeResolve, config: over.config ?? config, secretBox: over.secretBox ?? box });
    /** Creates a key (a `key.created` event), so each webhook subscribed to it gets a delivery. */
    const keyEvent = async (c: ReturnType<typeof console_>, n = 1): Promise<void> => {
      for (let i = 0; i < n; i++) expect((await c("POST", "/keys", { name: `k${i}`, environment: "test", scopes: ["benchmarks:read"] })).status).toBe(201);
    };

    it("a signing secret is stored sealed (AES-GCM under the operator key), never as given; deliveries are still signed with it", async () => {
      const a = await account();
      const c = console_(a.session);
      const rx = await receiver();
      try {
        const created = await c("POST", "/webhooks", { url: rx.url, events: ["key.created"] });
        expect(created.status).toBe(201);
        const secret: string = created.body.signing_secret;
        expect(secret).toMatch(/^whsec_/);
        const stored = (await storage.listWebhookSecrets()).find((s) => s.webhookId === created.body.webhook_id)!;
        expect(stored.secret).toMatch(/^aesgcm1:k1:/);
        expect(stored.secret).not.toContain(secret.slice(6));
        // The stored value bound to this webhook: on another webhook's row it does not open.
        await expect(box.open("wh_other", stored.secret)).rejects.toThrow(/does not open/);
        // Without the operator key the stored value cannot sign anything.
        const other = await createSecretBox(parseSecretKeys(KEY2), cryptoRandom);
        await expect(other.open(created.body.webhook_id, stored.secret)).rejects.toThrow(/not configured/);

        await keyEvent(c);
        expect(await worker().tick()).toBe(1);
        expect(rx.got).toHaveLength(1);
        const r = rx.got[0]!;
        expect(await octokitVerify(secret, r.body, String(r.headers["x-service-signature"]))).toBe(true);
        expect((await c("GET", `/webhooks/${created.body.webhook_id}/deliveries`)).body.data[0]).toMatchObject({ status: "succeeded" });
      } finally {
        await rx.close();
      }
    });

    it("a secret stored in plain text before encryption at rest is sealed by a re-seal, and a new operator key re-seals everything; both keep signing", async () => {
      const a = await account();
      const c = console_(a.session);
      const rx = await receiver();
      try {
        // A row as an older version wrote it.
        const legacy = `wh_legacy${Math.random().toString(36).slice(2, 10)}`;
        const legacySecret = "whsec_" + Buffer.alloc(24, 9).toString("base64");
        expect(await storage.createWebhook({ id: legacy, accountId: a.id, url: rx.url, events: ["key.created"], secret: legacySecret, createdAt: T0 }, 10)).toBe("created");
        const report = await resealWebhookSecrets(storage, box, { onlyPlaintext: true });
        expect(report.resealed).toBeGreaterThanOrEqual(1);
        expect(report.failed).toBe(0);
        const sealed = (await storage.listWebhookSecrets()).find((s) => s.webhookId === legacy)!.secret;
        expect(sealed).toMatch(/^aesgcm1:k1:/);

        // The operator adds k2 first and keeps k1 to open: the re-seal moves every row to k2.
        const rotated = await createSecretBox(parseSecretKeys(`${KEY2},${KEY1}`), cryptoRandom);
        const again = await resealWebhookSecrets(storage, rotated);
        expect(again.failed).toBe(0);
        expect((await storage.listWebhookSecrets()).every((s) => s.secret.startsWith("aesgcm1:k2:"))).toBe(true);
        // k1 alone no longer opens anything; k2 alone opens everything.
        const onlyK2 = await createSecretBox(parseSecretKeys(KEY2), cryptoRandom);
        await keyEvent(c);
        expect(await worker({ secretBox: onlyK2 }).tick()).toBeGreaterThanOrEqual(1);
        expect(rx.got).toHaveLength(1);
        expect(await octokitVerify(legacySecret, rx.got[0]!.body, String(rx.got[0]!.headers["x-service-signature"]))).toBe(true);
        // Put k1 back as current for the tests that follow.
        expect((await resealWebhookSecrets(storage, await createSecretBox(parseSecretKeys(`${KEY1},${KEY2}`), cryptoRandom))).failed).toBe(0);
      } finally {
        await rx.close();
      }
    });

    /** A webhook to `url` for `events`, created through the API. */
    const hook = async (c: ReturnType<typeof console_>, url: string, events: string[]): Promise<string> => {
      const r = await c("POST", "/webhooks", { url, events });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.webhook_id;
    };
    const deliveries = async (c: ReturnType<typeof console_>, id: string) => (await c("GET", `/webhooks/${id}/deliveries?limit=100`)).body.data as any[];
    const one = (cfg: DeepPartial<ServiceConfig>) => defineConfig({ webhooks: { allowHttp: true, allowPrivateNetworks: true, timeoutSeconds: 5, ...cfg.webhooks } } as DeepPartial<ServiceConfig>);

    it("410 Gone disables the webhook at once: no further attempts, its waiting deliveries dead with the reason, webhook.disabled to the account's other webhooks; enable brings it back", async () => {
      const a = await account();
      const c = console_(a.session);
      const gone = await receiver(() => ({ status: 410 }));
      const other = await receiver();
      try {
        const goneId = await hook(c, gone.url, ["key.created"]);
        const otherId = await hook(c, other.url, ["webhook.disabled"]);
        await keyEvent(c, 3);
        const w = worker({ config: one({ webhooks: { concurrencyPerWebhook: 1 } }) });
        for (let i = 0; i < 4; i++) await w.tick();
        expect(gone.got).toHaveLength(1);
        const listed = (await c("GET", "/webhooks")).body.data.find((x: any) => x.webhook_id === goneId);
        expect(listed).toMatchObject({ status: "disabled", disabled_reason: "gone", disabled_at: new Date(clock.now()).toISOString() });
        const ds = await deliveries(c, goneId);
        expect(ds.map((d) => [d.status, d.dead_reason, d.attempt_count]).sort()).toEqual([
          ["dead", "gone", 1],
          ["dead", "webhook_disabled", 0],
          ["dead", "webhook_disabled", 0],
        ]);
        expect(ds.find((d) => d.dead_reason === "gone").attempts[0]).toMatchObject({ status_code: 410, error: "http_status" });
        // The account's other webhook hears of it, signed like any event.
        expect(other.got).toHaveLength(1);
        const told = JSON.parse(other.got[0]!.body);
        expect(told).toMatchObject({ type: "webhook.disabled", account_id: a.id, data: { webhook_id: goneId, url: gone.url, reason: "gone", disabled_at: listed.disabled_at } });
        // While disabled: new events make no deliveries for it, and nothing is sent.
        await keyEvent(c);
        await w.tick();
        expect(await deliveries(c, goneId)).toHaveLength(3);
        expect(gone.got).toHaveLength(1);

        const enabled = await c("POST", `/webhooks/${goneId}/enable`);
        expect(enabled.status).toBe(200);
        expect(enabled.body).toMatchObject({ webhook_id: goneId, status: "active", disabled_reason: null, disabled_at: null });
        await keyEvent(c);
        expect((await deliveries(c, goneId)).filter((d) => d.status === "pending")).toHaveLength(1);
        expect((await c("POST", `/webhooks/wh_nope/enable`)).status).toBe(404);
        // Another account cannot enable it.
        const b = await account();
        expect((await console_(b.session)("POST", `/webhooks/${goneId}/enable`)).status).toBe(404);
        await c("DELETE", `/webhooks/${goneId}`);
        await c("DELETE", `/webhooks/${otherId}`);
      } finally {
        await gone.close();
        await other.close();
      }
    });

    it("429 and 503 with Retry-After (seconds or an HTTP date) move the next attempt to exactly then, capped at the schedule's last step; those attempts still count toward five", async () => {
      const a = await account();
      const c = console_(a.session);
      const waits = ["120", "", "999999"];
      let n = 0;
      const rx = await receiver(() => {
        n += 1;
        if (n === 1) return { status: 429, headers: { "retry-after": waits[0]! } };
        // An HTTP date 600 s after now (the clock is on whole seconds).
        if (n === 2) return { status: 503, headers: { "retry-after": new Date(clock.now() + 600_000).toUTCString() } };
        if (n === 3) return { status: 429, headers: { "retry-after": waits[2]! } };
        return { status: 429, headers: { "retry-after": "1" } };
      });
      try {
        const id = await hook(c, rx.url, ["key.created"]);
        await keyEvent(c);
        const w = worker();
        const pendingAt = async () => (await deliveries(c, id))[0];
        await w.tick();
        expect(rx.got).toHaveLength(1);
        let d = await pendingAt();
        let t = clock.now();
        // 120 s, not the schedule's 30 s.
        expect(d.next_attempt_at).toBe(new Date(t + 120_000).toISOString());
        clock.advance(119_000);
        await w.tick();
        expect(rx.got).toHaveLength(1);
        clock.advance(1_000);
        await w.tick();
        expect(rx.got).toHaveLength(2);
        d = await pendingAt();
        t = clock.now();
        // The HTTP date: 600 s (the schedule's 300 s is earlier).
        expect(d.next_attempt_at).toBe(new Date(t + 600_000).toISOString());
        clock.advance(600_000);
        await w.tick();
        expect(rx.got).toHaveLength(3);
        d = await pendingAt();
        // 999999 s is capped at the schedule's last step (7200 s).
        expect(d.next_attempt_at).toBe(new Date(clock.now() + 7_200_000).toISOString());
        clock.advance(7_200_000);
        await w.tick();
        expect(rx.got).toHaveLength(4);
        // Retry-After: 1 does not bring the fifth attempt before the schedule's 2 h.
        d = await pendingAt();
        expect(d.next_attempt_at).toBe(new Date(clock.now() + 7_200_000).toISOString());
        clock.advance(7_200_000);
        await w.tick();
        expect(rx.got).toHaveLength(5);
        d = await pendingAt();
        expect(d).toMatchObject({ status: "dead", dead_reason: "attempts_exhausted", attempt_count: 5, next_attempt_at: null });
        clock.advance(7_200_000);
        await w.tick();
        expect(rx.got).toHaveLength(5);
        await c("DELETE", `/webhooks/${id}`);
      } finally {
        await rx.close();
      }
    });

    it("a webhook whose every attempt failed for webhooks.disableAfterDays (5) is disabled, not before; the account's other webhooks are told", async () => {
      const a = await account();
      const c = console_(a.session);
      const failing = await receiver(() => ({ status: 500 }));
      const other = await receiver();
      try {
        const id = await hook(c, failing.url, ["key.created"]);
        const otherId = await hook(c, other.url, ["webhook.disabled"]);
        // Unordered, so each new event is attempted while the previous one waits for its retry.
        const w = worker({ config: one({ webhooks: { ordered: false } }) });
        const started = clock.now();
        await keyEvent(c);
        // Five attempts over about 2.5 h, then dead.
        for (let i = 0; i < 5; i++) {
          await w.tick();
          clock.advance(7_200_000);
        }
        expect(failing.got).toHaveLength(5);
        expect((await c("GET", `/webhooks/${id}`)).body.status).toBe("active");
        // Just short of five days after the first failure: a failure, still active.
        clock.set(started + 5 * 86_400_000 - 1_000);
        await keyEvent(c);
        await w.tick();
        expect(failing.got).toHaveLength(6);
        expect((await c("GET", `/webhooks/${id}`)).body.status).toBe("active");
        clock.set(started + 5 * 86_400_000);
        await keyEvent(c);
        await w.tick();
        expect(failing.got).toHaveLength(7);
        const got = (await c("GET", `/webhooks/${id}`)).body;
        expect(got).toMatchObject({ status: "disabled", disabled_reason: "failing", disabled_at: new Date(started + 5 * 86_400_000).toISOString() });
        await w.tick();
        expect(failing.got).toHaveLength(7);
        expect(other.got.map((r) => JSON.parse(r.body).data)).toEqual([{ webhook_id: id, url: failing.url, reason: "failing", disabled_at: got.disabled_at }]);
        // The deliveries left waiting for a retry (the one that tipped it included) are dead, with why.
        expect((await deliveries(c, id)).map((d) => d.dead_reason)).toEqual(["webhook_disabled", "webhook_disabled", "attempts_exhausted"]);
        await c("DELETE", `/webhooks/${id}`);
        await c("DELETE", `/webhooks/${otherId}`);
      } finally {
        await failing.close();
        await other.close();
      }
    });

    /** Writes `n` quota.warning events of the account, one second apart; their ids in order (and `at`, their times). */
    const at: number[] = [];
    const warnings = async (accountId: string, n: number): Promise<string[]> => {
      const ids: string[] = [];
      at.length = 0;
      for (let i = 0; i < n; i++) {
        clock.advance(1000);
        const id = newId("evt", clock, cryptoRandom);
        ids.push(id);
        at.push(clock.now());
        await storage.emitEvent(quotaWarningEvent(id, accountId, clock.now(), { used: i, allowance: 1000, threshold: 800, periodStart: T0, periodEnd: T0 + 1 }), clock.now());
      }
      return ids;
    };
    /** Ticks the worker until it finds nothing to attempt. */
    const drain = async (w: ReturnType<typeof worker>): Promise<void> => {
      while ((await w.tick()) > 0);
    };

    it("recover: 200 dead deliveries are re-queued and delivered exactly once each, in event order; the answer says how many", async () => {
      const a = await account();
      const c = console_(a.session);
      let up = false;
      const rx = await receiver(() => ({ status: up ? 200 : 503 }));
      try {
        const id = await hook(c, rx.url, ["quota.warning"]);
        const since = clock.now() + 1;
        const events = await warnings(a.id, 200);
        // One attempt each: 20 die at the receiver (503), which disables the webhook (disableAfterDeadDeliveries),
        // and the 180 still waiting die with it.
        const w = worker({ config: one({ webhooks: { retryDelaysSeconds: [0], concurrencyPerWebhook: 1 } }) });
        await drain(w);
        expect(rx.got).toHaveLength(20);
        let all = await storage.listDeliveries(a.id, id, 1000);
        expect(all.filter((d) => d.status === "dead")).toHaveLength(200);
        expect(all.filter((d) => d.deadReason === "webhook_disabled")).toHaveLength(180);

        const recover = (from: string | number, cc = c) => cc("POST", `/webhooks/${id}/recover`, { since: typeof from === "number" ? new Date(from).toISOString() : from });
        expect(await recover(since)).toMatchObject({ status: 409, body: { code: "console.webhook_disabled", status: 409 } });
        expect((await c("POST", `/webhooks/${id}/enable`)).status).toBe(200);
        expect(await recover("yesterday")).toMatchObject({ status: 422, body: { code: "validation.invalid_body" } });
        expect((await c("POST", `/webhooks/${id}/recover`, {})).body.code).toBe("validation.invalid_body");
        expect((await recover(since, console_((await account()).session))).status).toBe(404);
        expect((await c("POST", `/webhooks/wh_nope/recover`, { since: new Date(since).toISOString() })).status).toBe(404);

        up = true;
        // The second half first: since the 101st event's time.
        const half = at[100]!;
        expect(await recover(half)).toEqual({ status: 202, body: { webhook_id: id, since: new Date(half).toISOString(), recovered: 100, has_more: false } });
        // At once again: nothing is queued twice.
        expect((await recover(half)).body.recovered).toBe(0);
        await drain(w);
        expect((await recover(since)).body.recovered).toBe(100);
        await drain(w);
        expect((await recover(since)).body.recovered).toBe(0);

        const delivered = rx.got.slice(20).map((r) => String(r.headers["x-service-event-id"]));
        expect(delivered).toHaveLength(200);
        expect(delivered).toEqual([...events.slice(100), ...events.slice(0, 100)]);
        all = await storage.listDeliveries(a.id, id, 1000);
        expect(all.every((d) => d.status === "succeeded" && d.attemptLog.filter((x) => x.error === null).length === 1)).toBe(true);
        await c("DELETE", `/webhooks/${id}`);
      } finally {
        await rx.close();
      }
    });

    it("recover cannot flood a receiver: with disableAfterDeadDeliveries 0, ten calls send it at most the hour's re-queue budget, then 429 with Retry-After; a since before retention is 422", async () => {
      // Issue 26's reproduction at a tenth of its size (22 dead deliveries, a budget of 100 an hour), so it stays quick on PostgreSQL.
      const bounded = createApp({ storage, clock, config: one({ webhooks: { recoverDeliveriesPerHour: 100 } }), adminToken: ADMIN, webhooks: { secretBox: box } });
      const a = await account();
      const rx = await receiver(() => ({ status: 503 }));
      try {
        const id = await hook(console_(a.session), rx.url, ["quota.warning"]);
        await warnings(a.id, 22);
        const since = at[0]!;
        // One attempt each and never disabled: every delivery dies and the webhook stays active.
        const w = worker({ config: one({ webhooks: { retryDelaysSeconds: [0], concurrencyPerWebhook: 4, disableAfterDeadDeliveries: 0, disableAfterDays: 0 } }) });
        await drain(w);
        expect(rx.got).toHaveLength(22);
        const raw = (from: number) =>
          bounded.fetch(new Request(`${BASE}/api/v1/console/webhooks/${id}/recover`, { method: "POST", headers: { authorization: `Bearer ${a.session}`, "content-type": "application/json" }, body: JSON.stringify({ since: new Date(from).toISOString() }) }));
        const recover = async (from: number): Promise<Res> => {
          const r = await raw(from);
          return { status: r.status, body: await r.json() };
        };

        // Older than retention.deliveriesDays (30): pruned history cannot be promised, and the budget is untouched.
        const tooOld = await recover(clock.now() - 31 * 86_400_000);
        expect(tooOld).toMatchObject({ status: 422, body: { code: "validation.out_of_range", status: 422 } });
        expect(tooOld.body.detail).toMatch(/^since: must be at most 30 days ago \(retention\.deliveriesDays\)/);

        const answers: Res[] = [];
        for (let i = 0; i < 10; i++) {
          answers.push(await recover(since));
          await drain(w);
        }
        expect(answers.slice(0, 5).map((r) => [r.status, r.body.recovered, r.body.has_more])).toEqual([
          [202, 22, false],
          [202, 22, false],
          [202, 22, false],
          [202, 22, false],
          [202, 12, true],
        ]);
        for (const r of answers.slice(5)) expect(r).toMatchObject({ status: 429, body: { code: "rate_limit.exceeded", status: 429 } });
        // Without the bound: 220 re-sent POSTs. Now the hour's budget, whatever the number of calls.
        expect(rx.got).toHaveLength(22 + 100);
        const refused = await raw(since);
        expect(refused.status).toBe(429);
        const retryAfter = Number(refused.headers.get("retry-after"));
        expect(retryAfter).toBeGreaterThan(0);
        expect(retryAfter).toBeLessThanOrEqual(3600);
        expect(await refused.json()).toMatchObject({ code: "rate_limit.exceeded", status: 429, detail: expect.stringMatching(/100 deliveries of the hour/) });

        // Once the hour is over, recovery works again.
        clock.advance(retryAfter * 1000);
        expect(await recover(since)).toMatchObject({ status: 202, body: { recovered: 22, has_more: false } });
        await drain(w);
        expect(rx.got).toHaveLength(22 + 100 + 22);
        await console_(a.session)("DELETE", `/webhooks/${id}`);
      } finally {
        await rx.close();
      }
    });

    it("recover: an account may make webhooks.recoverCallsPerHour calls an hour (default 10), even of nothing; the eleventh is 429", async () => {
      const a = await account();
      const c = console_(a.session);
      const rx = await receiver();
      try {
        const id = await hook(c, rx.url, ["quota.warning"]);
        const since = new Date(clock.now()).toISOString();
        const statuses: number[] = [];
        for (let i = 0; i < 11; i++) statuses.push((await c("POST", `/webhooks/${id}/recover`, { since })).status);
        expect(statuses).toEqual([...Array(10).fill(202), 429]);
        // Another account's calls are its own.
        const b = await account();
        const other = await hook(console_(b.session), rx.url, ["quota.warning"]);
        expect((await console_(b.session)("POST", `/webhooks/${other}/recover`, { since })).status).toBe(202);
        await c("DELETE", `/webhooks/${id}`);
        await console_(b.session)("DELETE", `/webhooks/${other}`);
      } finally {
        await rx.close();
      }
    });

    it("rotate-secret: during the overlap every delivery verifies under both secrets (standardwebhooks, new first) and X-Service-Signature under the new one (octokit); after it only the new one", async () => {
      const a = await account();
      const c = console_(a.session);
      const rx = await receiver();
      /** Whether the `standardwebhooks` package accepts received request `r` under `secret` (its clock set to the delivery's). */
      const standardOk = (secret: string, r: Received): boolean => {
        vi.useFakeTimers({ toFake: ["Date"] });
        try {
          vi.setSystemTime(Number(r.headers["webhook-timestamp"]) * 1000);
          const h = { "webhook-id": String(r.headers["webhook-id"]), "webhook-timestamp": String(r.headers["webhook-timestamp"]), "webhook-signature": String(r.headers["webhook-signature"]) };
          new StandardWebhook(secret).verify(r.body, h);
          return true;
        } catch {
          return false;
        } finally {
          vi.useRealTimers();
        }
      };
      const sha256Ok = (secret: string, r: Received) => octokitVerify(secret, r.body, String(r.headers["x-service-signature"]));
      try {
        const created = await c("POST", "/webhooks", { url: rx.url, events: ["key.created"] });
        const id: string = created.body.webhook_id;
        const oldSecret: string = created.body.signing_secret;
        const w = worker();
        await keyEvent(c);
        expect(await w.tick()).toBe(1);
        expect(String(rx.got[0]!.headers["webhook-signature"]).split(" ")).toHaveLength(1);

        const rotatedAt = clock.now();
        const rotated = await c("POST", `/webhooks/${id}/rotate-secret`);
        expect(rotated.status).toBe(200);
        const newSecret: string = rotated.body.signing_secret;
        expect(newSecret).toMatch(/^whsec_/);
        expect(newSecret).not.toBe(oldSecret);
        expect(rotated.body).toMatchObject({ webhook_id: id, status: "active", previous_secret_expires_at: new Date(rotatedAt + 24 * 3_600_000).toISOString() });
        // Shown once: never listed or shown again; both stored sealed under the operator key.
        const listed = JSON.stringify([(await c("GET", "/webhooks")).body, (await c("GET", `/webhooks/${id}`)).body]);
        expect(listed).not.toContain(newSecret.slice(6));
        expect(listed).not.toContain(oldSecret.slice(6));
        expect(listed).not.toContain("signing_secret");
        const stored = (await storage.listWebhookSecrets()).filter((x) => x.webhookId === id);
        expect(stored.map((x) => x.field).sort()).toEqual(["current", "previous"]);
        for (const x of stored) {
          expect(x.secret).toMatch(/^aesgcm1:k1:/);
          expect(x.secret).not.toContain(newSecret.slice(6));
          expect(x.secret).not.toContain(oldSecret.slice(6));
        }
        expect(await box.open(id, stored.find((x) => x.field === "previous")!.secret)).toBe(oldSecret);

        // During the overlap (up to its last millisecond): two signatures, the new one first.
        for (const at of [rotatedAt + 1000, rotatedAt + 24 * 3_600_000 - 1]) {
          clock.set(at);
          await keyEvent(c);
          expect(await w.tick()).toBe(1);
          const r = rx.got.at(-1)!;
          const entries = String(r.headers["webhook-signature"]).split(" ");
          expect(entries).toHaveLength(2);
          expect(standardOk(newSecret, r)).toBe(true);
          expect(standardOk(oldSecret, r)).toBe(true);
          expect(standardOk(newSecret, { ...r, headers: { ...r.headers, "webhook-signature": entries[0] } })).toBe(true);
          expect(standardOk(oldSecret, { ...r, headers: { ...r.headers, "webhook-signature": entries[1] } })).toBe(true);
          expect(await sha256Ok(newSecret, r)).toBe(true);
          expect(await sha256Ok(oldSecret, r)).toBe(false);
        }
        // The verifier is not fooled by just any secret.
        expect(standardOk("whsec_" + Buffer.alloc(24, 7).toString("base64"), rx.got.at(-1)!)).toBe(false);

        // After the overlap: the new secret only.
        clock.set(rotatedAt + 24 * 3_600_000);
        await keyEvent(c);
        expect(await w.tick()).toBe(1);
        const after = rx.got.at(-1)!;
        expect(String(after.headers["webhook-signature"]).split(" ")).toHaveLength(1);
        expect(standardOk(newSecret, after)).toBe(true);
        expect(standardOk(oldSecret, after)).toBe(false);
        expect(await sha256Ok(newSecret, after)).toBe(true);
        expect(await sha256Ok(oldSecret, after)).toBe(false);
        expect(rx.got).toHaveLength(4);

        // The overlap is the operator's setting; another account cannot rotate the webhook; an unknown one is 404.
        const short = createApp({ storage, clock, config: one({ webhooks: { secretOverlapHours: 1 } }), adminToken: ADMIN, webhooks: { secretBox: box } });
        const r2 = await short.fetch(new Request(`${BASE}/api/v1/console/webhooks/${id}/rotate-secret`, { method: "POST", headers: { authorization: `Bearer ${a.session}` } }));
        expect(r2.status).toBe(200);
        expect((await r2.json()).previous_secret_expires_at).toBe(new Date(clock.now() + 3_600_000).toISOString());
        const b = await account();
        expect((await console_(b.session)("POST", `/webhooks/${id}/rotate-secret`)).status).toBe(404);
        expect((await c("POST", `/webhooks/wh_nope/rotate-secret`)).status).toBe(404);
        await c("DELETE", `/webhooks/${id}`);
      } finally {
        await rx.close();
      }
    });

    it("N dead deliveries in a row (webhooks.disableAfterDeadDeliveries) disable a webhook; a success in between starts the count again", async () => {
      const a = await account();
      const c = console_(a.session);
      let ok = false;
      const rx = await receiver(() => ({ status: ok ? 200 : 500 }));
      try {
        const id = await hook(c, rx.url, ["key.created"]);
        const w = worker({ config: one({ webhooks: { retryDelaysSeconds: [0], disableAfterDeadDeliveries: 2, concurrencyPerWebhook: 1 } }) });
        const step = async () => {
          await keyEvent(c);
          await w.tick();
        };
        await step(); // dead 1
        ok = true;
        await step(); // success: the run of dead deliveries ends
        ok = false;
        await step(); // dead 1
        expect((await c("GET", `/webhooks/${id}`)).body.status).toBe("active");
        await step(); // dead 2
        expect((await c("GET", `/webhooks/${id}`)).body).toMatchObject({ status: "disabled", disabled_reason: "dead_deliveries" });
        expect(rx.got).toHaveLength(4);
        await c("DELETE", `/webhooks/${id}`);
      } finally {
        await rx.close();
      }
    });
  });
}

// Ordering (webhooks.ordered, the default): two workers, each on its own connection to one database (one shared
// store for memory), race for one webhook's deliveries; the real receiver sees them one at a time, in event order,
// a failed one retried before any later event.
const twoConnections: Record<string, () => Promise<[Storage, Storage]>> = {
  memory: async () => {
    const s = createMemoryStorage();
    return [s, s];
  },
  sqlite: async () => {
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const file = join(mkdtempSync(join(tmpdir(), "benchdata-ordered-")), "db.sqlite");
    const first = await openStorage(`sqlite:${file}`, { clock: "app" });
    await first.migrate();
    return [first, await openStorage(`sqlite:${file}`, { clock: "app" })];
  },
};
if (pgOn) {
  twoConnections.postgres = async () => {
    const t = await tempDatabase("benchdata_ordered");
    drops.push(t.drop);
    const first = await openStorage(t.url, { clock: "app" });
    await first.migrate();
    return [first, await openStorage(t.url, { clock: "app" })];
  };
}

for (const [name, open] of Object.entries(twoConnections)) {
  it(`ordered delivery, two workers on two connections, one real receiver: one at a time, in event order, a failed attempt retried before later events: ${name}`, async () => {
    const [s1, s2] = await open();
    await s1.migrate();
    const clock = manualClock(T0);
    const config = defineConfig({ webhooks: { allowHttp: true, allowPrivateNetworks: true, timeoutSeconds: 5, concurrencyPerWebhook: 4, retryDelaysSeconds: [0, 0, 0] } } as DeepPartial<ServiceConfig>);
    expect(config.webhooks.ordered).toBe(true);
    let inFlight = 0;
    let maxInFlight = 0;
    const failOnce = new Set([3, 11]);
    const arrivals: number[] = [];
    // Answers after a short random pause (so the workers overlap), 500 on the first attempt of events 3 and 11.
    const server: Server = createServer((req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const used = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data: { calls_used: number } }).data.calls_used;
        arrivals.push(used);
        setTimeout(() => {
          inFlight--;
          const fail = failOnce.delete(used);
          res.writeHead(fail ? 500 : 200).end("ok");
        }, Math.random() * 4);
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const transport = nodeTransport();
    const accountId = newId("acc", clock, cryptoRandom);
    await s1.createAccount({ id: accountId, name: "ordered", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
    const webhookId = newId("wh", clock, cryptoRandom);
    await s1.createWebhook({ id: webhookId, accountId, url, events: ["quota.warning"], secret: "whsec_" + Buffer.alloc(24, 3).toString("base64"), createdAt: T0 }, 10);
    const N = 30;
    for (let i = 0; i < N; i++) {
      const id = newId("evt", clock, cryptoRandom);
      await s1.emitEvent(quotaWarningEvent(id, accountId, clock.now(), { used: i, allowance: 1000, threshold: 800, periodStart: T0, periodEnd: T0 + 1 }), clock.now());
    }
    const workers = [s1, s2].map((storage) => createDeliveryWorker({ storage, clock, transport, resolve: nodeResolve, config, concurrency: 8, pollIntervalMs: 3 }));
    try {
      for (const w of workers) w.start();
      const deadline = Date.now() + 20_000;
      while (arrivals.length < N + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const w of workers) await w.stop();
      const expected = Array.from({ length: N }, (_, i) => i).flatMap((i) => (i === 3 || i === 11 ? [i, i] : [i]));
      expect(arrivals).toEqual(expected);
      expect(maxInFlight).toBe(1);
      const ds = await s1.listDeliveries(accountId, webhookId, 100);
      expect(ds.every((d) => d.status === "succeeded")).toBe(true);
    } finally {
      transport.close();
      await new Promise((done) => server.close(() => done(undefined)));
      if (s2 !== s1) await s2.close();
      await s1.close();
    }
  });
}
