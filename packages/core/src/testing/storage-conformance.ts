/**
 * The shared storage conformance suite: written once, run against every Storage implementation (memory,
 * SQLite, PostgreSQL). It checks the contract's guarantees, including exactness under concurrency.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccountRecord, AdmitInput, ApiKeyRecord, ClaimedDelivery, PrunedTable, PruneTarget, Storage } from "../storage/types.ts";
import type { Cell } from "../data/source.ts";
import { isId } from "../ids/new-id.ts";
import { isoTime } from "../clock/clock.ts";
import { billingPeriod } from "../quota/billing-period.ts";
import { accountLifecycleConformance } from "./account-lifecycle-conformance.ts";
import { auditConformance } from "./audit-conformance.ts";
import { recoverBudgetConformance } from "./recover-budget-conformance.ts";
import { account, admitInput, drainEvents, id, key, onFreshStore, quota, snapshot, T0, webhook } from "./conformance-fixtures.ts";

/** How the suite obtains a fresh, migrated, empty store, and disposes of it. */
export interface ConformanceTarget {
  /** A fresh empty store whose methods honour the `now` they are given (the app clock). */
  create(): Promise<Storage>;
  /** Called after the store is closed (drop the database, delete the file…). */
  destroy?(storage: Storage): Promise<void>;
}

/** Writes a `quota.warning` event for the account at `t` (its deliveries due then) and returns the event's id. */
async function emitWarning(s: Storage, accountId: string, t: number, i: number): Promise<string> {
  const evId = id("evt");
  await s.emitEvent({ id: evId, type: "quota.warning", accountId, createdAt: new Date(t).toISOString(), data: { calls_used: i, monthly_limit: 20, threshold: 16, period_start: "x", period_end: "y" } }, t);
  return evId;
}

