/**
 * The shared storage conformance suite: written once, run against every Storage implementation (memory,
 * SQLite, PostgreSQL). It checks the contract's guarantees, including exactness under concurrency.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccountRecord, AdmitInput, ApiKeyRecord, ClaimedDelivery, Storage, WebhookRecord } from "../storage/types.ts";
import type { Cell } from "../data/source.ts";

/** How the suite obtains a fresh, migrated, empty store, and disposes of it. */
export interface ConformanceTarget {
  /** A fresh empty store whose methods honour the `now` they are given (the app clock). */
  create(): Promise<Storage>;
  /** Called after the store is closed (drop the database, delete the file…). */
  destroy?(storage: Storage): Promise<void>;
}

const T0 = Date.UTC(2026, 10, 16, 12, 0, 0);
let seq = 0;
function id(prefix: string): string {
  seq += 1;
  // Unique and time-ordered enough for tests: a ULID-shaped suffix.
  return `${prefix}_01JD${String(Date.now() % 1e9).padStart(9, "0")}${String(seq).padStart(13, "0")}`;
}

function account(over: Partial<AccountRecord> = {}): AccountRecord {
  return { id: id("acc"), name: "Acme", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {}, ...over };
}

function key(accountId: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: id("key"),
    accountId,
    name: "server",
    environment: "live",
    scopes: ["benchmarks:read"],
    prefix: "svc_live_abc",
    isActive: true,
    createdAt: T0,
    rotatedAt: null,
    revokedAt: null,
    ...over,
  };
}

function webhook(accountId: string, events: WebhookRecord["events"], over: Partial<WebhookRecord> = {}): WebhookRecord {
  return { id: id("wh"), accountId, url: "https://hooks.example.com/in", events, secret: "whsec_test", createdAt: T0, ...over };
}

function admitInput(accountId: string, keyId: string, now: number, over: Partial<AdmitInput> = {}): AdmitInput {
  return { now, keyId, accountId, perMinute: 1000, perDay: 1_000_000, windowMs: 60_000, quota: null, ...over };
}

function quota(over: Partial<NonNullable<AdmitInput["quota"]>> = {}): NonNullable<AdmitInput["quota"]> {
  return {
    anchorDay: 1,
    baseQuota: 20,
    blockSize: 10,
    blockPrice: 1000,
    currency: "usd",
    retryAfterFailureMs: 3_600_000,
    maxAutoCharges: 10,
    warningEventId: id("evt"),
    invoiceId: id("inv"),
    ...over,
  };
}

async function drainEvents(s: Storage, now: number): Promise<ClaimedDelivery[]> {
  const all: ClaimedDelivery[] = [];
  for (;;) {
    const got = await s.claimDeliveries({ now, leaseMs: 60_000, limit: 100, perWebhook: 100 });
    if (got.length === 0) return all;
    for (const d of got) {
      all.push(d);
      await s.completeDelivery({
        deliveryId: d.deliveryId,
        leaseToken: d.leaseToken,
        attempt: { attempt: d.attempt, at: now, statusCode: 200, latencyMs: 1, error: null, responseBody: "" },
        next: { status: "succeeded" },
      });
    }
  }
}

function cell(values: number[]): Cell {
  const sorted = Float64Array.from(values).sort();
  return { sorted, sampleSize: values.length };
}

