/** Storage conformance, admission (`AdmissionStore`): the expected lookup, the sliding window and the daily limit. */
import { describe, expect, it } from "vitest";
import type { Storage } from "../storage/types.ts";
import { account, admitInput, id, key, storePerBlock, T0 } from "./conformance-fixtures.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";

/** Registers these cases for one implementation under `name`. */
export function admissionConformance(name: string, target: ConformanceTarget): void {
  describe(`storage conformance: ${name}`, () => {
    describe("admit with an expected lookup", () => {
      let s!: Storage;
      storePerBlock(target, (store) => (s = store));

      it("a current lookup admits; after an account update, a rotation or a revocation the same expectation is stale and counts nothing", async () => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id, { environment: "test" });
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const found = (await s.findKeyByHash(`h-${k.id}`))!;
        const expectOf = (l: { version: number }, hash = `h-${k.id}`) => ({ keyHash: hash, version: l.version });
        const lim = { perMinute: 10, perDay: 10 };
        expect(await s.admit(admitInput(a.id, k.id, T0, { ...lim, expect: expectOf(found) }))).toMatchObject({ kind: "allowed", day: { remaining: 9 } });
        expect(await s.admit(admitInput(a.id, k.id, T0 + 1, { ...lim, expect: { keyHash: "h-unknown", version: found.version } }))).toMatchObject({ kind: "stale" });
        // The hash must name the admitted key of the admitted account.
        const other = key(a.id, { environment: "test" });
        await s.createKey({ key: other, hash: `h-${other.id}`, maxKeys: 5, eventId: id("evt") });
        expect(await s.admit(admitInput(a.id, k.id, T0 + 1, { ...lim, expect: { keyHash: `h-${other.id}`, version: found.version } }))).toMatchObject({ kind: "stale" });
        expect(await s.admit(admitInput("acc_elsewhere", k.id, T0 + 1, { ...lim, expect: expectOf(found) }))).toMatchObject({ kind: "stale" });

        // An account update changes the version: the old expectation is stale, the new lookup's admits.
        await s.updateAccount(a.id, { allowedCidrs: ["10.0.0.0/8"] });
        const updated = (await s.findKeyByHash(`h-${k.id}`))!;
        expect(updated.version).not.toBe(found.version);
        expect(await s.admit(admitInput(a.id, k.id, T0 + 2, { ...lim, expect: expectOf(found) }))).toMatchObject({ kind: "stale" });
        expect(await s.admit(admitInput(a.id, k.id, T0 + 3, { ...lim, expect: expectOf(updated) }))).toMatchObject({ kind: "allowed", day: { remaining: 8 } });

        // Rotation retires the hash; revocation deactivates the key.
        await s.rotateKey({ accountId: a.id, keyId: k.id, newHash: `h2-${k.id}`, newPrefix: "svc_test_new", now: T0 + 4, eventId: id("evt") });
        expect(await s.admit(admitInput(a.id, k.id, T0 + 5, { ...lim, expect: expectOf(updated) }))).toMatchObject({ kind: "stale" });
        const rotated = (await s.findKeyByHash(`h2-${k.id}`))!;
        expect(await s.admit(admitInput(a.id, k.id, T0 + 6, { ...lim, expect: expectOf(rotated, `h2-${k.id}`) }))).toMatchObject({ kind: "allowed", day: { remaining: 7 } });
        await s.revokeKey({ accountId: a.id, keyId: k.id, now: T0 + 7, eventId: id("evt") });
        expect(await s.admit(admitInput(a.id, k.id, T0 + 8, { ...lim, expect: expectOf(rotated, `h2-${k.id}`) }))).toMatchObject({ kind: "stale" });

        // The stale admissions counted nothing: three admitted requests in the window and the day.
        const peek = await s.peekLimits({ now: T0 + 9, keyId: k.id, accountId: a.id, perMinute: 10, perDay: 10, windowMs: 60_000 });
        expect(peek.minute.remaining).toBe(7);
        expect(peek.day.remaining).toBe(7);
      });

      it("concurrent admissions expecting a key that a revocation ends: none is admitted after the revocation commits", async () => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id, { environment: "test" });
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const found = (await s.findKeyByHash(`h-${k.id}`))!;
        const admit = (i: number) => s.admit(admitInput(a.id, k.id, T0 + i, { expect: { keyHash: `h-${k.id}`, version: found.version } }));
        const before = await Promise.all(Array.from({ length: 20 }, (_, i) => admit(i)));
        expect(before.every((r) => r.kind === "allowed")).toBe(true);
        await s.revokeKey({ accountId: a.id, keyId: k.id, now: T0 + 50, eventId: id("evt") });
        const after = await Promise.all(Array.from({ length: 20 }, (_, i) => admit(100 + i)));
        expect(after.map((r) => r.kind)).toEqual(Array.from({ length: 20 }, () => "stale"));
      });
    });

    describe("admit: rate limits", () => {
      let s!: Storage;
      storePerBlock(target, (store) => (s = store));

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

      it("when the minute and the day both refuse, the day is reported as the binding window", async () => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const lim = { perMinute: 2, perDay: 2 };
        await s.admit(admitInput(a.id, k.id, T0, lim));
        await s.admit(admitInput(a.id, k.id, T0 + 1, lim));
        const r = await s.admit(admitInput(a.id, k.id, T0 + 2, lim));
        expect(r).toMatchObject({ kind: "rate_limited", window: "day", retryAfterMs: Date.UTC(2026, 10, 17) - (T0 + 2) });
      });

      it("a clock that steps back over midnight counts toward the later day: never past the limit, the day it left kept", async () => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const lim = { perMinute: 10, perDay: 2 };
        const midnight = Date.UTC(2026, 10, 17);
        const next = midnight + 86_400_000;
        expect((await s.admit(admitInput(a.id, k.id, midnight - 5000, lim))).kind).toBe("allowed");
        expect(await s.admit(admitInput(a.id, k.id, midnight, lim))).toMatchObject({ kind: "allowed", day: { remaining: 1, resetAt: next } });
        // 1 ms behind the stored day: the request counts toward it, not toward a restarted earlier day.
        expect(await s.admit(admitInput(a.id, k.id, midnight - 1, lim))).toMatchObject({ kind: "allowed", day: { remaining: 0, resetAt: next } });
        expect(await s.admit(admitInput(a.id, k.id, midnight - 1, lim))).toMatchObject({ kind: "rate_limited", window: "day", retryAfterMs: next - (midnight - 1), day: { remaining: 0, resetAt: next } });
        expect((await s.peekLimits({ now: midnight - 1, keyId: k.id, accountId: a.id, windowMs: 60_000, ...lim })).day).toEqual({ limit: 2, remaining: 0, resetAt: next });
        expect((await s.admit(admitInput(a.id, k.id, midnight + 1000, lim))).kind).toBe("rate_limited");
        const day = Math.floor(midnight / 86_400_000);
        expect(await s.dailyUsage(a.id, day - 1, midnight + 1000)).toEqual([
          { day: day - 1, count: 1 },
          { day, count: 2 },
        ]);
      });

      it("peekLimits reports the windows as they stand and admits nothing", async () => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const lim = { perMinute: 3, perDay: 10 };
        const fresh = await s.peekLimits({ now: T0, keyId: k.id, accountId: a.id, windowMs: 60_000, ...lim });
        expect(fresh).toMatchObject({ minute: { limit: 3, remaining: 3, resetAt: T0 + 60_000 }, day: { limit: 10, remaining: 10, resetAt: Date.UTC(2026, 10, 17) } });
        await s.admit(admitInput(a.id, k.id, T0 + 1000, lim));
        await s.admit(admitInput(a.id, k.id, T0 + 2000, lim));
        for (let i = 0; i < 5; i++) await s.peekLimits({ now: T0 + 3000, keyId: k.id, accountId: a.id, windowMs: 60_000, ...lim });
        const after = await s.peekLimits({ now: T0 + 3000, keyId: k.id, accountId: a.id, windowMs: 60_000, ...lim });
        expect(after).toMatchObject({ minute: { remaining: 1, resetAt: T0 + 61_000 }, day: { remaining: 8 } });
        expect((await s.admit(admitInput(a.id, k.id, T0 + 4000, lim))).kind).toBe("allowed");
        expect((await s.admit(admitInput(a.id, k.id, T0 + 5000, lim))).kind).toBe("rate_limited");
        const full = await s.peekLimits({ now: T0 + 5000, keyId: k.id, accountId: a.id, windowMs: 60_000, ...lim });
        expect(full.minute).toEqual({ limit: 3, remaining: 0, resetAt: T0 + 61_000 });
        expect((await s.usage(a.id, T0 + 5000, 1, 100, 10)).today).toBe(3);
      });

      it("a full window of 1,000 stamps: exact remaining, refused at the limit until the exact moment a slot frees, then one slot", async () => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const at = (t: number) => s.admit(admitInput(a.id, k.id, T0 + t, { perMinute: 1000 }));
        for (let i = 0; i < 1000; i++) {
          expect(await at(i * 50)).toMatchObject({ kind: "allowed", minute: { remaining: 999 - i, resetAt: T0 + 60_000 } });
        }
        expect(await at(50_000)).toMatchObject({ kind: "rate_limited", window: "minute", retryAfterMs: 10_000, minute: { remaining: 0, resetAt: T0 + 60_000 } });
        const peek = await s.peekLimits({ now: T0 + 50_000, keyId: k.id, accountId: a.id, perMinute: 1000, perDay: 1_000_000, windowMs: 60_000 });
        expect(peek.minute).toEqual({ limit: 1000, remaining: 0, resetAt: T0 + 60_000 });
        expect((await at(59_999)).kind).toBe("rate_limited");
        // At 60 s the first stamp leaves: exactly one slot, and the next frees 50 ms later.
        expect(await at(60_000)).toMatchObject({ kind: "allowed", minute: { remaining: 0, resetAt: T0 + 60_050 } });
        expect(await at(60_001)).toMatchObject({ kind: "rate_limited", retryAfterMs: 49 });
        expect(await at(60_050)).toMatchObject({ kind: "allowed", minute: { remaining: 0, resetAt: T0 + 60_100 } });
        expect((await s.usage(a.id, T0 + 60_050, 1, 100, 10)).today).toBe(1002);
      });

      it("a key refused at its limit writes nothing; a lowered limit counts its newest stamps; a clock that steps back is kept in order", async () => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const at = (t: number, perMinute: number) => s.admit(admitInput(a.id, k.id, T0 + t, { perMinute }));
        for (let i = 0; i < 1000; i++) expect((await at(i * 10, 1000)).kind).toBe("allowed");
        for (let i = 0; i < 50; i++) expect(await at(20_000 + i, 1000)).toMatchObject({ kind: "rate_limited", retryAfterMs: 40_000 - i });
        expect((await s.usage(a.id, T0 + 20_050, 1, 100, 10)).today).toBe(1000);
        // Lowered to 10: a slot frees when the 10th newest stamp (T0 + 9,900) leaves.
        expect(await at(30_000, 10)).toMatchObject({ kind: "rate_limited", retryAfterMs: 39_900, minute: { limit: 10, remaining: 0, resetAt: T0 + 69_900 } });
        expect(await at(30_001, 1001)).toMatchObject({ kind: "allowed", minute: { remaining: 0, resetAt: T0 + 60_000 } });
        // The clock steps back 30 s: the stamp goes in order, second oldest.
        expect(await at(5, 1002)).toMatchObject({ kind: "allowed", minute: { remaining: 0, resetAt: T0 + 60_000 } });
        expect(await at(60_005, 1002)).toMatchObject({ kind: "allowed", minute: { remaining: 1, resetAt: T0 + 60_010 } });
        expect(await at(60_006, 1002)).toMatchObject({ kind: "allowed", minute: { remaining: 0, resetAt: T0 + 60_010 } });
        expect(await at(60_007, 1002)).toMatchObject({ kind: "rate_limited", retryAfterMs: 3 });
        expect((await s.usage(a.id, T0 + 60_007, 1, 100, 10)).today).toBe(1004);
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
  });
}
