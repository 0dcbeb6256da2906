/** Storage conformance, accounts and console sessions (`AccountStore`, `SessionStore`, and `UsageStore.dailyUsage`). */
import { describe, expect, it } from "vitest";
import type { Storage } from "../storage/types.ts";
import { account, admitInput, id, key, storePerBlock, T0 } from "./conformance-fixtures.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";

/** Registers these cases for one implementation under `name`. */
export function accountsSessionsConformance(name: string, target: ConformanceTarget): void {
  describe(`storage conformance: ${name}`, () => {
    describe("accounts and sessions", () => {
      let s!: Storage;
      storePerBlock(target, (store) => (s = store));

      it("stores, reads and updates an account", async () => {
        const a = account({ allowedCidrs: ["10.0.0.0/8"], billing: { customerRef: "cus_1" } });
        await s.createAccount(a);
        // Accounts are created active.
        expect(await s.getAccount(a.id)).toEqual({ ...a, status: "active", suspendedAt: null, suspendedReason: null });
        const u = await s.updateAccount(a.id, { tier: "enterprise", limits: { perMinute: 5 }, allowedCidrs: ["2001:db8::/32"] });
        expect(u).toMatchObject({ tier: "enterprise", limits: { perMinute: 5 }, allowedCidrs: ["2001:db8::/32"], billing: { customerRef: "cus_1" } });
        expect(await s.getAccount(a.id)).toEqual(u);
        // A patch's limits and billing replace the stored ones whole (the admin API sends the merged result).
        const r = await s.updateAccount(a.id, { limits: { perDay: 9 }, billing: { paymentMethodRef: "pm_1" } });
        expect(r).toEqual({ ...u, limits: { perDay: 9 }, billing: { paymentMethodRef: "pm_1" } });
        expect(await s.updateAccount(a.id, {})).toEqual(r);
        expect(await s.getAccount(a.id)).toEqual(r);
        expect(await s.getAccount("acc_missing")).toBeNull();
        expect(await s.updateAccount("acc_missing", { tier: "startup" })).toBeNull();
      });

      it("an account's console exemption from its allow-list: absent means false; set, kept by other patches, cleared", async () => {
        const a = account({ allowedCidrs: ["10.0.0.0/8"] });
        await s.createAccount(a);
        expect((await s.getAccount(a.id))?.consoleIpExempt).toBeUndefined();
        const on = await s.updateAccount(a.id, { consoleIpExempt: true });
        expect(on).toMatchObject({ consoleIpExempt: true, allowedCidrs: ["10.0.0.0/8"] });
        expect(await s.updateAccount(a.id, { tier: "enterprise" })).toMatchObject({ consoleIpExempt: true });
        expect(await s.getAccount(a.id)).toMatchObject({ consoleIpExempt: true, tier: "enterprise" });
        const off = await s.updateAccount(a.id, { consoleIpExempt: false });
        expect(off?.consoleIpExempt).toBeUndefined();
        expect(await s.getAccount(a.id)).toEqual(off);
        const born = account({ consoleIpExempt: true });
        await s.createAccount(born);
        expect(await s.getAccount(born.id)).toMatchObject({ id: born.id, consoleIpExempt: true });
      });

      it("finds an unexpired session and refuses expired or unknown ones", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createSession({ tokenHash: "h-live", accountId: a.id, createdAt: T0, expiresAt: T0 + 1000 });
        expect(await s.findSession("h-live", T0 + 999)).toBe(a.id);
        expect(await s.sessionExpiry("h-live", T0 + 999)).toBe(T0 + 1000);
        expect(await s.findSession("h-live", T0 + 1000)).toBeNull();
        expect(await s.sessionExpiry("h-live", T0 + 1000)).toBeNull();
        expect(await s.findSession("h-unknown", T0)).toBeNull();
      });

      it("sign-out: deleteSession ends that session only, at once", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createSession({ tokenHash: "h-out-1", accountId: a.id, createdAt: T0, expiresAt: T0 + 1e9 });
        await s.createSession({ tokenHash: "h-out-2", accountId: a.id, createdAt: T0, expiresAt: T0 + 1e9 });
        expect(await s.deleteSession("h-out-1")).toBe(true);
        expect(await s.findSession("h-out-1", T0)).toBeNull();
        expect(await s.findSession("h-out-2", T0)).toBe(a.id);
        expect(await s.deleteSession("h-out-1")).toBe(false);
      });

      it("deleteSessions ends every session and voids the sign-in links of one account, not another's", async () => {
        const a = account();
        const b = account();
        await s.createAccount(a);
        await s.createAccount(b);
        await s.createSession({ tokenHash: "h-all-a1", accountId: a.id, createdAt: T0, expiresAt: T0 + 1e9 });
        await s.createSession({ tokenHash: "h-all-a2", accountId: a.id, createdAt: T0, expiresAt: T0 + 1e9 });
        await s.createSession({ tokenHash: "h-all-b", accountId: b.id, createdAt: T0, expiresAt: T0 + 1e9 });
        await s.createSignInLink({ tokenHash: "l-all-a", accountId: a.id, createdAt: T0, expiresAt: T0 + 1e6 });
        expect(await s.deleteSessions(a.id)).toBe(2);
        expect(await s.findSession("h-all-a1", T0)).toBeNull();
        expect(await s.findSession("h-all-a2", T0)).toBeNull();
        expect(await s.findSession("h-all-b", T0)).toBe(b.id);
        expect(await s.redeemSignInLink({ linkHash: "l-all-a", now: T0, session: { tokenHash: "h-all-new", createdAt: T0, expiresAt: T0 + 1e9 } })).toBeNull();
        expect(await s.findSession("h-all-new", T0)).toBeNull();
      });

      it("a sign-in link redeems once (also when redeemed twice at once) and never after it expires", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createSignInLink({ tokenHash: "l-once", accountId: a.id, createdAt: T0, expiresAt: T0 + 60_000 });
        const redeem = (n: number) => s.redeemSignInLink({ linkHash: "l-once", now: T0 + 1, session: { tokenHash: `h-once-${n}`, createdAt: T0 + 1, expiresAt: T0 + 1e9 } });
        const results = await Promise.all([redeem(1), redeem(2), redeem(3)]);
        expect(results.filter((r) => r === a.id)).toHaveLength(1);
        expect(results.filter((r) => r === null)).toHaveLength(2);
        const winner = results.indexOf(a.id) + 1;
        expect(await s.findSession(`h-once-${winner}`, T0 + 2)).toBe(a.id);
        for (const n of [1, 2, 3]) if (n !== winner) expect(await s.findSession(`h-once-${n}`, T0 + 2)).toBeNull();

        await s.createSignInLink({ tokenHash: "l-late", accountId: a.id, createdAt: T0, expiresAt: T0 + 60_000 });
        expect(await s.redeemSignInLink({ linkHash: "l-late", now: T0 + 60_000, session: { tokenHash: "h-late", createdAt: T0, expiresAt: T0 + 1e9 } })).toBeNull();
        expect(await s.findSession("h-late", T0 + 60_001)).toBeNull();
        expect(await s.redeemSignInLink({ linkHash: "l-unknown", now: T0, session: { tokenHash: "h-unk", createdAt: T0, expiresAt: T0 + 1e9 } })).toBeNull();
      });

      it("dailyUsage keeps each past day's admitted requests when the day counter rolls over", async () => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id, { environment: "test" });
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const DAY = 86_400_000;
        const day0 = Math.floor(T0 / DAY);
        for (const t of [T0, T0 + 1, T0 + 2]) expect((await s.admit(admitInput(a.id, k.id, t))).kind).toBe("allowed");
        for (const t of [T0 + DAY, T0 + DAY + 1]) expect((await s.admit(admitInput(a.id, k.id, t))).kind).toBe("allowed");
        // Day 2 has no requests; day 3 has one.
        expect((await s.admit(admitInput(a.id, k.id, T0 + 3 * DAY))).kind).toBe("allowed");
        expect(await s.dailyUsage(a.id, day0 - 5, T0 + 3 * DAY)).toEqual([
          { day: day0, count: 3 },
          { day: day0 + 1, count: 2 },
          { day: day0 + 3, count: 1 },
        ]);
        expect(await s.dailyUsage(a.id, day0 + 1, T0 + 3 * DAY)).toEqual([
          { day: day0 + 1, count: 2 },
          { day: day0 + 3, count: 1 },
        ]);
        // Seen from later days of an idle account: day 3 still sits in its day counter (nothing rolled it over yet),
        // and it is listed all the same, once, for as long as it is in the asked range.
        expect(await s.dailyUsage(a.id, day0, T0 + 4 * DAY)).toEqual([
          { day: day0, count: 3 },
          { day: day0 + 1, count: 2 },
          { day: day0 + 3, count: 1 },
        ]);
        expect(await s.dailyUsage(a.id, day0 + 2, T0 + 9 * DAY)).toEqual([{ day: day0 + 3, count: 1 }]);
        expect(await s.dailyUsage(a.id, day0 + 4, T0 + 9 * DAY)).toEqual([]);
        // Rolled over by the next admission, the day is counted once, from the history.
        expect((await s.admit(admitInput(a.id, k.id, T0 + 9 * DAY))).kind).toBe("allowed");
        expect(await s.dailyUsage(a.id, day0 + 2, T0 + 9 * DAY)).toEqual([
          { day: day0 + 3, count: 1 },
          { day: day0 + 9, count: 1 },
        ]);
      });
    });
  });
}
