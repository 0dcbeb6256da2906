/**
 * The conformance cases of bounded recovery (issue 26, "recover cannot be turned into a flood"): one call re-queues
 * at most what the account's hourly budget leaves, oldest first; the calls of an hour are counted; concurrent calls
 * never spend more than the budget holds. Each case on a fresh store, so a claim sees only its own deliveries.
 */
import { describe, expect, it } from "vitest";
import type { AccountRecord, Storage, WebhookRecord } from "../storage/types.ts";
import type { RecoverPolicy } from "../webhooks/recover-budget.ts";
import { RECOVER_WINDOW_MS } from "../webhooks/recover-budget.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";
import { account, id, onFreshStore, T0, webhook } from "./conformance-fixtures.ts";

const T = T0 + 50_000_000;

/** An account with one webhook and `n` dead deliveries to it (events at T + 1 … T + n), oldest first by event id. */
async function withDead(s: Storage, n: number, a: AccountRecord = account(), w?: WebhookRecord): Promise<{ a: AccountRecord; w: WebhookRecord; events: string[] }> {
  if ((await s.getAccount(a.id)) === null) await s.createAccount(a);
  const hook = w ?? webhook(a.id, ["quota.warning"]);
  if (w === undefined) await s.createWebhook(hook, 10);
  const events: string[] = [];
  for (let i = 1; i <= n; i++) {
    const evId = id("evt");
    events.push(evId);
    await s.emitEvent({ id: evId, type: "quota.warning", accountId: a.id, createdAt: new Date(T + i).toISOString(), data: { calls_used: i, monthly_limit: 20, threshold: 16, period_start: "x", period_end: "y" } }, T + i);
  }
  const now = T + 1000;
  const claimed = (await s.claimDeliveries({ now, leaseMs: 60_000, limit: 10_000, perWebhook: 10_000 })).filter((d) => d.webhookId === hook.id);
  expect(claimed).toHaveLength(n);
  for (const d of claimed) {
    const attempt = { attempt: d.attempt, at: now, statusCode: 500, latencyMs: 1, error: "http_status", responseBody: "" };
    expect(await s.completeDelivery({ deliveryId: d.deliveryId, leaseToken: d.leaseToken, attempt, next: { status: "dead" } })).toBe(true);
  }
  return { a, w: hook, events };
}

/** The events whose delivery to `w` is pending (re-queued), in event order. */
async function pendingEvents(s: Storage, a: AccountRecord, w: WebhookRecord, events: readonly string[]): Promise<string[]> {
  const pending = new Set((await s.listDeliveries(a.id, w.id, 10_000)).filter((d) => d.status === "pending").map((d) => d.eventId));
  return events.filter((e) => pending.has(e));
}

/** Registers the bounded-recovery cases for one implementation under `name`. */
export function recoverBudgetConformance(name: string, target: ConformanceTarget): void {
  describe(`storage conformance: ${name}: bounded recovery (a fresh store per case)`, () => {
    it("recover: one call re-queues at most what the hour's budget leaves, oldest first, and says whether more remain; a spent budget refuses until its hour ends", async () => {
      await onFreshStore(target, async (s) => {
        const { a, w, events } = await withDead(s, 7);
        const policy: RecoverPolicy = { callsPerHour: 10, deliveriesPerHour: 3 };
        const now = T + 2000;
        const call = (at: number) => s.recoverDeliveries({ accountId: a.id, webhookId: w.id, since: T, now: at, policy });
        expect(await call(now)).toEqual({ kind: "recovered", recovered: 3, hasMore: true });
        expect(await pendingEvents(s, a, w, events)).toEqual(events.slice(0, 3));
        // The hour's three are spent: refused, and nothing changes, until the window that opened at `now` ends.
        expect(await call(now + 1)).toEqual({ kind: "refused", reason: "deliveries", retryAt: now + RECOVER_WINDOW_MS });
        expect(await call(now + RECOVER_WINDOW_MS - 1)).toEqual({ kind: "refused", reason: "deliveries", retryAt: now + RECOVER_WINDOW_MS });
        expect(await pendingEvents(s, a, w, events)).toEqual(events.slice(0, 3));
        // A new hour: the next three oldest (the first three are due already), then the last one.
        const next = now + RECOVER_WINDOW_MS;
        expect(await call(next)).toEqual({ kind: "recovered", recovered: 3, hasMore: true });
        expect(await pendingEvents(s, a, w, events)).toEqual(events.slice(0, 6));
        expect(await call(next + 2 * RECOVER_WINDOW_MS)).toEqual({ kind: "recovered", recovered: 1, hasMore: false });
        expect(await pendingEvents(s, a, w, events)).toEqual(events);
      });
    });

    it("recover: an account's calls of an hour are counted, all webhooks together, even those that re-queue nothing; an unknown or disabled webhook spends nothing", async () => {
      await onFreshStore(target, async (s) => {
        const { a, w } = await withDead(s, 2);
        const v = webhook(a.id, ["quota.warning"]);
        await s.createWebhook(v, 10);
        const policy: RecoverPolicy = { callsPerHour: 3, deliveriesPerHour: 1000 };
        const now = T + 2000;
        const call = (webhookId: string, at: number) => s.recoverDeliveries({ accountId: a.id, webhookId, since: T, now: at, policy });
        expect(await call("wh_unknown", now)).toBeNull();
        expect(await s.recoverDeliveries({ accountId: "acc_other", webhookId: w.id, since: T, now, policy })).toBeNull();
        expect(await call(w.id, now)).toEqual({ kind: "recovered", recovered: 2, hasMore: false });
        expect(await call(w.id, now + 1)).toEqual({ kind: "recovered", recovered: 0, hasMore: false });
        expect(await call(v.id, now + 2)).toEqual({ kind: "recovered", recovered: 0, hasMore: false });
        expect(await call(v.id, now + 3)).toEqual({ kind: "refused", reason: "calls", retryAt: now + RECOVER_WINDOW_MS });
        // Another account's budget is its own.
        const other = await withDead(s, 1);
        expect(await s.recoverDeliveries({ accountId: other.a.id, webhookId: other.w.id, since: T, now: now + 4, policy })).toEqual({ kind: "recovered", recovered: 1, hasMore: false });
        expect(await call(w.id, now + RECOVER_WINDOW_MS)).toEqual({ kind: "recovered", recovered: 0, hasMore: false });
      });
    });

    it("recover: concurrent calls never spend more than the budget holds (MUST be atomic across processes)", async () => {
      await onFreshStore(target, async (s) => {
        const { a, w, events } = await withDead(s, 40);
        const policy: RecoverPolicy = { callsPerHour: 5, deliveriesPerHour: 25 };
        const now = T + 2000;
        // Twelve calls at once, each asking as if it were first: at most 5 are let through, re-queuing 25 in all.
        const results = await Promise.all(Array.from({ length: 12 }, (_, i) => s.recoverDeliveries({ accountId: a.id, webhookId: w.id, since: T, now: now + (i % 3), policy })));
        const done = results.filter((r) => r !== null && r !== "disabled" && r.kind === "recovered");
        const refused = results.filter((r) => r !== null && r !== "disabled" && r.kind === "refused");
        expect(done.length + refused.length).toBe(12);
        expect(done.length).toBeLessThanOrEqual(5);
        const requeued = done.reduce((n, r) => n + (r.kind === "recovered" ? r.recovered : 0), 0);
        expect(requeued).toBe(25);
        expect(await pendingEvents(s, a, w, events)).toEqual(events.slice(0, 25));
      });
    });
  });
}
