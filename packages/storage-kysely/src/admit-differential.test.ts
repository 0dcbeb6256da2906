/**
 * Differential test: random sequences of admissions (clock steps forward and back, across a UTC midnight
 * and a billing-period boundary, limits that change between calls, quota exhaustion, paid and failed
 * charges, console retries, block sizes of 0 and ceilings of automatic charges that hold the account) give exactly the memory store's results in SQLite and in PostgreSQL, whose
 * admit is a plpgsql re-statement of core's pure functions.
 */
import fc from "fast-check";
import type { AdmitResult, ClaimedCharge, Storage } from "@benchdata/core";
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
      const r: AdmitResult = await s.admit({
        now,
        keyId: `key_${tag}_${op.key}`,
        accountId: acc,
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
      });
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
      out.push(await s.requestCharge({ accountId: acc, now, anchorDay: 1, invoiceId: `inv_${tag}_${i}r`, baseQuota: 5, blockSize: 4, blockPrice: 700, currency: "usd" }));
    }
  }
  out.push(await s.usage(acc, now, 1, 5, 4));
  out.push(await s.listInvoices(acc));
  return out;
}

await differential({
  title: "admit differential: memory vs sqlite vs postgres",
  claim: "every store decides every step exactly as the memory store",
  op: opArb,
  maxOps: 40,
  play,
});