/** Registers the conformance suite for one implementation under `name`. */
export function storageConformance(name: string, target: ConformanceTarget): void {
  describe(`storage conformance: ${name}`, () => {
    let s: Storage;
    beforeAll(async () => {
      s = await target.create();
    });
    afterAll(async () => {
      await s.close();
      await target.destroy?.(s);
    });

    describe("accounts and sessions", () => {
      it("stores, reads and updates an account", async () => {
        const a = account({ allowedCidrs: ["10.0.0.0/8"], billing: { customerRef: "cus_1" } });
        await s.createAccount(a);
        expect(await s.getAccount(a.id)).toEqual(a);
        const u = await s.updateAccount(a.id, { tier: "enterprise", limits: { perMinute: 5 }, allowedCidrs: ["2001:db8::/32"] });
        expect(u).toMatchObject({ tier: "enterprise", limits: { perMinute: 5 }, allowedCidrs: ["2001:db8::/32"], billing: { customerRef: "cus_1" } });
        expect(await s.getAccount(a.id)).toEqual(u);
        expect(await s.getAccount("acc_missing")).toBeNull();
        expect(await s.updateAccount("acc_missing", { tier: "startup" })).toBeNull();
      });

      it("finds an unexpired session and refuses expired or unknown ones", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createSession({ tokenHash: "h-live", accountId: a.id, createdAt: T0, expiresAt: T0 + 1000 });
        await s.createSession({ tokenHash: "h-forever", accountId: a.id, createdAt: T0, expiresAt: null });
        expect(await s.findSession("h-live", T0 + 999)).toBe(a.id);
        expect(await s.findSession("h-live", T0 + 1000)).toBeNull();
        expect(await s.findSession("h-forever", T0 + 1e12)).toBe(a.id);
        expect(await s.findSession("h-unknown", T0)).toBeNull();
      });
    });

    describe("keys", () => {
      it("creates a key, finds it by hash with its account, and writes key.created", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createWebhook(webhook(a.id, ["key.created", "key.rotated", "key.revoked"]), 10);
        const k = key(a.id, { scopes: ["benchmarks:read", "segments:read"], environment: "test" });
        expect(await s.createKey({ key: k, hash: `hash-${k.id}`, maxKeys: 5, eventId: id("evt") })).toBe("created");
        const found = await s.findKeyByHash(`hash-${k.id}`);
        expect(found?.key).toEqual(k);
        expect(found?.account).toEqual(a);
        expect(found?.retired).toBe(false);
        expect(await s.findKeyByHash("nope")).toBeNull();
        expect(await s.getKey(a.id, k.id)).toEqual(k);
        expect(await s.getKey("acc_other", k.id)).toBeNull();
        expect((await s.listKeys(a.id)).map((x) => x.id)).toEqual([k.id]);
        const ev = await drainEvents(s, T0);
        expect(ev).toHaveLength(1);
        const body = JSON.parse(ev[0]!.body);
        expect(body).toMatchObject({ type: "key.created", account_id: a.id, data: { key_id: k.id, key_name: "server", environment: "test", scopes: ["benchmarks:read", "segments:read"] } });
      });

      it("refuses a key beyond maxKeys, and revoked keys do not count", async () => {
        const a = account();
        await s.createAccount(a);
        const k1 = key(a.id);
        const k2 = key(a.id);
        expect(await s.createKey({ key: k1, hash: `h-${k1.id}`, maxKeys: 1, eventId: id("evt") })).toBe("created");
        expect(await s.createKey({ key: k2, hash: `h-${k2.id}`, maxKeys: 1, eventId: id("evt") })).toBe("limit");
        expect(await s.findKeyByHash(`h-${k2.id}`)).toBeNull();
        await s.revokeKey({ accountId: a.id, keyId: k1.id, now: T0, eventId: id("evt") });
        expect(await s.createKey({ key: k2, hash: `h-${k2.id}`, maxKeys: 1, eventId: id("evt") })).toBe("created");
      });

      it("rotation: the old hash is retired at once, the new one works, key.rotated is written", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createWebhook(webhook(a.id, ["key.rotated"]), 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `old-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const r = await s.rotateKey({ accountId: a.id, keyId: k.id, newHash: `new-${k.id}`, newPrefix: "svc_live_xyz", now: T0 + 5, eventId: id("evt") });
        expect(r).toMatchObject({ id: k.id, prefix: "svc_live_xyz", rotatedAt: T0 + 5, isActive: true });
        expect((await s.findKeyByHash(`old-${k.id}`))?.retired).toBe(true);
        const fresh = await s.findKeyByHash(`new-${k.id}`);
        expect(fresh?.retired).toBe(false);
        expect(fresh?.key.prefix).toBe("svc_live_xyz");
        expect(await s.rotateKey({ accountId: "acc_other", keyId: k.id, newHash: "x", newPrefix: "x", now: T0, eventId: id("evt") })).toBeNull();
        const ev = await drainEvents(s, T0 + 10);
        expect(ev.map((d) => JSON.parse(d.body).type)).toEqual(["key.rotated"]);
        expect(JSON.parse(ev[0]!.body).data).toEqual({ key_id: k.id, key_name: "server", rotated_at: new Date(T0 + 5).toISOString() });
      });

      it("revocation is permanent, writes key.revoked once, and a revoked key cannot be rotated", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createWebhook(webhook(a.id, ["key.revoked"]), 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const r = await s.revokeKey({ accountId: a.id, keyId: k.id, now: T0 + 7, eventId: id("evt") });
        expect(r).toMatchObject({ isActive: false, revokedAt: T0 + 7 });
        expect(await s.revokeKey({ accountId: a.id, keyId: k.id, now: T0 + 8, eventId: id("evt") })).toMatchObject({ revokedAt: T0 + 7 });
        expect((await s.findKeyByHash(`h-${k.id}`))?.key.isActive).toBe(false);
        expect(await s.rotateKey({ accountId: a.id, keyId: k.id, newHash: "n", newPrefix: "p", now: T0, eventId: id("evt") })).toBeNull();
        expect(await s.revokeKey({ accountId: "acc_other", keyId: k.id, now: T0, eventId: id("evt") })).toBeNull();
        const ev = await drainEvents(s, T0 + 10);
        expect(ev.map((d) => JSON.parse(d.body).type)).toEqual(["key.revoked"]);
      });
    });

    describe("admit: rate limits", () => {
      it("the sliding window admits `limit` in any 60 s span and gives the exact retry time", async () => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const at = (t: number) => s.admit(admitInput(a.id, k.id, T0 + t, { perMinute: 3 }));
        expect((await at(0)).kind).toBe("allowed");
        expect((await at(10_000)).kind).toBe("allowed");
        const third = await at(20_000);
        expect(third).toMatchObject({ kind: "allowed", minute: { limit: 3, remaining: 0, resetAt: T0 + 60_000 } });
        const refused = await at(30_000);
        expect(refused).toMatchObject({ kind: "rate_limited", window: "minute", retryAfterMs: 30_000, minute: { remaining: 0 } });
        // At exactly 60 s the first stamp leaves the window; a fixed window would have admitted 3 more at 60 s.
        expect((await at(59_999)).kind).toBe("rate_limited");
        expect((await at(60_000)).kind).toBe("allowed");
        expect(await at(60_001)).toMatchObject({ kind: "rate_limited", retryAfterMs: 9_999 });
      });

      it("the daily limit counts per account across keys and resets at UTC midnight; a day refusal uses no minute slot", async () => {
        const a = account();
        await s.createAccount(a);
        const k1 = key(a.id);
        const k2 = key(a.id);
        await s.createKey({ key: k1, hash: `h-${k1.id}`, maxKeys: 5, eventId: id("evt") });
        await s.createKey({ key: k2, hash: `h-${k2.id}`, maxKeys: 5, eventId: id("evt") });
        const lim = { perMinute: 3, perDay: 3 };
        expect((await s.admit(admitInput(a.id, k1.id, T0, lim))).kind).toBe("allowed");
        expect((await s.admit(admitInput(a.id, k2.id, T0 + 1, lim))).kind).toBe("allowed");
        expect(await s.admit(admitInput(a.id, k2.id, T0 + 2, lim))).toMatchObject({ kind: "allowed", day: { remaining: 0 } });
        const refused = await s.admit(admitInput(a.id, k1.id, T0 + 3, lim));
        const midnight = Date.UTC(2026, 10, 17);
        expect(refused).toMatchObject({ kind: "rate_limited", window: "day", retryAfterMs: midnight - (T0 + 3), day: { remaining: 0, resetAt: midnight } });
        // k1 used one minute slot only (the refused request took none), so two more fit once the day turns.
        const next = midnight - 30_000;
        expect((await s.admit(admitInput(a.id, k1.id, next, lim))).kind).toBe("rate_limited");
        expect(await s.admit(admitInput(a.id, k1.id, midnight, lim))).toMatchObject({ kind: "allowed", day: { remaining: 2 } });
        expect((await s.usage(a.id, midnight, 1, 100, 10)).today).toBe(1);
      });

      it("300 concurrent requests admit exactly the per-minute limit", async () => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const results = await Promise.all(Array.from({ length: 300 }, (_, i) => s.admit(admitInput(a.id, k.id, T0 + (i % 7), { perMinute: 50 }))));
        expect(results.filter((r) => r.kind === "allowed")).toHaveLength(50);
        expect(results.filter((r) => r.kind === "rate_limited")).toHaveLength(250);
        expect((await s.usage(a.id, T0 + 10, 1, 100, 10)).today).toBe(50);
      });

      it("concurrent requests across keys of one account admit exactly the daily limit", async () => {
        const a = account();
        await s.createAccount(a);
        const ks = [key(a.id), key(a.id), key(a.id)];
        for (const k of ks) await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const results = await Promise.all(Array.from({ length: 120 }, (_, i) => s.admit(admitInput(a.id, ks[i % 3]!.id, T0, { perMinute: 100, perDay: 37 }))));
        expect(results.filter((r) => r.kind === "allowed")).toHaveLength(37);
      });
    });

    describe("admit: quota", () => {
      async function liveKey(): Promise<{ a: AccountRecord; k: ApiKeyRecord }> {
        const a = account();
        await s.createAccount(a);
        await s.createWebhook(webhook(a.id, ["quota.warning", "quota.exhausted", "invoice.paid", "invoice.failed"]), 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        return { a, k };
      }

      it("warns on the 16th of 20 calls, allows the 20th, flips on the 21st with exactly one charge", async () => {
        const { a, k } = await liveKey();
        const kinds: string[] = [];
        let warnedAt: number | null = null;
        for (let i = 1; i <= 20; i++) {
          const r = await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
          kinds.push(r.kind);
          if (r.kind === "allowed" && r.quota?.warned) warnedAt = i;
        }
        expect(kinds.every((x) => x === "allowed")).toBe(true);
        expect(warnedAt).toBe(16);
        const flip = await s.admit(admitInput(a.id, k.id, T0 + 21, { quota: quota() }));
        expect(flip).toMatchObject({ kind: "quota_exhausted", flipped: true, quota: { used: 20, allowance: 20 } });
        expect(flip.kind === "quota_exhausted" && flip.chargeInvoiceId).toBeTruthy();
        const again = await s.admit(admitInput(a.id, k.id, T0 + 22, { quota: quota() }));
        expect(again).toMatchObject({ kind: "quota_exhausted", flipped: false, chargeInvoiceId: null });
        const ev = await drainEvents(s, T0 + 30);
        const warning = ev.map((d) => JSON.parse(d.body)).filter((b) => b.type === "quota.warning");
        expect(warning).toHaveLength(1);
        expect(warning[0].data).toMatchObject({ calls_used: 16, monthly_limit: 20, threshold: 16, period_start: "2026-11-01T00:00:00.000Z", period_end: "2026-12-01T00:00:00.000Z" });
        const usage = await s.usage(a.id, T0 + 30, 1, 20, 10);
        expect(usage).toMatchObject({ month: 20, allowance: 20, exhausted: true, activeKeys: 1, today: 22 });
        const invoices = await s.listInvoices(a.id);
        expect(invoices).toHaveLength(1);
        expect(invoices[0]).toMatchObject({ status: "pending", block: 1, attempt: 1, amount: 1000, currency: "usd", callsUsed: 20, periodStart: "2026-11-01T00:00:00.000Z" });
        expect(invoices[0]!.idempotencyKey).toContain(a.id);
      });

      it("test keys (no quota) are never counted", async () => {
        const { a, k } = await liveKey();
        for (let i = 0; i < 25; i++) expect((await s.admit(admitInput(a.id, k.id, T0 + i))).kind).toBe("allowed");
        expect(await s.usage(a.id, T0 + 30, 1, 20, 10)).toMatchObject({ month: 0, today: 25, exhausted: false });
      });

      it("100 concurrent requests at the edge: exactly the allowance admitted and exactly one charge", async () => {
        const { a, k } = await liveKey();
        const results = await Promise.all(Array.from({ length: 100 }, (_, i) => s.admit(admitInput(a.id, k.id, T0 + 1, { quota: quota({ invoiceId: id("inv"), warningEventId: id("evt") }) }))));
        expect(results.filter((r) => r.kind === "allowed")).toHaveLength(20);
        const charges = results.filter((r) => r.kind === "quota_exhausted" && r.chargeInvoiceId !== null);
        expect(charges).toHaveLength(1);
        expect(results.filter((r) => r.kind === "quota_exhausted" && r.flipped)).toHaveLength(1);
        expect(await s.listInvoices(a.id)).toHaveLength(1);
        const warnings = results.filter((r) => r.kind === "allowed" && r.quota?.warned !== null);
        expect(warnings).toHaveLength(1);
      });

      it("a paid charge adds a block, reopens access, and writes quota.exhausted then invoice.paid", async () => {
        const { a, k } = await liveKey();
        for (let i = 0; i < 21; i++) await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
        await drainEvents(s, T0 + 100);
        const claimed = (await s.claimCharges({ now: T0 + 100, leaseMs: 60_000, limit: 50 })).filter((c) => c.invoice.accountId === a.id);
        expect(claimed).toHaveLength(1);
        const mine = claimed[0]!;
        expect(mine.account.id).toBe(a.id);
        // A second worker cannot claim it while the lease holds.
        expect((await s.claimCharges({ now: T0 + 101, leaseMs: 60_000, limit: 10 })).find((c) => c.invoice.id === mine.invoice.id)).toBeUndefined();
        expect(await s.settleCharge({ invoiceId: mine.invoice.id, leaseToken: "wrong", outcome: { status: "paid", processorRef: "pi_1", at: T0 + 102 }, eventIds: { exhausted: id("evt"), result: id("evt") } })).toBe(false);
        expect(await s.settleCharge({ invoiceId: mine.invoice.id, leaseToken: mine.leaseToken, outcome: { status: "paid", processorRef: "pi_1", at: T0 + 102 }, eventIds: { exhausted: id("evt"), result: id("evt") } })).toBe(true);
        const ev = (await drainEvents(s, T0 + 200)).map((d) => JSON.parse(d.body));
        expect(ev.map((b) => b.type)).toEqual(["quota.exhausted", "invoice.paid"]);
        expect(ev[0].data).toEqual({ calls_used: 20, period_start: "2026-11-01T00:00:00.000Z", period_end: "2026-12-01T00:00:00.000Z", charge_amount: 1000, charge_currency: "usd", processor_ref: "pi_1" });
        expect(ev[1].data).toEqual({ invoice_id: mine.invoice.id, amount: 1000, currency: "usd", paid_at: new Date(T0 + 102).toISOString(), processor_ref: "pi_1" });
        const after = await s.admit(admitInput(a.id, k.id, T0 + 300, { quota: quota() }));
        expect(after).toMatchObject({ kind: "allowed", quota: { used: 21, allowance: 30 } });
        for (let i = 22; i <= 28; i++) {
          const r = await s.admit(admitInput(a.id, k.id, T0 + 300 + i, { quota: quota() }));
          expect(r.kind === "allowed" && r.quota?.warned).toBe(i === 28 ? 28 : null);
        }
        expect((await s.listInvoices(a.id))[0]).toMatchObject({ status: "paid", processorRef: "pi_1" });
      });

      it("a failed charge keeps the quota closed; a new attempt (new idempotency key) starts only after the retry delay", async () => {
        const { a, k } = await liveKey();
        for (let i = 0; i < 21; i++) await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
        const mine = (await s.claimCharges({ now: T0 + 100, leaseMs: 60_000, limit: 50 })).find((c) => c.invoice.accountId === a.id)!;
        await s.settleCharge({ invoiceId: mine.invoice.id, leaseToken: mine.leaseToken, outcome: { status: "failed", processorRef: "pi_f", reason: "card_declined", at: T0 + 100 }, eventIds: { exhausted: id("evt"), result: id("evt") } });
        const ev = (await drainEvents(s, T0 + 200)).map((d) => JSON.parse(d.body)).filter((b) => b.account_id === a.id);
        expect(ev.map((b) => b.type)).toEqual(["quota.warning", "quota.exhausted", "invoice.failed"]);
        expect(ev[2].data).toMatchObject({ invoice_id: mine.invoice.id, failure_reason: "card_declined", processor_ref: "pi_f", amount: 1000 });
        const soon = await s.admit(admitInput(a.id, k.id, T0 + 1000, { quota: quota() }));
        expect(soon).toMatchObject({ kind: "quota_exhausted", flipped: false, chargeInvoiceId: null });
        const later = await s.admit(admitInput(a.id, k.id, T0 + 100 + 3_600_000, { quota: quota() }));
        expect(later.kind).toBe("quota_exhausted");
        expect(later.kind === "quota_exhausted" && later.chargeInvoiceId).toBeTruthy();
        const invoices = await s.listInvoices(a.id);
        expect(invoices).toHaveLength(2);
        expect(invoices[0]).toMatchObject({ status: "pending", block: 1, attempt: 2 });
        expect(invoices[0]!.idempotencyKey).not.toBe(invoices[1]!.idempotencyKey);
      });

      it("requestCharge starts an attempt only when exhausted with nothing outstanding", async () => {
        const { a, k } = await liveKey();
        expect(await s.requestCharge({ accountId: a.id, now: T0, anchorDay: 1, invoiceId: id("inv"), blockPrice: 1000, currency: "usd" })).toBeNull();
        for (let i = 0; i < 21; i++) await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
        expect(await s.requestCharge({ accountId: a.id, now: T0 + 50, anchorDay: 1, invoiceId: id("inv"), blockPrice: 1000, currency: "usd" })).toBeNull();
        const mine = (await s.claimCharges({ now: T0 + 100, leaseMs: 60_000, limit: 50 })).find((c) => c.invoice.accountId === a.id)!;
        await s.settleCharge({ invoiceId: mine.invoice.id, leaseToken: mine.leaseToken, outcome: { status: "failed", processorRef: "pi_f", reason: "card_declined", at: T0 + 100 }, eventIds: { exhausted: id("evt"), result: id("evt") } });
        const inv = await s.requestCharge({ accountId: a.id, now: T0 + 200, anchorDay: 1, invoiceId: id("inv"), blockPrice: 1000, currency: "usd" });
        expect(inv).toMatchObject({ status: "pending", block: 1, attempt: 2 });
      });

      it("a new billing period starts from zero", async () => {
        const { a, k } = await liveKey();
        for (let i = 0; i < 21; i++) await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
        const dec = Date.UTC(2026, 11, 1, 0, 0, 1);
        expect(await s.admit(admitInput(a.id, k.id, dec, { quota: quota() }))).toMatchObject({ kind: "allowed", quota: { used: 1, allowance: 20, periodStart: Date.UTC(2026, 11, 1) } });
      });
    });

    describe("webhooks and deliveries", () => {
      it("limits webhooks per account, lists them, and deleting one stops its pending deliveries", async () => {
        const a = account();
        await s.createAccount(a);
        const w1 = webhook(a.id, ["key.created"]);
        expect(await s.createWebhook(w1, 1)).toBe("created");
        expect(await s.createWebhook(webhook(a.id, ["key.created"]), 1)).toBe("limit");
        expect(await s.listWebhooks(a.id)).toEqual([w1]);
        expect(await s.getWebhook("acc_other", w1.id)).toBeNull();
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        expect(await s.deleteWebhook("acc_other", w1.id)).toBe(false);
        expect(await s.deleteWebhook(a.id, w1.id)).toBe(true);
        expect(await s.listWebhooks(a.id)).toEqual([]);
        const claimed = await s.claimDeliveries({ now: T0 + 1e6, leaseMs: 1000, limit: 100, perWebhook: 100 });
        expect(claimed.filter((c) => c.webhookId === w1.id)).toHaveLength(0);
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
    });

    describe("benchmark cells", () => {
      it("publishes cells, answers periods and segments, and an import replaces a (category, period) whole", async () => {
        await s.replaceCells(
          [
            { category: "saas", segment: "all", period: "2026-Q1", metric: "gross_margin", cell: cell([0.5, 0.7, 0.6]) },
            { category: "saas", segment: "smb", period: "2026-Q1", metric: "gross_margin", cell: cell([0.5, 0.7]) },
            { category: "saas", segment: "all", period: "2026-Q2", metric: "gross_margin", cell: cell([0.8, 0.9]) },
            { category: "saas", segment: "all", period: "2026-Q2", metric: "churn_rate", cell: cell([0.04]) },
            { category: "saas", segment: "all", period: "2026-05", metric: "churn_rate", cell: cell([0.05, 0.03]) },
          ],
          [],
        );
        const b = s.benchmarks;
        expect(await b.latestPeriod("saas", "all", "quarterly")).toBe("2026-Q2");
        expect(await b.latestPeriod("saas", "all", "monthly")).toBe("2026-05");
        expect(await b.latestPeriod("retail", "all", "quarterly")).toBeNull();
        expect(await b.recentPeriods("saas", "all", "gross_margin", "quarterly", 4)).toEqual(["2026-Q1", "2026-Q2"]);
        expect(await b.recentPeriods("saas", "all", "gross_margin", "quarterly", 1)).toEqual(["2026-Q2"]);
        expect(await b.segments("saas")).toEqual(["smb"]);
        const got = await b.cells("saas", "all", "2026-Q1", ["gross_margin", "churn_rate"]);
        expect([...got.keys()]).toEqual(["gross_margin"]);
        expect(Array.from(got.get("gross_margin")!.sorted)).toEqual([0.5, 0.6, 0.7]);
        expect(got.get("gross_margin")!.sampleSize).toBe(3);
        await s.replaceCells([{ category: "saas", segment: "all", period: "2026-Q1", metric: "churn_rate", cell: cell([0.1]) }], [{ category: "saas", period: "2026-Q1" }]);
        const replaced = await b.cells("saas", "all", "2026-Q1", ["gross_margin", "churn_rate"]);
        expect([...replaced.keys()]).toEqual(["churn_rate"]);
        expect((await b.cells("saas", "smb", "2026-Q1", ["gross_margin"])).size).toBe(0);
        expect(await b.segments("saas")).toEqual([]);
        expect((await b.cells("saas", "all", "2026-Q2", ["gross_margin"])).size).toBe(1);
      });
    });
  });
}
