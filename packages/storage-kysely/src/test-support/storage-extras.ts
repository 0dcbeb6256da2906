/**
 * Checks beyond the shared conformance suite, for the SQL stores: limits and claims that must stay exact
 * when many calls race (the suite checks admit's exactness; these check the other guarded operations).
 */
import { describe, expect, it } from "vitest";
import type { AccountRecord, Storage } from "@benchdata/core";

let seq = 0;
const id = (prefix: string): string => `${prefix}_01JDEXTRAS${String(++seq).padStart(16, "0")}`;
const T0 = Date.UTC(2026, 10, 16, 12);

function account(): AccountRecord {
  return { id: id("acc"), name: "Extras", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} };
}

/** Registers the extra checks against a store from `get` (created by the caller's own hooks). */
export function storageExtras(name: string, get: () => Storage): void {
  describe(`storage extras: ${name}`, () => {
    it("createKey: 20 concurrent creations against maxKeys 5 create exactly 5", async () => {
      const s = get();
      const a = account();
      await s.createAccount(a);
      const results = await Promise.all(
        Array.from({ length: 20 }, () => {
          const k = { id: id("key"), accountId: a.id, name: "k", environment: "live" as const, scopes: ["benchmarks:read" as const], prefix: "svc_live_abc", isActive: true, createdAt: T0, rotatedAt: null, revokedAt: null };
          return s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        }),
      );
      expect(results.filter((r) => r === "created")).toHaveLength(5);
      expect(await s.listKeys(a.id)).toHaveLength(5);
    });

    it("createWebhook: 12 concurrent creations against maxWebhooks 3 create exactly 3", async () => {
      const s = get();
      const a = account();
      await s.createAccount(a);
      const results = await Promise.all(Array.from({ length: 12 }, () => s.createWebhook({ id: id("wh"), accountId: a.id, url: "https://h.example/x", events: ["key.created"], secret: "whsec_x", createdAt: T0 }, 3)));
      expect(results.filter((r) => r === "created")).toHaveLength(3);
    });

    it("claimDeliveries: racing workers never claim a delivery twice and respect perWebhook across workers", async () => {
      const s = get();
      const a = account();
      await s.createAccount(a);
      const hooks = [id("wh"), id("wh"), id("wh")];
      for (const h of hooks) await s.createWebhook({ id: h, accountId: a.id, url: "https://h.example/x", events: ["quota.warning"], secret: "whsec_x", createdAt: T0 }, 10);
      for (let i = 0; i < 10; i++) {
        await s.emitEvent({ id: id("evt"), type: "quota.warning", accountId: a.id, createdAt: new Date(T0).toISOString(), data: { calls_used: i, monthly_limit: 10, threshold: 8, period_start: "x", period_end: "y" } }, T0);
      }
      const now = T0 + 1;
      const batches = await Promise.all(Array.from({ length: 6 }, () => s.claimDeliveries({ now, leaseMs: 60_000, limit: 100, perWebhook: 4 })));
      const mine = batches.flat().filter((d) => d.accountId === a.id);
      expect(new Set(mine.map((d) => d.deliveryId)).size).toBe(mine.length);
      for (const h of hooks) expect(mine.filter((d) => d.webhookId === h).length).toBeLessThanOrEqual(4);
      // Whatever the race left unclaimed is claimable by the next round, up to the cap.
      const again = (await s.claimDeliveries({ now, leaseMs: 60_000, limit: 100, perWebhook: 4 })).filter((d) => d.accountId === a.id);
      for (const h of hooks) expect([...mine, ...again].filter((d) => d.webhookId === h)).toHaveLength(4);
    });

    it("claimCharges: racing workers never claim an invoice twice", async () => {
      const s = get();
      const accounts = [account(), account(), account(), account()];
      for (const a of accounts) {
        await s.createAccount(a);
        const quota = { anchorDay: 1, baseQuota: 1, blockSize: 1, blockPrice: 10, currency: "usd", retryAfterFailureMs: 1, maxAutoCharges: 3, warningEventId: id("evt"), invoiceId: id("inv"), heldEventId: id("evt") };
        for (let i = 0; i < 2; i++) await s.admit({ now: T0 + i, keyId: id("key"), accountId: a.id, perMinute: 10, perDay: 10, windowMs: 60_000, quota: { ...quota, invoiceId: id("inv") } });
      }
      const ids = new Set(accounts.map((a) => a.id));
      const batches = await Promise.all(Array.from({ length: 5 }, () => s.claimCharges({ now: T0 + 10, leaseMs: 60_000, limit: 2 })));
      const mine = batches.flat().filter((c) => ids.has(c.invoice.accountId));
      expect(new Set(mine.map((c) => c.invoice.id)).size).toBe(mine.length);
      expect(mine).toHaveLength(4);
    });
  });
}
