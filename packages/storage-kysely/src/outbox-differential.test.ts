/**
 * Differential test of the outbox: random sequences of events, claims (limits, per-webhook caps, leases
 * that run out, a clock that steps back), completions (success, retry at a time, dead, stale tokens),
 * console retries, recoveries since a time, webhook deletions, a receiver's 410, webhooks disabled by their failure history (core's
 * webhookHealthAfter) and enabled again hand out the same deliveries in the same order in the memory
 * store (whose claims read a queue kept in claim order) as in SQLite and PostgreSQL.
 */
import fc from "fast-check";
import { isoTime } from "@benchdata/core";
import type { ClaimedDelivery, DeliveryRecord, EventDraft, Storage } from "@benchdata/core";
import { differential } from "./test-support/differential.ts";

type Op =
  | { kind: "emit"; dt: number; revoked: boolean }
  | { kind: "claim"; dt: number; limit: number; perWebhook: number; leaseMs: number }
  | { kind: "complete"; pick: number; next: "succeeded" | "dead" | "pending"; delay: number; gone: boolean; health: boolean }
  | { kind: "enable"; hook: number }
  | { kind: "retry"; hook: number; pick: number }
  | { kind: "recover"; hook: number; back: number; dt: number }
  | { kind: "delete"; hook: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("emit" as const), dt: fc.integer({ min: -2_000, max: 5_000 }), revoked: fc.boolean() }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      dt: fc.integer({ min: -2_000, max: 8_000 }),
      limit: fc.integer({ min: 1, max: 5 }),
      perWebhook: fc.integer({ min: 1, max: 3 }),
      leaseMs: fc.integer({ min: 1_000, max: 12_000 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("complete" as const),
      pick: fc.nat(),
      next: fc.constantFrom("succeeded" as const, "dead" as const, "pending" as const),
      delay: fc.integer({ min: -1_000, max: 30_000 }),
      gone: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
      health: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("enable" as const), hook: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("retry" as const), hook: fc.integer({ min: 0, max: 2 }), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("recover" as const), hook: fc.integer({ min: 0, max: 2 }), back: fc.integer({ min: 0, max: 40_000 }), dt: fc.integer({ min: -1_000, max: 5_000 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), hook: fc.integer({ min: 0, max: 2 }) }) },
);

const T0 = Date.UTC(2026, 10, 16, 12);

/** A delivery without what differs between stores by design (its id). */
function seen(d: DeliveryRecord): unknown {
  return { eventId: d.eventId, webhookId: d.webhookId, status: d.status, attempts: d.attempts, nextAttemptAt: d.nextAttemptAt, attemptLog: d.attemptLog, deadReason: d.deadReason };
}

async function play(s: Storage, ops: readonly Op[], tag: string): Promise<unknown[]> {
  const acc = `acc_${tag}`;
  // Ids ascending in creation order, so every store orders one event's deliveries alike.
  const hooks = [0, 1, 2].map((i) => `wh_${tag}_${i}`);
  await s.createAccount({ id: acc, name: "Outbox", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
  await s.createWebhook({ id: hooks[0]!, accountId: acc, url: "https://h.example/0", events: ["quota.warning"], secret: "whsec_0", createdAt: T0 }, 10);
  await s.createWebhook({ id: hooks[1]!, accountId: acc, url: "https://h.example/1", events: ["quota.warning", "key.revoked"], secret: "whsec_1", createdAt: T0 }, 10);
  await s.createWebhook({ id: hooks[2]!, accountId: acc, url: "https://h.example/2", events: ["key.revoked", "webhook.disabled"], secret: "whsec_2", createdAt: T0 }, 10);
  const out: unknown[] = [];
  const claimed: ClaimedDelivery[] = [];
  let now = T0;
  let i = 0;
  for (const op of ops) {
    i += 1;
    if (op.kind === "emit") {
      now += op.dt;
      const at = isoTime(now);
      const draft: EventDraft = op.revoked
        ? { id: `evt_${tag}_${i}`, type: "key.revoked", accountId: acc, createdAt: at, data: { key_id: `key_${i}`, key_name: "k", revoked_at: at } }
        : { id: `evt_${tag}_${i}`, type: "quota.warning", accountId: acc, createdAt: at, data: { calls_used: i, monthly_limit: 100, threshold: 80, period_start: at, period_end: at } };
      await s.emitEvent(draft, now);
    } else if (op.kind === "claim") {
      now += op.dt;
      const got = await s.claimDeliveries({ now, leaseMs: op.leaseMs, limit: op.limit, perWebhook: op.perWebhook });
      claimed.push(...got);
      out.push(got.map((d) => ({ eventId: d.eventId, webhookId: d.webhookId, attempt: d.attempt, body: d.body, url: d.url })));
    } else if (op.kind === "complete") {
      // Completing an old claim again exercises stale lease tokens.
      const d = claimed[op.pick % Math.max(1, claimed.length)];
      if (!d) continue;
      const next = op.next === "pending" ? { status: "pending" as const, at: now + op.delay } : { status: op.next };
      const attempt = { attempt: d.attempt, at: now, statusCode: op.next === "succeeded" ? 200 : 500, latencyMs: 5, error: op.next === "succeeded" ? null : "http_status", responseBody: "" };
      const health = op.health ? { disableAfterMs: 20_000, disableAfterDead: 2, eventId: `evt_${tag}_d${i}` } : undefined;
      out.push(await s.completeDelivery({ deliveryId: d.deliveryId, leaseToken: d.leaseToken, attempt, next, gone: op.gone, ...(health ? { health } : {}) }));
    } else if (op.kind === "enable") {
      const w = await s.enableWebhook(acc, hooks[op.hook]!);
      out.push(w === null ? null : w.status);
    } else if (op.kind === "retry") {
      const list = await s.listDeliveries(acc, hooks[op.hook]!, 100);
      const d = list[op.pick % Math.max(1, list.length)];
      if (!d) continue;
      const r = await s.retryDelivery(acc, hooks[op.hook]!, d.id, now);
      out.push(r === null ? null : seen(r));
    } else if (op.kind === "recover") {
      now += op.dt;
      // A budget small enough to bind within a run: its refusals and partial re-queues must agree too.
      out.push(await s.recoverDeliveries({ accountId: acc, webhookId: hooks[op.hook]!, since: now - op.back, now, policy: { callsPerHour: 4, deliveriesPerHour: 5 } }));
    } else {
      out.push(await s.deleteWebhook(acc, hooks[op.hook]!));
    }
  }
  for (const h of hooks) out.push((await s.listDeliveries(acc, h, 100)).map(seen));
  out.push((await s.listWebhooks(acc)).map((w) => [w.id, w.status, w.disabledReason, w.disabledAt]));
  // The SQL stores are shared by every run: leave nothing claimable behind.
  for (const h of hooks) await s.deleteWebhook(acc, h);
  return out;
}

await differential({
  title: "outbox differential: memory vs sqlite vs postgres",
  claim: "every store claims, completes, retries and lists exactly as the memory store",
  op: opArb,
  maxOps: 60,
  play,
});
