import { lookup } from "node:dns/promises";
import type { ApiKeyRecord, Storage, WebhookRecord } from "@benchdata/core";
import {
  createDeliveryWorker,
  createMemoryStorage,
  cryptoRandom,
  defineConfig,
  EVENT_TYPES,
  fetchTransport,
  generateSigningSecret,
  manualClock,
  newId,
  quotaWarningEvent,
  signatureHeader,
} from "@benchdata/core";
import { verify as octokitVerify } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceivedEvent, Receiver } from "./receiver.ts";
import { createReceiver } from "./receiver.ts";
import type { RunningReceiver } from "./server.ts";
import { serveReceiver } from "./server.ts";

const T0 = Date.UTC(2026, 10, 16, 12);
const resolve = async (host: string): Promise<string[]> => (await lookup(host, { all: true })).map((a) => a.address);

describe("example webhook receiver, driven by the delivery worker over real HTTP", () => {
  const secret = generateSigningSecret(cryptoRandom);
  const received: Array<{ event: ReceivedEvent; raw: string }> = [];
  const wire: Array<{ raw: string; signature: string }> = [];
  let running: RunningReceiver;
  let storage: Storage;
  const clock = manualClock(T0);
  const config = defineConfig({ webhooks: { allowHttp: true, allowPrivateNetworks: true } });
  const accountId = newId("acc", clock, cryptoRandom);
  let webhook: WebhookRecord;
  const worker = () => createDeliveryWorker({ storage, clock, transport: fetchTransport(), resolve, config });
  const drain = async (): Promise<void> => {
    const w = worker();
    while ((await w.tick()) > 0);
    await new Promise((r) => setTimeout(r, 20)); // the receiver processes after answering
  };

  beforeAll(async () => {
    // The worker signs webhook-timestamp with the test's manual clock: the receiver judges freshness by it too.
    const inner = createReceiver({ secret, verify: { now: () => clock.now() }, onEvent: (event, raw) => void received.push({ event, raw }) });
    // Record what arrived on the wire, to check it with an independent verifier.
    const spy: Receiver = {
      async fetch(request) {
        wire.push({ raw: await request.clone().text(), signature: request.headers.get("X-Service-Signature") ?? "" });
        return inner.fetch(request);
      },
    };
    running = await serveReceiver(spy);
    storage = createMemoryStorage();
    await storage.createAccount({ id: accountId, name: "Acme", tier: "developer", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
    const port = new URL(running.url).port;
    webhook = { id: newId("wh", clock, cryptoRandom), accountId, url: `http://localhost:${port}/hooks`, events: [...EVENT_TYPES], secret, createdAt: T0 };
    await storage.createWebhook(webhook, 10);
  });
  afterAll(() => running.close());

  it("accepts signed events, answers { ok: true }, and its bodies verify independently (@octokit/webhooks-methods)", async () => {
    const key: ApiKeyRecord = { id: newId("key", clock, cryptoRandom), accountId, name: "server", environment: "test", scopes: ["benchmarks:read"], prefix: "svc_test_abc", isActive: true, createdAt: T0, rotatedAt: null, revokedAt: null };
    await storage.createKey({ key, hash: "h1", maxKeys: 5, eventId: newId("evt", clock, cryptoRandom) });
    await storage.rotateKey({ accountId, keyId: key.id, newHash: "h2", newPrefix: "svc_test_xyz", now: T0, eventId: newId("evt", clock, cryptoRandom) });
    await storage.emitEvent(quotaWarningEvent(newId("evt", clock, cryptoRandom), accountId, T0, { used: 80, allowance: 100, threshold: 80, periodStart: T0, periodEnd: T0 + 1 }), T0);
    await drain();

    expect(received.map((r) => r.event.type).sort()).toEqual(["key.created", "key.rotated", "quota.warning"]);
    expect(wire).toHaveLength(3);
    for (const w of wire) {
      expect(w.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(await octokitVerify(secret, w.raw, w.signature)).toBe(true);
      expect(await octokitVerify(secret, w.raw.replace('"type"', '"typ"'), w.signature)).toBe(false);
    }
    expect(received.map((r) => r.raw).sort()).toEqual(wire.map((w) => w.raw).sort());
    const deliveries = await storage.listDeliveries(accountId, webhook.id, 10);
    expect(deliveries).toHaveLength(3);
    for (const d of deliveries) expect(d).toMatchObject({ status: "succeeded", attempts: 1, attemptLog: [{ statusCode: 200, error: null, responseBody: '{"ok":true}' }] });
  });

  it("acknowledges a redelivered event but processes it once", async () => {
    const [first] = await storage.listDeliveries(accountId, webhook.id, 10);
    const before = received.filter((r) => r.event.id === first!.eventId).length;
    await storage.retryDelivery(accountId, webhook.id, first!.id, clock.now());
    await drain();
    const [again] = (await storage.listDeliveries(accountId, webhook.id, 10)).filter((d) => d.id === first!.id);
    expect(again).toMatchObject({ status: "succeeded", attempts: 2 });
    expect(again!.attemptLog[1]).toMatchObject({ statusCode: 200, responseBody: '{"ok":true}' });
    expect(received.filter((r) => r.event.id === first!.eventId)).toHaveLength(before);
  });

  it("answers 400 to a signature made with another secret, and the service records the failure and retries", async () => {
    const other: WebhookRecord = { ...webhook, id: newId("wh", clock, cryptoRandom), secret: generateSigningSecret(cryptoRandom), events: ["quota.warning"] };
    await storage.createWebhook(other, 10);
    await storage.emitEvent(quotaWarningEvent(newId("evt", clock, cryptoRandom), accountId, T0, { used: 80, allowance: 100, threshold: 80, periodStart: T0, periodEnd: T0 + 1 }), T0);
    await drain();
    const [d] = await storage.listDeliveries(accountId, other.id, 1);
    expect(d).toMatchObject({ status: "pending", attemptLog: [{ statusCode: 400, error: "http_status" }] });
    expect(d!.attemptLog[0]!.responseBody).toContain("invalid_signature");
  });

  it("answers 400 to a tampered body, a missing signature, or an event id header that does not match the body", async () => {
    const body = JSON.stringify({ id: "evt_1", type: "quota.warning", account_id: accountId, created_at: new Date(T0).toISOString(), data: {} });
    const post = (b: string, headers: Record<string, string>) => fetch(`${running.url}/hooks`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: b });
    const good = { "X-Service-Signature": signatureHeader(secret, body), "X-Service-Event-Id": "evt_1" };
    expect((await post(body.replace("quota.warning", "quota.exhausted"), good)).status).toBe(400);
    expect((await post(body, { "X-Service-Event-Id": "evt_1" })).status).toBe(400);
    expect((await post(body, { ...good, "X-Service-Event-Id": "evt_2" })).status).toBe(400);
    const ok = await post(body, good);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true });
    expect((await fetch(`${running.url}/hooks`)).status).toBe(405);
  });

  it("answers before a slow handler finishes", async () => {
    const slow = await serveReceiver(createReceiver({ secret, onEvent: () => new Promise((r) => setTimeout(r, 1000)) }));
    const body = JSON.stringify({ id: "evt_slow", type: "quota.warning", account_id: accountId, created_at: new Date(T0).toISOString(), data: {} });
    const started = Date.now();
    const res = await fetch(`${slow.url}/`, { method: "POST", headers: { "X-Service-Signature": signatureHeader(secret, body), "X-Service-Event-Id": "evt_slow" }, body });
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(500);
    await slow.close();
  });
});
