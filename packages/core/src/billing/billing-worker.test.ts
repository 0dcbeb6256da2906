import { describe, expect, it } from "vitest";
import type { ManualClock } from "../clock/clock.ts";
import { cryptoRandom, manualClock } from "../clock/clock.ts";
import type { DeepPartial, ServiceConfig } from "../config/config.ts";
import { defineConfig } from "../config/config.ts";
import { EVENT_TYPES } from "../events/events.ts";
import { newId } from "../ids/new-id.ts";
import { createMemoryStorage } from "../storage/memory-storage.ts";
import type { AccountRecord, AdmitResult, ApiKeyRecord, Storage } from "../storage/types.ts";
import type { PaymentProcessor } from "./payment-processor.ts";
import { BILLING_LEASE_MARGIN_MS, createBillingWorker } from "./billing-worker.ts";
import { quotaAdmission } from "./quota-admission.ts";
import type { SimulatedOutcome } from "./simulated-processor.ts";
import { simulatedProcessor } from "./simulated-processor.ts";
import type { MetricsRegistry } from "../metrics/metrics-registry.ts";
import { createMetricsRegistry } from "../metrics/metrics-registry.ts";

const T0 = Date.UTC(2026, 10, 16, 12, 0, 0);
const SECOND = 1000;

interface Setup {
  storage: Storage;
  clock: ManualClock;
  config: ServiceConfig;
  account: AccountRecord;
  key: ApiKeyRecord;
  admit(): Promise<AdmitResult>;
  /** Claims and acknowledges every due delivery; returns the event bodies, oldest first. */
  drain(): Promise<Array<{ type: string; data: Record<string, unknown> }>>;
}

async function setup(over: DeepPartial<ServiceConfig> = {}): Promise<Setup> {
  const storage = createMemoryStorage();
  const clock = manualClock(T0);
  const config = defineConfig(over);
  const account: AccountRecord = {
    id: newId("acc", clock, cryptoRandom),
    name: "Acme",
    tier: "developer",
    createdAt: T0,
    limits: { monthlyQuota: 20, blockSize: 10, blockPrice: 1000 },
    allowedCidrs: [],
    billing: { customerRef: "cus_123", paymentMethodRef: "pm_456" },
  };
  await storage.createAccount(account);
  await storage.createWebhook({ id: newId("wh", clock, cryptoRandom), accountId: account.id, url: "https://hooks.example.com/in", events: [...EVENT_TYPES], secret: "whsec_x", createdAt: T0 }, 10);
  const key: ApiKeyRecord = { id: newId("key", clock, cryptoRandom), accountId: account.id, name: "server", environment: "live", scopes: ["benchmarks:read"], prefix: "svc_live_abc", isActive: true, createdAt: T0, rotatedAt: null, revokedAt: null };
  await storage.createKey({ key, hash: `h-${key.id}`, maxKeys: 10, eventId: newId("evt", clock, cryptoRandom) });
  return {
    storage,
    clock,
    config,
    account,
    key,
    admit: () =>
      storage.admit({ now: clock.now(), keyId: key.id, accountId: account.id, perMinute: 1e6, perDay: 1e9, windowMs: 60_000, quota: quotaAdmission(config, account, clock, cryptoRandom) }),
    async drain() {
      const out: Array<{ type: string; data: Record<string, unknown> }> = [];
      for (;;) {
        const got = await storage.claimDeliveries({ now: clock.now(), leaseMs: 60_000, limit: 100, perWebhook: 100 });
        if (got.length === 0) return out;
        for (const d of got) {
          out.push(JSON.parse(d.body));
          await storage.completeDelivery({ deliveryId: d.deliveryId, leaseToken: d.leaseToken, attempt: { attempt: d.attempt, at: clock.now(), statusCode: 200, latencyMs: 1, error: null, responseBody: "" }, next: { status: "succeeded" } });
        }
      }
    },
  };
}

