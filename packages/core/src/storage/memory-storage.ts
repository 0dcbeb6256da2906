/**
 * The in-memory Storage: the reference implementation of the contract. JavaScript runs each method's
 * synchronous body to completion, so every method is atomic within the process (it is, by nature, not
 * shared across processes: use storage-kysely for that).
 */
import type { BenchmarkSource, Cell } from "../data/source.ts";
import { ALL_SEGMENTS } from "../data/source.ts";
import type { Category, Metric } from "../data/catalog.ts";
import type { Granularity } from "../data/period.ts";
import { parsePeriod } from "../data/period.ts";
import { cryptoRandom } from "../clock/clock.ts";
import { memoryKeyUsage } from "../analytics/memory-key-usage.ts";
import { newId } from "../ids/new-id.ts";
import type { EventDraft } from "../events/events.ts";
import { serializeEvent } from "../events/events.ts";
import {
  accountResumedEvent,
  accountSuspendedEvent,
  invoiceFailedEvent,
  invoicePaidEvent,
  keyCreatedEvent,
  keyRevokedEvent,
  keyRotatedEvent,
  quotaExhaustedEvent,
  webhookDisabledEvent,
} from "../events/builders.ts";
import type { WebhookDisabledReason } from "../events/events.ts";
import type { WebhookHealth } from "../webhooks/webhook-health.ts";
import { failingSinceAfterPause, webhookHealthAfter } from "../webhooks/webhook-health.ts";
import type { RecoverBudget } from "../webhooks/recover-budget.ts";
import { afterRecover, recoverStep } from "../webhooks/recover-budget.ts";
import { dayCounterId, utcDay } from "../rate-limit/daily-window.ts";
import { ArrayWindowLog, recordAdmission } from "../rate-limit/sliding-window.ts";
import { admission, admissionPeek } from "../rate-limit/admission.ts";
import { pendingInvoice } from "../billing/pending-invoice.ts";
import { billingPeriod } from "../quota/billing-period.ts";
import type { QuotaState } from "../quota/quota.ts";
import { EMPTY_QUOTA, quotaChargeFailed, quotaChargeSucceeded, quotaManualCharge, quotaReleaseHold } from "../quota/quota.ts";
import type { Environment } from "../keys/api-key.ts";
import type {
  AccountRecord,
  AccountUsage,
  AdmitInput,
  AdmitResult,
  ApiKeyRecord,
  AttemptRecord,
  ChargeOutcome,
  ClaimedCharge,
  ClaimedDelivery,
  DeadReason,
  DeliveryRecord,
  EventRecord,
  HeldSession,
  InvoiceRecord,
  KeyLookup,
  PreparedCell,
  RecordPage,
  RecordPosition,
  PrunedTable,
  SnapshotRecord,
  Storage,
  UsageSnapshot,
  WebhookRecord,
  WindowInfo,
} from "./types.ts";
import { oldestBatch } from "./oldest-batch.ts";
import type { AuditDraft, AuditEntry, AuditHead } from "../audit/audit-entry.ts";
import { AUDIT_GENESIS_HASH, chainAuditEntry } from "../audit/audit-entry.ts";

interface StoredEvent {
  readonly draft: EventDraft;
  readonly body: string;
  readonly createdAt: number;
}

interface StoredDelivery {
  id: string;
  /** Creation order: among deliveries due at the same time, the older is claimed first. */
  readonly seq: number;
  eventId: string;
  webhookId: string;
  accountId: string;
  status: DeliveryRecord["status"];
  attempts: number;
  nextAttemptAt: number | null;
  leaseToken: string | null;
  leaseUntil: number;
  createdAt: number;
  attemptLog: AttemptRecord[];
  deadReason: DeadReason | null;
}

interface StoredInvoice {
  record: InvoiceRecord;
  leaseToken: string | null;
  leaseUntil: number;
}

interface PeriodQuota {
  state: QuotaState;
  periodEnd: number;
}

/** The window of a key that has none yet (read only: an admission stores a log of its own). */
const NO_STAMPS = new ArrayWindowLog([]);

/** Whether recovery re-queues a delivery: dead, or waiting for its next attempt after a failed one (not leased). */
function recoverable(d: StoredDelivery, now: number): boolean {
  if (d.status === "dead") return true;
  return d.status === "pending" && d.attempts > 0 && d.nextAttemptAt! > now && !(d.leaseToken !== null && d.leaseUntil > now);
}

/** Ascending (`createdAt`, `id`) order: the order of every listing that pages. */
function byPosition(a: RecordPosition, b: RecordPosition): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Whether `r` comes after `after` in that order (everything does when there is no `after`). */
function isAfter(r: RecordPosition, after: RecordPosition | undefined): boolean {
  return after === undefined || byPosition(r, after) > 0;
}

/** One page of `records`: those after `page.after`, in order, at most `page.limit`. */
function pageOf<R extends RecordPosition>(records: R[], page: RecordPage): R[] {
  return records.filter((r) => isAfter(r, page.after)).sort(byPosition).slice(0, page.limit);
}

let leaseCounter = 0;
function leaseToken(): string {
  leaseCounter += 1;
  return `lease_${leaseCounter}_${Math.random().toString(36).slice(2)}`;
}

