/**
 * Differential test: random sequences of admissions (clock steps forward and back, across a UTC midnight
 * and a billing-period boundary, limits that change between calls, quota exhaustion, paid and failed
 * charges, console retries, block sizes of 0 and ceilings of automatic charges that hold the account) give
 * exactly what core's `admission` decides (the oracle below plays core's pure functions on plain arrays and
 * maps) in the memory store, in SQLite and in PostgreSQL, whose admit is the PL/pgSQL mirror of `admission`.
 */
import fc from "fast-check";
import type { AdmitInput, AdmitResult, ClaimedCharge, DayCount, InvoiceRecord, Storage, StoredQuota } from "@benchdata/core";
import {
  admission,
  ArrayWindowLog,
  billingPeriod,
  dayCounterId,
  EMPTY_QUOTA,
  pendingInvoice,
  quotaChargeFailed,
  quotaChargeSucceeded,
  quotaManualCharge,
  recordAdmission,
  utcDay,
} from "@benchdata/core";
import { differential } from "./test-support/differential.ts";

type Op =
  | { kind: "admit"; dt: number; key: number; perMinute: number; perDay: number; live: boolean; baseQuota: number; blockSize: number; maxAutoCharges: number }
  | { kind: "settle"; paid: boolean }
  | { kind: "retry-charge" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant("admit" as const),
      dt: fc.integer({ min: -3_000, max: 45_000 }),
      key: fc.integer({ min: 0, max: 2 }),
      perMinute: fc.integer({ min: 0, max: 5 }),
      perDay: fc.integer({ min: 2, max: 14 }),
      live: fc.boolean(),
      baseQuota: fc.integer({ min: 3, max: 9 }),
      // Mostly 4; sometimes 0 (a block that buys nothing) or 1 (below the calls used after a lowered quota).
      blockSize: fc.constantFrom(4, 4, 4, 1, 0),
      maxAutoCharges: fc.constantFrom(3, 3, 1, 0),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("settle" as const), paid: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("retry-charge" as const) }) },
);

// Two minutes before a UTC midnight that is also the first of a month.
const T0 = Date.UTC(2026, 10, 30, 23, 58, 0);

/** The admission of step `i`, an `admit` op, at `now`. */
function admitInput(op: Extract<Op, { kind: "admit" }>, tag: string, i: number, now: number): AdmitInput {
  return {
        now,
        keyId: `key_${tag}_${op.key}`,
        accountId: `acc_${tag}`,
        perMinute: op.perMinute,
        perDay: op.perDay,
        windowMs: 60_000,
        // Key 2 is a test key: its own day counter, never quota.
        environment: op.key === 2 ? "test" : "live",
        quota: op.live && op.key !== 2
          ? {
              anchorDay: 1,
              baseQuota: op.baseQuota,
              blockSize: op.blockSize,
              blockPrice: 700,
              currency: "usd",
              retryAfterFailureMs: 20_000,
              maxAutoCharges: op.maxAutoCharges,
              warningEventId: `evt_${tag}_${i}`,
              invoiceId: `inv_${tag}_${i}`,
              heldEventId: `evt_${tag}_${i}h`,
            }
          : null,
  };
}

const RETRY_CHARGE = { baseQuota: 5, blockSize: 4, blockPrice: 700, currency: "usd" } as const;

