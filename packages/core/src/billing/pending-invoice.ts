/** The pending invoice a store records, in the same atomic step, when an exhausted quota starts a charge. */
import { isoTime } from "../clock/clock.ts";
import type { ChargeRequest } from "../quota/quota.ts";
import { chargeIdempotencyKey } from "../quota/quota.ts";
import type { InvoiceRecord } from "../storage/types.ts";

/** A pending invoice for `charge` of the billing period [periodStart, periodEnd), with the charge's idempotency key. */
export function pendingInvoice(input: {
  readonly id: string;
  readonly accountId: string;
  readonly periodStart: number;
  readonly periodEnd: number;
  readonly charge: ChargeRequest;
  readonly currency: string;
  /** Calls used when the quota was exhausted. */
  readonly callsUsed: number;
  readonly now: number;
}): InvoiceRecord {
  const periodStart = isoTime(input.periodStart);
  const { block, attempt, amount } = input.charge;
  return {
    id: input.id,
    accountId: input.accountId,
    periodStart,
    periodEnd: isoTime(input.periodEnd),
    block,
    attempt,
    amount,
    currency: input.currency,
    status: "pending",
    idempotencyKey: chargeIdempotencyKey(input.accountId, periodStart, block, attempt),
    processorRef: null,
    callsUsed: input.callsUsed,
    createdAt: input.now,
    resolvedAt: null,
    failureReason: null,
  };
}
