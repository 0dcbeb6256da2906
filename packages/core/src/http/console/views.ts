/** How console resources look in responses (never a raw key, hash or signing secret beyond creation), and their doc schemas. */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import { EVENT_TYPES } from "../../events/events.ts";
import { SCOPES } from "../../scopes/scopes.ts";
import type { ApiKeyRecord, DeliveryRecord, InvoiceRecord, WebhookRecord } from "../../storage/types.ts";

/** Keys are due for rotation this long after creation or their last rotation (the spec's 90 days). */
export const ROTATION_DUE_MS = 90 * 86_400_000;

const Timestamp = v.pipe(v.string(), v.isoTimestamp());
const NullableTimestamp = v.nullable(Timestamp);
const Integer = v.pipe(v.number(), v.integer());

/** A key as the console shows it. */
export const KeySchema = v.object({
  key_id: v.string(),
  name: v.string(),
  environment: v.picklist(["live", "test"]),
  scopes: v.array(v.picklist(SCOPES)),
  is_active: v.boolean(),
  prefix: v.pipe(v.string(), v.description("The key's first 12 characters.")),
  created_at: Timestamp,
  rotated_at: NullableTimestamp,
  revoked_at: NullableTimestamp,
  rotation_due: v.pipe(v.boolean(), v.description("True for an active key more than 90 days past its creation or last rotation.")),
  last_used_at: v.pipe(
    NullableTimestamp,
    v.description("The minute of the key's latest data request, whatever its outcome (written every few seconds, see `analytics.flushSeconds`); null when never used since usage analytics began."),
  ),
});

/** A key with its raw text, shown once at creation or rotation. */
export const KeyWithSecretSchema = v.object({ ...KeySchema.entries, raw_key: v.pipe(v.string(), v.description("The full key, shown only in this response.")) });

/** The console view of a key, with when it was last used (Unix ms, or null: never, as far as analytics know). */
export function keyView(key: ApiKeyRecord, now: number, lastUsedAt: number | null): v.InferOutput<typeof KeySchema> {
  const since = key.rotatedAt ?? key.createdAt;
  return {
    key_id: key.id,
    name: key.name,
    environment: key.environment,
    scopes: [...key.scopes],
    is_active: key.isActive,
    prefix: key.prefix,
    created_at: isoTime(key.createdAt),
    rotated_at: key.rotatedAt === null ? null : isoTime(key.rotatedAt),
    revoked_at: key.revokedAt === null ? null : isoTime(key.revokedAt),
    rotation_due: key.isActive && now - since > ROTATION_DUE_MS,
    last_used_at: lastUsedAt === null ? null : isoTime(lastUsedAt),
  };
}

/** A webhook as listed (no signing secret). */
export const WebhookSchema = v.object({
  webhook_id: v.string(),
  url: v.string(),
  events: v.array(v.picklist(EVENT_TYPES)),
  created_at: Timestamp,
  status: v.pipe(v.picklist(["active", "disabled"]), v.description("A disabled webhook gets no new deliveries and no attempts until `POST /webhooks/{webhook_id}/enable`.")),
  disabled_reason: v.pipe(
    v.nullable(v.picklist(["gone", "failing", "dead_deliveries"])),
    v.description("`gone`: the receiver answered 410; `failing`: every attempt failed for `webhooks.disableAfterDays`; `dead_deliveries`: `webhooks.disableAfterDeadDeliveries` dead deliveries in a row. Null while active."),
  ),
  disabled_at: NullableTimestamp,
});

/** A webhook at creation, with its signing secret. */
export const WebhookWithSecretSchema = v.object({ ...WebhookSchema.entries, signing_secret: v.pipe(v.string(), v.description("`whsec_…`; shown only in this response.")) });

/** The console view of a webhook (no secret). */
export function webhookView(w: WebhookRecord): v.InferOutput<typeof WebhookSchema> {
  const disabled = w.status === "disabled";
  return {
    webhook_id: w.id,
    url: w.url,
    events: [...w.events],
    created_at: isoTime(w.createdAt),
    status: disabled ? "disabled" : "active",
    disabled_reason: disabled ? (w.disabledReason ?? null) : null,
    disabled_at: disabled && w.disabledAt != null ? isoTime(w.disabledAt) : null,
  };
}

/** One delivery attempt. */
export const AttemptSchema = v.object({
  attempt: Integer,
  at: Timestamp,
  status_code: v.nullable(Integer),
  latency_ms: v.number(),
  error: v.pipe(v.nullable(v.string()), v.description("Null on success; else timeout, refused, blocked, http_status, network, redirect…")),
  response_body: v.pipe(v.string(), v.description("The first 2 KB of the receiver's response.")),
});

/** A delivery with its attempts. */
export const DeliverySchema = v.object({
  delivery_id: v.string(),
  event_id: v.string(),
  event_type: v.picklist(EVENT_TYPES),
  webhook_id: v.string(),
  status: v.picklist(["pending", "succeeded", "dead"]),
  attempt_count: Integer,
  next_attempt_at: NullableTimestamp,
  created_at: Timestamp,
  dead_reason: v.pipe(
    v.nullable(v.picklist(["attempts_exhausted", "gone", "webhook_disabled"])),
    v.description("Why a dead delivery is dead: its last attempt failed, the receiver answered 410, or its webhook was disabled while it waited. Null unless dead."),
  ),
  attempts: v.array(AttemptSchema),
});

/** The console view of a delivery. */
export function deliveryView(d: DeliveryRecord): v.InferOutput<typeof DeliverySchema> {
  return {
    delivery_id: d.id,
    event_id: d.eventId,
    event_type: d.eventType,
    webhook_id: d.webhookId,
    status: d.status,
    attempt_count: d.attempts,
    next_attempt_at: d.nextAttemptAt === null ? null : isoTime(d.nextAttemptAt),
    created_at: isoTime(d.createdAt),
    dead_reason: d.deadReason ?? null,
    attempts: d.attemptLog.map((a) => ({ attempt: a.attempt, at: isoTime(a.at), status_code: a.statusCode, latency_ms: a.latencyMs, error: a.error, response_body: a.responseBody })),
  };
}

/** An invoice: one automatic or requested charge for one quota block. */
export const InvoiceSchema = v.object({
  invoice_id: v.string(),
  status: v.picklist(["pending", "paid", "failed"]),
  amount: v.pipe(Integer, v.description("In the currency's minor unit (cents).")),
  currency: v.string(),
  block: Integer,
  attempt: Integer,
  processor_ref: v.nullable(v.string()),
  failure_reason: v.nullable(v.string()),
  period_start: Timestamp,
  period_end: Timestamp,
  calls_used: Integer,
  created_at: Timestamp,
  resolved_at: NullableTimestamp,
});

/** The console view of an invoice. */
export function invoiceView(i: InvoiceRecord): v.InferOutput<typeof InvoiceSchema> {
  return {
    invoice_id: i.id,
    status: i.status,
    amount: i.amount,
    currency: i.currency,
    block: i.block,
    attempt: i.attempt,
    processor_ref: i.processorRef,
    failure_reason: i.failureReason,
    period_start: i.periodStart,
    period_end: i.periodEnd,
    calls_used: i.callsUsed,
    created_at: isoTime(i.createdAt),
    resolved_at: i.resolvedAt === null ? null : isoTime(i.resolvedAt),
  };
}

/** `{data: [...]}`, the shape of every list. */
export function listOf<S extends v.GenericSchema>(item: S): v.ObjectSchema<{ data: v.ArraySchema<S, undefined> }, undefined> {
  return v.object({ data: v.array(item) });
}
