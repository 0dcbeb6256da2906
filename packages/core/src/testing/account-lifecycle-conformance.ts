/**
 * The conformance cases of whole accounts (listed, read for an export, erased), each on a fresh store: a list
 * is only exact on a store that holds nothing else, and an erasure must be seen to leave nothing behind.
 */
import { describe, expect, it } from "vitest";
import { manualClock } from "../clock/clock.ts";
import { defineConfig } from "../config/config.ts";
import type { PruneWorkerStore } from "../retention/prune-worker.ts";
import { createPruneWorker } from "../retention/prune-worker.ts";
import type { AccountRecord, ApiKeyRecord, Storage, WebhookRecord } from "../storage/types.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";
import { account, admitInput, drainEvents, id, key, onFreshStore, quota, snapshot, T0, webhook } from "./conformance-fixtures.ts";

const DAY = 86_400_000;

/** Everything `populate` gave an account. */
interface Populated {
  readonly a: AccountRecord;
  readonly w: WebhookRecord;
  /** A live key rotated once (hashes `h1-…`, retired, and `h2-…`) and a test key (`ht-…`). */
  readonly live: ApiKeyRecord;
  readonly test: ApiKeyRecord;
  /** A charge that failed (`insufficient_funds`), and the pending one asked for after it. */
  readonly failedInvoice: string;
  readonly pendingInvoice: string;
}

/**
 * An account holding one of everything: a webhook with succeeded and pending deliveries, keys with windows and
 * day counters (yesterday's kept as history), an exhausted quota with a failed charge and a pending one, a
 * session, a sign-in link and two snapshots.
 */
async function populate(s: Storage, a: AccountRecord): Promise<Populated> {
  await s.createAccount(a);
  const w = webhook(a.id, ["key.created", "key.rotated", "quota.warning", "quota.exhausted", "invoice.failed"]);
  await s.createWebhook(w, 10);
  const live = key(a.id);
  await s.createKey({ key: live, hash: `h1-${live.id}`, maxKeys: 5, eventId: id("evt") });
  await s.rotateKey({ accountId: a.id, keyId: live.id, newHash: `h2-${live.id}`, newPrefix: "svc_live_new", now: T0 + 1, eventId: id("evt") });
  const test = key(a.id, { environment: "test" });
  await s.createKey({ key: test, hash: `ht-${test.id}`, maxKeys: 5, eventId: id("evt") });
  await s.admit(admitInput(a.id, test.id, T0 - DAY, { environment: "test" }));
  await s.admit(admitInput(a.id, test.id, T0 + 5, { environment: "test" }));
  let failedInvoice = "";
  for (let i = 0; i < 21; i++) {
    const r = await s.admit(admitInput(a.id, live.id, T0 + 10 + i, { quota: quota() }));
    if (r.kind === "quota_exhausted" && r.chargeInvoiceId !== null) failedInvoice = r.chargeInvoiceId;
  }
  // A lease of 1 ms: another account's pending charge claimed with it is free again at once.
  const claim = (await s.claimCharges({ now: T0 + 100, leaseMs: 1, limit: 100 })).find((c) => c.invoice.id === failedInvoice)!;
  const failed = { status: "failed", processorRef: `pi_${a.id}`, reason: "insufficient_funds", at: T0 + 100 } as const;
  expect(await s.settleCharge({ invoiceId: failedInvoice, leaseToken: claim.leaseToken, outcome: failed, eventIds: { exhausted: id("evt"), result: id("evt") } })).toBe(true);
  const pending = await s.requestCharge({ accountId: a.id, now: T0 + 200, anchorDay: 1, invoiceId: id("inv"), baseQuota: 20, blockSize: 10, blockPrice: 1000, currency: "usd" });
  await drainEvents(s, T0 + 300);
  // One more event after the drain: its delivery waits.
  await s.rotateKey({ accountId: a.id, keyId: live.id, newHash: `h3-${live.id}`, newPrefix: "svc_live_3rd", now: T0 + 400, eventId: id("evt") });
  await s.createSession({ tokenHash: `s-${a.id}`, accountId: a.id, createdAt: T0, expiresAt: T0 + DAY });
  await s.createSignInLink({ tokenHash: `l-${a.id}`, accountId: a.id, createdAt: T0 + 1, expiresAt: T0 + 900_000 });
  await s.saveSnapshot(snapshot(a.id));
  await s.saveSnapshot(snapshot(a.id, { environment: "test", merchantId: "m-2", createdAt: T0 + 1 }));
  return { a, w, live, test, failedInvoice, pendingInvoice: pending!.id };
}

