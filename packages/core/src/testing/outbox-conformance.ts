/** Storage conformance, webhooks and the outbox (`WebhookStore`, `OutboxStore`): subscriptions, claims under leases, ordering and recovery. */
import { describe, expect, it } from "vitest";
import type { ClaimedDelivery, Storage } from "../storage/types.ts";
import { isId } from "../ids/new-id.ts";
import { account, admitInput, drainEvents, emitWarning, id, key, quota, settle, storePerBlock, T0, webhook } from "./conformance-fixtures.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** The time part (Unix ms) of a `<prefix>_<ULID>` identifier. */
function ulidTime(id: string): number {
  let t = 0;
  for (const c of id.slice(id.indexOf("_") + 1, id.indexOf("_") + 11)) t = t * 32 + CROCKFORD.indexOf(c);
  return t;
}

/** Registers these cases for one implementation under `name`. */
export function outboxConformance(name: string, target: ConformanceTarget): void {
  describe(`storage conformance: ${name}`, () => {
    describe("webhooks and deliveries", () => {
      let s!: Storage;
      storePerBlock(target, (store) => (s = store));

      it("limits webhooks per account, lists them, and deleting one stops its pending deliveries", async () => {
        const a = account();
        await s.createAccount(a);
        const w1 = webhook(a.id, ["key.created"]);
        expect(await s.createWebhook(w1, 1)).toBe("created");
        expect(await s.createWebhook(webhook(a.id, ["key.created"]), 1)).toBe("limit");
        expect(await s.listWebhooks(a.id)).toMatchObject([{ ...w1, status: "active", disabledReason: null, disabledAt: null }]);
        expect(await s.getWebhook("acc_other", w1.id)).toBeNull();
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        expect(await s.deleteWebhook("acc_other", w1.id)).toBe(false);
        expect(await s.deleteWebhook(a.id, w1.id)).toBe(true);
        expect(await s.listWebhooks(a.id)).toEqual([]);
        const claimed = await s.claimDeliveries({ now: T0 + 1e6, leaseMs: 1000, limit: 100, perWebhook: 100 });
        expect(claimed.filter((c) => c.webhookId === w1.id)).toHaveLength(0);
      });

      it("rotateWebhookSecret: the old secret becomes the previous one until the given time, claims carry both, re-seal sees both; another account's webhook is untouched", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.created"], { secret: "sealed-one" });
        await s.createWebhook(w, 10);
        expect(await s.rotateWebhookSecret({ accountId: "acc_other", webhookId: w.id, secret: "x", previousUntil: T0 })).toBeNull();
        expect(await s.rotateWebhookSecret({ accountId: a.id, webhookId: "wh_missing", secret: "x", previousUntil: T0 })).toBeNull();
        const r = await s.rotateWebhookSecret({ accountId: a.id, webhookId: w.id, secret: "sealed-two", previousUntil: T0 + 1000 });
        expect(r).toMatchObject({ id: w.id, secret: "sealed-two", previousSecret: "sealed-one", previousSecretUntil: T0 + 1000 });
        expect(await s.getWebhook(a.id, w.id)).toMatchObject({ secret: "sealed-two", previousSecret: "sealed-one", previousSecretUntil: T0 + 1000 });
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const got = (await drainEvents(s, T0 + 5)).filter((d) => d.webhookId === w.id);
        expect(got).toHaveLength(1);
        expect(got[0]).toMatchObject({ secret: "sealed-two", previousSecret: "sealed-one", previousSecretUntil: T0 + 1000 });
        // Both stored secrets are listed for re-sealing, and each is replaced only if it still holds what was read.
        const mine = (await s.listWebhookSecrets()).filter((x) => x.webhookId === w.id);
        expect(mine.sort((x, y) => (x.field < y.field ? -1 : 1))).toEqual([
          { webhookId: w.id, accountId: a.id, field: "current", secret: "sealed-two" },
          { webhookId: w.id, accountId: a.id, field: "previous", secret: "sealed-one" },
        ]);
        expect(await s.replaceWebhookSecret({ webhookId: w.id, field: "previous", from: "stale", to: "resealed-one" })).toBe(false);
        expect(await s.replaceWebhookSecret({ webhookId: w.id, field: "previous", from: "sealed-one", to: "resealed-one" })).toBe(true);
        expect(await s.getWebhook(a.id, w.id)).toMatchObject({ secret: "sealed-two", previousSecret: "resealed-one" });
        // A second rotation keeps only the secret it replaces.
        const again = await s.rotateWebhookSecret({ accountId: a.id, webhookId: w.id, secret: "sealed-three", previousUntil: T0 + 2000 });
        expect(again).toMatchObject({ secret: "sealed-three", previousSecret: "sealed-two", previousSecretUntil: T0 + 2000 });
      });

      it("listWebhookSecrets names each secret's account, so a webhook can be acted on from the list alone", async () => {
        const a = account();
        const b = account();
        await s.createAccount(a);
        await s.createAccount(b);
        const wa = webhook(a.id, ["key.created"], { secret: "sealed-a" });
        const wb = webhook(b.id, ["key.created"], { secret: "sealed-b" });
        for (const w of [wa, wb]) await s.createWebhook(w, 10);
        await s.rotateWebhookSecret({ accountId: b.id, webhookId: wb.id, secret: "sealed-b2", previousUntil: T0 + 1000 });
        const rows = (await s.listWebhookSecrets()).filter((x) => x.webhookId === wa.id || x.webhookId === wb.id);
        expect(rows.map((x) => [x.webhookId, x.accountId, x.field, x.secret]).sort()).toEqual(
          [
            [wa.id, a.id, "current", "sealed-a"],
            [wb.id, b.id, "current", "sealed-b2"],
            [wb.id, b.id, "previous", "sealed-b"],
          ].sort(),
        );
      });

      it("endWebhookSecretOverlap clears the previous secret and its expiry only while it holds the value read; claims then carry the current one alone", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.created"], { secret: "sealed-one" });
        await s.createWebhook(w, 10);
        // No overlap to end yet.
        expect(await s.endWebhookSecretOverlap({ accountId: a.id, webhookId: w.id, previous: "sealed-one" })).toBe(false);
        await s.rotateWebhookSecret({ accountId: a.id, webhookId: w.id, secret: "sealed-two", previousUntil: T0 + 1000 });
        expect(await s.endWebhookSecretOverlap({ accountId: "acc_other", webhookId: w.id, previous: "sealed-one" })).toBe(false);
        expect(await s.endWebhookSecretOverlap({ accountId: a.id, webhookId: "wh_missing", previous: "sealed-one" })).toBe(false);
        expect(await s.endWebhookSecretOverlap({ accountId: a.id, webhookId: w.id, previous: "stale" })).toBe(false);
        expect(await s.getWebhook(a.id, w.id)).toMatchObject({ secret: "sealed-two", previousSecret: "sealed-one", previousSecretUntil: T0 + 1000 });
        expect(await s.endWebhookSecretOverlap({ accountId: a.id, webhookId: w.id, previous: "sealed-one" })).toBe(true);
        expect(await s.getWebhook(a.id, w.id)).toMatchObject({ secret: "sealed-two", previousSecret: null, previousSecretUntil: null });
        expect((await s.listWebhookSecrets()).filter((x) => x.webhookId === w.id).map((x) => x.field)).toEqual(["current"]);
        // A second call finds nothing to end.
        expect(await s.endWebhookSecretOverlap({ accountId: a.id, webhookId: w.id, previous: "sealed-one" })).toBe(false);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const got = (await drainEvents(s, T0 + 5)).filter((d) => d.webhookId === w.id);
        expect(got).toHaveLength(1);
        expect(got[0]).toMatchObject({ secret: "sealed-two", previousSecret: null, previousSecretUntil: null });
      });

      it("deleteWebhook with ifSecret: a secret rotated meanwhile keeps the webhook; the value read deletes it and its pending deliveries die", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.created"], { secret: "sealed-lost" });
        await s.createWebhook(w, 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        // Read "sealed-lost", then another instance rotates: the delete guarded by the old value changes nothing.
        await s.rotateWebhookSecret({ accountId: a.id, webhookId: w.id, secret: "sealed-new", previousUntil: T0 + 1000 });
        expect(await s.deleteWebhook(a.id, w.id, undefined, "sealed-lost")).toBe(false);
        expect(await s.deleteWebhook("acc_other", w.id, undefined, "sealed-new")).toBe(false);
        expect(await s.getWebhook(a.id, w.id)).toMatchObject({ secret: "sealed-new" });
        expect((await s.listDeliveries(a.id, w.id, 10)).map((d) => d.status)).toEqual(["pending"]);
        expect(await s.deleteWebhook(a.id, w.id, undefined, "sealed-new")).toBe(true);
        expect(await s.getWebhook(a.id, w.id)).toBeNull();
        expect((await s.listDeliveries(a.id, w.id, 10)).map((d) => [d.status, d.nextAttemptAt])).toEqual([["dead", null]]);
        const claimed = await s.claimDeliveries({ now: T0 + 1e6, leaseMs: 1000, limit: 100, perWebhook: 100 });
        expect(claimed.filter((c) => c.webhookId === w.id)).toHaveLength(0);
      });

      it("only subscribed webhooks of the event's account get a delivery", async () => {
        const a = account();
        const b = account();
        await s.createAccount(a);
        await s.createAccount(b);
        const wa = webhook(a.id, ["key.revoked"]);
        const wa2 = webhook(a.id, ["key.created"]);
        const wb = webhook(b.id, ["key.created"]);
        for (const w of [wa, wa2, wb]) await s.createWebhook(w, 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const got = await drainEvents(s, T0 + 5);
        expect(got.map((d) => d.webhookId)).toEqual([wa2.id]);
      });

      it("claims are exclusive under a lease, bounded per webhook, and a stale lease token changes nothing", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.created"]);
        await s.createWebhook(w, 10);
        for (let i = 0; i < 5; i++) {
          const k = key(a.id);
          await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 50, eventId: id("evt") });
        }
        const now = T0 + 10;
        const [c1, c2] = await Promise.all([
          s.claimDeliveries({ now, leaseMs: 30_000, limit: 10, perWebhook: 2 }),
          s.claimDeliveries({ now, leaseMs: 30_000, limit: 10, perWebhook: 2 }),
        ]);
        const mine = [...c1!, ...c2!].filter((d) => d.webhookId === w.id);
        expect(mine.length).toBeLessThanOrEqual(2);
        expect(new Set(mine.map((d) => d.deliveryId)).size).toBe(mine.length);
        expect(mine.length).toBeGreaterThan(0);
        const first = mine[0]!;
        expect(first.attempt).toBe(1);
        expect(JSON.parse(first.body).id).toBe(first.eventId);
        expect(first.secret).toBe("whsec_test");
        expect(await s.completeDelivery({ deliveryId: first.deliveryId, leaseToken: "stale", attempt: { attempt: 1, at: now, statusCode: 500, latencyMs: 3, error: "http_status", responseBody: "no" }, next: { status: "pending", at: now + 30_000 } })).toBe(false);
        expect(await s.completeDelivery({ deliveryId: first.deliveryId, leaseToken: first.leaseToken, attempt: { attempt: 1, at: now, statusCode: 500, latencyMs: 3, error: "http_status", responseBody: "no" }, next: { status: "pending", at: now + 30_000 } })).toBe(true);
        // After the lease of the others expires they can be claimed again; the failed one waits for its retry time.
        const later = await s.claimDeliveries({ now: now + 29_999, leaseMs: 30_000, limit: 10, perWebhook: 10 });
        expect(later.find((d) => d.deliveryId === first.deliveryId)).toBeUndefined();
        const retry = await s.claimDeliveries({ now: now + 60_001, leaseMs: 30_000, limit: 10, perWebhook: 10 });
        const again = retry.find((d) => d.deliveryId === first.deliveryId);
        expect(again?.attempt).toBe(2);
        expect(again?.body).toBe(first.body);
        await s.completeDelivery({ deliveryId: first.deliveryId, leaseToken: again!.leaseToken, attempt: { attempt: 2, at: now + 60_001, statusCode: null, latencyMs: 30_000, error: "timeout", responseBody: "" }, next: { status: "dead" } });
        const log = (await s.listDeliveries(a.id, w.id, 50)).find((d) => d.id === first.deliveryId)!;
        expect(log).toMatchObject({ status: "dead", attempts: 2, eventType: "key.created", nextAttemptAt: null });
        expect(log.attemptLog).toEqual([
          { attempt: 1, at: now, statusCode: 500, latencyMs: 3, error: "http_status", responseBody: "no" },
          { attempt: 2, at: now + 60_001, statusCode: null, latencyMs: 30_000, error: "timeout", responseBody: "" },
        ]);
        expect(await s.listDeliveries("acc_other", w.id, 50)).toEqual([]);
        const re = await s.retryDelivery(a.id, w.id, first.deliveryId, now + 70_000);
        expect(re).toMatchObject({ status: "pending", nextAttemptAt: now + 70_000, attempts: 2 });
        const third = (await s.claimDeliveries({ now: now + 70_000, leaseMs: 30_000, limit: 10, perWebhook: 10 })).find((d) => d.deliveryId === first.deliveryId);
        expect(third?.attempt).toBe(3);
        expect(await s.retryDelivery("acc_other", w.id, first.deliveryId, now)).toBeNull();
      });

      it("emitEvent writes an event with deliveries in one step", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["quota.warning"]);
        await s.createWebhook(w, 10);
        const evId = id("evt");
        await s.emitEvent({ id: evId, type: "quota.warning", accountId: a.id, createdAt: new Date(T0).toISOString(), data: { calls_used: 1, monthly_limit: 2, threshold: 1, period_start: "x", period_end: "y" } }, T0);
        const got = (await drainEvents(s, T0)).filter((d) => d.webhookId === w.id);
        expect(got).toHaveLength(1);
        expect(JSON.parse(got[0]!.body)).toEqual({ id: evId, type: "quota.warning", account_id: a.id, created_at: new Date(T0).toISOString(), data: { calls_used: 1, monthly_limit: 2, threshold: 1, period_start: "x", period_end: "y" } });
      });

      it("an expired delivery lease is claimed again as the same attempt; the old token can no longer complete it", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.created"]);
        await s.createWebhook(w, 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const now = T0 + 500_000;
        const claimMine = async (at: number) => (await s.claimDeliveries({ now: at, leaseMs: 1000, limit: 100, perWebhook: 100 })).find((d) => d.webhookId === w.id);
        const first = await claimMine(now);
        expect(first?.attempt).toBe(1);
        expect(await claimMine(now + 999)).toBeUndefined();
        const again = await claimMine(now + 1000);
        expect(again).toMatchObject({ deliveryId: first!.deliveryId, attempt: 1, body: first!.body });
        expect(again!.leaseToken).not.toBe(first!.leaseToken);
        const ok = { attempt: 1, at: now + 1000, statusCode: 200, latencyMs: 5, error: null, responseBody: "" };
        expect(await s.completeDelivery({ deliveryId: first!.deliveryId, leaseToken: first!.leaseToken, attempt: ok, next: { status: "succeeded" } })).toBe(false);
        expect(await s.completeDelivery({ deliveryId: again!.deliveryId, leaseToken: again!.leaseToken, attempt: ok, next: { status: "succeeded" } })).toBe(true);
        expect(await s.completeDelivery({ deliveryId: again!.deliveryId, leaseToken: again!.leaseToken, attempt: ok, next: { status: "succeeded" } })).toBe(false);
        expect(await s.listDeliveries(a.id, w.id, 10)).toMatchObject([{ status: "succeeded", attempts: 1, attemptLog: [ok] }]);
      });

      it("outbox: an event is delivered to the webhooks subscribed when it was written, not to one created later", async () => {
        const a = account();
        await s.createAccount(a);
        const k1 = key(a.id);
        await s.createKey({ key: k1, hash: `h-${k1.id}`, maxKeys: 5, eventId: id("evt") });
        const w = webhook(a.id, ["key.created"]);
        await s.createWebhook(w, 10);
        expect((await drainEvents(s, T0 + 5)).filter((d) => d.webhookId === w.id)).toHaveLength(0);
        const k2 = key(a.id);
        await s.createKey({ key: k2, hash: `h-${k2.id}`, maxKeys: 5, eventId: id("evt") });
        const got = (await drainEvents(s, T0 + 5)).filter((d) => d.webhookId === w.id);
        expect(got.map((d) => JSON.parse(d.body).data.key_id)).toEqual([k2.id]);
      });

      it("listDeliveries is newest first within its limit; claimDeliveries returns at most `limit`", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["quota.warning"]);
        await s.createWebhook(w, 10);
        const ids: string[] = [];
        for (let i = 1; i <= 3; i++) {
          const evId = id("evt");
          ids.push(evId);
          await s.emitEvent({ id: evId, type: "quota.warning", accountId: a.id, createdAt: new Date(T0 + i).toISOString(), data: { calls_used: i, monthly_limit: 20, threshold: 16, period_start: "x", period_end: "y" } }, T0 + i);
        }
        expect((await s.listDeliveries(a.id, w.id, 2)).map((d) => d.eventId)).toEqual([ids[2], ids[1]]);
        expect(await s.claimDeliveries({ now: T0 + 10, leaseMs: 60_000, limit: 2, perWebhook: 100 })).toHaveLength(2);
      });

      it("delivery ids are dlv_<ULID> stamped with their event's time, on every path that writes deliveries", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.created", "key.rotated", "key.revoked", "quota.warning", "quota.exhausted", "invoice.paid"]);
        await s.createWebhook(w, 10);
        const t = T0 + 7_000_000;
        const k = key(a.id, { createdAt: t + 1 });
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        await s.rotateKey({ accountId: a.id, keyId: k.id, newHash: `n-${k.id}`, newPrefix: "svc_live_new", now: t + 2, eventId: id("evt") });
        await s.emitEvent({ id: id("evt"), type: "quota.warning", accountId: a.id, createdAt: new Date(t + 3).toISOString(), data: { calls_used: 1, monthly_limit: 2, threshold: 1, period_start: "x", period_end: "y" } }, t + 3);
        // admit writes quota.warning (the 4th of 5 calls) and starts a charge on the 6th; settling it writes two more.
        let invoiceId: string | null = null;
        for (let i = 1; i <= 6; i++) {
          const r = await s.admit(admitInput(a.id, k.id, t + 10 + i, { quota: quota({ baseQuota: 5 }) }));
          if (r.kind === "quota_exhausted") invoiceId = r.chargeInvoiceId;
        }
        const charge = (await s.claimCharges({ now: t + 20, leaseMs: 60_000, limit: 100 })).find((c) => c.invoice.id === invoiceId)!;
        await s.settleCharge({ invoiceId: charge.invoice.id, leaseToken: charge.leaseToken, outcome: { status: "paid", processorRef: "pi_u", at: t + 21 }, eventIds: { exhausted: id("evt"), result: id("evt") } });
        await s.revokeKey({ accountId: a.id, keyId: k.id, now: t + 22, eventId: id("evt") });
        const listed = await s.listDeliveries(a.id, w.id, 100);
        expect(listed.map((d) => d.eventType).sort()).toEqual(["invoice.paid", "key.created", "key.revoked", "key.rotated", "quota.exhausted", "quota.warning", "quota.warning"]);
        for (const d of listed) {
          expect(isId("dlv", d.id), d.id).toBe(true);
          expect(ulidTime(d.id)).toBe(d.createdAt);
        }
        expect(new Set(listed.map((d) => d.id)).size).toBe(listed.length);
        const claimed = (await drainEvents(s, t + 30)).filter((d) => d.webhookId === w.id);
        expect(claimed.map((d) => d.deliveryId).sort()).toEqual(listed.map((d) => d.id).sort());
      });

      it("deliveries due at the same moment are claimed in the order their events were written, and listed newest first", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["quota.warning"]);
        await s.createWebhook(w, 10);
        const t = T0 + 8_000_000;
        const written: string[] = [];
        for (let i = 0; i < 12; i++) written.push(await emitWarning(s, a.id, t, i));
        expect((await s.listDeliveries(a.id, w.id, 100)).map((d) => d.eventId)).toEqual([...written].reverse());
        const claimed: string[] = [];
        for (let round = 0; round < 4; round++) {
          const got = (await s.claimDeliveries({ now: t, leaseMs: 60_000, limit: 100, perWebhook: 3 })).filter((d) => d.webhookId === w.id);
          claimed.push(...got.map((d) => d.eventId));
          for (const d of got) {
            await s.completeDelivery({ deliveryId: d.deliveryId, leaseToken: d.leaseToken, attempt: { attempt: 1, at: t, statusCode: 200, latencyMs: 1, error: null, responseBody: "" }, next: { status: "succeeded" } });
          }
        }
        expect(claimed).toEqual(written);
      });

      it("ordered claims: a webhook's delivery waits while an earlier one is in flight or waiting for a retry (racing claims included), and goes once that one succeeded or died", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["quota.warning"]);
        const v = webhook(a.id, ["quota.warning"]);
        await s.createWebhook(w, 10);
        await s.createWebhook(v, 10);
        const t = T0 + 8_500_000;
        const written: string[] = [];
        for (let i = 0; i < 4; i++) written.push(await emitWarning(s, a.id, t, i));
        const claim = async (now: number, ordered = true) => (await s.claimDeliveries({ now, leaseMs: 60_000, limit: 100, perWebhook: 4, ordered })).filter((d) => d.webhookId === w.id || d.webhookId === v.id);
        const complete = (d: ClaimedDelivery, at: number, next: Parameters<typeof settle>[3]) => settle(s, d, at, next);
        // Racing claims: one delivery per webhook in all, each webhook's first, however many claims race.
        const raced = (await Promise.all(Array.from({ length: 4 }, () => claim(t)))).flat();
        expect(raced.map((d) => [d.webhookId, d.eventId]).sort()).toEqual([[w.id, written[0]], [v.id, written[0]]].sort());
        const first = raced.find((d) => d.webhookId === w.id)!;
        // In flight: nothing more for w, whatever perWebhook allows.
        expect((await claim(t)).filter((d) => d.webhookId === w.id)).toEqual([]);
        // The first attempt fails and waits for a retry: the later ones still wait, though due.
        expect(await complete(first, t, { status: "pending", at: t + 30_000 })).toBe(true);
        expect((await claim(t + 1000)).filter((d) => d.webhookId === w.id)).toEqual([]);
        // Its retry comes first; once it died, the next event goes, then (after a success) the next.
        const retry = (await claim(t + 30_000)).filter((d) => d.webhookId === w.id);
        expect(retry.map((d) => [d.eventId, d.attempt])).toEqual([[written[0], 2]]);
        expect(await complete(retry[0]!, t + 30_000, { status: "dead" })).toBe(true);
        const second = (await claim(t + 30_000)).filter((d) => d.webhookId === w.id);
        expect(second.map((d) => d.eventId)).toEqual([written[1]]);
        expect(await complete(second[0]!, t + 30_000, { status: "succeeded" })).toBe(true);
        // Unordered claims take what perWebhook allows, in order, for the same webhook.
        expect((await claim(t + 30_000, false)).filter((d) => d.webhookId === w.id).map((d) => d.eventId)).toEqual([written[2], written[3]]);
      });

      it("ordered claims: one out at a time even when an earlier delivery is made due again (retry) while a later one is in flight; it goes once that one settled", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["quota.warning"]);
        await s.createWebhook(w, 10);
        const t = T0 + 8_700_000;
        const written: string[] = [];
        for (let i = 0; i < 3; i++) written.push(await emitWarning(s, a.id, t, i));
        const claim = async (now: number) => (await s.claimDeliveries({ now, leaseMs: 60_000, limit: 100, perWebhook: 4, ordered: true })).filter((d) => d.webhookId === w.id);
        const complete = (d: ClaimedDelivery, at: number, next: Parameters<typeof settle>[3]) => settle(s, d, at, next);
        const first = await claim(t);
        expect(first.map((d) => d.eventId)).toEqual([written[0]]);
        expect(await complete(first[0]!, t, { status: "dead" })).toBe(true);
        const second = await claim(t);
        expect(second.map((d) => d.eventId)).toEqual([written[1]]);
        // The first is made due again while the second is in flight: it is the earliest pending one, but waits.
        expect(await s.retryDelivery(a.id, w.id, first[0]!.deliveryId, t + 1)).not.toBeNull();
        expect(await claim(t + 1)).toEqual([]);
        expect(await complete(second[0]!, t + 2, { status: "succeeded" })).toBe(true);
        // Settled: the retried one goes first, then the third.
        const retried = await claim(t + 2);
        expect(retried.map((d) => d.eventId)).toEqual([written[0]]);
        expect(await complete(retried[0]!, t + 2, { status: "succeeded" })).toBe(true);
        expect((await claim(t + 2)).map((d) => d.eventId)).toEqual([written[2]]);
      });

      it("ordered claims: deliveries queued behind a head waiting for its retry are never claimed; the other webhook's go on", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["quota.warning"]);
        const v = webhook(a.id, ["quota.warning"]);
        await s.createWebhook(w, 10);
        await s.createWebhook(v, 10);
        const t = T0 + 8_800_000;
        const emit = (i: number): Promise<string> => emitWarning(s, a.id, t, i);
        const mine = (ds: ClaimedDelivery[]) => ds.filter((d) => d.webhookId === w.id || d.webhookId === v.id);
        const claim = async (now: number) => mine(await s.claimDeliveries({ now, leaseMs: 60_000, limit: 1000, perWebhook: 4, ordered: true }));
        const complete = (d: ClaimedDelivery, at: number, next: Parameters<typeof settle>[3]) => settle(s, d, at, next);
        const head = await emit(0);
        const first = await claim(t);
        expect(first.map((d) => [d.webhookId, d.eventId]).sort()).toEqual([[w.id, head], [v.id, head]].sort());
        // w's head fails and waits 30 s; v's succeeds. Then many events queue behind w's head, all due.
        expect(await complete(first.find((d) => d.webhookId === w.id)!, t, { status: "pending", at: t + 30_000 })).toBe(true);
        expect(await complete(first.find((d) => d.webhookId === v.id)!, t, { status: "succeeded" })).toBe(true);
        const queued: string[] = [];
        for (let i = 1; i <= 150; i++) queued.push(await emit(i));
        // Only v's head goes, one at a time; none of those queued behind w's head.
        for (let round = 0; round < 3; round++) {
          const got = await claim(t + 1000 + round);
          expect(got.filter((d) => d.webhookId === w.id)).toEqual([]);
          const forV = got.filter((d) => d.webhookId === v.id);
          expect(forV.map((d) => d.eventId)).toEqual([queued[round]]);
          expect(await complete(forV[0]!, t + 1000 + round, { status: "succeeded" })).toBe(true);
        }
        // w's retry is due: its head goes, then the first queued behind it.
        const retried = (await claim(t + 30_000)).filter((d) => d.webhookId === w.id);
        expect(retried.map((d) => [d.eventId, d.attempt])).toEqual([[head, 2]]);
        expect(await complete(retried[0]!, t + 30_000, { status: "succeeded" })).toBe(true);
        expect((await claim(t + 30_000)).filter((d) => d.webhookId === w.id).map((d) => d.eventId)).toEqual([queued[0]]);
      });

      it("recoverDeliveries re-queues the dead and the failed-and-waiting since a time, each once, never one in flight or already due", async () => {
        // A budget this case never reaches (the budget's own cases are in recover-budget-conformance.ts).
        const policy = { callsPerHour: 100, deliveriesPerHour: 100_000 };
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["quota.warning"]);
        await s.createWebhook(w, 10);
        const t = T0 + 9_000_000;
        const evIds: string[] = [];
        for (let i = 1; i <= 5; i++) {
          const evId = id("evt");
          evIds.push(evId);
          await s.emitEvent({ id: evId, type: "quota.warning", accountId: a.id, createdAt: new Date(t + i).toISOString(), data: { calls_used: i, monthly_limit: 20, threshold: 16, period_start: "x", period_end: "y" } }, t + i);
        }
        const now = t + 100;
        const mine = (await s.claimDeliveries({ now, leaseMs: 60_000, limit: 10_000, perWebhook: 100 })).filter((d) => d.webhookId === w.id);
        expect(mine.map((d) => d.eventId)).toEqual(evIds);
        const [d1, d2, d3, d4] = mine as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery, ClaimedDelivery];
        const attempt = (ok: boolean) => ({ attempt: 1, at: now, statusCode: ok ? 200 : 500, latencyMs: 1, error: ok ? null : "http_status", responseBody: "" });
        await s.completeDelivery({ deliveryId: d1.deliveryId, leaseToken: d1.leaseToken, attempt: attempt(true), next: { status: "succeeded" } });
        await s.completeDelivery({ deliveryId: d2.deliveryId, leaseToken: d2.leaseToken, attempt: attempt(false), next: { status: "dead" } });
        await s.completeDelivery({ deliveryId: d3.deliveryId, leaseToken: d3.leaseToken, attempt: attempt(false), next: { status: "pending", at: now + 30_000 } });
        await s.completeDelivery({ deliveryId: d4.deliveryId, leaseToken: d4.leaseToken, attempt: attempt(false), next: { status: "dead" } });
        // The fifth stays in flight under its live lease.
        expect(await s.recoverDeliveries({ accountId: "acc_other", webhookId: w.id, since: t, now: now + 1, policy })).toBeNull();
        // Since the third event: the third (waiting) and the fourth (dead); not the fifth, leased.
        expect(await s.recoverDeliveries({ accountId: a.id, webhookId: w.id, since: t + 3, now: now + 1, policy })).toEqual({ kind: "recovered", recovered: 2, hasMore: false });
        const byEvent = async () => new Map((await s.listDeliveries(a.id, w.id, 100)).map((d) => [d.eventId, d]));
        let list = await byEvent();
        expect(list.get(evIds[2]!)).toMatchObject({ status: "pending", nextAttemptAt: now + 1, attempts: 1, deadReason: null });
        expect(list.get(evIds[3]!)).toMatchObject({ status: "pending", nextAttemptAt: now + 1, attempts: 1, deadReason: null });
        expect(list.get(evIds[1]!)).toMatchObject({ status: "dead", deadReason: "attempts_exhausted" });
        // Since the first: only the second is left to recover; the others are due already, done, or in flight.
        expect(await s.recoverDeliveries({ accountId: a.id, webhookId: w.id, since: t, now: now + 2, policy })).toEqual({ kind: "recovered", recovered: 1, hasMore: false });
        expect(await s.recoverDeliveries({ accountId: a.id, webhookId: w.id, since: t, now: now + 3, policy })).toEqual({ kind: "recovered", recovered: 0, hasMore: false });
        list = await byEvent();
        expect([...list.values()].filter((d) => d.status === "pending").map((d) => d.eventId).sort()).toEqual([evIds[1], evIds[2], evIds[3], evIds[4]].sort());
        expect(list.get(evIds[0]!)).toMatchObject({ status: "succeeded" });
        // Each is claimed once more, as its next attempt: by due time (the first recovery's before the
        // second's), then in event order.
        const again = (await s.claimDeliveries({ now: now + 3, leaseMs: 60_000, limit: 10_000, perWebhook: 100 })).filter((d) => d.webhookId === w.id);
        expect(again.map((d) => [d.eventId, d.attempt])).toEqual([[evIds[2], 2], [evIds[3], 2], [evIds[1], 2]]);
        // A disabled webhook is refused, and nothing of it changes.
        const gone = again[2]!;
        await s.completeDelivery({ deliveryId: gone.deliveryId, leaseToken: gone.leaseToken, attempt: { ...attempt(false), attempt: 2, statusCode: 410 }, next: { status: "dead" }, gone: true, health: { disableAfterMs: 0, disableAfterDead: 0, eventId: id("evt") } });
        expect(await s.recoverDeliveries({ accountId: a.id, webhookId: w.id, since: t, now: now + 4, policy })).toBe("disabled");
        expect((await byEvent()).get(evIds[1]!)).toMatchObject({ status: "dead", deadReason: "gone" });
      });
    });
  });
}
