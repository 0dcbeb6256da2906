/** The spec's seven event types and benchdata's extensions, their envelope, and the payloads the spec and contract define. */

/** Every event type the service emits. */
export const EVENT_TYPES = [
  "key.created",
  "key.rotated",
  "key.revoked",
  "quota.warning",
  "quota.exhausted",
  "invoice.paid",
  "invoice.failed",
  // Extension: automatic charging stopped for the period until a person acts (docs/billing.md).
  "quota.held",
  // Extension: a webhook was disabled (its receiver answered 410, or it kept failing); sent to the account's other webhooks (docs/webhooks.md).
  "webhook.disabled",
  // Extensions: the operator suspended or resumed the account (docs/webhooks.md, "Suspended accounts"): a
  // suspended account's deliveries wait, so both reach its webhooks once it is resumed, in that order.
  "account.suspended",
  "account.resumed",
] as const;

/** An event type. */
export type EventType = (typeof EVENT_TYPES)[number];

/** Whether `value` is a known event type. */
export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** `data` of each event type. */
export interface EventData {
  "key.created": { key_id: string; key_name: string; environment: string; scopes: string[]; created_at: string };
  "key.rotated": { key_id: string; key_name: string; rotated_at: string };
  "key.revoked": { key_id: string; key_name: string; revoked_at: string };
  "quota.warning": { calls_used: number; monthly_limit: number; threshold: number; period_start: string; period_end: string };
  "quota.exhausted": {
    calls_used: number;
    period_start: string;
    period_end: string;
    charge_amount: number;
    charge_currency: string;
    processor_ref: string;
  };
  "invoice.paid": { invoice_id: string; amount: number; currency: string; paid_at: string; processor_ref: string };
  "invoice.failed": {
    invoice_id: string;
    amount: number;
    currency: string;
    failed_at: string;
    processor_ref: string;
    failure_reason: string;
  };
  "quota.held": {
    reason: "charge_limit" | "block_buys_nothing";
    calls_used: number;
    monthly_limit: number;
    automatic_charges: number;
    period_start: string;
    period_end: string;
  };
  "webhook.disabled": {
    webhook_id: string;
    url: string;
    /** `gone` (the receiver answered 410), `failing` (every attempt failed for the configured span) or `dead_deliveries` (N dead deliveries in a row). */
    reason: "gone" | "failing" | "dead_deliveries";
    disabled_at: string;
  };
  "account.suspended": { suspended_at: string };
  "account.resumed": { suspended_at: string; resumed_at: string };
}

/** Why a webhook was disabled automatically. */
export type WebhookDisabledReason = EventData["webhook.disabled"]["reason"];

/** An event as created, before it is serialized: the envelope fields and its data. */
export interface EventDraft<T extends EventType = EventType> {
  readonly id: string;
  readonly type: T;
  readonly accountId: string;
  readonly createdAt: string;
  readonly data: EventData[T];
}

/**
 * The exact bytes (as a string) of an event's body: `{id, type, account_id, created_at, data}`. Stored once
 * with the event so every delivery attempt sends byte-identical bodies.
 */
export function serializeEvent(event: EventDraft): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    account_id: event.accountId,
    created_at: event.createdAt,
    data: event.data,
  });
}