async function exhaust(s: Setup): Promise<AdmitResult> {
  let last: AdmitResult | undefined;
  for (let i = 0; i < 21; i++) last = await s.admit();
  return last!;
}

function worker(s: Setup, processor: PaymentProcessor, extra: { processorTimeoutMs?: number; onEvents?: () => void; metrics?: MetricsRegistry } = {}) {
  return createBillingWorker({ storage: s.storage, clock: s.clock, random: cryptoRandom, processor, config: s.config, ...extra });
}

describe("billing worker", () => {
  it("metrics: charges are counted by outcome (paid, failed, unknown) in the registry it is given", async () => {
    const metrics = createMetricsRegistry();
    for (const outcome of ["succeed", "fail"] as const) {
      const s = await setup();
      await exhaust(s);
      s.clock.advance(2 * SECOND);
      expect(await worker(s, simulatedProcessor({ outcome }), { metrics }).tick()).toBe(1);
    }
    const s = await setup();
    await exhaust(s);
    const throwing: PaymentProcessor = { charge: () => Promise.reject(new Error("socket hang up")) };
    expect(await worker(s, throwing, { metrics }).tick()).toBe(1);
    expect(metrics.value("benchdata_billing_charges_total", { outcome: "paid" })).toBe(1);
    expect(metrics.value("benchdata_billing_charges_total", { outcome: "failed" })).toBe(1);
    expect(metrics.value("benchdata_billing_charges_total", { outcome: "unknown" })).toBe(1);
    expect(metrics.value("benchdata_billing_charges_total", { outcome: "lease_lost" })).toBe(0);
  });

  it("exactly one charge when 200 concurrent requests meet the exhaustion, even with two workers", async () => {
    const s = await setup();
    const results = await Promise.all(Array.from({ length: 200 }, () => s.admit()));
    expect(results.filter((r) => r.kind === "allowed")).toHaveLength(20);
    expect(results.filter((r) => r.kind === "quota_exhausted" && r.chargeInvoiceId !== null)).toHaveLength(1);
    const processor = simulatedProcessor({ outcome: "succeed", latencyMs: 10 });
    const [a, b] = [worker(s, processor), worker(s, processor)];
    const counts = await Promise.all([a.tick(), b.tick(), a.tick()]);
    expect(counts.reduce((x, y) => x + y, 0)).toBe(1);
    expect(processor.charges).toHaveLength(1);
    expect(processor.calls).toHaveLength(1);
    expect(processor.charges[0]!.request).toMatchObject({
      accountId: s.account.id,
      amount: 1000,
      currency: "usd",
      customerRef: "cus_123",
      paymentMethodRef: "pm_456",
      idempotencyKey: `benchdata:${s.account.id}:2026-11-01T00:00:00.000Z:block-1`,
    });
    expect(await a.tick()).toBe(0);
    expect(await s.storage.listInvoices(s.account.id)).toHaveLength(1);
  });

  it("paid: quota.exhausted (with the processor reference) then invoice.paid, and the quota reopens with one more block", async () => {
    const s = await setup();
    await s.drain();
    const flip = await exhaust(s);
    expect(flip).toMatchObject({ kind: "quota_exhausted", flipped: true });
    expect((await s.admit()).kind).toBe("quota_exhausted");
    const processor = simulatedProcessor({ outcome: "succeed" });
    let nudged = 0;
    s.clock.advance(2 * SECOND);
    expect(await worker(s, processor, { onEvents: () => nudged++ }).tick()).toBe(1);
    expect(nudged).toBe(1);
    const ref = processor.charges[0]!.result.processorRef;
    const [invoice] = await s.storage.listInvoices(s.account.id);
    expect(invoice).toMatchObject({ status: "paid", processorRef: ref, resolvedAt: T0 + 2 * SECOND, block: 1, attempt: 1 });
    const events = await s.drain();
    // Same-millisecond events have no defined order (receivers must not depend on it): look them up by type.
    expect(events.map((e) => e.type).sort()).toEqual(["invoice.paid", "quota.exhausted", "quota.warning"]);
    const byType = (t: string) => events.find((e) => e.type === t)!.data;
    expect(byType("quota.exhausted")).toEqual({ calls_used: 20, period_start: "2026-11-01T00:00:00.000Z", period_end: "2026-12-01T00:00:00.000Z", charge_amount: 1000, charge_currency: "usd", processor_ref: ref });
    expect(byType("invoice.paid")).toEqual({ invoice_id: invoice!.id, amount: 1000, currency: "usd", paid_at: new Date(T0 + 2 * SECOND).toISOString(), processor_ref: ref });
    // The allowance grew by a block: ten more calls, then the next exhaustion starts the next block's charge.
    for (let i = 0; i < 10; i++) expect((await s.admit()).kind).toBe("allowed");
    expect(await s.admit()).toMatchObject({ kind: "quota_exhausted", flipped: true, chargeInvoiceId: expect.any(String) });
    const usage = await s.storage.usage(s.account.id, s.clock.now(), 1, 20, 10);
    expect(usage).toMatchObject({ month: 30, allowance: 30, exhausted: true });
  });

  it("failed: invoice.failed with the reason; access stays closed; after retryAfterFailureSeconds a request starts a new attempt with a new key", async () => {
    const s = await setup();
    await s.drain();
    await exhaust(s);
    let outcome: SimulatedOutcome = "fail";
    const processor = simulatedProcessor({ outcome: () => outcome, failureReason: "card_declined" });
    const w = worker(s, processor);
    await w.tick();
    const [failed] = await s.storage.listInvoices(s.account.id);
    expect(failed).toMatchObject({ status: "failed", failureReason: "card_declined", attempt: 1 });
    const events = await s.drain();
    expect(events.map((e) => e.type).sort()).toEqual(["invoice.failed", "quota.exhausted", "quota.warning"]);
    expect(events.find((e) => e.type === "invoice.failed")!.data).toEqual({
      invoice_id: failed!.id,
      amount: 1000,
      currency: "usd",
      failed_at: new Date(T0).toISOString(),
      processor_ref: failed!.processorRef,
      failure_reason: "card_declined",
    });
    // Closed, and no new charge before the delay (config default: 3600 s).
    s.clock.advance(3600 * SECOND - 1);
    expect(await s.admit()).toMatchObject({ kind: "quota_exhausted", chargeInvoiceId: null });
    expect(await w.tick()).toBe(0);
    s.clock.advance(1);
    const retry = await s.admit();
    expect(retry).toMatchObject({ kind: "quota_exhausted", chargeInvoiceId: expect.any(String) });
    outcome = "succeed";
    await w.tick();
    const [second] = await s.storage.listInvoices(s.account.id);
    expect(second).toMatchObject({ status: "paid", block: 1, attempt: 2 });
    expect(second!.idempotencyKey).toBe(`${failed!.idempotencyKey}:attempt-2`);
    expect(processor.charges.map((c) => c.request.idempotencyKey)).toEqual([failed!.idempotencyKey, second!.idempotencyKey]);
    // quota.exhausted fires once per exhaustion, not once per attempt.
    expect((await s.drain()).map((e) => e.type)).toEqual(["invoice.paid"]);
    expect((await s.admit()).kind).toBe("allowed");
  });

  it("an unknown outcome (the processor threw after charging) is retried after the lease with the SAME key: one charge", async () => {
    const s = await setup();
    await exhaust(s);
    let outcome: SimulatedOutcome = "lost";
    const processor = simulatedProcessor({ outcome: () => outcome });
    const w = worker(s, processor, { processorTimeoutMs: 30_000 });
    expect(await w.tick()).toBe(1);
    expect((await s.storage.listInvoices(s.account.id))[0]!.status).toBe("pending");
    outcome = "succeed";
    s.clock.advance(30_000 + BILLING_LEASE_MARGIN_MS - 1);
    expect(await w.tick()).toBe(0); // still leased
    s.clock.advance(1);
    expect(await w.tick()).toBe(1);
    expect(processor.calls.map((c) => c.idempotencyKey)).toEqual([processor.calls[0]!.idempotencyKey, processor.calls[0]!.idempotencyKey]);
    expect(processor.charges).toHaveLength(1);
    expect((await s.storage.listInvoices(s.account.id))[0]).toMatchObject({ status: "paid", processorRef: processor.charges[0]!.result.processorRef });
    expect((await s.admit()).kind).toBe("allowed");
  });

  it("a processor that hangs past its time-out leaves the charge pending for a retry with the same key", async () => {
    const s = await setup();
    await exhaust(s);
    const keys: string[] = [];
    let hang = true;
    const processor: PaymentProcessor = {
      async charge(req) {
        keys.push(req.idempotencyKey);
        if (hang) return new Promise(() => {});
        return { status: "succeeded", processorRef: "pi_1" };
      },
    };
    const w = worker(s, processor, { processorTimeoutMs: 20 });
    await w.tick();
    expect((await s.storage.listInvoices(s.account.id))[0]!.status).toBe("pending");
    hang = false;
    s.clock.advance(20 + BILLING_LEASE_MARGIN_MS);
    await w.tick();
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    expect((await s.storage.listInvoices(s.account.id))[0]).toMatchObject({ status: "paid", processorRef: "pi_1" });
  });

  it("after maxAutoChargesPerPeriod failed attempts the account is held for review; a console retry charges anyway", async () => {
    const s = await setup({ billing: { maxAutoChargesPerPeriod: 2, retryAfterFailureSeconds: 60 } });
    await exhaust(s);
    let outcome: SimulatedOutcome = "fail";
    const processor = simulatedProcessor({ outcome: () => outcome });
    const w = worker(s, processor);
    await w.tick();
    s.clock.advance(60 * SECOND);
    expect(await s.admit()).toMatchObject({ chargeInvoiceId: expect.any(String) });
    await w.tick();
    s.clock.advance(60 * SECOND);
    expect(await s.admit()).toMatchObject({ kind: "quota_exhausted", chargeInvoiceId: null, heldForReview: true });
    expect(await w.tick()).toBe(0);
    // The console's POST /billing/retry: storage.requestCharge, past the delay and the cap (the customer asked).
    const retry = () => s.storage.requestCharge({ accountId: s.account.id, now: s.clock.now(), anchorDay: 1, invoiceId: newId("inv", s.clock, cryptoRandom), baseQuota: 20, blockSize: 10, blockPrice: 1000, currency: "usd" });
    outcome = "succeed";
    const inv = await retry();
    expect(inv).toMatchObject({ status: "pending", block: 1, attempt: 3, amount: 1000, currency: "usd" });
    expect(await retry()).toBeNull(); // one outstanding at a time
    await w.tick();
    expect((await s.admit()).kind).toBe("allowed");
    expect(await retry()).toBeNull(); // nothing to charge
    expect(processor.charges).toHaveLength(3);
  });

  it("start() charges a pending invoice on nudge(), and stop() waits for it to settle", async () => {
    const s = await setup();
    const processor = simulatedProcessor({ outcome: "succeed", latencyMs: 50 });
    const w = createBillingWorker({ storage: s.storage, clock: s.clock, random: cryptoRandom, processor, config: s.config, pollIntervalMs: 60_000 });
    w.start();
    await new Promise((r) => setTimeout(r, 10));
    await exhaust(s);
    w.nudge();
    await new Promise((r) => setTimeout(r, 20));
    await w.stop();
    expect((await s.storage.listInvoices(s.account.id))[0]!.status).toBe("paid");
  });
});
