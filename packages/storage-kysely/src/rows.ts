/**
 * Row → record mapping shared by the SQLite and PostgreSQL stores. The two drivers hand the same columns
 * over differently (SQLite: JSON text and 0/1; PostgreSQL: arrays, parsed jsonb and booleans; both: bigint
 * columns as numbers or strings), so every reader here accepts either form.
 */
import type { AccountRecord, ApiKeyRecord, AttemptRecord, DeadReason, DeliveryRecord, EventType, InvoiceRecord, RecordPage, SnapshotRecord, WebhookDisabledReason, WebhookRecord } from "@benchdata/core";

/** A row as a driver returns it. */
export type Row = Record<string, unknown>;

/** A number column (bigint columns may arrive as strings). */
export const num = (v: unknown): number => Number(v);
/** A nullable number column. */
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
/** A nullable text column. */
export const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
/** A JSON column: text to parse (SQLite, json) or an already parsed value (jsonb, arrays). */
export const json = <T>(v: unknown): T => (typeof v === "string" ? (JSON.parse(v) as T) : (v as T));
/** A boolean column: 0/1 (SQLite) or a boolean (PostgreSQL). */
export const bool = (v: unknown): boolean => v === true || v === 1;
/** A list column, as a fresh array. */
const list = <T>(v: unknown): T[] => [...json<T[]>(v)];

/** An account row. */
export function accountFromRow(r: Row): AccountRecord {
  return {
    id: String(r.id),
    name: String(r.name),
    tier: r.tier as AccountRecord["tier"],
    createdAt: num(r.created_at),
    limits: json<AccountRecord["limits"]>(r.limits),
    allowedCidrs: list<string>(r.allowed_cidrs),
    ...(bool(r.console_ip_exempt) ? { consoleIpExempt: true } : {}),
    billing: json<AccountRecord["billing"]>(r.billing),
    status: r.status === "suspended" || r.status === "deleted" ? r.status : "active",
    suspendedAt: numOrNull(r.suspended_at),
    suspendedReason: strOrNull(r.suspended_reason),
    ...(r.deleted_at != null ? { deletedAt: num(r.deleted_at) } : {}),
  };
}

/** The account columns of the hot-path key lookup, which come prefixed `a_`. */
export function lookupAccountFromRow(r: Row): AccountRecord {
  return accountFromRow({
    id: r.a_id,
    name: r.a_name,
    tier: r.a_tier,
    created_at: r.a_created_at,
    limits: r.a_limits,
    allowed_cidrs: r.a_allowed_cidrs,
    console_ip_exempt: r.a_console_ip_exempt,
    billing: r.a_billing,
    status: r.a_status,
    suspended_at: r.a_suspended_at,
    suspended_reason: r.a_suspended_reason,
  });
}

/** A key row. */
export function keyFromRow(r: Row): ApiKeyRecord {
  return {
    id: String(r.id),
    accountId: String(r.account_id),
    name: String(r.name),
    environment: r.environment as ApiKeyRecord["environment"],
    scopes: list<ApiKeyRecord["scopes"][number]>(r.scopes),
    prefix: String(r.prefix),
    isActive: bool(r.is_active),
    createdAt: num(r.created_at),
    rotatedAt: numOrNull(r.rotated_at),
    revokedAt: numOrNull(r.revoked_at),
  };
}

/** A webhook row (with its signing secret: server-side only). */
export function webhookFromRow(r: Row): WebhookRecord {
  return {
    id: String(r.id),
    accountId: String(r.account_id),
    url: String(r.url),
    events: list<EventType>(r.events),
    secret: String(r.secret),
    createdAt: num(r.created_at),
    status: r.status === "disabled" ? "disabled" : "active",
    disabledReason: (strOrNull(r.disabled_reason) as WebhookDisabledReason | null) ?? null,
    disabledAt: numOrNull(r.disabled_at),
    previousSecret: strOrNull(r.previous_secret),
    previousSecretUntil: numOrNull(r.previous_secret_until),
    failingSince: numOrNull(r.failing_since),
    deadStreak: num(r.dead_streak),
  };
}

/** An invoice row. */
export function invoiceFromRow(r: Row): InvoiceRecord {
  return {
    id: String(r.id),
    accountId: String(r.account_id),
    periodStart: String(r.period_start),
    periodEnd: String(r.period_end),
    block: num(r.block),
    attempt: num(r.attempt),
    amount: num(r.amount),
    currency: String(r.currency),
    status: r.status as InvoiceRecord["status"],
    idempotencyKey: String(r.idempotency_key),
    processorRef: strOrNull(r.processor_ref),
    callsUsed: num(r.calls_used),
    createdAt: num(r.created_at),
    resolvedAt: numOrNull(r.resolved_at),
    failureReason: strOrNull(r.failure_reason),
  };
}

/** A delivery attempt row. */
export function attemptFromRow(r: Row): AttemptRecord {
  return {
    attempt: num(r.attempt),
    at: num(r.at),
    statusCode: numOrNull(r.status_code),
    latencyMs: num(r.latency_ms),
    error: strOrNull(r.error),
    responseBody: String(r.response_body),
  };
}

/** A delivery row (joined with its event's `event_type`) and its attempt rows, oldest first. */
export function deliveryFromRow(r: Row, attempts: readonly Row[]): DeliveryRecord {
  const status = r.status as DeliveryRecord["status"];
  return {
    id: String(r.id),
    eventId: String(r.event_id),
    eventType: r.event_type as EventType,
    webhookId: String(r.webhook_id),
    accountId: String(r.account_id),
    status,
    attempts: num(r.attempts),
    nextAttemptAt: status === "pending" ? numOrNull(r.next_attempt_at) : null,
    createdAt: num(r.created_at),
    attemptLog: attempts.map(attemptFromRow),
    deadReason: status === "dead" ? ((strOrNull(r.dead_reason) as DeadReason | null) ?? null) : null,
  };
}

/** A merchant snapshot row. */
export function snapshotFromRow(r: Row): SnapshotRecord {
  return {
    id: String(r.id),
    accountId: String(r.account_id),
    environment: r.environment as SnapshotRecord["environment"],
    merchantId: String(r.merchant_id),
    category: r.category as SnapshotRecord["category"],
    segment: String(r.segment),
    period: String(r.period),
    metrics: json<SnapshotRecord["metrics"]>(r.metrics),
    createdAt: num(r.created_at),
  };
}

/** Where a page of `(created_at, id)`-ordered rows starts: after its position, or before every row. */
export function pageStart(page: RecordPage): [number, string] {
  return page.after === undefined ? [Number.MIN_SAFE_INTEGER, ""] : [page.after.createdAt, page.after.id];
}
