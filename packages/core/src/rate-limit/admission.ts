/**
 * One data request's admission, decided once for every store: the key's sliding window, the environment's
 * UTC day and (live keys) the billing period's quota, in that order. Pure: the store reads what is asked for,
 * calls `admission`, and persists `writes` in the same atomic step (memory: synchronously; SQLite: in the
 * batch's transaction). PostgreSQL runs a labelled PL/pgSQL mirror of this file, checked against it
 * (docs/architecture.md, "Admission").
 *
 * The rules it composes are stated once each: the window in sliding-window.ts, the day in daily-window.ts,
 * the quota's machine in quota/quota.ts, the period in quota/billing-period.ts, the pending invoice in
 * billing/pending-invoice.ts and the events in events/builders.ts.
 */
import type { EventDraft } from "../events/events.ts";
import { quotaHeldEvent, quotaWarningEvent } from "../events/builders.ts";
import { pendingInvoice } from "../billing/pending-invoice.ts";
import { billingPeriod } from "../quota/billing-period.ts";
import type { QuotaState, QuotaStep } from "../quota/quota.ts";
import { EMPTY_QUOTA, allowance, quotaRequest } from "../quota/quota.ts";
import type { AdmitInput, AdmitResult, InvoiceRecord, WindowInfo } from "../storage/types.ts";
import type { WindowLog } from "./sliding-window.ts";
import { slidingWindow, windowPeek } from "./sliding-window.ts";
import { dailyPeek, dailyWindow, utcDay } from "./daily-window.ts";

/** A day counter as stored: the UTC day it counts and its count. */
export interface DayCount {
  readonly day: number;
  readonly count: number;
}

/** A billing period's quota as stored, with the period's end as it was when the period's row was made. */
export interface StoredQuota {
  readonly state: QuotaState;
  readonly periodEnd: number;
}

/**
 * Reads the account's quota for the billing period starting at `periodStart` (undefined when the period has none
 * yet). Called only for a live key's request that the limits admit, so a refusal reads no quota.
 */
export type QuotaReader<Q extends StoredQuota = StoredQuota> = (accountId: string, periodStart: number) => Q | undefined;

/** What an admitted request changes; the store persists it atomically. A refusal changes nothing. */
export interface AdmissionWrites<Q extends StoredQuota = StoredQuota> {
  /** The window: the stamps before `first` leave and the request's time joins (`recordAdmission(log, first, now)`). */
  readonly first: number;
  /** The day counter (the environment's, `dayCounterId`) to store: its day and count. */
  readonly day: number;
  readonly count: number;
  /** The period's quota to store; null for a test key (never counted). */
  readonly quota: QuotaState | null;
  /** The period the quota belongs to, and its end (as stored, or as it is now for a new period); 0 for a test key. */
  readonly periodStart: number;
  readonly periodEnd: number;
  /** What the quota reader returned (undefined: the period has no row yet), so a store can update it in place. */
  readonly read: Q | undefined;
  /** The charge's pending invoice, when the request started one. */
  readonly invoice: InvoiceRecord | null;
  /** Events to record (`quota.warning`, `quota.held`), in order. */
  readonly events: readonly EventDraft[];
}

/** The decision: what the request is answered, the quota step it took, and what to persist. */
export interface Admission<Q extends StoredQuota = StoredQuota> {
  readonly result: Exclude<AdmitResult, { kind: "stale" }>;
  /** The quota machine's step (core's `quotaRequest`), null when the limits refused or the key is a test key. */
  readonly step: QuotaStep | null;
  /** Null when the limits refused the request. */
  readonly writes: AdmissionWrites<Q> | null;
}

const NO_EVENTS: readonly EventDraft[] = [];

/**
 * Decides one request at `now`. The window and the day must both admit; a refusal reports the window that binds
 * (the one with the longer wait: the day, when both refuse near midnight), the longer wait, and each window as
 * it was before the request (nothing changes). An admitted live request then takes one step of the quota
 * machine: it may warn, start a charge (its pending invoice) or hold the account (`quota.held`).
 */
