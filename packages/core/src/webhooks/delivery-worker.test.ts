import { createHmac } from "node:crypto";
import { verify as octokitVerify } from "@octokit/webhooks-methods";
import { describe, expect, it } from "vitest";
import type { ManualClock } from "../clock/clock.ts";
import { cryptoRandom, manualClock } from "../clock/clock.ts";
import type { DeepPartial, ServiceConfig } from "../config/config.ts";
import { defineConfig } from "../config/config.ts";
import { quotaWarningEvent } from "../events/builders.ts";
import { newId } from "../ids/new-id.ts";
import { verifySignature, generateSigningSecret } from "../signing/signature.ts";
import { createMemoryStorage } from "../storage/memory-storage.ts";
import type { Storage } from "../storage/types.ts";
import { deliveryNextState } from "./delivery-next-state.ts";
import { createDeliveryWorker } from "./delivery-worker.ts";
import { createSecretBox, parseSecretKeys } from "./secret-box.ts";
import { sendTestEvent } from "./send-test-event.ts";
import type { WebhookRequest, WebhookResponse, WebhookTransport } from "./webhook-transport.ts";
import { TransportError } from "./webhook-transport.ts";
import { createMetricsRegistry } from "../metrics/metrics-registry.ts";
import type { LogFields } from "../log/logger.ts";

const T0 = Date.UTC(2026, 10, 16, 12, 0, 0);
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

const DNS: Record<string, string[]> = {
  "hooks.example.com": ["93.184.216.34"],
  "healthy.example.com": ["93.184.216.35"],
  "slow.example.com": ["93.184.216.36"],
  "evil.test": ["127.0.0.1"],
};
function fakeResolve(dns: Record<string, string[]>) {
  return async (host: string): Promise<string[]> => {
    const found = dns[host];
    if (!found) throw new Error(`ENOTFOUND ${host}`);
    return found;
  };
}

type Handler = (req: WebhookRequest) => Promise<WebhookResponse> | WebhookResponse;

/** A transport that records every request and answers with `handler`. */
function fakeTransport(handler: Handler): WebhookTransport & { requests: WebhookRequest[] } {
  const requests: WebhookRequest[] = [];
  return {
    requests,
    async send(req) {
      requests.push(req);
      return handler(req);
    },
  };
}

interface Setup {
  storage: Storage;
  clock: ManualClock;
  config: ServiceConfig;
  accountId: string;
  addWebhook(url: string): Promise<{ id: string; secret: string }>;
  emit(n?: number): Promise<string[]>;
}

async function setup(over: DeepPartial<ServiceConfig> = {}): Promise<Setup> {
  const storage = createMemoryStorage();
  const clock = manualClock(T0);
  const config = defineConfig(over);
  const accountId = newId("acc", clock, cryptoRandom);
  await storage.createAccount({ id: accountId, name: "Acme", tier: "developer", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
  return {
    storage,
    clock,
    config,
    accountId,
    async addWebhook(url) {
      const wh = { id: newId("wh", clock, cryptoRandom), accountId, url, events: ["quota.warning" as const], secret: generateSigningSecret(cryptoRandom), createdAt: clock.now() };
      await storage.createWebhook(wh, 10);
      return { id: wh.id, secret: wh.secret };
    },
    async emit(n = 1) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const id = newId("evt", clock, cryptoRandom);
        ids.push(id);
        await storage.emitEvent(quotaWarningEvent(id, accountId, clock.now(), { used: 16 + i, allowance: 20, threshold: 16, periodStart: Date.UTC(2026, 10, 1), periodEnd: Date.UTC(2026, 11, 1) }), clock.now());
      }
      return ids;
    },
  };
}