/** Creates an empty in-memory Storage. */
export function createMemoryStorage(): Storage {
  const accounts = new Map<string, AccountRecord>();
  /** Each account's version (KeyLookup.version), bumped by updateAccount. */
  const accountVersions = new Map<string, number>();
  const sessions = new Map<string, { accountId: string; createdAt: number; expiresAt: number }>();
  const signInLinks = new Map<string, { accountId: string; createdAt: number; expiresAt: number }>();
  /** account id → UTC day → admitted requests of the days before the current one (the day counter's history). */
  const pastDays = new Map<string, Map<number, number>>();
  const keys = new Map<string, ApiKeyRecord>();
  /** hash → key id and whether the hash was retired by a rotation. */
  const hashes = new Map<string, { keyId: string; retired: boolean }>();
  const currentHash = new Map<string, string>();
  const windows = new Map<string, ArrayWindowLog>();
  const days = new Map<string, { day: number; count: number }>();
  const quotas = new Map<string, PeriodQuota>();
  const webhooks = new Map<string, WebhookRecord>();
  /** Each webhook's failure history (core's `webhookHealthAfter`). */
  const webhookHealth = new Map<string, WebhookHealth>();
  /** A webhook as read: its record with its health, as the SQL stores keep both in one row. */
  const withHealth = (w: WebhookRecord): WebhookRecord => {
    const h = webhookHealth.get(w.id);
    return { ...w, failingSince: h?.failingSince ?? null, deadStreak: h?.deadStreak ?? 0 };
  };
  const events = new Map<string, StoredEvent>();
  const deliveries = new Map<string, StoredDelivery>();
  /** Each account's recover budget (core's `recoverStep`). */
  const recoverBudgets = new Map<string, RecoverBudget>();
  /**
   * The pending deliveries in claim order (due time, then creation), so a claim reads only the due front
   * of it; succeeded and dead deliveries leave it. Invariant: a delivery is in it iff its status is pending.
   */
  const queue: StoredDelivery[] = [];
  /** The same pending deliveries per webhook, by `seq`: an ordered claim looks only at each one's head. */
  const pendingByWebhook = new Map<string, StoredDelivery[]>();
  /** Pending deliveries handed out under a lease (live or run out): what `perWebhook` counts. */
  const leased = new Set<StoredDelivery>();
  const invoices = new Map<string, StoredInvoice>();
  const cells = new Map<string, Cell>();
  /** category|segment|granularity → sorted periods with data (per metric below). */
  const periodIndex = new Map<string, Set<string>>();
  const snapshots = new Map<string, SnapshotRecord>();
  /** account|environment|merchant|period → the id of that slot's snapshot. */
  const snapshotSlots = new Map<string, string>();
  /** Erased accounts no `purgeAccount` has yet found empty (`unfinishedErasures`). */
  const unfinishedErasures = new Set<string>();
  let deliverySeq = 0;

  /** Where a pending delivery due at `at`, created `seq`-th, sits (or would sit) in `queue`. */
  function queuePosition(at: number, seq: number): number {
    let lo = 0;
    let hi = queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const d = queue[mid]!;
      if (d.nextAttemptAt! < at || (d.nextAttemptAt === at && d.seq < seq)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Where a delivery created `seq`-th sits (or would sit) among its webhook's pending ones. */
  function webhookPosition(list: readonly StoredDelivery[], seq: number): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]!.seq < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Puts a pending delivery in `queue` and in its webhook's list, each at its place. */
  function enqueue(d: StoredDelivery): void {
    const i = queuePosition(d.nextAttemptAt!, d.seq);
    if (i === queue.length) queue.push(d);
    else queue.splice(i, 0, d);
    let list = pendingByWebhook.get(d.webhookId);
    if (list === undefined) pendingByWebhook.set(d.webhookId, (list = []));
    list.splice(webhookPosition(list, d.seq), 0, d);
  }

  /** Takes a delivery out of `queue` and its webhook's list (before its due time or status changes). */
  function dequeue(d: StoredDelivery): void {
    if (d.status !== "pending") return;
    const i = queuePosition(d.nextAttemptAt!, d.seq);
    if (queue[i] === d) queue.splice(i, 1);
    const list = pendingByWebhook.get(d.webhookId);
    if (list === undefined) return;
    const j = webhookPosition(list, d.seq);
    if (list[j] === d) list.splice(j, 1);
    if (list.length === 0) pendingByWebhook.delete(d.webhookId);
  }

  function insertEvent(draft: EventDraft, now: number): void {
    const body = serializeEvent(draft);
    events.set(draft.id, { draft, body, createdAt: now });
    for (const wh of webhooks.values()) {
      if (wh.accountId !== draft.accountId || wh.status !== "active" || !wh.events.includes(draft.type)) continue;
      deliverySeq += 1;
      // `dlv_<ULID>`, its time part the event's time.
      const id = newId("dlv", { now: () => now }, cryptoRandom);
      const d: StoredDelivery = {
        id,
        seq: deliverySeq,
        eventId: draft.id,
        webhookId: wh.id,
        accountId: draft.accountId,
        status: "pending",
        attempts: 0,
        nextAttemptAt: now,
        leaseToken: null,
        leaseUntil: 0,
        createdAt: now,
        attemptLog: [],
        deadReason: null,
      };
      deliveries.set(id, d);
      enqueue(d);
    }
  }

  /** Disables an active webhook: its pending deliveries die, and the account's other webhooks hear of it. */
  function disableWebhook(wh: WebhookRecord, reason: WebhookDisabledReason, now: number, eventId: string): void {
    webhooks.set(wh.id, { ...wh, status: "disabled", disabledReason: reason, disabledAt: now });
    let kept = 0;
    for (const d of queue) {
      if (d.webhookId === wh.id) {
        d.status = "dead";
        d.nextAttemptAt = null;
        d.deadReason = "webhook_disabled";
        leased.delete(d);
      } else queue[kept++] = d;
    }
    queue.length = kept;
    pendingByWebhook.delete(wh.id);
    insertEvent(webhookDisabledEvent(eventId, wh.accountId, now, { webhookId: wh.id, url: wh.url, reason }), now);
  }

  function deliveryRecord(d: StoredDelivery): DeliveryRecord {
    const ev = events.get(d.eventId)!;
    return {
      id: d.id,
      eventId: d.eventId,
      eventType: ev.draft.type,
      webhookId: d.webhookId,
      accountId: d.accountId,
      status: d.status,
      attempts: d.attempts,
      nextAttemptAt: d.status === "pending" ? d.nextAttemptAt : null,
      createdAt: d.createdAt,
      attemptLog: [...d.attemptLog],
      deadReason: d.status === "dead" ? d.deadReason : null,
    };
  }

  function quotaKey(accountId: string, periodStart: number): string {
    return `${accountId}|${periodStart}`;
  }

  /** The period's quota as stored (core's `QuotaReader`). */
  const storedQuota = (accountId: string, periodStart: number): PeriodQuota | undefined => quotas.get(quotaKey(accountId, periodStart));

  function periodQuota(accountId: string, now: number, anchorDay: number): { key: string; q: PeriodQuota; start: number } {
    const period = billingPeriod(now, anchorDay);
    const key = quotaKey(accountId, period.start);
    let q = quotas.get(key);
    if (!q) {
      q = { state: EMPTY_QUOTA, periodEnd: period.end };
      quotas.set(key, q);
    }
    return { key, q, start: period.start };
  }

  const benchmarks: BenchmarkSource = {
    async latestPeriod(category: Category, segment: string, granularity: Granularity): Promise<string | null> {
      const set = periodIndex.get(`${category}|${segment}|${granularity}`);
      if (!set || set.size === 0) return null;
      let best: string | null = null;
      for (const p of set) if (best === null || p > best) best = p;
      return best;
    },
    async recentPeriods(category: Category, segment: string, metric: Metric, granularity: Granularity, count: number): Promise<string[]> {
      const set = periodIndex.get(`${category}|${segment}|${granularity}`);
      if (!set) return [];
      const withMetric = [...set].filter((p) => cells.has(`${category}|${segment}|${p}|${metric}`)).sort();
      return withMetric.slice(Math.max(0, withMetric.length - count));
    },
    async cells(category: Category, segment: string, period: string, metrics: readonly Metric[]): Promise<Map<Metric, Cell>> {
      const out = new Map<Metric, Cell>();
      for (const m of metrics) {
        const c = cells.get(`${category}|${segment}|${period}|${m}`);
        if (c) out.set(m, c);
      }
      return out;
    },
    async segments(category: Category): Promise<string[]> {
      const out = new Set<string>();
      for (const [k, set] of periodIndex) {
        const [c, s] = k.split("|");
        if (c === category && s !== ALL_SEGMENTS && s !== undefined && set.size > 0) out.add(s);
      }
      return [...out].sort();
    },
  };

  /** Whether the hash still names this admission's key, active and unretired, of its account at the version. */
  const expectationHolds = (input: AdmitInput, expect: { keyHash: string; version: number }): boolean => {
    const h = hashes.get(expect.keyHash);
    if (h === undefined || h.retired || h.keyId !== input.keyId) return false;
    const key = keys.get(h.keyId);
    return key !== undefined && key.isActive && key.accountId === input.accountId && (accountVersions.get(key.accountId) ?? 0) === expect.version;
  };

  /** The account unless it is absent or a tombstone. */
  const live = (accountId: string): AccountRecord | null => {
    const a = accounts.get(accountId);
    return a === undefined || a.status === "deleted" ? null : a;
  };
  /** Whether the account's deliveries and charges wait (suspended) or never go (deleted). */
  const paused = (accountId: string): boolean => {
    const status = accounts.get(accountId)?.status;
    return status === "suspended" || status === "deleted";
  };

  /** Deletes every delivery of the account, its attempts with it, wherever it stands in the queue. */
  const dropDeliveries = (accountId: string): void => {
    for (const d of [...deliveries.values()]) {
      if (d.accountId !== accountId) continue;
      dequeue(d);
      leased.delete(d);
      deliveries.delete(d.id);
    }
  };

  // The audit log in `seq` order, and its head.
  const auditLog: AuditEntry[] = [];
  let auditTip: AuditHead = { seq: 0, hash: AUDIT_GENESIS_HASH };
  /** Appends an action's entry (called only once the action has changed something, in the same synchronous step). */
  const audit = (draft: AuditDraft | undefined, accountId: string | null = draft?.accountId ?? null): AuditEntry | null => {
    if (draft === undefined) return null;
    const e = chainAuditEntry(draft, auditTip, accountId);
    auditLog.push(e);
    auditTip = { seq: e.seq, hash: e.hash };
    return e;
  };

  const keyUsage = memoryKeyUsage((keyId) => keys.has(keyId));
  const storage: Storage = {
    async migrate() {},
    async close() {},
    async ping() {},
    async gauges() {
      return { outboxDepth: queue.length };
    },

    async createAccount(account, draft) {
      if (accounts.has(account.id)) throw new Error(`account ${account.id} exists`);
      accounts.set(account.id, { ...account, status: "active", suspendedAt: null, suspendedReason: null });
      audit(draft);
    },
    async getAccount(accountId) {
      return live(accountId);
    },
    async updateAccount(accountId, patch, draft) {
      const a = live(accountId);
      if (!a) return null;
      const next: AccountRecord = {
        ...a,
        ...(patch.tier !== undefined ? { tier: patch.tier } : {}),
        ...(patch.limits !== undefined ? { limits: { ...patch.limits } } : {}),
        ...(patch.allowedCidrs !== undefined ? { allowedCidrs: [...patch.allowedCidrs] } : {}),
        ...(patch.billing !== undefined ? { billing: { ...patch.billing } } : {}),
      };
      // Absent means false, as the SQL stores read it.
      if (patch.consoleIpExempt === true) (next as { consoleIpExempt?: boolean }).consoleIpExempt = true;
      else if (patch.consoleIpExempt === false) delete (next as { consoleIpExempt?: boolean }).consoleIpExempt;
      accounts.set(accountId, next);
      accountVersions.set(accountId, (accountVersions.get(accountId) ?? 0) + 1);
      const drop = patch.dropScopes;
      if (drop !== undefined && drop.length > 0) {
        for (const k of keys.values()) {
          if (k.accountId === accountId && k.scopes.some((sc) => drop.includes(sc))) keys.set(k.id, { ...k, scopes: k.scopes.filter((sc) => !drop.includes(sc)) });
        }
      }
      audit(draft);
      return next;
    },
    async setAccountStatus({ accountId, status, reason, now, eventId, audit: draft }) {
      const a = live(accountId);
      if (!a) return null;
      if ((a.status ?? "active") === status) return { account: a, changed: false };
      let next: AccountRecord;
      if (status === "suspended") {
        next = { ...a, status, suspendedAt: now, suspendedReason: reason ?? null };
        insertEvent(accountSuspendedEvent(eventId, accountId, now), now);
      } else {
        const since = a.suspendedAt ?? now;
        next = { ...a, status, suspendedAt: null, suspendedReason: null };
        for (const wh of webhooks.values()) {
          const h = wh.accountId === accountId ? webhookHealth.get(wh.id) : undefined;
          if (h !== undefined && h.failingSince !== null) webhookHealth.set(wh.id, { ...h, failingSince: failingSinceAfterPause(h.failingSince, since, now) });
        }
        insertEvent(accountResumedEvent(eventId, accountId, since, now), now);
      }
      accounts.set(accountId, next);
      accountVersions.set(accountId, (accountVersions.get(accountId) ?? 0) + 1);
      audit(draft);
      return { account: next, changed: true };
    },
    async createSession(s, draft) {
      if (live(s.accountId) === null) return false;
      sessions.set(s.tokenHash, { accountId: s.accountId, createdAt: s.createdAt, expiresAt: s.expiresAt });
      audit(draft);
      return true;
    },
    async findSession(tokenHash, now) {
      const s = sessions.get(tokenHash);
      if (!s || s.expiresAt <= now) return null;
      return s.accountId;
    },
    async sessionExpiry(tokenHash, now) {
      const s = sessions.get(tokenHash);
      return !s || s.expiresAt <= now ? null : s.expiresAt;
    },
    async deleteSession(tokenHash, draft) {
      const s = sessions.get(tokenHash);
      if (!s) return false;
      sessions.delete(tokenHash);
      audit(draft, draft?.accountId ?? s.accountId);
      return true;
    },
    async deleteSessions(accountId, draft) {
      let n = 0;
      for (const [hash, s] of sessions) if (s.accountId === accountId && sessions.delete(hash)) n++;
      for (const [hash, l] of signInLinks) if (l.accountId === accountId) signInLinks.delete(hash);
      audit(draft);
      return n;
    },
    async createSignInLink(link, draft) {
      if (live(link.accountId) === null) return false;
      signInLinks.set(link.tokenHash, { accountId: link.accountId, createdAt: link.createdAt, expiresAt: link.expiresAt });
      audit(draft);
      return true;
    },
    async redeemSignInLink({ linkHash, now, session, audit: draft }) {
      const link = signInLinks.get(linkHash);
      if (!link) return null;
      signInLinks.delete(linkHash);
      if (link.expiresAt <= now) return null;
      sessions.set(session.tokenHash, { accountId: link.accountId, createdAt: session.createdAt, expiresAt: session.expiresAt });
      audit(draft, draft?.accountId ?? link.accountId);
      return link.accountId;
    },
    async dailyUsage(accountId, fromDay, now) {
      // Both environments' counters, summed per day (all keys).
      const sums = new Map<number, number>();
      const today = utcDay(now);
      for (const id of [accountId, dayCounterId(accountId, "test")]) {
        for (const [day, count] of pastDays.get(id) ?? []) if (day >= fromDay) sums.set(day, (sums.get(day) ?? 0) + count);
        const d = days.get(id);
        // An idle account's counter still holds its last active day until the next admission or prune moves it.
        if (d && d.day <= today && d.day >= fromDay && d.count > 0) sums.set(d.day, (sums.get(d.day) ?? 0) + d.count);
      }
      return [...sums].map(([day, count]) => ({ day, count })).sort((a, b) => a.day - b.day);
    },

    async createKey({ key, hash, maxKeys, eventId, audit: draft }) {
      if (accounts.get(key.accountId)?.status === "deleted") return "deleted";
      let count = 0;
      for (const k of keys.values()) if (k.accountId === key.accountId && k.revokedAt === null) count++;
      if (count >= maxKeys) return "limit";
      keys.set(key.id, key);
      hashes.set(hash, { keyId: key.id, retired: false });
      currentHash.set(key.id, hash);
      insertEvent(keyCreatedEvent(eventId, key), key.createdAt);
      audit(draft);
      return "created";
    },
    async findKeyByHash(hash): Promise<KeyLookup | null> {
      const h = hashes.get(hash);
      if (!h) return null;
      const key = keys.get(h.keyId)!;
      const account = accounts.get(key.accountId)!;
      return { key, account, retired: h.retired, version: accountVersions.get(key.accountId) ?? 0 };
    },
    async getKey(accountId, keyId) {
      const k = keys.get(keyId);
      return k && k.accountId === accountId ? k : null;
    },
    async listKeys(accountId) {
      return [...keys.values()].filter((k) => k.accountId === accountId).sort((a, b) => (a.id < b.id ? -1 : 1));
    },
    async rotateKey({ accountId, keyId, newHash, newPrefix, now, eventId, scopes, audit: draft }) {
      const k = keys.get(keyId);
      if (!k || k.accountId !== accountId || !k.isActive) return null;
      const old = currentHash.get(keyId);
      if (old) hashes.set(old, { keyId, retired: true });
      hashes.set(newHash, { keyId, retired: false });
      currentHash.set(keyId, newHash);
      const next: ApiKeyRecord = { ...k, prefix: newPrefix, rotatedAt: now, ...(scopes !== undefined ? { scopes: [...scopes] } : {}) };
      keys.set(keyId, next);
      insertEvent(keyRotatedEvent(eventId, next, now), now);
      audit(draft);
      return next;
    },
    async revokeKey({ accountId, keyId, now, eventId, audit: draft }) {
      const k = keys.get(keyId);
      if (!k || k.accountId !== accountId) return null;
      if (k.revokedAt !== null) return k;
      const next: ApiKeyRecord = { ...k, isActive: false, revokedAt: now };
      keys.set(keyId, next);
      insertEvent(keyRevokedEvent(eventId, next, now), now);
      audit(draft);
      return next;
    },

    async admit(input: AdmitInput): Promise<AdmitResult> {
      const { now } = input;
      if (input.expect !== undefined && !expectationHolds(input, input.expect)) return { kind: "stale", now };
      const log = windows.get(input.keyId);
      const dayId = dayCounterId(input.accountId, input.environment);
      const dayState = days.get(dayId);
      const decided = admission(input, log ?? NO_STAMPS, dayState, storedQuota, now);
      const w = decided.writes;
      if (w === null) return decided.result;
      if (log) {
        recordAdmission(log, w.first, now);
        log.compact();
      } else windows.set(input.keyId, new ArrayWindowLog([now]));
      if (dayState) {
        if (dayState.day !== w.day && dayState.count > 0) {
          let past = pastDays.get(dayId);
          if (!past) pastDays.set(dayId, (past = new Map()));
          past.set(dayState.day, dayState.count);
        }
        dayState.day = w.day;
        dayState.count = w.count;
      } else days.set(dayId, { day: w.day, count: w.count });
      if (w.quota !== null) {
        if (w.read !== undefined) w.read.state = w.quota;
        else quotas.set(quotaKey(input.accountId, w.periodStart), { state: w.quota, periodEnd: w.periodEnd });
      }
      if (w.invoice !== null) invoices.set(w.invoice.id, { record: w.invoice, leaseToken: null, leaseUntil: 0 });
      for (const e of w.events) insertEvent(e, now);
      return decided.result;
    },

    async peekLimits({ now, keyId, accountId, perMinute, perDay, windowMs, environment }) {
      return admissionPeek({ perMinute, perDay, windowMs }, windows.get(keyId) ?? NO_STAMPS, days.get(dayCounterId(accountId, environment)), now);
    },

    async usage(accountId, now, anchorDay, baseQuota, blockSize): Promise<UsageSnapshot> {
      const countOf = (id: string): number => {
        const d = days.get(id);
        return d && d.day === utcDay(now) ? d.count : 0;
      };
      const todayTest = countOf(dayCounterId(accountId, "test"));
      const today = countOf(accountId) + todayTest;
      const period = billingPeriod(now, anchorDay);
      const q = quotas.get(quotaKey(accountId, period.start));
      const state = q?.state ?? EMPTY_QUOTA;
      let activeKeys = 0;
      for (const k of keys.values()) if (k.accountId === accountId && k.isActive) activeKeys++;
      return {
        today,
        todayTest,
        month: state.used,
        allowance: baseQuota + state.blocks * blockSize,
        exhausted: state.exhausted,
        activeKeys,
        periodStart: period.start,
        periodEnd: period.end,
      };
    },

    async createWebhook(webhook, maxWebhooks, draft) {
      if (accounts.get(webhook.accountId)?.status === "deleted") return "deleted";
      let count = 0;
      for (const w of webhooks.values()) if (w.accountId === webhook.accountId) count++;
      if (count >= maxWebhooks) return "limit";
      webhooks.set(webhook.id, { ...webhook, status: "active", disabledReason: null, disabledAt: null, previousSecret: webhook.previousSecret ?? null, previousSecretUntil: webhook.previousSecretUntil ?? null });
      webhookHealth.set(webhook.id, { failingSince: null, deadStreak: 0 });
      audit(draft);
      return "created";
    },
    async listWebhooks(accountId) {
      return [...webhooks.values()].filter((w) => w.accountId === accountId).sort((a, b) => (a.id < b.id ? -1 : 1)).map(withHealth);
    },
    async getWebhook(accountId, webhookId) {
      const w = webhooks.get(webhookId);
      return w && w.accountId === accountId ? withHealth(w) : null;
    },
    async listWebhookSecrets() {
      return [...webhooks.values()]
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .flatMap((w) => [
          { webhookId: w.id, accountId: w.accountId, field: "current" as const, secret: w.secret },
          ...(w.previousSecret != null ? [{ webhookId: w.id, accountId: w.accountId, field: "previous" as const, secret: w.previousSecret }] : []),
        ]);
    },
    async replaceWebhookSecret({ webhookId, field, from, to }) {
      const w = webhooks.get(webhookId);
      if (!w) return false;
      if (field === "current") {
        if (w.secret !== from) return false;
        webhooks.set(webhookId, { ...w, secret: to });
        return true;
      }
      if (w.previousSecret !== from) return false;
      webhooks.set(webhookId, { ...w, previousSecret: to });
      return true;
    },
    async rotateWebhookSecret({ accountId, webhookId, secret, previousUntil, audit: draft }) {
      const w = webhooks.get(webhookId);
      if (!w || w.accountId !== accountId) return null;
      const next: WebhookRecord = { ...w, secret, previousSecret: w.secret, previousSecretUntil: previousUntil };
      webhooks.set(webhookId, next);
      audit(draft);
      return withHealth(next);
    },
    async endWebhookSecretOverlap({ accountId, webhookId, previous, audit: draft }) {
      const w = webhooks.get(webhookId);
      if (!w || w.accountId !== accountId || w.previousSecret !== previous) return false;
      webhooks.set(webhookId, { ...w, previousSecret: null, previousSecretUntil: null });
      audit(draft);
      return true;
    },
    async deleteWebhook(accountId, webhookId, draft, ifSecret) {
      const w = webhooks.get(webhookId);
      if (!w || w.accountId !== accountId) return false;
      if (ifSecret !== undefined && w.secret !== ifSecret) return false;
      webhooks.delete(webhookId);
      // Its pending deliveries (all of them in `queue`) die and leave the queue.
      let kept = 0;
      for (const d of queue) {
        if (d.webhookId === webhookId) {
          d.status = "dead";
          d.nextAttemptAt = null;
          leased.delete(d);
        } else queue[kept++] = d;
      }
      queue.length = kept;
      pendingByWebhook.delete(webhookId);
      audit(draft);
      return true;
    },
    async emitEvent(event, now) {
      insertEvent(event, now);
    },
    async claimDeliveries({ now, leaseMs, limit, perWebhook: asked, ordered = false }): Promise<ClaimedDelivery[]> {
      // Ordered: one out at a time even when an earlier delivery turns pending behind one in flight (a retry, a recover).
      const perWebhook = ordered ? 1 : asked;
      const inflight = new Map<string, number>();
      for (const d of leased) if (d.leaseUntil > now) inflight.set(d.webhookId, (inflight.get(d.webhookId) ?? 0) + 1);
      // Ordered: each webhook's head (its earliest pending delivery) is the only one it may go, so only the heads
      // are looked at, in claim order: the deliveries queued behind a head that waits for its retry are not read.
      const candidates = ordered
        ? [...pendingByWebhook.values()].map((list) => list[0]!).filter((d) => d.nextAttemptAt! <= now).sort((a, b) => a.nextAttemptAt! - b.nextAttemptAt! || a.seq - b.seq)
        : queue;
      const out: ClaimedDelivery[] = [];
      // `queue` is in claim order; a claim changes no delivery's place in it, only its lease.
      for (const d of candidates) {
        if (d.nextAttemptAt! > now || out.length >= limit) break;
        if (d.leaseToken !== null && d.leaseUntil > now) continue;
        const n = inflight.get(d.webhookId) ?? 0;
        if (n >= perWebhook) continue;
        const wh = webhooks.get(d.webhookId);
        const ev = events.get(d.eventId);
        if (!wh || !ev || wh.status !== "active" || paused(d.accountId)) continue;
        inflight.set(d.webhookId, n + 1);
        d.leaseToken = leaseToken();
        d.leaseUntil = now + leaseMs;
        leased.add(d);
        out.push({
          deliveryId: d.id,
          eventId: d.eventId,
          eventType: ev.draft.type,
          body: ev.body,
          eventCreatedAt: ev.createdAt,
          webhookId: wh.id,
          accountId: d.accountId,
          url: wh.url,
          secret: wh.secret,
          previousSecret: wh.previousSecret ?? null,
          previousSecretUntil: wh.previousSecretUntil ?? null,
          attempt: d.attempts + 1,
          leaseToken: d.leaseToken,
        });
      }
      return out;
    },
    async completeDelivery({ deliveryId, leaseToken: token, attempt, next, gone = false, health }) {
      const d = deliveries.get(deliveryId);
      if (!d || d.leaseToken !== token || d.status !== "pending") return false;
      dequeue(d);
      leased.delete(d);
      d.attemptLog.push(attempt);
      d.attempts = attempt.attempt;
      d.leaseToken = null;
      d.leaseUntil = 0;
      const status = gone ? "dead" : next.status;
      d.status = status;
      d.nextAttemptAt = next.status === "pending" && !gone ? next.at : null;
      d.deadReason = status === "dead" ? (gone ? "gone" : "attempts_exhausted") : null;
      if (d.status === "pending") enqueue(d);
      const wh = webhooks.get(d.webhookId);
      if (health && wh && wh.status === "active") {
        const h = webhookHealthAfter(webhookHealth.get(wh.id) ?? { failingSince: null, deadStreak: 0 }, { succeeded: status === "succeeded", dead: status === "dead", gone, at: attempt.at }, health);
        webhookHealth.set(wh.id, { failingSince: h.failingSince, deadStreak: h.deadStreak });
        if (h.disable !== null) disableWebhook(wh, h.disable, attempt.at, health.eventId);
      }
      return true;
    },
    async enableWebhook(accountId, webhookId, draft) {
      const w = webhooks.get(webhookId);
      if (!w || w.accountId !== accountId) return null;
      const next: WebhookRecord = { ...w, status: "active", disabledReason: null, disabledAt: null };
      webhooks.set(webhookId, next);
      webhookHealth.set(webhookId, { failingSince: null, deadStreak: 0 });
      audit(draft);
      return withHealth(next);
    },
    async listDeliveries(accountId, webhookId, limit) {
      return [...deliveries.values()]
        .filter((d) => d.accountId === accountId && d.webhookId === webhookId)
        .sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq)
        .slice(0, limit)
        .map(deliveryRecord);
    },
    async retryDelivery(accountId, webhookId, deliveryId, now, draft) {
      const d = deliveries.get(deliveryId);
      if (!d || d.accountId !== accountId || d.webhookId !== webhookId || !webhooks.has(webhookId)) return null;
      if (d.status !== "pending" || d.leaseToken === null || d.leaseUntil <= now) {
        dequeue(d);
        leased.delete(d);
        d.status = "pending";
        d.deadReason = null;
        d.nextAttemptAt = now;
        d.leaseToken = null;
        d.leaseUntil = 0;
        enqueue(d);
      }
      audit(draft);
      return deliveryRecord(d);
    },
    async recoverDeliveries({ accountId, webhookId, since, now, policy, audit: draft }) {
      const wh = webhooks.get(webhookId);
      if (!wh || wh.accountId !== accountId) return null;
      if (wh.status !== "active") return "disabled";
      const step = recoverStep(recoverBudgets.get(accountId) ?? null, now, policy);
      if (step.kind === "refused") return step;
      const candidates: StoredDelivery[] = [];
      for (const d of deliveries.values()) if (d.webhookId === webhookId && d.createdAt >= since && recoverable(d, now)) candidates.push(d);
      candidates.sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq);
      const taken = candidates.slice(0, step.limit);
      for (const d of taken) {
        dequeue(d);
        leased.delete(d);
        d.status = "pending";
        d.deadReason = null;
        d.nextAttemptAt = now;
        d.leaseToken = null;
        d.leaseUntil = 0;
        enqueue(d);
      }
      recoverBudgets.set(accountId, afterRecover(step, taken.length));
      audit(draft);
      return { kind: "recovered", recovered: taken.length, hasMore: candidates.length > taken.length };
    },

    async claimCharges({ now, leaseMs, limit }): Promise<ClaimedCharge[]> {
      const out: ClaimedCharge[] = [];
      const pending = [...invoices.values()]
        .filter((i) => i.record.status === "pending" && !(i.leaseToken !== null && i.leaseUntil > now) && !paused(i.record.accountId))
        .sort((a, b) => a.record.createdAt - b.record.createdAt);
      for (const inv of pending) {
        if (out.length >= limit) break;
        inv.leaseToken = leaseToken();
        inv.leaseUntil = now + leaseMs;
        out.push({ invoice: inv.record, account: accounts.get(inv.record.accountId)!, leaseToken: inv.leaseToken });
      }
      return out;
    },
    async settleCharge({ invoiceId, leaseToken: token, outcome, eventIds }) {
      const inv = invoices.get(invoiceId);
      if (!inv || inv.leaseToken !== token || inv.record.status !== "pending") return false;
      const rec = inv.record;
      const paid = outcome.status === "paid";
      inv.record = {
        ...rec,
        status: outcome.status,
        processorRef: outcome.processorRef,
        resolvedAt: outcome.at,
        failureReason: outcome.status === "failed" ? outcome.reason : null,
      };
      inv.leaseToken = null;
      // An account erased while its charge was in flight: the invoice records what the processor did, nothing more
      // (a decline reason describes the customer's finances, which the erasure removed: it is not kept).
      if (accounts.get(rec.accountId)?.status === "deleted") {
        inv.record = { ...inv.record, failureReason: null };
        return true;
      }
      const start = Date.parse(rec.periodStart);
      const q = quotas.get(quotaKey(rec.accountId, start));
      if (q) q.state = paid ? quotaChargeSucceeded(q.state, rec.block) : quotaChargeFailed(q.state, rec.block, outcome.at);
      if (rec.attempt === 1) insertEvent(quotaExhaustedEvent(eventIds.exhausted, rec, outcome.processorRef, outcome.at), outcome.at);
      insertEvent(
        paid
          ? invoicePaidEvent(eventIds.result, inv.record, outcome.processorRef, outcome.at)
          : invoiceFailedEvent(eventIds.result, inv.record, outcome.processorRef, (outcome as Extract<ChargeOutcome, { status: "failed" }>).reason, outcome.at),
        outcome.at,
      );
      return true;
    },
    async requestCharge({ accountId, now, anchorDay, invoiceId, baseQuota, blockSize, blockPrice, currency, audit: draft }) {
      const { q, start } = periodQuota(accountId, now, anchorDay);
      const step = quotaManualCharge({ baseQuota, blockSize, blockPrice }, q.state);
      if (step === null) return null;
      q.state = step.state;
      const record = pendingInvoice({ id: invoiceId, accountId, periodStart: start, periodEnd: q.periodEnd, charge: step.charge, currency, callsUsed: step.state.used, now });
      invoices.set(invoiceId, { record, leaseToken: null, leaseUntil: 0 });
      audit(draft);
      return record;
    },
    async releaseChargeHold({ accountId, now, anchorDay, audit: draft }) {
      const q = quotas.get(quotaKey(accountId, billingPeriod(now, anchorDay).start));
      if (!q) return false;
      q.state = quotaReleaseHold(q.state);
      audit(draft);
      return true;
    },
    async listInvoices(accountId) {
      return [...invoices.values()]
        .map((i) => i.record)
        .filter((r) => r.accountId === accountId)
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
    },

    async saveSnapshot(snapshot) {
      if (accounts.get(snapshot.accountId)?.status === "deleted") return "deleted";
      const slot = `${snapshot.accountId}|${snapshot.environment}|${snapshot.merchantId}|${snapshot.period}`;
      const oldId = snapshotSlots.get(slot);
      const replaced = oldId === undefined ? null : (snapshots.get(oldId) ?? null);
      if (oldId !== undefined) snapshots.delete(oldId);
      snapshots.set(snapshot.id, snapshot);
      snapshotSlots.set(slot, snapshot.id);
      return replaced;
    },
    async listSnapshots(accountId, environment, { merchantId, limit }) {
      return [...snapshots.values()]
        .filter((r) => r.accountId === accountId && r.environment === environment && (merchantId === undefined || r.merchantId === merchantId))
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
        .slice(0, limit);
    },
    async merchantSnapshots(accountId, environment, merchantId) {
      return [...snapshots.values()]
        .filter((r) => r.accountId === accountId && r.environment === environment && r.merchantId === merchantId)
        .sort((a, b) => (a.period < b.period ? -1 : a.period > b.period ? 1 : 0));
    },
    async getSnapshot(accountId, environment, snapshotId) {
      const r = snapshots.get(snapshotId);
      return r && r.accountId === accountId && r.environment === environment ? r : null;
    },

    async listAccounts(query) {
      const text = query.nameContains?.toLowerCase();
      return [...accounts.values()]
        .filter(
          (a) =>
            (query.status === undefined ? a.status !== "deleted" : (a.status ?? "active") === query.status) &&
            (query.tier === undefined || a.tier === query.tier) &&
            (query.createdFrom === undefined || a.createdAt >= query.createdFrom) &&
            (query.createdBefore === undefined || a.createdAt < query.createdBefore) &&
            (text === undefined || a.name.toLowerCase().includes(text)) &&
            isAfter(a, query.after),
        )
        .sort(byPosition)
        .slice(0, query.limit);
    },
    async deleteAccount({ accountId, now, audit: draft }) {
      const a = accounts.get(accountId);
      if (!a) return null;
      if (a.status === "deleted") return { account: a, erased: false };
      // Never before the last invoice (another instance's clock may run ahead): the record stays in order.
      let at = now;
      for (const inv of invoices.values()) if (inv.record.accountId === accountId) at = Math.max(at, inv.record.createdAt, inv.record.resolvedAt ?? 0);
      const tombstone: AccountRecord = {
        id: a.id,
        name: "",
        tier: a.tier,
        createdAt: a.createdAt,
        limits: {},
        allowedCidrs: [],
        billing: {},
        status: "deleted",
        suspendedAt: null,
        suspendedReason: null,
        deletedAt: at,
      };
      accounts.set(accountId, tombstone);
      accountVersions.set(accountId, (accountVersions.get(accountId) ?? 0) + 1);
      for (const [hash, x] of sessions) if (x.accountId === accountId) sessions.delete(hash);
      recoverBudgets.delete(accountId);
      for (const [hash, x] of signInLinks) if (x.accountId === accountId) signInLinks.delete(hash);
      for (const k of [...keys.values()]) {
        if (k.accountId !== accountId) continue;
        keys.delete(k.id);
        currentHash.delete(k.id);
        windows.delete(k.id);
      }
      for (const [hash, h] of hashes) if (!keys.has(h.keyId)) hashes.delete(hash);
      for (const w of [...webhooks.values()]) {
        if (w.accountId !== accountId) continue;
        webhooks.delete(w.id);
        webhookHealth.delete(w.id);
      }
      dropDeliveries(accountId);
      for (const [id, e] of events) if (e.draft.accountId === accountId) events.delete(id);
      for (const id of [accountId, dayCounterId(accountId, "test")]) {
        days.delete(id);
        pastDays.delete(id);
      }
      for (const k of [...quotas.keys()]) if (k.startsWith(`${accountId}|`)) quotas.delete(k);
      for (const inv of invoices.values()) {
        const r = inv.record;
        if (r.accountId !== accountId) continue;
        const inFlight = inv.leaseToken !== null && inv.leaseUntil > now;
        inv.record =
          r.status === "pending" && !inFlight
            ? { ...r, status: "failed", failureReason: "account_deleted", resolvedAt: at }
            : { ...r, failureReason: r.status === "failed" ? null : r.failureReason };
        if (inv.record.status !== "pending") inv.leaseToken = null;
      }
      for (const [slot, id] of snapshotSlots) {
        if (snapshots.get(id)?.accountId !== accountId) continue;
        snapshots.delete(id);
        snapshotSlots.delete(slot);
      }
      for (let i = 0; i < auditLog.length; i++) {
        const e = auditLog[i]!;
        if (e.accountId === accountId && e.erasedAt === null) auditLog[i] = { ...e, clientAddress: null, personal: null, salt: null, erasedAt: at };
      }
      audit(draft);
      keyUsage.erase(accountId);
      unfinishedErasures.add(accountId);
      return { account: tombstone, erased: true };
    },
    async appendAudit(draft) {
      return audit(draft)!;
    },
    async listAudit(q) {
      const out: AuditEntry[] = [];
      const desc = q.order === "desc";
      for (let i = desc ? auditLog.length - 1 : 0; desc ? i >= 0 : i < auditLog.length; desc ? i-- : i++) {
        const e = auditLog[i]!;
        if (desc ? q.beforeSeq !== undefined && e.seq >= q.beforeSeq : q.afterSeq !== undefined && e.seq <= q.afterSeq) continue;
        if (q.accountId !== undefined && e.accountId !== q.accountId) continue;
        if (q.actor !== undefined && e.actor !== q.actor) continue;
        if (q.action !== undefined && e.action !== q.action) continue;
        if ((q.from !== undefined && e.at < q.from) || (q.to !== undefined && e.at >= q.to)) continue;
        out.push(e);
        if (out.length >= q.limit) break;
      }
      return out;
    },
    async auditHead() {
      return auditTip;
    },
    async purgeAccount({ accountId }) {
      // deleteAccount already removed everything, in its one synchronous step: the first call finds nothing left.
      if (accounts.get(accountId)?.status === "deleted") unfinishedErasures.delete(accountId);
      return 0;
    },
    async unfinishedErasures({ after, limit, of }) {
      return [...unfinishedErasures]
        .filter((id) => (after === undefined || id > after) && (of === undefined || of.includes(id)))
        .sort()
        .slice(0, Math.max(0, limit));
    },
    async accountSessions(accountId) {
      const held: HeldSession[] = [];
      for (const x of sessions.values()) if (x.accountId === accountId) held.push({ kind: "session", createdAt: x.createdAt, expiresAt: x.expiresAt });
      for (const x of signInLinks.values()) if (x.accountId === accountId) held.push({ kind: "sign_in_link", createdAt: x.createdAt, expiresAt: x.expiresAt });
      return held.sort((x, y) => x.createdAt - y.createdAt || (x.kind < y.kind ? -1 : x.kind > y.kind ? 1 : 0));
    },
    async accountUsage(accountId) {
      const out: { day: number; environment: Environment; count: number }[] = [];
      for (const environment of ["live", "test"] as const) {
        const id = dayCounterId(accountId, environment);
        for (const [day, count] of pastDays.get(id) ?? []) out.push({ day, environment, count });
        const current = days.get(id);
        if (current && current.count > 0) out.push({ day: current.day, environment, count: current.count });
      }
      const periods: AccountUsage["periods"][number][] = [];
      for (const [k, q] of quotas) {
        if (!k.startsWith(`${accountId}|`)) continue;
        const s = q.state;
        periods.push({ periodStart: Number(k.slice(accountId.length + 1)), periodEnd: q.periodEnd, used: s.used, blocks: s.blocks, exhausted: s.exhausted, heldAt: s.heldAt });
      }
      return {
        days: out.sort((x, y) => x.day - y.day || (x.environment === y.environment ? 0 : x.environment === "live" ? -1 : 1)),
        periods: periods.sort((x, y) => x.periodStart - y.periodStart),
      };
    },
    async accountDeliveries(accountId, page) {
      return pageOf([...deliveries.values()].filter((d) => d.accountId === accountId), page).map(deliveryRecord);
    },
    async accountEvents(accountId, page) {
      const own: EventRecord[] = [];
      for (const e of events.values()) {
        if (e.draft.accountId === accountId) own.push({ id: e.draft.id, accountId, type: e.draft.type, createdAt: e.createdAt, body: e.body });
      }
      return pageOf(own, page);
    },
    async accountSnapshots(accountId, page) {
      return pageOf([...snapshots.values()].filter((r) => r.accountId === accountId), page);
    },

    addKeyUsage: keyUsage.addKeyUsage,
    keyUsage: keyUsage.keyUsage,
    keysLastUsed: keyUsage.keysLastUsed,

    async prune(input) {
      const deleted: Partial<Record<PrunedTable, number>> = {};
      switch (input.target) {
        case "key_usage_hours":
        case "key_usage_days":
          return keyUsage.prune(input);
        case "deliveries": {
          const finished = [...deliveries.values()].filter((d) => d.status !== "pending");
          const { rows, next } = oldestBatch(finished, (d) => d.createdAt, (d) => d.id, input);
          for (const d of rows) deliveries.delete(d.id);
          deleted.deliveries = rows.length;
          deleted.delivery_attempts = rows.reduce((n, d) => n + d.attemptLog.length, 0);
          return { deleted, next };
        }
        case "events": {
          const { rows, next } = oldestBatch(events.entries(), ([, e]) => e.createdAt, ([id]) => id, input);
          const referenced = new Set<string>();
          for (const d of deliveries.values()) referenced.add(d.eventId);
          deleted.events = rows.filter(([id]) => !referenced.has(id) && events.delete(id)).length;
          return { deleted, next };
        }
        case "sessions":
        case "sign_in_links": {
          const map = input.target === "sessions" ? sessions : signInLinks;
          const { rows, next } = oldestBatch(map.entries(), ([, v]) => v.expiresAt, ([hash]) => hash, input);
          for (const [hash] of rows) map.delete(hash);
          deleted[input.target] = rows.length;
          return { deleted, next };
        }
        case "day_counters": {
          const { rows, next } = oldestBatch(days.entries(), ([, d]) => d.day, ([counterId]) => counterId, input);
          for (const [counterId, d] of rows) {
            // The day's count moves to the history, which dailyUsage reads for past days.
            if (d.count > 0) {
              let past = pastDays.get(counterId);
              if (!past) pastDays.set(counterId, (past = new Map()));
              past.set(d.day, d.count);
            }
            days.delete(counterId);
          }
          deleted.day_counters = rows.length;
          return { deleted, next };
        }
        case "usage_days": {
          const history = [...pastDays].flatMap(([counterId, byDay]) => [...byDay.keys()].map((day) => ({ counterId, day })));
          const { rows, next } = oldestBatch(history, (h) => h.day, (h) => h.counterId, input);
          for (const h of rows) {
            const byDay = pastDays.get(h.counterId);
            byDay?.delete(h.day);
            if (byDay?.size === 0) pastDays.delete(h.counterId);
          }
          deleted.usage_days = rows.length;
          return { deleted, next };
        }
      }
    },

    benchmarks,
    async replaceCells(prepared, replace) {
      const held: { category: Category; period: string }[] = [];
      for (const { category, period } of replace) {
        let had = false;
        for (const k of [...cells.keys()]) {
          const [c, , p] = k.split("|");
          if (c === category && p === period) {
            cells.delete(k);
            had = true;
          }
        }
        if (had) held.push({ category, period });
        for (const [k, set] of periodIndex) if (k.startsWith(`${category}|`)) set.delete(period);
      }
      for (const pc of prepared) {
        cells.set(`${pc.category}|${pc.segment}|${pc.period}|${pc.metric}`, pc.cell);
        const g = parsePeriod(pc.period)?.granularity;
        if (!g) continue;
        const k = `${pc.category}|${pc.segment}|${g}`;
        let set = periodIndex.get(k);
        if (!set) periodIndex.set(k, (set = new Set()));
        set.add(pc.period);
      }
      return held;
    },
  };
  return storage;
}
