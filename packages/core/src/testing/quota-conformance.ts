/** Storage conformance, quota and billing (`AdmissionStore.admit`'s quota step, `BillingStore`): warnings, exhaustion, charges, holds and periods. */
import { describe, expect, it } from "vitest";
import type { AccountRecord, AdmitInput, ApiKeyRecord, Storage } from "../storage/types.ts";
import { isoTime } from "../clock/clock.ts";
import { billingPeriod } from "../quota/billing-period.ts";
import { account, admitInput, drainEvents, id, key, quota, storePerBlock, T0, webhook } from "./conformance-fixtures.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";

/** Registers these cases for one implementation under `name`. */
export function quotaConformance(name: string, target: ConformanceTarget): void {
  describe(`storage conformance: ${name}`, () => {
    describe("admit: quota", () => {
      let s!: Storage;
      storePerBlock(target, (store) => (s = store));

      async function liveKey(): Promise<{ a: AccountRecord; k: ApiKeyRecord }> {
        const a = account();
        await s.createAccount(a);
        await s.createWebhook(webhook(a.id, ["quota.warning", "quota.exhausted", "quota.held", "invoice.paid", "invoice.failed"]), 10);
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
        // The outbox agrees: one quota.warning written, not one per racing request.
        const written = (await drainEvents(s, T0 + 10)).map((d) => JSON.parse(d.body)).filter((b) => b.account_id === a.id);
        expect(written.map((b) => b.type)).toEqual(["quota.warning"]);
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
        expect(await s.requestCharge({ accountId: a.id, now: T0, anchorDay: 1, invoiceId: id("inv"), baseQuota: 20, blockSize: 10, blockPrice: 1000, currency: "usd" })).toBeNull();
        for (let i = 0; i < 21; i++) await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
        expect(await s.requestCharge({ accountId: a.id, now: T0 + 50, anchorDay: 1, invoiceId: id("inv"), baseQuota: 20, blockSize: 10, blockPrice: 1000, currency: "usd" })).toBeNull();
        const mine = (await s.claimCharges({ now: T0 + 100, leaseMs: 60_000, limit: 50 })).find((c) => c.invoice.accountId === a.id)!;
        await s.settleCharge({ invoiceId: mine.invoice.id, leaseToken: mine.leaseToken, outcome: { status: "failed", processorRef: "pi_f", reason: "card_declined", at: T0 + 100 }, eventIds: { exhausted: id("evt"), result: id("evt") } });
        const inv = await s.requestCharge({ accountId: a.id, now: T0 + 200, anchorDay: 1, invoiceId: id("inv"), baseQuota: 20, blockSize: 10, blockPrice: 1000, currency: "usd" });
        expect(inv).toMatchObject({ status: "pending", block: 1, attempt: 2 });
      });

      it("the ceiling counts paid charges too: past maxAutoCharges the account is held, quota.held is written once, and a release resumes charging", async () => {
        const { a, k } = await liveKey();
        const plan = (): NonNullable<AdmitInput["quota"]> => quota({ baseQuota: 2, blockSize: 1, maxAutoCharges: 2 });
        let t = T0;
        for (let round = 1; round <= 2; round++) {
          // Use the allowance up, then the next request must start a charge.
          let charged: string | null = null;
          for (let i = 0; i < 5 && charged === null; i++) {
            const r = await s.admit(admitInput(a.id, k.id, (t += 1), { quota: plan() }));
            if (r.kind === "quota_exhausted") {
              expect(r).toMatchObject({ heldForReview: false, heldNow: false });
              charged = r.chargeInvoiceId;
            }
          }
          expect(charged, `round ${round} started no charge`).toBeTruthy();
          const claim = (await s.claimCharges({ now: (t += 1), leaseMs: 60_000, limit: 50 })).find((c) => c.invoice.id === charged)!;
          expect(await s.settleCharge({ invoiceId: claim.invoice.id, leaseToken: claim.leaseToken, outcome: { status: "paid", processorRef: `pi_${round}`, at: (t += 1) }, eventIds: { exhausted: id("evt"), result: id("evt") } })).toBe(true);
        }
        expect((await s.usage(a.id, t, 1, 2, 1)).allowance).toBe(4);
        // The two paid blocks are used up; the next exhaustion finds the ceiling reached.
        expect(await s.admit(admitInput(a.id, k.id, (t += 1), { quota: plan() }))).toMatchObject({ kind: "allowed" });
        await drainEvents(s, t);
        const held = await s.admit(admitInput(a.id, k.id, (t += 1), { quota: plan() }));
        expect(held).toMatchObject({ kind: "quota_exhausted", flipped: true, chargeInvoiceId: null, heldForReview: true, heldNow: true });
        for (let i = 0; i < 3; i++) {
          expect(await s.admit(admitInput(a.id, k.id, (t += 1), { quota: plan() }))).toMatchObject({ kind: "quota_exhausted", chargeInvoiceId: null, heldForReview: true, heldNow: false });
        }
        expect(await s.listInvoices(a.id)).toHaveLength(2);
        const events = (await drainEvents(s, t + 1)).map((d) => JSON.parse(d.body)).filter((b) => b.account_id === a.id);
        expect(events.map((e) => e.type)).toEqual(["quota.held"]);
        const period = billingPeriod(t, 1);
        expect(events[0].data).toEqual({
          reason: "charge_limit",
          calls_used: 4,
          monthly_limit: 4,
          automatic_charges: 2,
          period_start: isoTime(period.start),
          period_end: isoTime(period.end),
        });
        // The operator releases the hold: the next refused request starts a charge again.
        expect(await s.releaseChargeHold({ accountId: a.id, now: (t += 1), anchorDay: 1 })).toBe(true);
        const again = await s.admit(admitInput(a.id, k.id, (t += 1), { quota: plan() }));
        expect(again).toMatchObject({ kind: "quota_exhausted", heldForReview: false, heldNow: false });
        expect(again.kind === "quota_exhausted" && again.chargeInvoiceId).toBeTruthy();
        expect(await s.releaseChargeHold({ accountId: "acc_none", now: t, anchorDay: 1 })).toBe(false);
      });

      it("a block of size 0 is never charged: the account is held (block_buys_nothing) and asking for a charge starts none", async () => {
        const { a, k } = await liveKey();
        const zero = (): NonNullable<AdmitInput["quota"]> => quota({ baseQuota: 3, blockSize: 0 });
        const kinds: string[] = [];
        let heldNow = 0;
        for (let i = 0; i < 11; i++) {
          const r = await s.admit(admitInput(a.id, k.id, T0 + i, { quota: zero() }));
          kinds.push(r.kind);
          if (r.kind === "quota_exhausted") {
            expect(r).toMatchObject({ chargeInvoiceId: null, heldForReview: true });
            if (r.heldNow) heldNow++;
          }
        }
        expect(kinds).toEqual([...Array(3).fill("allowed"), ...Array(8).fill("quota_exhausted")]);
        expect(heldNow).toBe(1);
        expect(await s.listInvoices(a.id)).toEqual([]);
        expect(await s.requestCharge({ accountId: a.id, now: T0 + 20, anchorDay: 1, invoiceId: id("inv"), baseQuota: 3, blockSize: 0, blockPrice: 1000, currency: "usd" })).toBeNull();
        const events = (await drainEvents(s, T0 + 30)).map((d) => JSON.parse(d.body)).filter((b) => b.account_id === a.id);
        expect(events.map((e) => e.type)).toEqual(["quota.warning", "quota.held"]);
        expect(events[1].data).toMatchObject({ reason: "block_buys_nothing", calls_used: 3, monthly_limit: 3, automatic_charges: 0 });
      });

      it("an allowance lowered below the calls already used starts no charge for a block that would buy nothing", async () => {
        const { a, k } = await liveKey();
        for (let i = 0; i < 10; i++) await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
        // The operator lowers the quota to 3 calls with blocks of 2: one block (5 calls) would still be below the 10 used.
        const lowered = (): NonNullable<AdmitInput["quota"]> => quota({ baseQuota: 3, blockSize: 2 });
        expect(await s.admit(admitInput(a.id, k.id, T0 + 20, { quota: lowered() }))).toMatchObject({ kind: "quota_exhausted", chargeInvoiceId: null, heldForReview: true, heldNow: true });
        expect(await s.listInvoices(a.id)).toEqual([]);
        expect(await s.requestCharge({ accountId: a.id, now: T0 + 30, anchorDay: 1, invoiceId: id("inv"), baseQuota: 3, blockSize: 2, blockPrice: 1000, currency: "usd" })).toBeNull();
      });

      it("a new billing period starts from zero", async () => {
        const { a, k } = await liveKey();
        for (let i = 0; i < 21; i++) await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
        const dec = Date.UTC(2026, 11, 1, 0, 0, 1);
        expect(await s.admit(admitInput(a.id, k.id, dec, { quota: quota() }))).toMatchObject({ kind: "allowed", quota: { used: 1, allowance: 20, periodStart: Date.UTC(2026, 11, 1) } });
      });

      /** Claims charges at `now` until this invoice comes up (the suite's store is shared), or returns null. */
      async function claimInvoice(invoiceId: string, now: number, leaseMs = 60_000): Promise<{ leaseToken: string } | null> {
        for (let round = 0; round < 20; round++) {
          const got = await s.claimCharges({ now, leaseMs, limit: 50 });
          const mine = got.find((c) => c.invoice.id === invoiceId);
          if (mine) return mine;
          if (got.length === 0) return null;
        }
        return null;
      }

      it("a rate-limited request counts nothing: neither today nor the quota", async () => {
        const { a, k } = await liveKey();
        const kinds: string[] = [];
        for (let i = 0; i < 5; i++) kinds.push((await s.admit(admitInput(a.id, k.id, T0 + i, { perMinute: 2, quota: quota() }))).kind);
        expect(kinds).toEqual(["allowed", "allowed", "rate_limited", "rate_limited", "rate_limited"]);
        expect(await s.usage(a.id, T0 + 10, 1, 20, 10)).toMatchObject({ today: 2, month: 2, exhausted: false });
      });

      it("a quota refusal still takes a minute slot and counts today (the contract of AdmitResult)", async () => {
        const { a, k } = await liveKey();
        const kinds: string[] = [];
        for (let i = 0; i < 5; i++) kinds.push((await s.admit(admitInput(a.id, k.id, T0 + i, { perMinute: 4, quota: quota({ baseQuota: 2 }) }))).kind);
        expect(kinds).toEqual(["allowed", "allowed", "quota_exhausted", "quota_exhausted", "rate_limited"]);
        expect(await s.usage(a.id, T0 + 10, 1, 2, 10)).toMatchObject({ today: 4, month: 2, exhausted: true });
      });

      it("billing periods: the first millisecond of a month starts the next period; an anchor day moves the boundary", async () => {
        const { a, k } = await liveKey();
        const lastMs = Date.UTC(2026, 10, 30, 23, 59, 59, 999);
        expect(await s.admit(admitInput(a.id, k.id, lastMs, { quota: quota() }))).toMatchObject({
          kind: "allowed",
          quota: { used: 1, periodStart: Date.UTC(2026, 10, 1), periodEnd: Date.UTC(2026, 11, 1) },
        });
        expect(await s.admit(admitInput(a.id, k.id, lastMs + 1, { quota: quota() }))).toMatchObject({
          kind: "allowed",
          quota: { used: 1, periodStart: Date.UTC(2026, 11, 1), periodEnd: Date.UTC(2027, 0, 1) },
        });
        const b = await liveKey();
        const q15 = (): NonNullable<AdmitInput["quota"]> => quota({ anchorDay: 15 });
        const boundary = Date.UTC(2026, 10, 15);
        expect(await s.admit(admitInput(b.a.id, b.k.id, boundary - 1, { quota: q15() }))).toMatchObject({
          quota: { used: 1, periodStart: Date.UTC(2026, 9, 15), periodEnd: boundary },
        });
        expect(await s.admit(admitInput(b.a.id, b.k.id, boundary, { quota: q15() }))).toMatchObject({
          quota: { used: 1, periodStart: boundary, periodEnd: Date.UTC(2026, 11, 15) },
        });
        expect(await s.usage(b.a.id, boundary + 5, 15, 20, 10)).toMatchObject({ month: 1, periodStart: boundary, periodEnd: Date.UTC(2026, 11, 15) });
      });

      it("a settlement is final: a replay, or a settlement under a lease that ran out, changes nothing", async () => {
        const { a, k } = await liveKey();
        let invoiceId = "";
        for (let i = 0; i < 21; i++) {
          const r = await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
          if (r.kind === "quota_exhausted" && r.chargeInvoiceId) invoiceId = r.chargeInvoiceId;
        }
        expect(invoiceId).not.toBe("");
        await drainEvents(s, T0 + 50);
        const first = await claimInvoice(invoiceId, T0 + 100, 1000);
        expect(first).not.toBeNull();
        expect(await claimInvoice(invoiceId, T0 + 1099, 1000)).toBeNull();
        // The lease ran out (a worker died mid-charge): another claim gets it, under a new token.
        const second = await claimInvoice(invoiceId, T0 + 1100, 60_000);
        expect(second).not.toBeNull();
        expect(second!.leaseToken).not.toBe(first!.leaseToken);
        const paid = { status: "paid", processorRef: "pi_final", at: T0 + 1200 } as const;
        expect(await s.settleCharge({ invoiceId, leaseToken: first!.leaseToken, outcome: paid, eventIds: { exhausted: id("evt"), result: id("evt") } })).toBe(false);
        expect(await s.settleCharge({ invoiceId, leaseToken: second!.leaseToken, outcome: paid, eventIds: { exhausted: id("evt"), result: id("evt") } })).toBe(true);
        expect(await s.settleCharge({ invoiceId, leaseToken: second!.leaseToken, outcome: paid, eventIds: { exhausted: id("evt"), result: id("evt") } })).toBe(false);
        expect(await s.settleCharge({ invoiceId, leaseToken: second!.leaseToken, outcome: { status: "failed", processorRef: "pi_x", reason: "card_declined", at: T0 + 1300 }, eventIds: { exhausted: id("evt"), result: id("evt") } })).toBe(false);
        expect(await claimInvoice(invoiceId, T0 + 10_000_000)).toBeNull();
        expect(await s.usage(a.id, T0 + 2000, 1, 20, 10)).toMatchObject({ allowance: 30, exhausted: false });
        expect(await s.listInvoices(a.id)).toMatchObject([{ id: invoiceId, status: "paid", processorRef: "pi_final", resolvedAt: T0 + 1200 }]);
        const ev = (await drainEvents(s, T0 + 2000)).map((d) => JSON.parse(d.body)).filter((b) => b.account_id === a.id);
        expect(ev.map((b) => b.type)).toEqual(["quota.exhausted", "invoice.paid"]);
      });

      it("a later attempt at the same block writes only its invoice event, not a second quota.exhausted", async () => {
        const { a, k } = await liveKey();
        let firstId = "";
        for (let i = 0; i < 21; i++) {
          const r = await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
          if (r.kind === "quota_exhausted" && r.chargeInvoiceId) firstId = r.chargeInvoiceId;
        }
        const first = await claimInvoice(firstId, T0 + 100);
        await s.settleCharge({ invoiceId: firstId, leaseToken: first!.leaseToken, outcome: { status: "failed", processorRef: "pi_f1", reason: "card_declined", at: T0 + 100 }, eventIds: { exhausted: id("evt"), result: id("evt") } });
        await drainEvents(s, T0 + 200);
        const later = T0 + 100 + 3_600_000;
        const retry = await s.admit(admitInput(a.id, k.id, later, { quota: quota() }));
        expect(retry).toMatchObject({ kind: "quota_exhausted", flipped: false });
        const secondId = retry.kind === "quota_exhausted" ? retry.chargeInvoiceId : null;
        expect(secondId).not.toBeNull();
        const second = await claimInvoice(secondId!, later + 1);
        expect(await s.settleCharge({ invoiceId: secondId!, leaseToken: second!.leaseToken, outcome: { status: "paid", processorRef: "pi_p2", at: later + 2 }, eventIds: { exhausted: id("evt"), result: id("evt") } })).toBe(true);
        const ev = (await drainEvents(s, later + 10)).map((d) => JSON.parse(d.body)).filter((b) => b.account_id === a.id);
        expect(ev.map((b) => b.type)).toEqual(["invoice.paid"]);
        expect(await s.admit(admitInput(a.id, k.id, later + 20, { quota: quota() }))).toMatchObject({ kind: "allowed", quota: { used: 21, allowance: 30 } });
      });

      it("after maxAutoCharges automatic attempts the account is held for review; requestCharge still starts one", async () => {
        const { a, k } = await liveKey();
        const capped = (): NonNullable<AdmitInput["quota"]> => quota({ maxAutoCharges: 1 });
        let firstId = "";
        for (let i = 0; i < 21; i++) {
          const r = await s.admit(admitInput(a.id, k.id, T0 + i, { quota: capped() }));
          if (r.kind === "quota_exhausted" && r.chargeInvoiceId) firstId = r.chargeInvoiceId;
        }
        const first = await claimInvoice(firstId, T0 + 100);
        await s.settleCharge({ invoiceId: firstId, leaseToken: first!.leaseToken, outcome: { status: "failed", processorRef: "pi_f1", reason: "card_declined", at: T0 + 100 }, eventIds: { exhausted: id("evt"), result: id("evt") } });
        const later = T0 + 100 + 3_600_000;
        expect(await s.admit(admitInput(a.id, k.id, later, { quota: capped() }))).toMatchObject({ kind: "quota_exhausted", chargeInvoiceId: null, heldForReview: true });
        expect(await s.listInvoices(a.id)).toHaveLength(1);
        expect(await s.requestCharge({ accountId: a.id, now: later + 1, anchorDay: 1, invoiceId: id("inv"), baseQuota: 20, blockSize: 10, blockPrice: 1000, currency: "usd" })).toMatchObject({ status: "pending", block: 1, attempt: 2 });
      });
    });
  });
}
