/** Builders of each event from the records that cause it, shared by every storage implementation. */
import { isoTime } from "../clock/clock.ts";
import type { ApiKeyRecord, InvoiceRecord } from "../storage/types.ts";
import type { EventDraft, WebhookDisabledReason } from "./events.ts";

/** `key.created` for a new key. */
export function keyCreatedEvent(id: string, key: ApiKeyRecord): EventDraft<"key.created"> {
  const at = isoTime(key.createdAt);
  return {
    id,
    type: "key.created",
    accountId: key.accountId,
    createdAt: at,
    data: { key_id: key.id, key_name: key.name, environment: key.environment, scopes: [...key.scopes], created_at: at },
  };
}

/** `key.rotated` for a key rotated at `now`. */
export function keyRotatedEvent(id: string, key: ApiKeyRecord, now: number): EventDraft<"key.rotated"> {
  const at = isoTime(now);
  return { id, type: "key.rotated", accountId: key.accountId, createdAt: at, data: { key_id: key.id, key_name: key.name, rotated_at: at } };
}

/** `key.revoked` for a key revoked at `now`. */
export function keyRevokedEvent(id: string, key: ApiKeyRecord, now: number): EventDraft<"key.revoked"> {
  const at = isoTime(now);
  return { id, type: "key.revoked", accountId: key.accountId, createdAt: at, data: { key_id: key.id, key_name: key.name, revoked_at: at } };
}

/** `quota.warning` when usage reaches a threshold of the period's allowance. */
export function quotaWarningEvent(
  id: string,
  accountId: string,
  now: number,
  q: { used: number; allowance: number; threshold: number; periodStart: number; periodEnd: number },
): EventDraft<"quota.warning"> {
  return {
    id,
    type: "quota.warning",
    accountId,
    createdAt: isoTime(now),
    data: {
      calls_used: q.used,
      monthly_limit: q.allowance,
      threshold: q.threshold,
      period_start: isoTime(q.periodStart),
      period_end: isoTime(q.periodEnd),
    },
  };
}

/** `quota.held` when automatic charging stops for the period (the ceiling was reached, or a block would buy nothing). */
export function quotaHeldEvent(
  id: string,
  accountId: string,
  now: number,
  q: { reason: "charge_limit" | "block_buys_nothing"; used: number; allowance: number; charges: number; periodStart: number; periodEnd: number },
): EventDraft<"quota.held"> {
  return {
    id,
    type: "quota.held",
    accountId,
    createdAt: isoTime(now),
    data: {
      reason: q.reason,
      calls_used: q.used,
      monthly_limit: q.allowance,
      automatic_charges: q.charges,
      period_start: isoTime(q.periodStart),
      period_end: isoTime(q.periodEnd),
    },
  };
}

/** `quota.exhausted`, emitted once the exhaustion's charge exists at the processor (its payload names it). */
export function quotaExhaustedEvent(id: string, invoice: InvoiceRecord, processorRef: string, now: number): EventDraft<"quota.exhausted"> {
  return {
    id,
    type: "quota.exhausted",
    accountId: invoice.accountId,
    createdAt: isoTime(now),
    data: {
      calls_used: invoice.callsUsed,
      period_start: invoice.periodStart,
      period_end: invoice.periodEnd,
      charge_amount: invoice.amount,
      charge_currency: invoice.currency,
      processor_ref: processorRef,
    },
  };
}

/** `invoice.paid` for a cleared charge. */
export function invoicePaidEvent(id: string, invoice: InvoiceRecord, processorRef: string, at: number): EventDraft<"invoice.paid"> {
  return {
    id,
    type: "invoice.paid",
    accountId: invoice.accountId,
    createdAt: isoTime(at),
    data: { invoice_id: invoice.id, amount: invoice.amount, currency: invoice.currency, paid_at: isoTime(at), processor_ref: processorRef },
  };
}

/** `invoice.failed` for a failed charge. */
export function invoiceFailedEvent(id: string, invoice: InvoiceRecord, processorRef: string, reason: string, at: number): EventDraft<"invoice.failed"> {
  return {
    id,
    type: "invoice.failed",
    accountId: invoice.accountId,
    createdAt: isoTime(at),
    data: {
      invoice_id: invoice.id,
      amount: invoice.amount,
      currency: invoice.currency,
      failed_at: isoTime(at),
      processor_ref: processorRef,
      failure_reason: reason,
    },
  };
}

/** `webhook.disabled`: a webhook of the account stopped receiving events (to the account's other active webhooks). */
export function webhookDisabledEvent(id: string, accountId: string, now: number, w: { webhookId: string; url: string; reason: WebhookDisabledReason }): EventDraft<"webhook.disabled"> {
  return { id, type: "webhook.disabled", accountId, createdAt: isoTime(now), data: { webhook_id: w.webhookId, url: w.url, reason: w.reason, disabled_at: isoTime(now) } };
}

/** `account.suspended`: the operator suspended the account at `now` (the operator's reason stays with the operator). */
export function accountSuspendedEvent(id: string, accountId: string, now: number): EventDraft<"account.suspended"> {
  return { id, type: "account.suspended", accountId, createdAt: isoTime(now), data: { suspended_at: isoTime(now) } };
}

/** `account.resumed`: the operator resumed at `now` the account suspended since `suspendedAt`. */
export function accountResumedEvent(id: string, accountId: string, suspendedAt: number, now: number): EventDraft<"account.resumed"> {
  return { id, type: "account.resumed", accountId, createdAt: isoTime(now), data: { suspended_at: isoTime(suspendedAt), resumed_at: isoTime(now) } };
}