function standardSignatureValid(secret: string, headers: Record<string, string>, body: string): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const mac = createHmac("sha256", key).update(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`).digest("base64");
  return headers["webhook-signature"] === `v1,${mac}`;
}

const until = async (cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe("deliveryNextState", () => {
  it("spaces attempts by the configured delays and dies after the last", () => {
    const d = [0, 30, 300, 1800, 7200];
    expect(deliveryNextState(1, true, T0, d)).toEqual({ status: "succeeded" });
    expect(deliveryNextState(1, false, T0, d)).toEqual({ status: "pending", at: T0 + 30 * SECOND });
    expect(deliveryNextState(2, false, T0, d)).toEqual({ status: "pending", at: T0 + 5 * MINUTE });
    expect(deliveryNextState(3, false, T0, d)).toEqual({ status: "pending", at: T0 + 30 * MINUTE });
    expect(deliveryNextState(4, false, T0, d)).toEqual({ status: "pending", at: T0 + 2 * HOUR });
    expect(deliveryNextState(5, false, T0, d)).toEqual({ status: "dead" });
    expect(deliveryNextState(6, false, T0, d)).toEqual({ status: "dead" });
    expect(deliveryNextState(1, false, T0, [0])).toEqual({ status: "dead" });
  });
});

describe("delivery worker", () => {
  it("metrics: attempts by outcome and their latency; a storage outage is logged once with its cause, then its recovery", async () => {
    // Unordered (webhooks.ordered false): both deliveries of the one webhook go in one tick.
    const s = await setup({ webhooks: { retryDelaysSeconds: [0, 30], ordered: false } });
    await s.addWebhook("https://hooks.example.com/in");
    await s.emit(2);
    let status = 204;
    const t = fakeTransport(() => ({ status, body: "" }));
    const metrics = createMetricsRegistry();
    const lines: { msg: string; fields?: LogFields }[] = [];
    const at = (msg: string, fields?: LogFields): void => void lines.push({ msg, fields });
    let ms = 0;
    const storage: Storage = { ...s.storage, claimDeliveries: (input) => (broken ? Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })) : s.storage.claimDeliveries(input)) };
    let broken = false;
    const worker = createDeliveryWorker({ storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config, metrics, logger: { info: at, warn: at, error: at }, elapsed: () => (ms += 40), pollIntervalMs: 2 });
    expect(await worker.tick()).toBe(2);
    expect(metrics.value("benchdata_webhook_deliveries_total", { outcome: "succeeded" })).toBe(2);
    expect(metrics.value("benchdata_webhook_delivery_duration_seconds")).toBe(2);
    status = 500;
    await s.emit(1);
    expect(await worker.tick()).toBe(1);
    expect(metrics.value("benchdata_webhook_deliveries_total", { outcome: "retrying" })).toBe(1);
    s.clock.advance(30 * SECOND);
    expect(await worker.tick()).toBe(1);
    expect(metrics.value("benchdata_webhook_deliveries_total", { outcome: "dead" })).toBe(1);
    expect(await metrics.render()).toMatch(/^benchdata_webhook_delivery_duration_seconds_bucket\{le="\+Inf"\} 4$/m);

    broken = true;
    worker.start();
    await until(() => (metrics.value("benchdata_storage_errors_total", { cause: "ECONNREFUSED" }) ?? 0) >= 5);
    broken = false;
    await until(() => lines.some((l) => l.msg === "storage recovered"));
    await worker.stop();
    const storageLines = lines.filter((l) => l.msg.includes("storage"));
    expect(storageLines.map((l) => l.msg)).toEqual(["webhook deliveries: storage failed", "storage recovered"]);
    expect(storageLines[0]!.fields).toMatchObject({ operation: "claimDeliveries", cause: "ECONNREFUSED" });
    expect(metrics.value("benchdata_storage_errors_total", { cause: "ECONNREFUSED" })).toBeGreaterThanOrEqual(5);
  });

  it("sends the stored body with both signatures, the event headers and the checked address", async () => {
    const s = await setup();
    const wh = await s.addWebhook("https://hooks.example.com/in");
    const [eventId] = await s.emit();
    const t = fakeTransport(() => ({ status: 204, body: "" }));
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config });
    expect(await worker.tick()).toBe(1);
    expect(t.requests).toHaveLength(1);
    const req = t.requests[0]!;
    expect(req.url.href).toBe("https://hooks.example.com/in");
    expect(req.address).toBe("93.184.216.34");
    // The time-out left after resolving the host.
    expect(req.timeoutMs).toBeGreaterThan(29_000);
    expect(req.timeoutMs).toBeLessThanOrEqual(30_000);
    expect(req.headers).toMatchObject({
      "Content-Type": "application/json",
      "User-Agent": "benchdata-webhooks/0.1",
      "X-Service-Event-Id": eventId,
      "X-Service-Event-Type": "quota.warning",
      "webhook-id": eventId,
      "webhook-timestamp": String(Math.floor(T0 / 1000)),
    });
    expect(req.headers["X-Service-Signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(await octokitVerify(wh.secret, req.body, req.headers["X-Service-Signature"]!)).toBe(true);
    expect(verifySignature(wh.secret, req.body, req.headers["X-Service-Signature"])).toBe(true);
    expect(standardSignatureValid(wh.secret, req.headers, req.body)).toBe(true);
    expect(JSON.parse(req.body)).toMatchObject({ id: eventId, type: "quota.warning", account_id: s.accountId });
    const [d] = await s.storage.listDeliveries(s.accountId, wh.id, 10);
    expect(d).toMatchObject({ status: "succeeded", attempts: 1, attemptLog: [{ attempt: 1, at: T0, statusCode: 204, error: null }] });
    expect(await worker.tick()).toBe(0);
  });

  it("retries a failing receiver at 0, 30 s, 5 min, 30 min and 2 h, then marks it dead: never a sixth attempt", async () => {
    const s = await setup();
    const wh = await s.addWebhook("https://hooks.example.com/in");
    await s.emit();
    const t = fakeTransport(() => ({ status: 500, body: "oops" }));
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config });
    const gaps = [0, 30 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR];
    let at = T0;
    for (const gap of gaps) {
      at += gap;
      if (gap > 0) {
        s.clock.set(at - 1);
        expect(await worker.tick()).toBe(0); // not a millisecond early
      }
      s.clock.set(at);
      expect(await worker.tick()).toBe(1);
    }
    s.clock.advance(30 * 24 * HOUR);
    expect(await worker.tick()).toBe(0);
    expect(t.requests).toHaveLength(5);
    const [d] = await s.storage.listDeliveries(s.accountId, wh.id, 10);
    expect(d!.status).toBe("dead");
    expect(d!.attempts).toBe(5);
    expect(d!.nextAttemptAt).toBeNull();
    expect(d!.attemptLog.map((a) => a.at - T0)).toEqual([0, 30 * SECOND, 330 * SECOND, 2130 * SECOND, 9330 * SECOND]);
    expect(d!.attemptLog.every((a) => a.statusCode === 500 && a.error === "http_status" && a.responseBody === "oops")).toBe(true);
    // The same bytes and the same X-Service-Signature on every attempt; only webhook-timestamp (and its signature) moves.
    const bodies = new Set(t.requests.map((r) => r.body));
    expect(bodies.size).toBe(1);
    expect(new Set(t.requests.map((r) => r.headers["X-Service-Signature"])).size).toBe(1);
    expect(new Set(t.requests.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(new Set(t.requests.map((r) => r.headers["webhook-timestamp"])).size).toBe(5);
    for (const r of t.requests) expect(standardSignatureValid(wh.secret, r.headers, r.body)).toBe(true);
  });

  it("follows an operator's own schedule (two attempts, 10 s apart)", async () => {
    const s = await setup({ webhooks: { retryDelaysSeconds: [0, 10] } });
    const wh = await s.addWebhook("https://hooks.example.com/in");
    await s.emit();
    const t = fakeTransport(() => ({ status: 503, body: "" }));
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config });
    await worker.tick();
    s.clock.advance(10 * SECOND);
    await worker.tick();
    s.clock.advance(HOUR);
    expect(await worker.tick()).toBe(0);
    expect((await s.storage.listDeliveries(s.accountId, wh.id, 1))[0]).toMatchObject({ status: "dead", attempts: 2 });
  });

  it("a manual retry of a dead delivery makes exactly one more attempt", async () => {
    const s = await setup({ webhooks: { retryDelaysSeconds: [0] } });
    const wh = await s.addWebhook("https://hooks.example.com/in");
    await s.emit();
    let status = 500;
    const t = fakeTransport(() => ({ status, body: "" }));
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config });
    await worker.tick();
    const [dead] = await s.storage.listDeliveries(s.accountId, wh.id, 1);
    expect(dead!.status).toBe("dead");
    await s.storage.retryDelivery(s.accountId, wh.id, dead!.id, s.clock.now());
    await worker.tick();
    expect((await s.storage.listDeliveries(s.accountId, wh.id, 1))[0]).toMatchObject({ status: "dead", attempts: 2 });
    await s.storage.retryDelivery(s.accountId, wh.id, dead!.id, s.clock.now());
    status = 200;
    await worker.tick();
    expect((await s.storage.listDeliveries(s.accountId, wh.id, 1))[0]).toMatchObject({ status: "succeeded", attempts: 3 });
  });

  it.each([
    ["a 3xx is a failure and is not followed", () => ({ status: 302, body: "" }), 302, "http_status"],
    ["a 4xx is a failure", () => ({ status: 404, body: "not here" }), 404, "http_status"],
    ["any 2xx (299) is a success", () => ({ status: 299, body: "" }), 299, null],
    ["a refused connection", () => Promise.reject(new TransportError("refused", "ECONNREFUSED")), null, "refused"],
    ["a TLS failure", () => Promise.reject(new TransportError("tls", "bad cert")), null, "tls"],
    ["a transport time-out", () => Promise.reject(new TransportError("timeout", "slow")), null, "timeout"],
    ["anything else thrown", () => Promise.reject(new Error("boom")), null, "network"],
  ] as const)("classifies %s", async (_name, handler, statusCode, error) => {
    const s = await setup();
    const wh = await s.addWebhook("https://hooks.example.com/in");
    await s.emit();
    const t = fakeTransport(handler as Handler);
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config });
    await worker.tick();
    expect(t.requests).toHaveLength(1);
    const [d] = await s.storage.listDeliveries(s.accountId, wh.id, 1);
    expect(d!.attemptLog[0]).toMatchObject({ statusCode, error });
    expect(d!.status).toBe(error === null ? "succeeded" : "pending");
  });

  it("gives up on a transport that ignores its time-out, and records `timeout`", async () => {
    const s = await setup({ webhooks: { timeoutSeconds: 0.05 } });
    const wh = await s.addWebhook("https://hooks.example.com/in");
    await s.emit();
    const t = fakeTransport(() => new Promise<WebhookResponse>(() => {}));
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config });
    const started = Date.now();
    await worker.tick();
    expect(Date.now() - started).toBeLessThan(3000);
    expect((await s.storage.listDeliveries(s.accountId, wh.id, 1))[0]!.attemptLog[0]).toMatchObject({ statusCode: null, error: "timeout" });
  });

  it("keeps only the first 2 KB of a response body", async () => {
    const s = await setup();
    const wh = await s.addWebhook("https://hooks.example.com/in");
    await s.emit();
    const t = fakeTransport(() => ({ status: 200, body: "x".repeat(10_000) }));
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config });
    await worker.tick();
    expect((await s.storage.listDeliveries(s.accountId, wh.id, 1))[0]!.attemptLog[0]!.responseBody).toHaveLength(2048);
  });

  it("re-checks the URL at delivery time: a host now resolving to a private address is `blocked` and nothing is sent", async () => {
    const s = await setup();
    const dns: Record<string, string[]> = { "rebind.example.com": ["93.184.216.34"] };
    const wh = await s.addWebhook("https://rebind.example.com/in");
    const evil = await s.addWebhook("https://evil.test/in"); // stored directly: creation would have refused it
    await s.emit();
    dns["rebind.example.com"] = ["10.0.0.7"];
    const t = fakeTransport(() => ({ status: 200, body: "" }));
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: (host) => fakeResolve({ ...DNS, ...dns })(host), config: s.config });
    expect(await worker.tick()).toBe(2);
    expect(t.requests).toHaveLength(0);
    for (const id of [wh.id, evil.id]) {
      const [d] = await s.storage.listDeliveries(s.accountId, id, 1);
      expect(d).toMatchObject({ status: "pending", attempts: 1, nextAttemptAt: T0 + 30 * SECOND, attemptLog: [{ statusCode: null, error: "blocked" }] });
    }
    // The host is public again by the next attempt: it is delivered, to the address just checked.
    dns["rebind.example.com"] = ["93.184.216.99"];
    s.clock.advance(30 * SECOND);
    await worker.tick();
    expect(t.requests.map((r) => r.address)).toEqual(["93.184.216.99"]);
  });

  it("records `dns` when the host no longer resolves", async () => {
    const s = await setup();
    const wh = await s.addWebhook("https://gone.example.com/in");
    await s.emit();
    const t = fakeTransport(() => ({ status: 200, body: "" }));
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config });
    await worker.tick();
    expect((await s.storage.listDeliveries(s.accountId, wh.id, 1))[0]!.attemptLog[0]!.error).toBe("dns");
  });

  it("a delivery whose worker vanished is claimed again once its lease (time-out + margin) has run out", async () => {
    const s = await setup();
    const wh = await s.addWebhook("https://hooks.example.com/in");
    await s.emit();
    const [lost] = await s.storage.claimDeliveries({ now: T0, leaseMs: 30_000 + 15_000, limit: 10, perWebhook: 4 });
    const t = fakeTransport(() => ({ status: 200, body: "" }));
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config });
    s.clock.set(T0 + 44_999);
    expect(await worker.tick()).toBe(0);
    s.clock.set(T0 + 45_000);
    expect(await worker.tick()).toBe(1);
    // The vanished worker's late report is ignored.
    expect(await s.storage.completeDelivery({ deliveryId: lost!.deliveryId, leaseToken: lost!.leaseToken, attempt: { attempt: 1, at: T0, statusCode: 500, latencyMs: 1, error: "http_status", responseBody: "" }, next: { status: "dead" } })).toBe(false);
    expect((await s.storage.listDeliveries(s.accountId, wh.id, 1))[0]).toMatchObject({ status: "succeeded", attempts: 1 });
  });

  it("isolation: a hanging receiver holds at most concurrencyPerWebhook sends while a healthy one's deliveries all complete", async () => {
    // concurrencyPerWebhook is the bound of unordered delivery (ordered sends one per webhook at a time).
    const s = await setup({ webhooks: { concurrencyPerWebhook: 2, ordered: false } });
    const slow = await s.addWebhook("https://slow.example.com/in");
    const healthy = await s.addWebhook("https://healthy.example.com/in");
    await s.emit(10);
    const release: Array<() => void> = [];
    let slowInFlight = 0;
    let slowMax = 0;
    const t = fakeTransport(async (req) => {
      if (req.url.hostname === "slow.example.com") {
        slowInFlight++;
        slowMax = Math.max(slowMax, slowInFlight);
        await new Promise<void>((r) => release.push(r));
        slowInFlight--;
      }
      return { status: 200, body: "" };
    });
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config, concurrency: 8, pollIntervalMs: 10_000 });
    worker.start();
    const healthyDone = async (): Promise<boolean> => (await s.storage.listDeliveries(s.accountId, healthy.id, 20)).every((d) => d.status === "succeeded");
    await until(healthyDone, 2000);
    expect(slowInFlight).toBe(2);
    expect((await s.storage.listDeliveries(s.accountId, slow.id, 20)).filter((d) => d.status === "succeeded")).toHaveLength(0);
    // Release the slow receiver bit by bit: its backlog drains two at a time.
    while ((await s.storage.listDeliveries(s.accountId, slow.id, 20)).some((d) => d.status !== "succeeded")) {
      release.splice(0).forEach((r) => r());
      await new Promise((r) => setTimeout(r, 5));
    }
    await worker.stop();
    expect(slowMax).toBe(2);
  });

  it("nudge() sends at once, and stop() waits for the sends in flight to be recorded", async () => {
    const s = await setup();
    const wh = await s.addWebhook("https://hooks.example.com/in");
    const t = fakeTransport(async () => {
      await new Promise((r) => setTimeout(r, 100));
      return { status: 200, body: "" };
    });
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config, pollIntervalMs: 60_000 });
    worker.start();
    await new Promise((r) => setTimeout(r, 20));
    await s.emit();
    worker.nudge();
    await until(() => t.requests.length === 1, 1000);
    await worker.stop();
    expect((await s.storage.listDeliveries(s.accountId, wh.id, 1))[0]!.status).toBe("succeeded");
  });

  it("logs no secret or body", async () => {
    const s = await setup();
    const wh = await s.addWebhook("https://hooks.example.com/in");
    await s.emit();
    const lines: string[] = [];
    const logger = { info: (m: string, f?: object) => lines.push(m + JSON.stringify(f)), warn: (m: string, f?: object) => lines.push(m + JSON.stringify(f)), error: (m: string, f?: object) => lines.push(m + JSON.stringify(f)) };
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: fakeTransport(() => ({ status: 500, body: "" })), resolve: fakeResolve(DNS), config: s.config, logger });
    await worker.tick();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("\n")).not.toContain(wh.secret);
    expect(lines.join("\n")).not.toContain("calls_used");
  });
});

describe("a signing secret that opens under no configured operator key", () => {
  const keyOf = (id: string, fill: number): string => `${id}:${btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)))}`;

  it("is logged as the missing key it is, sends nothing, leaves the delivery pending; the test event answers secret_unopenable, not a 500", async () => {
    const s = await setup();
    const elsewhere = await createSecretBox(parseSecretKeys(keyOf("kelsewhere", 2)), cryptoRandom);
    const here = await createSecretBox(parseSecretKeys(keyOf("khere", 1)), cryptoRandom);
    const id = newId("wh", s.clock, cryptoRandom);
    await s.storage.createWebhook({ id, accountId: s.accountId, url: "https://hooks.example.com/in", events: ["quota.warning"], secret: await elsewhere.seal(id, generateSigningSecret(cryptoRandom)), createdAt: s.clock.now() }, 10);
    await s.emit();
    const logged: { level: string; message: string; fields: LogFields | undefined }[] = [];
    const logger = {
      info: (message: string, fields?: LogFields) => logged.push({ level: "info", message, fields }),
      warn: (message: string, fields?: LogFields) => logged.push({ level: "warn", message, fields }),
      error: (message: string, fields?: LogFields) => logged.push({ level: "error", message, fields }),
    };
    const t = fakeTransport(() => ({ status: 204, body: "" }));
    const worker = createDeliveryWorker({ storage: s.storage, clock: s.clock, transport: t, resolve: fakeResolve(DNS), config: s.config, secretBox: here, logger });
    await worker.tick();
    expect(t.requests).toEqual([]);
    expect(logged.filter((l) => l.level === "error").map((l) => [l.message, l.fields?.key_id, l.fields?.webhook_id])).toEqual([
      ["webhook delivery waits: its signing secret opens under no configured operator key", "kelsewhere", id],
    ]);
    expect(logged.some((l) => l.message.includes("storage failed"))).toBe(false);
    const [d] = await s.storage.listDeliveries(s.accountId, id, 10);
    expect([d?.status, d?.attempts]).toEqual(["pending", 0]);

    logged.length = 0;
    const res = await sendTestEvent({ storage: s.storage, clock: s.clock, random: cryptoRandom, transport: t, resolve: fakeResolve(DNS), config: s.config, secretBox: here, logger }, s.accountId);
    expect(res.results).toEqual([{ webhook_id: id, url: "https://hooks.example.com/in", ok: false, response_status: null, duration_ms: 0, error: "secret_unopenable" }]);
    expect(t.requests).toEqual([]);
    expect(logged.map((l) => [l.level, l.fields?.key_id])).toEqual([["error", "kelsewhere"]]);
  });
});
