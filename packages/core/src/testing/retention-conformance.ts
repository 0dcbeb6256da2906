/** Storage conformance, retention (`RetentionStore.prune`): what each target deletes, bounded batches, concurrent pruning. */
import { describe, expect, it } from "vitest";
import type { ApiKeyRecord, ClaimedDelivery, PrunedTable, PruneTarget, Storage } from "../storage/types.ts";
import { account, admitInput, drainEvents, emitWarning, id, key, onFreshStore, quota, settle, T0, webhook } from "./conformance-fixtures.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";

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

/** Registers these cases for one implementation under `name`. */
export function retentionConformance(name: string, target: ConformanceTarget): void {
  describe(`storage conformance: ${name}`, () => {
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
  });
}