/** Ends a claimed delivery's attempt: a 200 that succeeded, or a 500 after which it is dead or waits for a retry. */
function settle(s: Storage, d: ClaimedDelivery, at: number, next: { status: "succeeded" } | { status: "dead" } | { status: "pending"; at: number }): Promise<boolean> {
  const ok = next.status === "succeeded";
  return s.completeDelivery({ deliveryId: d.deliveryId, leaseToken: d.leaseToken, attempt: { attempt: d.attempt, at, statusCode: ok ? 200 : 500, latencyMs: 1, error: ok ? null : "http_status", responseBody: "" }, next });
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** The time part (Unix ms) of a `<prefix>_<ULID>` identifier. */
function ulidTime(id: string): number {
  let t = 0;
  for (const c of id.slice(id.indexOf("_") + 1, id.indexOf("_") + 11)) t = t * 32 + CROCKFORD.indexOf(c);
  return t;
}

function cell(values: number[]): Cell {
  const sorted = Float64Array.from(values).sort();
  return { sorted, sampleSize: values.length };
}

/** Every batch of `target` below `before`, `limit` rows at a time, until a batch says it was the last: the rows deleted by table, and each batch's deletions. */
async function pruneAll(s: Storage, target: PruneTarget, before: number, limit = 500): Promise<{ deleted: Partial<Record<PrunedTable, number>>; batches: number[] }> {
  // Tables without deletions may be left out of a result: they count 0 here.
  const deleted: Partial<Record<PrunedTable, number>> = target === "deliveries" ? { deliveries: 0, delivery_attempts: 0 } : { [target]: 0 };
  const batches: number[] = [];
  let after = null;
  do {
    const r = await s.prune({ target, before, limit, after });
    batches.push(r.deleted[target] ?? 0);
    for (const [table, n] of Object.entries(r.deleted) as [PrunedTable, number][]) deleted[table] = (deleted[table] ?? 0) + n;
    after = r.next;
    expect(batches.length).toBeLessThan(1000);
  } while (after !== null);
  return { deleted, batches };
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

    describe("keys", () => {
      it("creates a key, finds it by hash with its account, and writes key.created", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createWebhook(webhook(a.id, ["key.created", "key.rotated", "key.revoked"]), 10);
        const k = key(a.id, { scopes: ["benchmarks:read", "segments:read"], environment: "test" });
        expect(await s.createKey({ key: k, hash: `hash-${k.id}`, maxKeys: 5, eventId: id("evt") })).toBe("created");
        const found = await s.findKeyByHash(`hash-${k.id}`);
        expect(found?.key).toEqual(k);
        expect(found?.account).toEqual({ ...a, status: "active", suspendedAt: null, suspendedReason: null });
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

    describe("admit with an expected lookup", () => {
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

    describe("keys and webhooks: guarded under concurrency", () => {
      it("createKey never exceeds maxKeys when creations race; refused keys leave nothing behind", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.created"]);
        await s.createWebhook(w, 10);
        const ks = Array.from({ length: 12 }, () => key(a.id));
        const results = await Promise.all(ks.map((k) => s.createKey({ key: k, hash: `race-${k.id}`, maxKeys: 3, eventId: id("evt") })));
        expect(results.filter((r) => r === "created")).toHaveLength(3);
        expect(results.filter((r) => r === "limit")).toHaveLength(9);
        expect(await s.listKeys(a.id)).toHaveLength(3);
        for (const [i, k] of ks.entries()) expect((await s.findKeyByHash(`race-${k.id}`)) !== null).toBe(results[i] === "created");
        expect((await s.usage(a.id, T0, 1, 20, 10)).activeKeys).toBe(3);
        expect((await drainEvents(s, T0)).filter((d) => d.webhookId === w.id)).toHaveLength(3);
      });

      it("createWebhook never exceeds maxWebhooks when creations race", async () => {
        const a = account();
        await s.createAccount(a);
        const results = await Promise.all(Array.from({ length: 12 }, () => s.createWebhook(webhook(a.id, ["key.created"]), 2)));
        expect(results.filter((r) => r === "created")).toHaveLength(2);
        expect(await s.listWebhooks(a.id)).toHaveLength(2);
      });

      it("racing revocations write key.revoked once and all report the first revocation time", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.revoked"]);
        await s.createWebhook(w, 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const results = await Promise.all(Array.from({ length: 6 }, (_, i) => s.revokeKey({ accountId: a.id, keyId: k.id, now: T0 + 1 + i, eventId: id("evt") })));
        const times = new Set(results.map((r) => r?.revokedAt));
        expect(times.size).toBe(1);
        expect(results.every((r) => r !== null && r.isActive === false)).toBe(true);
        expect((await s.usage(a.id, T0 + 10, 1, 20, 10)).activeKeys).toBe(0);
        expect((await drainEvents(s, T0 + 10)).filter((d) => d.webhookId === w.id)).toHaveLength(1);
      });

      it("racing rotations leave exactly one working hash, the key shows that rotation's prefix, one key.rotated each", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.rotated"]);
        await s.createWebhook(w, 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `old-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const n = 6;
        const results = await Promise.all(
          Array.from({ length: n }, (_, i) => s.rotateKey({ accountId: a.id, keyId: k.id, newHash: `new${i}-${k.id}`, newPrefix: `svc_live_r${i}${i}`, now: T0 + 5, eventId: id("evt") })),
        );
        const rotated = results.flatMap((r, i) => (r === null ? [] : [i]));
        expect(rotated.length).toBeGreaterThan(0);
        expect((await s.findKeyByHash(`old-${k.id}`))?.retired).toBe(true);
        const working: number[] = [];
        for (let i = 0; i < n; i++) {
          const found = await s.findKeyByHash(`new${i}-${k.id}`);
          // A rotation that reported failure must not have installed its hash.
          if (!rotated.includes(i)) expect(found).toBeNull();
          else if (found && !found.retired) working.push(i);
        }
        expect(working).toHaveLength(1);
        expect((await s.getKey(a.id, k.id))?.prefix).toBe(`svc_live_r${working[0]}${working[0]}`);
        expect((await drainEvents(s, T0 + 10)).filter((d) => d.webhookId === w.id)).toHaveLength(rotated.length);
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

    describe("admit: quota", () => {
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

    describe("suspended accounts", () => {
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

    describe("webhooks and deliveries", () => {
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
          { webhookId: w.id, field: "current", secret: "sealed-two" },
          { webhookId: w.id, field: "previous", secret: "sealed-one" },
        ]);
        expect(await s.replaceWebhookSecret({ webhookId: w.id, field: "previous", from: "stale", to: "resealed-one" })).toBe(false);
        expect(await s.replaceWebhookSecret({ webhookId: w.id, field: "previous", from: "sealed-one", to: "resealed-one" })).toBe(true);
        expect(await s.getWebhook(a.id, w.id)).toMatchObject({ secret: "sealed-two", previousSecret: "resealed-one" });
        // A second rotation keeps only the secret it replaces.
        const again = await s.rotateWebhookSecret({ accountId: a.id, webhookId: w.id, secret: "sealed-three", previousUntil: T0 + 2000 });
        expect(again).toMatchObject({ secret: "sealed-three", previousSecret: "sealed-two", previousSecretUntil: T0 + 2000 });
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

    describe("retention: pruning (a fresh store per case: pruning reads the whole store)", () => {
      const ok = (d: ClaimedDelivery, at: number) => ({ deliveryId: d.deliveryId, leaseToken: d.leaseToken, attempt: { attempt: d.attempt, at, statusCode: 200, latencyMs: 1, error: null, responseBody: "ok" } });

      it("deliveries: the finished ones whose event is older than the cutoff go with their attempts; pending ones of any age, and finished ones at the cutoff, stay", async () => {
        await onFreshStore(target, async (s) => {
          const a = account();
          await s.createAccount(a);
          const w = webhook(a.id, ["quota.warning"]);
          await s.createWebhook(w, 10);
          const claimOne = async (now: number): Promise<ClaimedDelivery> => {
            const got = await s.claimDeliveries({ now, leaseMs: 60_000, limit: 1, perWebhook: 10 });
            expect(got).toHaveLength(1);
            return got[0]!;
          };
          const succeeded = await emitWarning(s, a.id, T0 - 3000, 1);
          await settle(s, await claimOne(T0 - 3000), T0 - 3000, { status: "succeeded" });
          const dead = await emitWarning(s, a.id, T0 - 2000, 2);
          await settle(s, await claimOne(T0 - 2000), T0 - 2000, { status: "pending", at: T0 - 1900 });
          await settle(s, await claimOne(T0 - 1900), T0 - 1900, { status: "dead" });
          const waiting = await emitWarning(s, a.id, T0 - 1000, 3);
          await settle(s, await claimOne(T0 - 1000), T0 - 1000, { status: "pending", at: T0 + 60_000 });
          const atCutoff = await emitWarning(s, a.id, T0, 5);
          const fresh = await emitWarning(s, a.id, T0 + 1, 6);
          const twoDue = await s.claimDeliveries({ now: T0 + 10, leaseMs: 60_000, limit: 10, perWebhook: 10 });
          expect(twoDue.map((d) => d.eventId).sort()).toEqual([atCutoff, fresh].sort());
          for (const d of twoDue) await s.completeDelivery({ ...ok(d, T0 + 10), next: { status: "succeeded" } });
          // Written (with its time) after those, and never attempted.
          const untried = await emitWarning(s, a.id, T0 - 500, 4);

          expect((await pruneAll(s, "deliveries", T0)).deleted).toEqual({ deliveries: 2, delivery_attempts: 3 });
          const left = await s.listDeliveries(a.id, w.id, 100);
          expect(left.map((d) => d.eventId).sort()).toEqual([waiting, untried, atCutoff, fresh].sort());
          expect(left.find((d) => d.eventId === waiting)).toMatchObject({ status: "pending", attempts: 1, attemptLog: [{ attempt: 1, statusCode: 500 }] });
          expect(left.find((d) => d.eventId === untried)).toMatchObject({ status: "pending", attempts: 0 });
          expect(left.map((d) => d.eventId)).not.toContain(succeeded);
          expect(left.map((d) => d.eventId)).not.toContain(dead);
          // Nothing more before the cutoff; the one at the cutoff goes once the cutoff passes it, with its attempt.
          expect((await pruneAll(s, "deliveries", T0)).deleted).toEqual({ deliveries: 0, delivery_attempts: 0 });
          expect((await pruneAll(s, "deliveries", T0 + 1)).deleted).toEqual({ deliveries: 1, delivery_attempts: 1 });
          expect((await s.listDeliveries(a.id, w.id, 100)).map((d) => d.eventId).sort()).toEqual([waiting, untried, fresh].sort());
        });
      });

      it("events: one older than the cutoff goes only once no delivery refers to it; a pending delivery keeps its event (and its body) however old", async () => {
        await onFreshStore(target, async (s) => {
          const a = account();
          const quiet = account();
          await s.createAccount(a);
          await s.createAccount(quiet);
          const w = webhook(a.id, ["quota.warning"]);
          await s.createWebhook(w, 10);
          const pending = await emitWarning(s, a.id, T0 - 5000, 1);
          const done = await emitWarning(s, a.id, T0 - 4000, 2);
          // No webhook: these events have no delivery at all.
          await emitWarning(s, quiet.id, T0 - 1, 3);
          await emitWarning(s, quiet.id, T0, 4);
          const claimed = await s.claimDeliveries({ now: T0 - 4000, leaseMs: 60_000, limit: 10, perWebhook: 10 });
          const doneClaim = claimed.find((d) => d.eventId === done)!;
          await settle(s, doneClaim, T0 - 4000, { status: "succeeded" });
          await settle(s, claimed.find((d) => d.eventId === pending)!, T0 - 4000, { status: "pending", at: T0 + 1000 });

          // Only the quiet account's old event: `done` still has its (finished) delivery, listed with its type.
          expect((await pruneAll(s, "events", T0)).deleted).toEqual({ events: 1 });
          expect((await s.listDeliveries(a.id, w.id, 10)).find((d) => d.eventId === done)).toMatchObject({ eventType: "quota.warning", status: "succeeded" });
          // Once its delivery is pruned, the event goes too.
          expect((await pruneAll(s, "deliveries", T0)).deleted.deliveries).toBe(1);
          expect((await pruneAll(s, "events", T0)).deleted).toEqual({ events: 1 });
          // The pending delivery's event is still there: it is claimed with its exact body.
          const [again] = await s.claimDeliveries({ now: T0 + 1000, leaseMs: 60_000, limit: 10, perWebhook: 10 });
          expect(again).toMatchObject({ eventId: pending, attempt: 2 });
          expect(JSON.parse(again!.body)).toMatchObject({ id: pending, type: "quota.warning" });
          // The event at the cutoff goes once the cutoff passes it; the pending one's never does.
          expect((await pruneAll(s, "events", T0 + 1)).deleted).toEqual({ events: 1 });
          expect((await pruneAll(s, "events", T0 + 1e9)).deleted).toEqual({ events: 0 });
        });
      });

      it("sessions and sign-in links: those expired before the cutoff go; those expiring at it, and live ones, stay", async () => {
        await onFreshStore(target, async (s) => {
          const a = account();
          await s.createAccount(a);
          await s.createSession({ tokenHash: "p-old", accountId: a.id, createdAt: T0 - 10, expiresAt: T0 - 1 });
          await s.createSession({ tokenHash: "p-cut", accountId: a.id, createdAt: T0 - 10, expiresAt: T0 });
          await s.createSession({ tokenHash: "p-live", accountId: a.id, createdAt: T0 - 10, expiresAt: T0 + 1e9 });
          await s.createSignInLink({ tokenHash: "p-link-old", accountId: a.id, createdAt: T0 - 10, expiresAt: T0 - 1 });
          await s.createSignInLink({ tokenHash: "p-link-cut", accountId: a.id, createdAt: T0 - 10, expiresAt: T0 });
          await s.createSignInLink({ tokenHash: "p-link-live", accountId: a.id, createdAt: T0 - 10, expiresAt: T0 + 1e9 });
          expect((await pruneAll(s, "sessions", T0)).deleted).toEqual({ sessions: 1 });
          expect((await pruneAll(s, "sign_in_links", T0)).deleted).toEqual({ sign_in_links: 1 });
          expect((await pruneAll(s, "sessions", T0 + 1)).deleted).toEqual({ sessions: 1 });
          expect((await pruneAll(s, "sign_in_links", T0 + 1)).deleted).toEqual({ sign_in_links: 1 });
          expect((await pruneAll(s, "sessions", T0 + 1)).deleted).toEqual({ sessions: 0 });
          // The live ones still work.
          expect(await s.findSession("p-live", T0 + 1)).toBe(a.id);
          expect(await s.redeemSignInLink({ linkHash: "p-link-live", now: T0 + 1, session: { tokenHash: "p-new", createdAt: T0 + 1, expiresAt: T0 + 1e9 } })).toBe(a.id);
          expect(await s.findSession("p-new", T0 + 2)).toBe(a.id);
        });
      });

      it("day counters: a past day's counter goes and its count stays in the usage history; one at the cutoff stays, and today's keeps counting exactly", async () => {
        await onFreshStore(target, async (s) => {
          const DAY = 86_400_000;
          const day0 = Math.floor(T0 / DAY);
          const a = account();
          await s.createAccount(a);
          const live = key(a.id);
          const test = key(a.id, { environment: "test" });
          await s.createKey({ key: live, hash: `h-${live.id}`, maxKeys: 5, eventId: id("evt") });
          await s.createKey({ key: test, hash: `h-${test.id}`, maxKeys: 5, eventId: id("evt") });
          const admit = (k: ApiKeyRecord, now: number, perDay: number) => s.admit(admitInput(a.id, k.id, now, { perDay, environment: k.environment }));
          for (const t of [T0, T0 + 1, T0 + 2]) expect((await admit(live, t, 10)).kind).toBe("allowed");
          for (const t of [T0, T0 + 1]) expect((await admit(test, t, 10)).kind).toBe("allowed");
          // Two days later the live counter rolls over (day 0 moves to the history); the test one sits on day 0.
          const now = T0 + 2 * DAY;
          expect((await admit(live, now, 2)).kind).toBe("allowed");
          // Day 0 counts both: the live keys' from the history, the test keys' still from their counter.
          expect(await s.dailyUsage(a.id, day0, now)).toEqual([
            { day: day0, count: 5 },
            { day: day0 + 2, count: 1 },
          ]);
          expect((await pruneAll(s, "day_counters", day0)).deleted).toEqual({ day_counters: 0 });
          expect((await pruneAll(s, "day_counters", day0 + 1)).deleted).toEqual({ day_counters: 1 });
          // The test keys' day 0 is in the history now, beside the live keys'.
          expect(await s.dailyUsage(a.id, day0, now)).toEqual([
            { day: day0, count: 5 },
            { day: day0 + 2, count: 1 },
          ]);
          // Today's counter was kept: the day's limit of 2 still counts the request made before pruning.
          expect((await admit(live, now + 1, 2)).kind).toBe("allowed");
          expect(await admit(live, now + 2, 2)).toMatchObject({ kind: "rate_limited", window: "day" });
          // A counter pruned and counted again starts from zero on its new day, with the old day kept.
          expect((await admit(test, now + 3, 2)).kind).toBe("allowed");
          expect(await s.usage(a.id, now + 4, 1, 100, 10)).toMatchObject({ today: 3, todayTest: 1 });
          expect(await s.dailyUsage(a.id, day0, now + 4)).toEqual([
            { day: day0, count: 5 },
            { day: day0 + 2, count: 3 },
          ]);
        });
      });

      it("usage history: days before the cutoff go, the cutoff day and later stay", async () => {
        await onFreshStore(target, async (s) => {
          const DAY = 86_400_000;
          const day0 = Math.floor(T0 / DAY);
          const a = account();
          await s.createAccount(a);
          const k = key(a.id);
          await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
          for (let d = 0; d < 4; d++) for (let i = 0; i <= d; i++) expect((await s.admit(admitInput(a.id, k.id, T0 + d * DAY + i))).kind).toBe("allowed");
          const now = T0 + 3 * DAY + 10;
          expect((await pruneAll(s, "usage_days", day0)).deleted).toEqual({ usage_days: 0 });
          expect((await pruneAll(s, "usage_days", day0 + 1)).deleted).toEqual({ usage_days: 1 });
          expect(await s.dailyUsage(a.id, day0 - 1, now)).toEqual([
            { day: day0 + 1, count: 2 },
            { day: day0 + 2, count: 3 },
            { day: day0 + 3, count: 4 },
          ]);
        });
      });

      it("batches are bounded: each examines at most `limit` rows, in order, and the next starts after the last (past rows a batch must keep)", async () => {
        await onFreshStore(target, async (s) => {
          const a = account();
          await s.createAccount(a);
          // Nine expired sessions, three of them expiring at the same moment (the token hash breaks the tie).
          for (let i = 0; i < 9; i++) await s.createSession({ tokenHash: `b-${i}`, accountId: a.id, createdAt: T0 - 100, expiresAt: T0 - 10 + Math.min(i, 6) });
          const first = await s.prune({ target: "sessions", before: T0, limit: 4 });
          expect(first).toEqual({ deleted: { sessions: 4 }, next: { key: T0 - 7, id: "b-3" } });
          expect((await pruneAll(s, "sessions", T0, 4)).batches).toEqual([4, 1]);
          // Events held by pending deliveries are passed over, not read again by every batch.
          const w = webhook(a.id, ["quota.warning"]);
          await s.createWebhook(w, 10);
          for (let i = 0; i < 5; i++) await emitWarning(s, a.id, T0 - 100 + i, i);
          await s.deleteWebhook(a.id, w.id);
          const held = webhook(a.id, ["quota.warning"]);
          await s.createWebhook(held, 10);
          for (let i = 0; i < 3; i++) await emitWarning(s, a.id, T0 - 50 + i, i);
          expect((await pruneAll(s, "deliveries", T0, 2)).deleted.deliveries).toBe(5);
          const events = await pruneAll(s, "events", T0, 2);
          expect(events.deleted).toEqual({ events: 5 });
          expect(events.batches).toEqual([2, 2, 1, 0, 0]);
          expect((await s.listDeliveries(a.id, held.id, 10)).map((d) => d.status)).toEqual(["pending", "pending", "pending"]);
        });
      });

      it("several instances at once: concurrent pruning deletes every row exactly once, and counts it once", async () => {
        await onFreshStore(target, async (s) => {
          const a = account();
          await s.createAccount(a);
          await s.createWebhook(webhook(a.id, ["quota.warning"]), 10);
          for (let i = 0; i < 40; i++) await emitWarning(s, a.id, T0 - 1000 + i, i);
          expect(await drainEvents(s, T0)).toHaveLength(40);
          const runs = await Promise.all([0, 1, 2, 3].map(() => pruneAll(s, "deliveries", T0, 7)));
          expect(runs.reduce((n, r) => n + (r.deleted.deliveries ?? 0), 0)).toBe(40);
          expect(runs.reduce((n, r) => n + (r.deleted.delivery_attempts ?? 0), 0)).toBe(40);
          const events = await Promise.all([0, 1, 2, 3].map(() => pruneAll(s, "events", T0, 7)));
          expect(events.reduce((n, r) => n + (r.deleted.events ?? 0), 0)).toBe(40);
          expect((await pruneAll(s, "deliveries", T0)).deleted.deliveries).toBe(0);
          expect((await pruneAll(s, "events", T0)).deleted.events).toBe(0);
        });
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
        // It names the pairs that held cells before (2026-Q1), not those that were empty (2025-Q4).
        const held = await s.replaceCells(
          [{ category: "saas", segment: "all", period: "2026-Q1", metric: "churn_rate", cell: cell([0.1]) }],
          [
            { category: "saas", period: "2025-Q4" },
            { category: "saas", period: "2026-Q1" },
          ],
        );
        expect(held).toEqual([{ category: "saas", period: "2026-Q1" }]);
        const replaced = await b.cells("saas", "all", "2026-Q1", ["gross_margin", "churn_rate"]);
        expect([...replaced.keys()]).toEqual(["churn_rate"]);
        expect((await b.cells("saas", "smb", "2026-Q1", ["gross_margin"])).size).toBe(0);
        expect(await b.segments("saas")).toEqual([]);
        expect((await b.cells("saas", "all", "2026-Q2", ["gross_margin"])).size).toBe(1);
      });

      it("keeps a cell's business ordinals (sample_size of several metrics counts distinct businesses), and none for a cell given none", async () => {
        const big = Uint32Array.from([0, 7, 65_536, 4_000_000_000]);
        await s.replaceCells(
          [
            { category: "retail", segment: "all", period: "2026-Q1", metric: "gross_margin", cell: { ...cell([0.1, 0.2, 0.3, 0.4]), businesses: big } },
            { category: "retail", segment: "all", period: "2026-Q1", metric: "refund_rate", cell: cell([0.01]) },
          ],
          [],
        );
        const got = await s.benchmarks.cells("retail", "all", "2026-Q1", ["gross_margin", "refund_rate"]);
        expect(Array.from(got.get("gross_margin")!.businesses ?? [])).toEqual([0, 7, 65_536, 4_000_000_000]);
        expect(got.get("refund_rate")!.businesses).toBeUndefined();
      });
    });

    describe("merchant snapshots", () => {
      it("stores a snapshot and reads it back by id, in the listing and in the merchant's snapshots", async () => {
        const a = account();
        const r = snapshot(a.id, { segment: "smb", metrics: { gross_margin: 0.1234567891, revenue_growth: -0.02, customer_ltv: 1e-7, burn_multiple: 123456789.25 } });
        expect(await s.saveSnapshot(r)).toBeNull();
        expect(await s.getSnapshot(a.id, "live", r.id)).toEqual(r);
        expect(await s.listSnapshots(a.id, "live", { limit: 10 })).toEqual([r]);
        expect(await s.merchantSnapshots(a.id, "live", "m-1")).toEqual([r]);
        expect(await s.getSnapshot(a.id, "live", "vcfs_missing")).toBeNull();
      });

      it("isolation: another account or the other environment never sees a snapshot", async () => {
        const a = account();
        const b = account();
        const live = snapshot(a.id);
        const test = snapshot(a.id, { environment: "test", metrics: { gross_margin: 0.2 } });
        await s.saveSnapshot(live);
        // The same merchant and period in the test environment is another slot: nothing is replaced.
        expect(await s.saveSnapshot(test)).toBeNull();
        expect(await s.getSnapshot(b.id, "live", live.id)).toBeNull();
        expect(await s.getSnapshot(a.id, "test", live.id)).toBeNull();
        expect(await s.getSnapshot(a.id, "live", test.id)).toBeNull();
        expect(await s.listSnapshots(b.id, "live", { limit: 10 })).toEqual([]);
        expect(await s.merchantSnapshots(b.id, "live", "m-1")).toEqual([]);
        expect(await s.listSnapshots(a.id, "live", { limit: 10 })).toEqual([live]);
        expect(await s.listSnapshots(a.id, "test", { limit: 10 })).toEqual([test]);
        expect(await s.merchantSnapshots(a.id, "test", "m-1")).toEqual([test]);
      });

      it("lists newest first (createdAt, then id), filters by merchant, honours the limit; merchantSnapshots ascend by period", async () => {
        const a = account();
        const first = snapshot(a.id, { merchantId: "m-a", period: "2026-Q1", createdAt: T0 + 1 });
        const second = snapshot(a.id, { merchantId: "m-b", period: "2026-Q1", createdAt: T0 + 2 });
        const third = snapshot(a.id, { merchantId: "m-a", period: "2025-Q4", createdAt: T0 + 3 });
        const tieLow = snapshot(a.id, { merchantId: "m-a", period: "2026-Q2", createdAt: T0 + 3 });
        for (const r of [third, first, tieLow, second]) await s.saveSnapshot(r);
        // `third` and `tieLow` share a createdAt: the larger id (the later one minted) comes first.
        expect((await s.listSnapshots(a.id, "live", { limit: 10 })).map((r) => r.id)).toEqual([tieLow.id, third.id, second.id, first.id]);
        expect((await s.listSnapshots(a.id, "live", { limit: 2 })).map((r) => r.id)).toEqual([tieLow.id, third.id]);
        expect((await s.listSnapshots(a.id, "live", { merchantId: "m-a", limit: 10 })).map((r) => r.id)).toEqual([tieLow.id, third.id, first.id]);
        expect((await s.listSnapshots(a.id, "live", { merchantId: "m-none", limit: 10 }))).toEqual([]);
        expect((await s.merchantSnapshots(a.id, "live", "m-a")).map((r) => r.period)).toEqual(["2025-Q4", "2026-Q1", "2026-Q2"]);
      });

      it("replacement: saving the same merchant and period replaces the old snapshot (new id) and reports it", async () => {
        const a = account();
        const old = snapshot(a.id, { merchantId: "m-r", period: "2026-Q2", createdAt: T0 });
        const other = snapshot(a.id, { merchantId: "m-r", period: "2026-Q1", createdAt: T0 });
        await s.saveSnapshot(old);
        await s.saveSnapshot(other);
        const next = snapshot(a.id, { merchantId: "m-r", period: "2026-Q2", category: "retail", segment: "omnichannel", metrics: { refund_rate: 0.05 }, createdAt: T0 + 10 });
        expect(await s.saveSnapshot(next)).toEqual(old);
        expect(await s.getSnapshot(a.id, "live", old.id)).toBeNull();
        expect(await s.getSnapshot(a.id, "live", next.id)).toEqual(next);
        expect((await s.merchantSnapshots(a.id, "live", "m-r")).map((r) => r.id)).toEqual([other.id, next.id]);
        expect((await s.listSnapshots(a.id, "live", { merchantId: "m-r", limit: 10 })).map((r) => r.id)).toEqual([next.id, other.id]);
      });

      it("replacement is atomic: 12 concurrent saves of one period leave one snapshot, each save but one replacing exactly one", async () => {
        const a = account();
        const saves = Array.from({ length: 12 }, (_, i) => snapshot(a.id, { merchantId: "m-c", period: "2026-05", createdAt: T0 + i }));
        const replaced = await Promise.all(saves.map((r) => s.saveSnapshot(r)));
        const left = await s.merchantSnapshots(a.id, "live", "m-c");
        expect(left).toHaveLength(1);
        const replacedIds = replaced.filter((r) => r !== null && r !== "deleted").map((r) => (r as { id: string }).id);
        expect(replacedIds).toHaveLength(11);
        // Every save except the survivor was replaced exactly once.
        expect(new Set([...replacedIds, left[0]!.id]).size).toBe(12);
      });
    });
  });
  accountLifecycleConformance(name, target);
  auditConformance(name, target);
  recoverBudgetConformance(name, target);
}
