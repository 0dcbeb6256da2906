/** Every event type, caused the way the service causes it, delivered and verified with an independent verifier. */
import { createHmac } from "node:crypto";
import { verify as octokitVerify } from "@octokit/webhooks-methods";
import { describe, expect, it } from "vitest";
import { createBillingWorker } from "../billing/billing-worker.ts";
import { quotaAdmission } from "../billing/quota-admission.ts";
import { simulatedProcessor } from "../billing/simulated-processor.ts";
import { cryptoRandom, manualClock } from "../clock/clock.ts";
import { defineConfig } from "../config/config.ts";
import { EVENT_TYPES } from "../events/events.ts";
import { isId, newId } from "../ids/new-id.ts";
import { generateSigningSecret } from "../signing/signature.ts";
import { createMemoryStorage } from "../storage/memory-storage.ts";
import type { AccountRecord, ApiKeyRecord } from "../storage/types.ts";
import { createDeliveryWorker } from "./delivery-worker.ts";
import type { WebhookRequest, WebhookTransport } from "./webhook-transport.ts";

const T0 = Date.UTC(2026, 10, 16, 12, 0, 0);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function standardSignatureValid(secret: string, headers: Readonly<Record<string, string>>, body: string): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const mac = createHmac("sha256", key).update(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`).digest("base64");
  return headers["webhook-signature"] === `v1,${mac}`;
}

describe("webhook events end to end", () => {
  it("key.*, quota.* and invoice.* arrive with the contract's payloads and valid signatures", async () => {
    const storage = createMemoryStorage();
    const clock = manualClock(T0);
    const config = defineConfig();
    const random = cryptoRandom;
    const account: AccountRecord = { id: newId("acc", clock, random), name: "Acme", tier: "developer", createdAt: T0, limits: { monthlyQuota: 20, blockSize: 10, blockPrice: 1000 }, allowedCidrs: [], billing: {} };
    await storage.createAccount(account);
    const secret = generateSigningSecret(random);
    await storage.createWebhook({ id: newId("wh", clock, random), accountId: account.id, url: "https://hooks.example.com/in", events: [...EVENT_TYPES], secret, createdAt: T0 }, 10);

    // key.created, key.rotated, key.revoked
    const key: ApiKeyRecord = { id: newId("key", clock, random), accountId: account.id, name: "server", environment: "live", scopes: ["benchmarks:read"], prefix: "svc_live_abc", isActive: true, createdAt: T0, rotatedAt: null, revokedAt: null };
    await storage.createKey({ key, hash: "h1", maxKeys: 10, eventId: newId("evt", clock, random) });
    clock.advance(1000);
    await storage.rotateKey({ accountId: account.id, keyId: key.id, newHash: "h2", newPrefix: "svc_live_xyz", now: clock.now(), eventId: newId("evt", clock, random) });
    // quota.warning (16th call), quota.exhausted + invoice.paid (first block), then invoice.failed (second block)
    clock.advance(1000);
    const admit = () => storage.admit({ now: clock.now(), keyId: key.id, accountId: account.id, perMinute: 1e6, perDay: 1e9, windowMs: 60_000, quota: quotaAdmission(config, account, clock, random) });
    for (let i = 0; i < 21; i++) await admit();
    let outcome: "succeed" | "fail" = "succeed";
    const processor = simulatedProcessor({ outcome: () => outcome });
    const billing = createBillingWorker({ storage, clock, random, processor, config });
    clock.advance(1000);
    await billing.tick();
    clock.advance(1000);
    for (let i = 0; i < 11; i++) await admit();
    outcome = "fail";
    clock.advance(1000);
    await billing.tick();
    clock.advance(1000);
    await storage.revokeKey({ accountId: account.id, keyId: key.id, now: clock.now(), eventId: newId("evt", clock, random) });

    const requests: WebhookRequest[] = [];
    const transport: WebhookTransport = {
      async send(req) {
        requests.push(req);
        return { status: 200, body: '{"ok":true}' };
      },
    };
    const delivery = createDeliveryWorker({ storage, clock, transport, resolve: async () => ["93.184.216.34"], config });
    // Each tick takes at most concurrencyPerWebhook (4) deliveries of the one webhook.
    while ((await delivery.tick()) > 0);

    const types = requests.map((r) => r.headers["X-Service-Event-Type"]);
    expect([...types].sort()).toEqual(["invoice.failed", "invoice.paid", "key.created", "key.revoked", "key.rotated", "quota.exhausted", "quota.exhausted", "quota.warning", "quota.warning"]);
    for (const r of requests) {
      expect(await octokitVerify(secret, r.body, r.headers["X-Service-Signature"]!)).toBe(true);
      // Another secret: its last character changed (to one it is not: a secret ending in "x" made this flaky, 1 in 64).
      const other = secret.slice(0, -1) + (secret.endsWith("x") ? "y" : "x");
      expect(await octokitVerify(other, r.body, r.headers["X-Service-Signature"]!)).toBe(false);
      expect(standardSignatureValid(secret, r.headers, r.body)).toBe(true);
      const body = JSON.parse(r.body);
      expect(Object.keys(body)).toEqual(["id", "type", "account_id", "created_at", "data"]);
      expect(isId("evt", body.id)).toBe(true);
      expect(body.id).toBe(r.headers["X-Service-Event-Id"]);
      expect(body.type).toBe(r.headers["X-Service-Event-Type"]);
      expect(body.account_id).toBe(account.id);
      expect(body.created_at).toMatch(ISO);
    }
    const invoices = await storage.listInvoices(account.id);
    const paid = invoices.find((i) => i.status === "paid")!;
    const failed = invoices.find((i) => i.status === "failed")!;
    const data = (type: string) => requests.filter((r) => r.headers["X-Service-Event-Type"] === type).map((r) => JSON.parse(r.body).data);
    const iso = (ms: number) => new Date(ms).toISOString();
    const period = { period_start: "2026-11-01T00:00:00.000Z", period_end: "2026-12-01T00:00:00.000Z" };

    expect(data("key.created")).toEqual([{ key_id: key.id, key_name: "server", environment: "live", scopes: ["benchmarks:read"], created_at: iso(T0) }]);
    expect(data("key.rotated")).toEqual([{ key_id: key.id, key_name: "server", rotated_at: iso(T0 + 1000) }]);
    expect(data("key.revoked")).toEqual([{ key_id: key.id, key_name: "server", revoked_at: iso(T0 + 6000) }]);
    expect(data("quota.warning")).toEqual(
      expect.arrayContaining([
        { calls_used: 16, monthly_limit: 20, threshold: 16, ...period },
        { calls_used: 28, monthly_limit: 30, threshold: 28, ...period },
      ]),
    );
    expect(data("quota.exhausted")).toEqual(
      expect.arrayContaining([
        { calls_used: 20, ...period, charge_amount: 1000, charge_currency: "usd", processor_ref: paid.processorRef },
        { calls_used: 30, ...period, charge_amount: 1000, charge_currency: "usd", processor_ref: failed.processorRef },
      ]),
    );
    expect(data("invoice.paid")).toEqual([{ invoice_id: paid.id, amount: 1000, currency: "usd", paid_at: iso(T0 + 3000), processor_ref: paid.processorRef }]);
    expect(data("invoice.failed")).toEqual([{ invoice_id: failed.id, amount: 1000, currency: "usd", failed_at: iso(T0 + 5000), processor_ref: failed.processorRef, failure_reason: "card_declined" }]);
    expect(paid.processorRef).toMatch(/^sim_/);
  });
});
