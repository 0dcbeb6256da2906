import http from "node:http";
import type { AddressInfo } from "node:net";
import { cryptoRandom, manualClock } from "../clock/clock.ts";
import { defineConfig } from "../config/config.ts";
import { EVENT_TYPES } from "../events/events.ts";
import { newId } from "../ids/new-id.ts";
import { createMemoryStorage } from "../storage/memory-storage.ts";
import type { AccountRecord, ApiKeyRecord } from "../storage/types.ts";
import { BILLING_LEASE_MARGIN_MS, createBillingWorker } from "./billing-worker.ts";
import type { PaymentRequest } from "./payment-processor.ts";
import { quotaAdmission } from "./quota-admission.ts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { STRIPE_API_VERSION, stripeProcessor } from "./stripe-processor.ts";

/** What the stub saw of one request. */
interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  form: Record<string, string>;
}

type Reply = { status: number; json: unknown } | "hang";

/**
 * A Stripe-like stub: `script` picks each reply by the request's `customer`; like Stripe, a key that got a
 * definite answer replays it (`replayed` counts those).
 */
function stripeStub() {
  const seen: Seen[] = [];
  const saved = new Map<string, { status: number; json: unknown }>();
  let replayed = 0;
  let script: (form: Record<string, string>, n: number) => Reply = () => ({ status: 500, json: {} });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString("utf8")));
      seen.push({ method: req.method!, path: req.url!, headers: req.headers, form });
      const key = String(req.headers["idempotency-key"]);
      const prior = saved.get(key);
      if (prior) {
        replayed++;
        return void res.writeHead(prior.status, { "Content-Type": "application/json", "Idempotent-Replayed": "true" }).end(JSON.stringify(prior.json));
      }
      const reply = script(form, seen.length);
      if (reply === "hang") return;
      if (reply.status < 500) saved.set(key, reply);
      res.writeHead(reply.status, { "Content-Type": "application/json" }).end(JSON.stringify(reply.json));
    });
  });
  return {
    seen,
    get replayed() {
      return replayed;
    },
    setScript(s: typeof script) {
      script = s;
    },
    reset() {
      seen.length = 0;
      saved.clear();
      replayed = 0;
    },
    server,
  };
}

const intent = (id: string, status: string, extra: object = {}) => ({ id, object: "payment_intent", status, ...extra });

const request = (over: Partial<PaymentRequest> = {}): PaymentRequest => ({
  invoiceId: "inv_01JD0000000000000000000001",
  accountId: "acc_01JD0000000000000000000001",
  amount: 1000,
  currency: "usd",
  idempotencyKey: `benchdata:acc_1:2026-11-01T00:00:00.000Z:block-${Math.random()}`,
  customerRef: "cus_123",
  paymentMethodRef: "pm_456",
  description: "benchdata quota block 1",
  ...over,
});