export function admission<Q extends StoredQuota>(input: Omit<AdmitInput, "expect" | "now">, window: WindowLog, stored: DayCount | undefined, readQuota: QuotaReader<Q>, now: number): Admission<Q> {
  const minuteD = slidingWindow(window, now, input.perMinute, input.windowMs);
  const dayD = dailyWindow(stored?.day ?? utcDay(now), stored?.count ?? 0, now, input.perDay);
  if (!minuteD.allowed || !dayD.allowed) {
    return {
      result: {
        kind: "rate_limited",
        now,
        window: !dayD.allowed && (minuteD.allowed || dayD.retryAfterMs >= minuteD.retryAfterMs) ? "day" : "minute",
        // A refused request changes nothing: the window that would have admitted it reports its state before it.
        minute: { limit: input.perMinute, remaining: minuteD.allowed ? minuteD.remaining + 1 : minuteD.remaining, resetAt: minuteD.resetAt },
        day: { limit: dayD.limit, remaining: dayD.allowed ? dayD.remaining + 1 : dayD.remaining, resetAt: dayD.resetAt },
        retryAfterMs: Math.max(minuteD.retryAfterMs, dayD.retryAfterMs),
      },
      step: null,
      writes: null,
    };
  }
  const minute: WindowInfo = { limit: input.perMinute, remaining: minuteD.remaining, resetAt: minuteD.resetAt };
  const day: WindowInfo = { limit: dayD.limit, remaining: dayD.remaining, resetAt: dayD.resetAt };
  const qi = input.quota;
  if (qi === null) {
    return { result: { kind: "allowed", now, minute, day, quota: null }, step: null, writes: { first: minuteD.first, day: dayD.day, count: dayD.count, quota: null, periodStart: 0, periodEnd: 0, read: undefined, invoice: null, events: NO_EVENTS } };
  }

  const period = billingPeriod(now, qi.anchorDay);
  const q = readQuota(input.accountId, period.start);
  const start = period.start;
  const end = q === undefined ? period.end : q.periodEnd;
  const step = quotaRequest(qi, q === undefined ? EMPTY_QUOTA : q.state, now);
  if (step.kind === "allow") {
    const events =
      step.warn === null ? NO_EVENTS : [quotaWarningEvent(qi.warningEventId, input.accountId, now, { used: step.used, allowance: step.allowance, threshold: step.warn, periodStart: start, periodEnd: end })];
    return {
      result: { kind: "allowed", now, minute, day, quota: { used: step.used, allowance: step.allowance, periodStart: start, periodEnd: end, warned: step.warn } },
      step,
      writes: { first: minuteD.first, day: dayD.day, count: dayD.count, quota: step.state, periodStart: start, periodEnd: end, read: q, invoice: null, events },
    };
  }
  const limit = allowance(qi, step.state);
  const invoice =
    step.charge === null
      ? null
      : pendingInvoice({ id: qi.invoiceId, accountId: input.accountId, periodStart: start, periodEnd: end, charge: step.charge, currency: qi.currency, callsUsed: step.state.used, now });
  const events =
    step.heldNow === null
      ? NO_EVENTS
      : [quotaHeldEvent(qi.heldEventId, input.accountId, now, { reason: step.heldNow, used: step.state.used, allowance: limit, charges: step.state.chargeAttempts, periodStart: start, periodEnd: end })];
  return {
    result: {
      kind: "quota_exhausted",
      now,
      minute,
      day,
      quota: { used: step.state.used, allowance: limit, periodStart: start, periodEnd: end, warned: null },
      flipped: step.flipped,
      chargeInvoiceId: invoice === null ? null : invoice.id,
      heldForReview: step.heldForReview,
      heldNow: step.heldNow !== null,
    },
    step,
    writes: { first: minuteD.first, day: dayD.day, count: dayD.count, quota: step.state, periodStart: start, periodEnd: end, read: q, invoice, events },
  };
}

/** The key's window and the environment's day as they stand at `now`, nothing admitted (`Storage.peekLimits`). */
export function admissionPeek(
  input: { readonly perMinute: number; readonly perDay: number; readonly windowMs: number },
  window: WindowLog,
  day: DayCount | undefined,
  now: number,
): { now: number; minute: WindowInfo; day: WindowInfo } {
  return { now, minute: windowPeek(window, now, input.perMinute, input.windowMs), day: dailyPeek(day?.day, day?.count ?? 0, now, input.perDay) };
}