/** What `held` counts. */
type HeldKind = "keys" | "webhooks" | "sessions" | "deliveries" | "events" | "snapshots" | "invoices" | "usageDays" | "periods";

/** How many records of each kind the export reads find for the account. */
async function held(s: Storage, accountId: string): Promise<Record<HeldKind, number>> {
  const page = { limit: 10_000 };
  return {
    keys: (await s.listKeys(accountId)).length,
    webhooks: (await s.listWebhooks(accountId)).length,
    sessions: (await s.accountSessions(accountId)).length,
    deliveries: (await s.accountDeliveries(accountId, page)).length,
    events: (await s.accountEvents(accountId, page)).length,
    snapshots: (await s.accountSnapshots(accountId, page)).length,
    invoices: (await s.listInvoices(accountId)).length,
    usageDays: (await s.accountUsage(accountId)).days.length,
    periods: (await s.accountUsage(accountId)).periods.length,
  };
}

/** Calls `purgeAccount` until it reports nothing left; the total. */
async function purgeAll(s: Storage, accountId: string, limit = 3): Promise<number> {
  let total = 0;
  for (let n = await s.purgeAccount({ accountId, limit }); n > 0; n = await s.purgeAccount({ accountId, limit })) total += n;
  return total;
}

/** Registers the whole-account cases for one implementation; each case gets a store of its own. */
export function accountLifecycleConformance(name: string, target: ConformanceTarget): void {
  const withStore = (body: (s: Storage) => Promise<void>): Promise<void> => onFreshStore(target, body);

  describe(`storage conformance: ${name}: accounts listed, exported and erased`, () => {
    it("listAccounts: ascending (createdAt, id), keyset pages, filters by status, tier, creation range and name (case-insensitive); a tombstone only when asked for", () =>
      withStore(async (s) => {
        const early = account({ name: "Zeta", tier: "developer", createdAt: T0 - 5000 });
        const corp = account({ name: "Acme Corp", createdAt: T0 });
        const labs = account({ name: "acme LABS", tier: "startup", createdAt: T0 });
        const beta = account({ name: "Beta", createdAt: T0 + 1000 });
        const gone = account({ name: "Gamma ACME", tier: "enterprise", createdAt: T0 + 2000 });
        for (const a of [beta, gone, labs, early, corp]) await s.createAccount(a);
        await s.setAccountStatus({ accountId: beta.id, status: "suspended", now: T0 + 3000, eventId: id("evt") });
        await s.deleteAccount({ accountId: gone.id, now: T0 + 4000 });
        // Two accounts created at the same moment are ordered by id.
        const sameTime = [corp, labs].sort((x, y) => (x.id < y.id ? -1 : 1));
        const ids = (list: AccountRecord[]) => list.map((a) => a.id);
        const all = await s.listAccounts({ limit: 100 });
        expect(ids(all)).toEqual([early.id, ...sameTime.map((a) => a.id), beta.id]);
        expect(all[3]).toMatchObject({ status: "suspended", suspendedAt: T0 + 3000 });

        // Pages of two, each after the last of the one before, cover the list once.
        const paged: string[] = [];
        let after: { createdAt: number; id: string } | undefined;
        for (;;) {
          const page = await s.listAccounts(after === undefined ? { limit: 2 } : { limit: 2, after });
          paged.push(...ids(page));
          if (page.length < 2) break;
          after = { createdAt: page[1]!.createdAt, id: page[1]!.id };
        }
        expect(paged).toEqual(ids(all));
        expect(ids(await s.listAccounts({ limit: 100, after: { createdAt: sameTime[0]!.createdAt, id: sameTime[0]!.id } }))).toEqual([sameTime[1]!.id, beta.id]);

        expect(ids(await s.listAccounts({ limit: 100, status: "suspended" }))).toEqual([beta.id]);
        expect(ids(await s.listAccounts({ limit: 100, status: "active" }))).toEqual([early.id, ...sameTime.map((a) => a.id)]);
        expect(await s.listAccounts({ limit: 100, status: "deleted" })).toEqual([
          { id: gone.id, name: "", tier: "enterprise", createdAt: T0 + 2000, limits: {}, allowedCidrs: [], billing: {}, status: "deleted", suspendedAt: null, suspendedReason: null, deletedAt: T0 + 4000 },
        ]);
        expect(ids(await s.listAccounts({ limit: 100, tier: "growth" }))).toEqual([corp.id, beta.id]);
        expect(ids(await s.listAccounts({ limit: 100, createdFrom: T0 }))).toEqual([...sameTime.map((a) => a.id), beta.id]);
        expect(ids(await s.listAccounts({ limit: 100, createdBefore: T0 + 1000 }))).toEqual([early.id, ...sameTime.map((a) => a.id)]);
        expect(ids(await s.listAccounts({ limit: 100, createdFrom: T0, createdBefore: T0 + 1 }))).toEqual(sameTime.map((a) => a.id));
        expect(ids(await s.listAccounts({ limit: 100, nameContains: "acme" }))).toEqual(sameTime.map((a) => a.id));
        expect(ids(await s.listAccounts({ limit: 100, nameContains: "LaBs" }))).toEqual([labs.id]);
        expect(ids(await s.listAccounts({ limit: 100, nameContains: "acme", tier: "growth" }))).toEqual([corp.id]);
        // The tombstone's name is erased: a search finds nothing of it.
        expect(await s.listAccounts({ limit: 100, nameContains: "gamma", status: "deleted" })).toEqual([]);
        // Characters that mean something to LIKE are plain text here.
        expect(await s.listAccounts({ limit: 100, nameContains: "%" })).toEqual([]);
        expect(await s.listAccounts({ limit: 100, nameContains: "_" })).toEqual([]);
        expect(await s.listAccounts({ limit: 1, status: "active" })).toHaveLength(1);
      }));

    it("the export reads: sessions and links as held, usage per day and environment and per period, and pages of deliveries (with attempts), events and snapshots in (createdAt, id) order, of this account only", () =>
      withStore(async (s) => {
        const p = await populate(s, account());
        await populate(s, account({ name: "Other" }));
        expect(await s.accountSessions(p.a.id)).toEqual([
          { kind: "session", createdAt: T0, expiresAt: T0 + DAY },
          { kind: "sign_in_link", createdAt: T0 + 1, expiresAt: T0 + 900_000 },
        ]);
        const day0 = Math.floor(T0 / DAY);
        expect(await s.accountUsage(p.a.id)).toEqual({
          days: [
            { day: day0 - 1, environment: "test", count: 1 },
            { day: day0, environment: "live", count: 21 },
            { day: day0, environment: "test", count: 1 },
          ],
          periods: [{ periodStart: Date.UTC(2026, 10, 1), periodEnd: Date.UTC(2026, 11, 1), used: 20, blocks: 0, exhausted: true, heldAt: null }],
        });

        // A second webhook, deleted with a delivery: its deliveries still belong to the account.
        const extra = webhook(p.a.id, ["key.revoked"]);
        await s.createWebhook(extra, 10);
        await s.revokeKey({ accountId: p.a.id, keyId: p.test.id, now: T0 + 500, eventId: id("evt") });
        await s.deleteWebhook(p.a.id, extra.id);

        const readAll = async <R extends { createdAt: number; id: string }>(read: (page: { after?: { createdAt: number; id: string }; limit: number }) => Promise<R[]>): Promise<R[]> => {
          const out: R[] = [];
          let after: { createdAt: number; id: string } | undefined;
          for (;;) {
            const page = await read(after === undefined ? { limit: 2 } : { limit: 2, after });
            out.push(...page);
            if (page.length < 2) return out;
            after = { createdAt: page[1]!.createdAt, id: page[1]!.id };
          }
        };
        const inOrder = (list: readonly { createdAt: number; id: string }[]) =>
          expect(list.map((r) => [r.createdAt, r.id])).toEqual([...list].sort((x, y) => x.createdAt - y.createdAt || (x.id < y.id ? -1 : 1)).map((r) => [r.createdAt, r.id]));

        const deliveries = await readAll((page) => s.accountDeliveries(p.a.id, page));
        inOrder(deliveries);
        expect(deliveries.every((d) => d.accountId === p.a.id)).toBe(true);
        expect(new Set(deliveries.map((d) => d.id)).size).toBe(deliveries.length);
        // Every event of the webhook's types, the later rotation's waiting; the deleted webhook's one dead.
        expect(deliveries.map((d) => [d.eventType, d.webhookId, d.status])).toEqual(
          expect.arrayContaining([
            ["key.created", p.w.id, "succeeded"],
            ["key.rotated", p.w.id, "pending"],
            ["invoice.failed", p.w.id, "succeeded"],
            ["key.revoked", extra.id, "dead"],
          ]),
        );
        expect(deliveries).toHaveLength(8);
        const sent = deliveries.find((d) => d.eventType === "key.created" && d.webhookId === p.w.id)!;
        expect(sent.attemptLog).toEqual([{ attempt: 1, at: T0 + 300, statusCode: 200, latencyMs: 1, error: null, responseBody: "" }]);

        const events = await readAll((page) => s.accountEvents(p.a.id, page));
        inOrder(events);
        expect(events.map((e) => e.type).sort()).toEqual(
          ["invoice.failed", "key.created", "key.created", "key.revoked", "key.rotated", "key.rotated", "quota.exhausted", "quota.warning"].sort(),
        );
        for (const e of events) expect(JSON.parse(e.body)).toMatchObject({ id: e.id, type: e.type, account_id: p.a.id });

        const snapshots = await readAll((page) => s.accountSnapshots(p.a.id, page));
        expect(snapshots.map((r) => [r.environment, r.merchantId])).toEqual([
          ["live", "m-1"],
          ["test", "m-2"],
        ]);
        expect(await s.accountSnapshots("acc_nobody", { limit: 10 })).toEqual([]);
        expect(await s.accountUsage("acc_nobody")).toEqual({ days: [], periods: [] });
      }));

    it("deleteAccount erases at once: a tombstone, every key (all its hashes), session and link, webhook, counter and quota gone, invoices kept without reasons, a pending charge failed; another account untouched", () =>
      withStore(async (s) => {
        const p = await populate(s, account({ name: "Erase Me", allowedCidrs: ["10.0.0.0/8"], billing: { customerRef: "cus_1", paymentMethodRef: "pm_1" }, limits: { perMinute: 5 } }));
        const other = await populate(s, account({ name: "Keep Me" }));
        const a = p.a;
        const remembered = (await s.findKeyByHash(`h3-${p.live.id}`))!;
        const otherBefore = await held(s, other.a.id);
        expect(Object.values(otherBefore).every((n) => n > 0)).toBe(true);
        // Nothing to purge while the account lives.
        expect(await s.purgeAccount({ accountId: a.id, limit: 100 })).toBe(0);
        expect((await held(s, a.id)).deliveries).toBe(otherBefore.deliveries);

        const tombstone: AccountRecord = { id: a.id, name: "", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {}, status: "deleted", suspendedAt: null, suspendedReason: null, deletedAt: T0 + 1000 };
        expect(await s.deleteAccount({ accountId: a.id, now: T0 + 1000 })).toEqual({ erased: true, account: tombstone });

        // Every credential stops at once: the hashes are unknown, a remembered lookup is stale and counts nothing.
        for (const h of [`h1-${p.live.id}`, `h2-${p.live.id}`, `h3-${p.live.id}`, `ht-${p.test.id}`]) expect(await s.findKeyByHash(h), h).toBeNull();
        expect(await s.admit(admitInput(a.id, p.live.id, T0 + 1001, { quota: quota(), expect: { keyHash: `h3-${p.live.id}`, version: remembered.version } }))).toMatchObject({ kind: "stale" });
        expect(await s.findSession(`s-${a.id}`, T0 + 1001)).toBeNull();
        expect(await s.redeemSignInLink({ linkHash: `l-${a.id}`, now: T0 + 1001, session: { tokenHash: "s-new", createdAt: T0 + 1001, expiresAt: T0 + DAY } })).toBeNull();
        // The account reads as unknown, and nothing can be made for it.
        expect(await s.getAccount(a.id)).toBeNull();
        expect(await s.updateAccount(a.id, { tier: "startup" })).toBeNull();
        expect(await s.setAccountStatus({ accountId: a.id, status: "suspended", now: T0 + 1001, eventId: id("evt") })).toBeNull();
        const late = key(a.id);
        expect(await s.createKey({ key: late, hash: `late-${late.id}`, maxKeys: 5, eventId: id("evt") })).toBe("deleted");
        expect(await s.findKeyByHash(`late-${late.id}`)).toBeNull();
        expect(await s.createWebhook(webhook(a.id, ["key.created"]), 10)).toBe("deleted");
        expect(await s.listKeys(a.id)).toEqual([]);
        expect(await s.listWebhooks(a.id)).toEqual([]);
        expect(await s.getWebhook(a.id, p.w.id)).toBeNull();
        expect(await s.accountSessions(a.id)).toEqual([]);
        expect(await s.accountUsage(a.id)).toEqual({ days: [], periods: [] });
        expect(await s.dailyUsage(a.id, 0, T0 + 1001)).toEqual([]);
        expect(await s.usage(a.id, T0 + 1001, 1, 20, 10)).toMatchObject({ today: 0, month: 0, activeKeys: 0, exhausted: false });
        // Invoices stay for the legal record, amounts and processor references kept, decline reasons gone; the
        // pending one will never be charged.
        const invoices = await s.listInvoices(a.id);
        expect(invoices.map((i) => [i.id, i.status, i.failureReason, i.processorRef, i.amount])).toEqual([
          [p.pendingInvoice, "failed", "account_deleted", null, 1000],
          [p.failedInvoice, "failed", null, `pi_${a.id}`, 1000],
        ]);
        expect(invoices[0]!.resolvedAt).toBe(T0 + 1000);
        // Nothing of the account is ever claimed again.
        expect((await s.claimCharges({ now: T0 + 10 * DAY, leaseMs: 60_000, limit: 100 })).filter((c) => c.invoice.accountId === a.id)).toEqual([]);
        const claimed = await drainEvents(s, T0 + 10 * DAY);
        expect(claimed.filter((d) => d.accountId === a.id)).toEqual([]);

        // The history goes in short steps; then nothing of it is left.
        await purgeAll(s, a.id);
        expect(await held(s, a.id)).toEqual({ keys: 0, webhooks: 0, sessions: 0, deliveries: 0, events: 0, snapshots: 0, invoices: 2, usageDays: 0, periods: 0 });
        expect(await s.listSnapshots(a.id, "live", { limit: 10 })).toEqual([]);
        expect(await s.listDeliveries(a.id, p.w.id, 10)).toEqual([]);

        // Deleting again changes nothing and answers the same tombstone.
        expect(await s.deleteAccount({ accountId: a.id, now: T0 + 2000 })).toEqual({ erased: false, account: tombstone });
        expect(await s.listAccounts({ limit: 10, status: "deleted" })).toEqual([tombstone]);
        expect((await s.listAccounts({ limit: 10 })).map((x) => x.id)).toEqual([other.a.id]);
        expect(await s.deleteAccount({ accountId: "acc_missing", now: T0 })).toBeNull();
        expect(await s.purgeAccount({ accountId: "acc_missing", limit: 10 })).toBe(0);

        // The other account kept everything (its waiting delivery was sent by the drain above).
        expect(await s.getAccount(other.a.id)).toMatchObject({ name: "Keep Me", status: "active" });
        expect(await s.purgeAccount({ accountId: other.a.id, limit: 100 })).toBe(0);
        expect(await held(s, other.a.id)).toEqual(otherBefore);
        expect((await s.findKeyByHash(`h3-${other.live.id}`))?.key.id).toBe(other.live.id);
        expect(await s.findSession(`s-${other.a.id}`, T0 + 1001)).toBe(other.a.id);
        expect((await s.listInvoices(other.a.id)).map((i) => [i.status, i.failureReason])).toEqual([
          ["pending", null],
          ["failed", "insufficient_funds"],
        ]);
        expect(claimed.filter((d) => d.accountId === other.a.id).map((d) => d.eventType)).toEqual(["key.rotated"]);
      }));

    it("unfinishedErasures: deleteAccount records an erasure in its atomic step, the purge that finds nothing left forgets it, and a finished one is never listed again; pages in id order", () =>
      withStore(async (s) => {
        const big = await populate(s, account({ name: "Big" }));
        const empty = account({ name: "Empty" });
        const third = account({ name: "Third" });
        const alive = await populate(s, account({ name: "Alive" }));
        for (const a of [empty, third]) await s.createAccount(a);
        expect(await s.unfinishedErasures({ limit: 10 })).toEqual([]);
        for (const a of [big.a, empty, third]) expect((await s.deleteAccount({ accountId: a.id, now: T0 + 1000 }))?.erased).toBe(true);
        // Deleting again records nothing more.
        expect((await s.deleteAccount({ accountId: big.a.id, now: T0 + 2000 }))?.erased).toBe(false);
        const ids = [big.a.id, empty.id, third.id].sort();
        expect(await s.unfinishedErasures({ limit: 10 })).toEqual(ids);
        expect(await s.unfinishedErasures({ limit: 2 })).toEqual(ids.slice(0, 2));
        expect(await s.unfinishedErasures({ after: ids[1]!, limit: 2 })).toEqual(ids.slice(2));
        expect(await s.unfinishedErasures({ after: ids[2]!, limit: 2 })).toEqual([]);
        // `of`: only those of these ids still listed (one of them was never erased).
        expect(await s.unfinishedErasures({ of: [ids[2]!, "acc_never", ids[0]!], limit: 10 })).toEqual([ids[0], ids[2]]);
        expect(await s.unfinishedErasures({ of: [], limit: 10 })).toEqual([]);

        // Listed while a purge still deletes something (the memory store deleted it all at once); the call that finds
        // nothing left forgets it.
        for (let n = await s.purgeAccount({ accountId: big.a.id, limit: 3 }); n > 0; n = await s.purgeAccount({ accountId: big.a.id, limit: 3 })) {
          expect(await s.unfinishedErasures({ limit: 10 })).toContain(big.a.id);
        }
        expect(await s.purgeAccount({ accountId: empty.id, limit: 3 })).toBe(0);
        expect(await s.unfinishedErasures({ limit: 10 })).toEqual([third.id]);
        // A living account's purge changes nothing; a finished erasure deleted again is not listed again.
        expect(await s.purgeAccount({ accountId: alive.a.id, limit: 3 })).toBe(0);
        expect((await s.deleteAccount({ accountId: empty.id, now: T0 + 3000 }))?.erased).toBe(false);
        expect(await s.unfinishedErasures({ limit: 10 })).toEqual([third.id]);
        expect(await held(s, big.a.id)).toMatchObject({ deliveries: 0, events: 0, snapshots: 0 });
      }));

    it("the pruning worker finishes an erasure left unpurged (deleteAccount, then nothing) and never visits one whose purge finished", () =>
      withStore(async (s) => {
        const left = await populate(s, account({ name: "Left" }));
        const done = await populate(s, account({ name: "Done" }));
        const other = await populate(s, account({ name: "Other" }));
        await s.deleteAccount({ accountId: left.a.id, now: T0 + 1000 });
        await s.deleteAccount({ accountId: done.a.id, now: T0 + 1000 });
        await purgeAll(s, done.a.id);
        const leftBefore = await held(s, left.a.id);
        const otherBefore = await held(s, other.a.id);
        const purged: string[] = [];
        const storage: PruneWorkerStore = {
          prune: (input) => s.prune(input),
          unfinishedErasures: (input) => s.unfinishedErasures(input),
          purgeAccount: (input) => {
            purged.push(input.accountId);
            return s.purgeAccount(input);
          },
        };
        // A day on: retention keeps everything of the other account (30 days by default).
        const worker = createPruneWorker({ storage, clock: manualClock(T0 + DAY), config: defineConfig(), pauseMs: 0 });
        const report = await worker.tick();
        expect(report).toMatchObject({ failed: false, erasures: { finished: 1 } });
        // (The memory store deleted the history in the erasure's own step.)
        expect(report.erasures.purged > 0).toBe(leftBefore.deliveries + leftBefore.events + leftBefore.snapshots > 0);
        expect(new Set(purged)).toEqual(new Set([left.a.id]));
        expect(await held(s, left.a.id)).toMatchObject({ deliveries: 0, events: 0, snapshots: 0 });
        expect(await s.unfinishedErasures({ limit: 10 })).toEqual([]);
        expect(await held(s, other.a.id)).toEqual(otherBefore);

        purged.length = 0;
        expect((await worker.tick()).erasures).toEqual({ finished: 0, purged: 0 });
        expect(purged).toEqual([]);
      }));

    it("racing erasures erase once; all report the same tombstone", () =>
      withStore(async (s) => {
        const a = account();
        await s.createAccount(a);
        const results = await Promise.all(Array.from({ length: 6 }, (_, i) => s.deleteAccount({ accountId: a.id, now: T0 + i })));
        expect(results.filter((r) => r!.erased)).toHaveLength(1);
        expect(new Set(results.map((r) => r!.account.deletedAt)).size).toBe(1);
      }));

    it("admissions racing an erasure: none is admitted after it, none leaves a counter, a quota or a charge behind", () =>
      withStore(async (s) => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const found = (await s.findKeyByHash(`h-${k.id}`))!;
        const admit = (i: number) => s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota(), expect: { keyHash: `h-${k.id}`, version: found.version } }));
        // Up to the edge of the quota: the racing admissions each start a charge if they come first.
        for (let i = 0; i < 20; i++) expect((await admit(i)).kind).toBe("allowed");
        const racing = Array.from({ length: 10 }, (_, i) => admit(100 + i));
        const erased = s.deleteAccount({ accountId: a.id, now: T0 + 105 });
        const after = Array.from({ length: 10 }, (_, i) => admit(200 + i));
        await Promise.all([...racing, erased, ...after]);
        expect((await Promise.all(after)).map((r) => r.kind)).toEqual(Array.from({ length: 10 }, () => "stale"));
        await purgeAll(s, a.id, 100);
        expect(await s.accountUsage(a.id)).toEqual({ days: [], periods: [] });
        expect((await s.listInvoices(a.id)).filter((i) => i.status === "pending")).toEqual([]);
        expect((await s.claimCharges({ now: T0 + DAY, leaseMs: 60_000, limit: 100 })).filter((c) => c.invoice.accountId === a.id)).toEqual([]);
        expect(await s.admit(admitInput(a.id, k.id, T0 + 300, { quota: quota(), expect: { keyHash: `h-${k.id}`, version: found.version } }))).toMatchObject({ kind: "stale" });
      }));

    it("a charge in flight when the account is erased settles its invoice (the legal record) and nothing else: no quota, no event; it is never claimed again", () =>
      withStore(async (s) => {
        const a = account();
        await s.createAccount(a);
        await s.createWebhook(webhook(a.id, ["quota.exhausted", "invoice.paid"]), 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        for (let i = 0; i < 21; i++) await s.admit(admitInput(a.id, k.id, T0 + i, { quota: quota() }));
        const [claim] = (await s.claimCharges({ now: T0 + 100, leaseMs: 60_000, limit: 100 })).filter((c) => c.invoice.accountId === a.id);
        expect(claim).toBeDefined();
        await s.deleteAccount({ accountId: a.id, now: T0 + 200 });
        // In flight: left pending for the worker that holds it.
        expect((await s.listInvoices(a.id)).map((i) => i.status)).toEqual(["pending"]);
        await purgeAll(s, a.id, 100);
        const paid = { status: "paid", processorRef: "pi_in_flight", at: T0 + 300 } as const;
        expect(await s.settleCharge({ invoiceId: claim!.invoice.id, leaseToken: claim!.leaseToken, outcome: paid, eventIds: { exhausted: id("evt"), result: id("evt") } })).toBe(true);
        expect(await s.listInvoices(a.id)).toMatchObject([{ id: claim!.invoice.id, status: "paid", processorRef: "pi_in_flight", resolvedAt: T0 + 300 }]);
        expect(await s.accountEvents(a.id, { limit: 100 })).toEqual([]);
        expect(await s.accountDeliveries(a.id, { limit: 100 })).toEqual([]);
        expect(await s.accountUsage(a.id)).toEqual({ days: [], periods: [] });

        // One that is never settled (its worker died) is never claimed again either.
        const b = account();
        await s.createAccount(b);
        const kb = key(b.id);
        await s.createKey({ key: kb, hash: `h-${kb.id}`, maxKeys: 5, eventId: id("evt") });
        for (let i = 0; i < 21; i++) await s.admit(admitInput(b.id, kb.id, T0 + i, { quota: quota() }));
        expect((await s.claimCharges({ now: T0 + 100, leaseMs: 60_000, limit: 100 })).filter((c) => c.invoice.accountId === b.id)).toHaveLength(1);
        await s.deleteAccount({ accountId: b.id, now: T0 + 200 });
        expect((await s.claimCharges({ now: T0 + DAY, leaseMs: 60_000, limit: 100 })).filter((c) => c.invoice.accountId === b.id)).toEqual([]);
      }));
  });
}