async function play(s: Storage, ops: readonly Op[], tag: string): Promise<unknown[]> {
  const acc = `acc_${tag}`;
  // SQL claims skip (and never lease) invoices of unknown accounts, which would pile up ahead of this run's.
  await s.createAccount({ id: acc, name: "Differential", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
  const out: unknown[] = [];
  let now = T0;
  let i = 0;
  for (const op of ops) {
    i += 1;
    if (op.kind === "admit") {
      now += op.dt;
      const r: AdmitResult = await s.admit(admitInput(op, tag, i, now));
      out.push(r);
    } else if (op.kind === "settle") {
      // The SQL stores are shared by every run, and earlier runs leave unsettled invoices behind: claim
      // until the store has no more, or this run's invoice may never come up.
      const mine: ClaimedCharge[] = [];
      for (;;) {
        const got = await s.claimCharges({ now, leaseMs: 1000, limit: 100 });
        mine.push(...got.filter((c) => c.invoice.accountId === acc));
        if (got.length < 100) break;
      }
      for (const c of mine) {
        const outcome = op.paid ? { status: "paid" as const, processorRef: `pi_${i}`, at: now } : { status: "failed" as const, processorRef: `pi_${i}`, reason: "card_declined", at: now };
        out.push(await s.settleCharge({ invoiceId: c.invoice.id, leaseToken: c.leaseToken, outcome, eventIds: { exhausted: `evt_${tag}_${i}x`, result: `evt_${tag}_${i}r` } }));
      }
    } else {
      out.push(await s.requestCharge({ accountId: acc, now, anchorDay: 1, invoiceId: `inv_${tag}_${i}r`, ...RETRY_CHARGE }));
    }
  }
  out.push(await s.usage(acc, now, 1, 5, 4));
  out.push(await s.listInvoices(acc));
  return out;
}

/**
 * What `play` gives, from core's functions alone: `admission` over plain logs and maps for each admit, and the
 * quota machine's charge steps for the settlements and the console's retries.
 */
function oracle(ops: readonly Op[], tag: string): unknown[] {
  const acc = `acc_${tag}`;
  const logs = new Map<string, ArrayWindowLog>();
  const days = new Map<string, DayCount>();
  const quotas = new Map<number, StoredQuota>();
  const invoices: InvoiceRecord[] = [];
  const out: unknown[] = [];
  let now = T0;
  let i = 0;
  for (const op of ops) {
    i += 1;
    if (op.kind === "admit") {
      now += op.dt;
      const input = admitInput(op, tag, i, now);
      const log = logs.get(input.keyId) ?? new ArrayWindowLog([]);
      const dayId = dayCounterId(acc, input.environment);
      const a = admission(input, log, days.get(dayId), (_, start) => quotas.get(start), now);
      const w = a.writes;
      if (w !== null) {
        recordAdmission(log, w.first, now);
        logs.set(input.keyId, log);
        days.set(dayId, { day: w.day, count: w.count });
        if (w.quota !== null) quotas.set(w.periodStart, { state: w.quota, periodEnd: w.periodEnd });
        if (w.invoice !== null) invoices.push(w.invoice);
      }
      out.push(a.result);
    } else if (op.kind === "settle") {
      for (const [n, inv] of [...invoices.entries()].filter(([, r]) => r.status === "pending").sort(([, a], [, b]) => a.createdAt - b.createdAt)) {
        invoices[n] = { ...inv, status: op.paid ? "paid" : "failed", processorRef: `pi_${i}`, resolvedAt: now, failureReason: op.paid ? null : "card_declined" };
        const start = Date.parse(inv.periodStart);
        const q = quotas.get(start);
        if (q) quotas.set(start, { ...q, state: op.paid ? quotaChargeSucceeded(q.state, inv.block) : quotaChargeFailed(q.state, inv.block, now) });
        out.push(true);
      }
    } else {
      const period = billingPeriod(now, 1);
      const q = quotas.get(period.start) ?? { state: EMPTY_QUOTA, periodEnd: period.end };
      const step = quotaManualCharge(RETRY_CHARGE, q.state);
      if (step === null) out.push(null);
      else {
        quotas.set(period.start, { ...q, state: step.state });
        const record = pendingInvoice({ id: `inv_${tag}_${i}r`, accountId: acc, periodStart: period.start, periodEnd: q.periodEnd, charge: step.charge, currency: RETRY_CHARGE.currency, callsUsed: step.state.used, now });
        invoices.push(record);
        out.push(record);
      }
    }
  }
  const today = (id: string): number => {
    const d = days.get(id);
    return d !== undefined && d.day === utcDay(now) ? d.count : 0;
  };
  const period = billingPeriod(now, 1);
  const state = quotas.get(period.start)?.state ?? EMPTY_QUOTA;
  const todayTest = today(dayCounterId(acc, "test"));
  out.push({ today: today(acc) + todayTest, todayTest, month: state.used, allowance: 5 + state.blocks * 4, exhausted: state.exhausted, activeKeys: 0, periodStart: period.start, periodEnd: period.end });
  out.push([...invoices].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)));
  return out;
}

await differential({
  title: "admit differential: memory vs sqlite vs postgres",
  claim: "every store decides every step exactly as core's admission",
  op: opArb,
  // Long enough that quotas run out, charges start, settle and fail, and accounts are held.
  minOps: 25,
  maxOps: 50,
  timeoutMs: 300_000,
  play,
  oracle,
});