describe("stripeProcessor against a local Stripe stub", () => {
  const stub = stripeStub();
  let apiBase = "";
  beforeAll(async () => {
    await new Promise<void>((ok) => stub.server.listen(0, "127.0.0.1", ok));
    apiBase = `http://127.0.0.1:${(stub.server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((ok) => {
    stub.server.closeAllConnections();
    stub.server.close(() => ok());
  }));
  beforeEach(() => stub.reset());
  const processor = (over: object = {}) => stripeProcessor({ secretKey: "sk_test_abc", apiBase, timeoutMs: 5000, ...over });

  it("creates an off-session, confirmed PaymentIntent with the expected request shape", async () => {
    stub.setScript(() => ({ status: 200, json: intent("pi_ok", "succeeded") }));
    const req = request();
    expect(await processor().charge(req)).toEqual({ status: "succeeded", processorRef: "pi_ok" });
    expect(stub.seen).toHaveLength(1);
    const s = stub.seen[0]!;
    expect(s.method).toBe("POST");
    expect(s.path).toBe("/v1/payment_intents");
    expect(s.headers).toMatchObject({
      authorization: "Bearer sk_test_abc",
      "content-type": "application/x-www-form-urlencoded",
      "idempotency-key": req.idempotencyKey,
      "stripe-version": STRIPE_API_VERSION,
    });
    expect(s.form).toEqual({
      amount: "1000",
      currency: "usd",
      customer: "cus_123",
      payment_method: "pm_456",
      off_session: "true",
      confirm: "true",
      description: "benchdata quota block 1",
      "metadata[invoice_id]": req.invoiceId,
      "metadata[account_id]": req.accountId,
    });
  });

  it("a card error (402) is a failure with the decline code and the PaymentIntent id", async () => {
    stub.setScript(() => ({ status: 402, json: { error: { type: "card_error", code: "card_declined", decline_code: "insufficient_funds", message: "Your card has insufficient funds.", payment_intent: intent("pi_declined", "requires_payment_method") } } }));
    expect(await processor().charge(request())).toEqual({ status: "failed", processorRef: "pi_declined", reason: "insufficient_funds" });
    stub.setScript(() => ({ status: 402, json: { error: { type: "card_error", code: "expired_card", payment_intent: { id: "pi_exp" } } } }));
    expect(await processor().charge(request())).toEqual({ status: "failed", processorRef: "pi_exp", reason: "expired_card" });
  });

  it("an intent needing customer action or another payment method is a failure", async () => {
    stub.setScript(() => ({ status: 200, json: intent("pi_3ds", "requires_action") }));
    expect(await processor().charge(request())).toEqual({ status: "failed", processorRef: "pi_3ds", reason: "authentication_required" });
    stub.setScript(() => ({ status: 400, json: { error: { type: "invalid_request_error", code: "resource_missing", message: "No such PaymentMethod" } } }));
    expect(await processor().charge(request())).toEqual({ status: "failed", processorRef: "", reason: "resource_missing" });
  });

  it.each([
    ["a 500", { status: 500, json: { error: { type: "api_error" } } }],
    ["a 503", { status: 503, json: {} }],
    ["a 429", { status: 429, json: { error: { type: "rate_limit_error" } } }],
    ["a 409", { status: 409, json: { error: { type: "idempotency_error", code: "idempotency_key_in_use" } } }],
    ["a 401 (our key is wrong: never the customer's fault)", { status: 401, json: { error: { type: "invalid_request_error", message: "Invalid API Key" } } }],
    ["a processing intent", { status: 200, json: intent("pi_slow", "processing") }],
  ] as const)("%s is an unknown outcome: it throws", async (_name, reply) => {
    stub.setScript(() => reply);
    await expect(processor().charge(request())).rejects.toMatchObject({ name: "StripeUnknownOutcome" });
  });

  it("a time-out and a refused connection are unknown outcomes", async () => {
    stub.setScript(() => "hang");
    const started = Date.now();
    await expect(processor({ timeoutMs: 200 }).charge(request())).rejects.toMatchObject({ name: "StripeUnknownOutcome" });
    expect(Date.now() - started).toBeLessThan(2000);
    await expect(stripeProcessor({ secretKey: "sk", apiBase: "http://127.0.0.1:1" }).charge(request())).rejects.toMatchObject({ name: "StripeUnknownOutcome" });
  });

  it("without a saved payment method it fails without calling Stripe", async () => {
    expect(await processor().charge(request({ paymentMethodRef: undefined }))).toEqual({ status: "failed", processorRef: "", reason: "no_payment_method" });
    expect(stub.seen).toHaveLength(0);
  });

  it("through the billing worker: a 5xx leaves the charge pending, and the retry reuses the Idempotency-Key", async () => {
    const storage = createMemoryStorage();
    const clock = manualClock(Date.UTC(2026, 10, 16, 12));
    const config = defineConfig();
    const account: AccountRecord = { id: newId("acc", clock, cryptoRandom), name: "Acme", tier: "developer", createdAt: clock.now(), limits: { monthlyQuota: 5, blockSize: 5, blockPrice: 1000 }, allowedCidrs: [], billing: { customerRef: "cus_123", paymentMethodRef: "pm_456" } };
    await storage.createAccount(account);
    await storage.createWebhook({ id: newId("wh", clock, cryptoRandom), accountId: account.id, url: "https://hooks.example.com/", events: [...EVENT_TYPES], secret: "whsec_x", createdAt: clock.now() }, 10);
    const key: ApiKeyRecord = { id: newId("key", clock, cryptoRandom), accountId: account.id, name: "k", environment: "live", scopes: ["benchmarks:read"], prefix: "svc_live_abc", isActive: true, createdAt: clock.now(), rotatedAt: null, revokedAt: null };
    await storage.createKey({ key, hash: "h", maxKeys: 5, eventId: newId("evt", clock, cryptoRandom) });
    for (let i = 0; i < 6; i++) await storage.admit({ now: clock.now(), keyId: key.id, accountId: account.id, perMinute: 1e6, perDay: 1e9, windowMs: 60_000, quota: quotaAdmission(config, account, clock, cryptoRandom) });

    stub.setScript((_form, n) => (n === 1 ? { status: 500, json: { error: { type: "api_error" } } } : { status: 200, json: intent("pi_paid", "succeeded") }));
    const worker = createBillingWorker({ storage, clock, random: cryptoRandom, processor: processor(), config, processorTimeoutMs: 5000 });
    expect(await worker.tick()).toBe(1);
    expect((await storage.listInvoices(account.id))[0]!.status).toBe("pending");
    clock.advance(5000 + BILLING_LEASE_MARGIN_MS);
    expect(await worker.tick()).toBe(1);
    const [invoice] = await storage.listInvoices(account.id);
    expect(invoice).toMatchObject({ status: "paid", processorRef: "pi_paid" });
    expect(stub.seen.map((s) => s.headers["idempotency-key"])).toEqual([invoice!.idempotencyKey, invoice!.idempotencyKey]);
    expect(stub.seen[1]!.form).toEqual(stub.seen[0]!.form);
    // quota.exhausted carries the PaymentIntent id.
    const claimed = await storage.claimDeliveries({ now: clock.now(), leaseMs: 1000, limit: 50, perWebhook: 50 });
    const exhausted = claimed.map((d) => JSON.parse(d.body)).find((b) => b.type === "quota.exhausted");
    expect(exhausted.data).toMatchObject({ processor_ref: "pi_paid", charge_amount: 1000, charge_currency: "usd", calls_used: 5 });
  });
});
