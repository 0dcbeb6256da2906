/** Storage conformance, suspended accounts (`AccountStore.setAccountStatus`) and what waits while they are suspended. */
import { describe, expect, it } from "vitest";
import type { Storage } from "../storage/types.ts";
import { isoTime } from "../clock/clock.ts";
import { account, admitInput, drainEvents, id, key, quota, storePerBlock, T0, webhook } from "./conformance-fixtures.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";

/** Registers these cases for one implementation under `name`. */
export function suspensionConformance(name: string, target: ConformanceTarget): void {
  describe(`storage conformance: ${name}`, () => {
    describe("suspended accounts", () => {
      let s!: Storage;
      storePerBlock(target, (store) => (s = store));

      const ACTIVE = { status: "active", suspendedAt: null, suspendedReason: null } as const;

      it("suspension: status, reason and version change with account.suspended; deliveries wait (never dead) until resumed, then go in order", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["account.suspended", "account.resumed", "key.created"]);
        await s.createWebhook(w, 10);
        const k = key(a.id, { environment: "test" });
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        await drainEvents(s, T0);
        const before = (await s.findKeyByHash(`h-${k.id}`))!;
        expect(before.account).toMatchObject(ACTIVE);

        const suspendedEvent = id("evt");
        const sus = await s.setAccountStatus({ accountId: a.id, status: "suspended", reason: "chargeback review", now: T0 + 1000, eventId: suspendedEvent });
        expect(sus).toEqual({ changed: true, account: { ...a, status: "suspended", suspendedAt: T0 + 1000, suspendedReason: "chargeback review" } });
        expect(await s.getAccount(a.id)).toEqual(sus!.account);
        // The lookup shows it, and the version moved: a lookup remembered from before is stale and counts nothing.
        const during = (await s.findKeyByHash(`h-${k.id}`))!;
        expect(during.account).toEqual(sus!.account);
        expect(during.version).not.toBe(before.version);
        expect(await s.admit(admitInput(a.id, k.id, T0 + 1001, { expect: { keyHash: `h-${k.id}`, version: before.version } }))).toMatchObject({ kind: "stale" });
        // Suspending again changes nothing (the first reason stays) and writes no second event.
        const again = await s.setAccountStatus({ accountId: a.id, status: "suspended", reason: "other", now: T0 + 1500, eventId: id("evt") });
        expect(again).toEqual({ changed: false, account: sus!.account });
        expect((await s.findKeyByHash(`h-${k.id}`))!.version).toBe(during.version);

        // Nothing of the account is claimed while it is suspended, however late, an event written meanwhile included.
        const k2 = key(a.id, { environment: "test", createdAt: T0 + 2000 });
        await s.createKey({ key: k2, hash: `h-${k2.id}`, maxKeys: 5, eventId: id("evt") });
        expect((await drainEvents(s, T0 + 86_400_000)).filter((d) => d.accountId === a.id)).toEqual([]);
        const waiting = await s.listDeliveries(a.id, w.id, 10);
        expect(waiting.map((d) => [d.eventType, d.status, d.attempts])).toEqual([
          ["key.created", "pending", 0],
          ["account.suspended", "pending", 0],
          ["key.created", "succeeded", 1],
        ]);

        const res = await s.setAccountStatus({ accountId: a.id, status: "active", now: T0 + 5000, eventId: id("evt") });
        expect(res).toEqual({ changed: true, account: { ...a, ...ACTIVE } });
        expect(await s.setAccountStatus({ accountId: a.id, status: "active", now: T0 + 5001, eventId: id("evt") })).toEqual({ changed: false, account: { ...a, ...ACTIVE } });
        const after = (await s.findKeyByHash(`h-${k.id}`))!;
        expect(after.account).toEqual({ ...a, ...ACTIVE });
        expect(after.version).not.toBe(during.version);
        expect(await s.admit(admitInput(a.id, k.id, T0 + 5002, { expect: { keyHash: `h-${k.id}`, version: after.version } }))).toMatchObject({ kind: "allowed" });

        const sent = (await drainEvents(s, T0 + 6000)).filter((d) => d.accountId === a.id).map((d) => JSON.parse(d.body));
        expect(sent.map((b) => b.type)).toEqual(["account.suspended", "key.created", "account.resumed"]);
        expect(sent[0]).toEqual({ id: suspendedEvent, type: "account.suspended", account_id: a.id, created_at: isoTime(T0 + 1000), data: { suspended_at: isoTime(T0 + 1000) } });
        expect(sent[2].data).toEqual({ suspended_at: isoTime(T0 + 1000), resumed_at: isoTime(T0 + 5000) });
        expect((await s.listDeliveries(a.id, w.id, 10)).every((d) => d.status === "succeeded" && d.attempts === 1)).toBe(true);
        expect(await s.setAccountStatus({ accountId: "acc_missing", status: "suspended", now: T0, eventId: id("evt") })).toBeNull();
      });

      it("racing suspensions (and resumptions) change the account once and write one event each", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createWebhook(webhook(a.id, ["account.suspended", "account.resumed"]), 10);
        const race = (status: "active" | "suspended", now: number) =>
          Promise.all(Array.from({ length: 8 }, () => s.setAccountStatus({ accountId: a.id, status, reason: "race", now, eventId: id("evt") })));
        const suspended = await race("suspended", T0 + 10);
        expect(suspended.filter((r) => r!.changed)).toHaveLength(1);
        expect(suspended.every((r) => r!.account.status === "suspended")).toBe(true);
        const resumed = await race("active", T0 + 20);
        expect(resumed.filter((r) => r!.changed)).toHaveLength(1);
        const sent = (await drainEvents(s, T0 + 30)).filter((d) => d.accountId === a.id);
        expect(sent.map((d) => d.eventType)).toEqual(["account.suspended", "account.resumed"]);
      });

      it("a suspended account's pending charge is not claimed; resuming lets the billing worker claim it", async () => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        for (let i = 0; i < 21; i++) await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
        expect(await s.listInvoices(a.id)).toMatchObject([{ status: "pending" }]);
        await s.setAccountStatus({ accountId: a.id, status: "suspended", now: T0 + 50, eventId: id("evt") });
        const mine = async (now: number) => (await s.claimCharges({ now, leaseMs: 60_000, limit: 100 })).filter((c) => c.invoice.accountId === a.id);
        expect(await mine(T0 + 100)).toEqual([]);
        expect(await mine(T0 + 86_400_000)).toEqual([]);
        expect(await s.listInvoices(a.id)).toMatchObject([{ status: "pending" }]);
        await s.setAccountStatus({ accountId: a.id, status: "active", now: T0 + 86_400_001, eventId: id("evt") });
        const claimed = await mine(T0 + 86_400_002);
        expect(claimed).toHaveLength(1);
        expect(claimed[0]!.account).toMatchObject({ id: a.id, status: "active" });
      });

      it("the time suspended does not count toward disabling a failing webhook", async () => {
        const DAY = 86_400_000;
        const health = () => ({ disableAfterMs: 5 * DAY, disableAfterDead: 0, eventId: id("evt") });
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.created"]);
        await s.createWebhook(w, 10);
        const k = key(a.id, { createdAt: T0 + 7 });
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const claimMine = async (now: number) => (await s.claimDeliveries({ now, leaseMs: 60_000, limit: 100, perWebhook: 100 })).find((d) => d.webhookId === w.id);
        const failed = (n: number, at: number) => ({ attempt: n, at, statusCode: 500, latencyMs: 1, error: "http_status", responseBody: "" });
        // Failing since T0 + 7; suspended an hour later for ten days.
        const first = (await claimMine(T0 + 7))!;
        expect(await s.completeDelivery({ deliveryId: first.deliveryId, leaseToken: first.leaseToken, attempt: failed(1, T0 + 7), next: { status: "pending", at: T0 + 1000 }, health: health() })).toBe(true);
        await s.setAccountStatus({ accountId: a.id, status: "suspended", now: T0 + 3_600_000, eventId: id("evt") });
        expect(await claimMine(T0 + 10 * DAY)).toBeUndefined();
        await s.setAccountStatus({ accountId: a.id, status: "active", now: T0 + 10 * DAY, eventId: id("evt") });
        // Back at once, failing for an hour and a minute of running time (not ten days): still active.
        const second = (await claimMine(T0 + 10 * DAY + 60_000))!;
        expect(second.attempt).toBe(2);
        await s.completeDelivery({ deliveryId: second.deliveryId, leaseToken: second.leaseToken, attempt: failed(2, T0 + 10 * DAY + 60_000), next: { status: "pending", at: T0 + 11 * DAY }, health: health() });
        expect((await s.getWebhook(a.id, w.id))!.status).toBe("active");
        // Five days of failing after the resumption do disable it.
        const third = (await claimMine(T0 + 15 * DAY))!;
        await s.completeDelivery({ deliveryId: third.deliveryId, leaseToken: third.leaseToken, attempt: failed(3, T0 + 15 * DAY), next: { status: "pending", at: T0 + 16 * DAY }, health: health() });
        expect((await s.getWebhook(a.id, w.id))!).toMatchObject({ status: "disabled", disabledReason: "failing" });
      });
    });
  });
}
