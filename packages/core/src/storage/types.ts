/**
 * The storage contract: everything the HTTP service, the webhook worker and billing need to keep.
 *
 * Rules every implementation follows (the shared conformance suite in `@benchdata/core/testing` checks them):
 * - Each method is ONE atomic operation. Methods that decide (admit, consume, claim) decide inside that
 *   operation; nothing here is meant to be read, decided in the caller, and written back.
 * - Events are written in the same transaction as the change that causes them (a transactional outbox),
 *   together with one pending delivery per webhook of the account subscribed to the type at that moment.
 * - Secrets are stored only as SHA-256 hashes, except webhook signing secrets, which must be recoverable to
 *   sign and are never returned by listing methods' callers to clients.
 * - Times are Unix milliseconds in and out; ISO strings where they end up in payloads.
 * - Stores with their own clock (PostgreSQL) may use it instead of the `now` they are given for
 *   windows, days and periods; then they report that time back as `now` in results.
 */
import type { Environment } from "../keys/api-key.ts";
import type { Scope, Tier } from "../scopes/scopes.ts";
import type { EventDraft, EventType, WebhookDisabledReason } from "../events/events.ts";
import type { BenchmarkSource, Cell } from "../data/source.ts";
import type { RecoverPolicy, RecoverStep } from "../webhooks/recover-budget.ts";
import type { Category, Metric } from "../data/catalog.ts";
import type { AuditAction, AuditDraft, AuditEntry, AuditHead } from "../audit/audit-entry.ts";
import type { UsageOutcome } from "../analytics/usage-outcome.ts";

/** Per-tier limits and prices (an account may override any of them). */
export interface TierLimits {
  readonly perMinute: number;
  readonly perDay: number;
  readonly monthlyQuota: number;
  readonly blockSize: number;
  readonly blockPrice: number;
}

/** Whether an account may be used: `suspended` by the operator refuses its keys and console, and pauses its webhooks and charges. */
export type AccountStatus = "active" | "suspended";

/** An account's state as stored: `active`, `suspended`, or `deleted` (the tombstone an erasure leaves, see `Storage.deleteAccount`). */
export type AccountState = AccountStatus | "deleted";

/** An account. */
export interface AccountRecord {
  readonly id: string;
  readonly name: string;
  readonly tier: Tier;
  readonly createdAt: number;
  /** Operator overrides of the tier's limits. */
  readonly limits: Partial<TierLimits>;
  /** Enterprise IP allow-list (CIDR, IPv4 and IPv6); empty means any address. It guards data requests and console sessions. */
  readonly allowedCidrs: readonly string[];
  /** The operator's override: console sessions work from any address (the allow-list then guards data requests only). Absent means false. */
  readonly consoleIpExempt?: boolean;
  /** The payment processor's customer and saved payment method, when set by the operator. */
  readonly billing: { readonly customerRef?: string; readonly paymentMethodRef?: string };
  /** `active` (absent when creating: accounts are created active), `suspended` (see `Storage.setAccountStatus`) or `deleted` (a tombstone). */
  readonly status?: AccountState;
  /** When the current suspension began, and the operator's note on it; null while active. */
  readonly suspendedAt?: number | null;
  readonly suspendedReason?: string | null;
  /** When the account was erased (`status` is then `deleted`); null or absent otherwise. */
  readonly deletedAt?: number | null;
}

/** A key as stored (never the raw key). */
export interface ApiKeyRecord {
  readonly id: string;
  readonly accountId: string;
  readonly name: string;
  readonly environment: Environment;
  readonly scopes: readonly Scope[];
  /** First 12 characters of the current raw key. */
  readonly prefix: string;
  readonly isActive: boolean;
  readonly createdAt: number;
  readonly rotatedAt: number | null;
  readonly revokedAt: number | null;
}

/** The hot-path key lookup: the key, its account, and whether the hash presented was retired by a rotation. */
export interface KeyLookup {
  readonly key: ApiKeyRecord;
  readonly account: AccountRecord;
  /** True when the hash belonged to this key before a rotation replaced it (the contract's `auth.inactive_key`). */
  readonly retired: boolean;
  /**
   * The account's version: it changes with every `updateAccount`, so an `AdmitInput.expect` built from this
   * lookup fails once anything the pipeline checked about the account (tier, limits, IP ranges) has changed.
   */
  readonly version: number;
}

/** A webhook endpoint, with its signing secret (server-side only; sealed at rest, see `SecretBox`). */
export interface WebhookRecord {
  readonly id: string;
  readonly accountId: string;
  readonly url: string;
  readonly events: readonly EventType[];
  readonly secret: string;
  readonly createdAt: number;
  /** `active` (absent when creating) or `disabled`: a disabled webhook gets no new deliveries and no attempts. */
  readonly status?: "active" | "disabled";
  /** Why it was disabled (`gone`, `failing`, `dead_deliveries`), and when; null while active. */
  readonly disabledReason?: WebhookDisabledReason | null;
  readonly disabledAt?: number | null;
  /** The secret a rotation replaced, still signing until `previousSecretUntil` (sealed like `secret`). */
  readonly previousSecret?: string | null;
  readonly previousSecretUntil?: number | null;
  /**
   * Its health as read (`listWebhooks`, `getWebhook` and the updates that return it; ignored when creating): when
   * its attempts began failing with no success since (null: not failing), and its dead deliveries in a row, which
   * core's `webhookHealthAfter` turns into a disable.
   */
  readonly failingSince?: number | null;
  readonly deadStreak?: number;
}

/** One attempt to deliver an event to a webhook. */
export interface AttemptRecord {
  /** 1-based attempt number. */
  readonly attempt: number;
  readonly at: number;
  readonly statusCode: number | null;
  readonly latencyMs: number;
  /** Null on success; otherwise a class: `http_status` (3xx included), `timeout`, `refused`, `tls`, `network`, `dns` or `blocked`. */
  readonly error: string | null;
  /** The first 2 KB of the response body. */
  readonly responseBody: string;
}

/** Delivery states: pending (attempts left; leased while a worker holds it), succeeded, dead. */
export type DeliveryStatus = "pending" | "succeeded" | "dead";

/** A delivery of one event to one webhook. */
export interface DeliveryRecord {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: EventType;
  readonly webhookId: string;
  readonly accountId: string;
  readonly status: DeliveryStatus;
  /** Attempts made so far. */
  readonly attempts: number;
  /** When the next attempt is due (null unless pending). */
  readonly nextAttemptAt: number | null;
  readonly createdAt: number;
  readonly attemptLog: readonly AttemptRecord[];
  /**
   * Why a dead delivery is dead: `attempts_exhausted` (its last attempt failed), `gone` (the receiver
   * answered 410) or `webhook_disabled` (its webhook was disabled while it waited); null otherwise.
   */
  readonly deadReason: DeadReason | null;
}

/** Why a delivery is dead. */
export type DeadReason = "attempts_exhausted" | "gone" | "webhook_disabled";

/** What a recover call did: re-queued `recovered` deliveries (and whether more remain), or was refused by the budget. */
export type RecoverOutcome =
  | { readonly kind: "recovered"; readonly recovered: number; readonly hasMore: boolean }
  | Extract<RecoverStep, { kind: "refused" }>;

/** When a failing webhook is disabled (core's `webhookHealthAfter`), and the id of the `webhook.disabled` event if it is. */
export interface WebhookHealthPolicy {
  /** Every attempt failed for this long (0: never). */
  readonly disableAfterMs: number;
  /** This many dead deliveries in a row (0: never). */
  readonly disableAfterDead: number;
  readonly eventId: string;
}

/** A delivery handed to a worker: everything needed to send it, under a lease. */
export interface ClaimedDelivery {
  readonly deliveryId: string;
  readonly eventId: string;
  readonly eventType: EventType;
  /** The event body exactly as stored: every attempt sends these bytes. */
  readonly body: string;
  readonly eventCreatedAt: number;
  readonly webhookId: string;
  readonly accountId: string;
  readonly url: string;
  readonly secret: string;
  /**
   * The secret a rotation replaced and until when it still signs (sealed like `secret`); absent or null when
   * there is none. The worker signs with both while the attempt is before `previousSecretUntil`.
   */
  readonly previousSecret?: string | null;
  readonly previousSecretUntil?: number | null;
  /** The number of this attempt (1-based). */
  readonly attempt: number;
  /** Proof of the claim: completing with another token does nothing. */
  readonly leaseToken: string;
}

/** Invoice states. */
export type InvoiceStatus = "pending" | "paid" | "failed";

/** An invoice: one automatic charge attempt for one quota block. */
export interface InvoiceRecord {
  readonly id: string;
  readonly accountId: string;
  /** ISO start and end of the billing period the block belongs to. */
  readonly periodStart: string;
  readonly periodEnd: string;
  readonly block: number;
  readonly attempt: number;
  readonly amount: number;
  readonly currency: string;
  readonly status: InvoiceStatus;
  readonly idempotencyKey: string;
  readonly processorRef: string | null;
  /** Calls used when the quota was exhausted (for the `quota.exhausted` payload). */
  readonly callsUsed: number;
  readonly createdAt: number;
  readonly resolvedAt: number | null;
  readonly failureReason: string | null;
}

/** A pending charge handed to the billing worker under a lease. */
export interface ClaimedCharge {
  readonly invoice: InvoiceRecord;
  readonly account: AccountRecord;
  readonly leaseToken: string;
}

/** The quota part of an admission, for live keys. */
export interface AdmitQuota {
  /** Billing periods start on this day of the month (1 = calendar months), in UTC. */
  readonly anchorDay: number;
  readonly baseQuota: number;
  readonly blockSize: number;
  readonly blockPrice: number;
  readonly currency: string;
  readonly retryAfterFailureMs: number;
  readonly maxAutoCharges: number;
  /** Used if this request crosses a warning threshold (`quota.warning`). */
  readonly warningEventId: string;
  /** Used if this request starts a charge (the pending invoice). */
  readonly invoiceId: string;
  /** Used if this request puts the account on hold (`quota.held`). */
  readonly heldEventId: string;
}

/** One data request asking to be admitted: per-key window, per-account day, and (live keys) quota, in one step. */
export interface AdmitInput {
  readonly now: number;
  readonly keyId: string;
  readonly accountId: string;
  readonly perMinute: number;
  readonly perDay: number;
  /** Sliding window length (60 000 in production). */
  readonly windowMs: number;
  /** The key's environment (absent: live): each environment has its own daily counter (`dayCounterId`). */
  readonly environment?: "live" | "test";
  /** Null for test keys: rate limited, never counted toward quota. */
  readonly quota: AdmitQuota | null;
  /**
   * A lookup the caller decided on (possibly a cached one), checked inside the same atomic operation: the
   * store admits only if `keyHash` still names this admission's key (`keyId`, of `accountId`), active, its hash
   * not retired by a rotation, and the account still at `version`; otherwise it changes nothing and returns
   * `stale`. This is what lets
   * callers skip the lookup round trip without ever admitting a revoked, rotated or changed key.
   */
  readonly expect?: { readonly keyHash: string; readonly version: number } | undefined;
}

/** The state of one limit after a decision. */
export interface WindowInfo {
  readonly limit: number;
  readonly remaining: number;
  /** Unix ms at which the window frees a slot (minute) or starts again (day). */
  readonly resetAt: number;
}

/** The quota after an admission. */
export interface QuotaInfo {
  readonly used: number;
  readonly allowance: number;
  readonly periodStart: number;
  readonly periodEnd: number;
  /** The threshold this request crossed (a `quota.warning` was written), or null. */
  readonly warned: number | null;
}

/**
 * What `admit` decided. Rate-limit refusals change nothing; quota refusals still used a window slot; `stale`
 * (only with `expect`) means the expected key or account changed since the lookup, and nothing was counted.
 */
export type AdmitResult =
  | { readonly kind: "stale"; readonly now: number }
  | { readonly kind: "allowed"; readonly now: number; readonly minute: WindowInfo; readonly day: WindowInfo; readonly quota: QuotaInfo | null }
  | { readonly kind: "rate_limited"; readonly now: number; readonly window: "minute" | "day"; readonly minute: WindowInfo; readonly day: WindowInfo; readonly retryAfterMs: number }
  | {
      readonly kind: "quota_exhausted";
      readonly now: number;
      readonly minute: WindowInfo;
      readonly day: WindowInfo;
      readonly quota: QuotaInfo;
      /** This request flipped the quota to exhausted. */
      readonly flipped: boolean;
      /** The invoice of the charge this request started (exactly one per exhaustion), or null. */
      readonly chargeInvoiceId: string | null;
      /** No automatic charge starts until a person acts (the ceiling was reached, or a block would buy nothing). */
      readonly heldForReview: boolean;
      /** This request put the account on hold and wrote `quota.held` (once a period until released). */
      readonly heldNow: boolean;
    };

/** The usage summary of an account at a time. */
export interface UsageSnapshot {
  /** Requests admitted today (UTC), all keys. */
  readonly today: number;
  /** Requests admitted today (UTC) with test keys (their own daily counter); `today - todayTest` is the live keys'. */
  readonly todayTest: number;
  /** Calls counted this billing period (live keys). */
  readonly month: number;
  /** The period's allowance (base + paid blocks). */
  readonly allowance: number;
  readonly exhausted: boolean;
  readonly activeKeys: number;
  readonly periodStart: number;
  readonly periodEnd: number;
}

/** The outcome of a charge, as the billing worker reports it. */
export type ChargeOutcome =
  | { readonly status: "paid"; readonly processorRef: string; readonly at: number }
  | { readonly status: "failed"; readonly processorRef: string; readonly reason: string; readonly at: number };

/** One observation of an import: a business's value of a metric in a cell. */
export interface Observation {
  readonly businessId: string;
  readonly category: Category;
  readonly segment: string;
  readonly period: string;
  readonly metric: Metric;
  readonly value: number;
}

/** A prepared cell to publish (import builds them from observations). */
export interface PreparedCell {
  readonly category: Category;
  /** A segment, or `all` for the aggregate of every segment. */
  readonly segment: string;
  readonly period: string;
  readonly metric: Metric;
  readonly cell: Cell;
}

/**
 * A merchant's verified company financial snapshot ("vcfs"): the metric values an account submitted for
 * one merchant and period. Snapshots belong to an account AND the environment of the key that wrote them:
 * test-key snapshots never mix with live ones.
 */
export interface SnapshotRecord {
  /** `vcfs_<ULID>`. */
  readonly id: string;
  readonly accountId: string;
  readonly environment: Environment;
  /** The account's own identifier of the merchant. */
  readonly merchantId: string;
  readonly category: Category;
  /** The merchant's segment, or `all` when none was given. */
  readonly segment: string;
  /** `YYYY-Qn` or `YYYY-MM`. */
  readonly period: string;
  /** Values as submitted (ratios as fractions), keyed by metric. */
  readonly metrics: Readonly<Partial<Record<Metric, number>>>;
  readonly createdAt: number;
}

/** Which accounts `Storage.listAccounts` returns: one page, in ascending (`createdAt`, `id`) order. */
export interface AccountListQuery {
  /** Only accounts in this state; absent: `active` and `suspended` ones (a tombstone is listed only when asked for by `deleted`). */
  readonly status?: AccountState;
  readonly tier?: Tier;
  /** Created at or after this time (Unix ms). */
  readonly createdFrom?: number;
  /** Created strictly before this time (Unix ms). */
  readonly createdBefore?: number;
  /** Names containing this text, compared case-insensitively. */
  readonly nameContains?: string;
  /** Only accounts after this position in the order (the last one of the previous page). */
  readonly after?: RecordPosition;
  readonly limit: number;
}

/** A record's place in an ascending (`createdAt`, `id`) order: where the next page starts. */
export interface RecordPosition {
  readonly createdAt: number;
  readonly id: string;
}

/** One page of an account's records in ascending (`createdAt`, `id`) order, after `after` when given. */
export interface RecordPage {
  readonly after?: RecordPosition;
  readonly limit: number;
}

/** An event as the outbox keeps it: its body exactly as every delivery sends it. */
export interface EventRecord {
  readonly id: string;
  readonly accountId: string;
  readonly type: EventType;
  readonly createdAt: number;
  readonly body: string;
}

/** A console session or an unused sign-in link as held: when it was made and when it ends (never its token or hash). */
export interface HeldSession {
  readonly kind: "session" | "sign_in_link";
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** What an account's usage counters hold: admitted requests per UTC day and environment, and each billing period's quota. */
export interface AccountUsage {
  /** Days with at least one admitted request, the current one included, by `day` then environment (live first). */
  readonly days: readonly { readonly day: number; readonly environment: Environment; readonly count: number }[];
  /** Every billing period with a quota row, oldest first. */
  readonly periods: readonly {
    readonly periodStart: number;
    readonly periodEnd: number;
    readonly used: number;
    readonly blocks: number;
    readonly exhausted: boolean;
    readonly heldAt: number | null;
  }[];
}

/** Operational readings of a store, taken when metrics are scraped (not on the request path). */
export interface StorageGauges {
  /** Webhook deliveries still pending (due now or later): the outbox's depth. */
  readonly outboxDepth: number;
  /** Connections the pool may open, when the store has a pool. */
  readonly poolSize?: number;
  /** Pool connections checked out and in use. */
  readonly poolInUse?: number;
  /** Callers waiting for a pool connection. */
  readonly poolWaiting?: number;
}

/** One row of usage analytics: one key's data requests to one endpoint with one outcome in one UTC hour (or day). */
export interface KeyUsageRow {
  /** The hour's start (Unix ms, a multiple of 3 600 000). */
  readonly hour: number;
  readonly accountId: string;
  readonly keyId: string;
  /** The endpoint's method and template, e.g. `GET /data/v1/benchmarks/{category}`. */
  readonly endpoint: string;
  readonly outcome: UsageOutcome;
  readonly calls: number;
  /** Calls per latency bucket (core's LATENCY_BOUNDS_MS, LATENCY_BUCKETS of them), summing to `calls`. */
  readonly latency: readonly number[];
  /** The slowest of these calls (ms). */
  readonly maxMs: number;
}

/** One flush of an instance's analytics aggregate (see `Storage.addKeyUsage`). */
export interface KeyUsageBatch {
  readonly rows: readonly KeyUsageRow[];
  /** Each key's latest data request in the batch (Unix ms, to the minute), at most one per key. */
  readonly lastUsed: readonly { readonly keyId: string; readonly accountId: string; readonly at: number }[];
}

/** A group of usage analytics: its bucket's start and the dimensions it is grouped by (null: summed over). */
export interface KeyUsageGroupKey {
  /** The hour's or UTC day's start (Unix ms). */
  readonly start: number;
  readonly keyId: string | null;
  readonly endpoint: string | null;
  readonly outcome: UsageOutcome | null;
}

/** One group's sums. */
export interface KeyUsageGroup extends KeyUsageGroupKey {
  /** Calls per outcome, in USAGE_OUTCOMES order. */
  readonly outcomes: readonly number[];
  /** Calls per latency bucket. */
  readonly latency: readonly number[];
  readonly maxMs: number;
}

/** What `Storage.keyUsage` reads: one account's groups, one page. */
export interface KeyUsageQuery {
  readonly accountId: string;
  /** `hour` reads the hourly rows, `day` the daily ones. */
  readonly granularity: "hour" | "day";
  /** Buckets starting at or after `from` and before `to` (Unix ms). */
  readonly from: number;
  readonly to: number;
  /** The dimensions groups are made by (beside the bucket); the others are summed over. */
  readonly groupBy: { readonly key: boolean; readonly endpoint: boolean; readonly outcome: boolean };
  /** Only this key's rows, when given. */
  readonly keyId?: string;
  /** Only groups after this one in ascending (start, key, endpoint, outcome) order, compared as text code unit by code unit. */
  readonly after?: KeyUsageGroupKey;
  readonly limit: number;
}

/** What one call of `Storage.prune` deletes from (a delivery's attempts go with it). */
export type PruneTarget = "deliveries" | "events" | "sessions" | "sign_in_links" | "day_counters" | "usage_days" | "key_usage_hours" | "key_usage_days";

/** The tables pruning deletes rows from. */
export type PrunedTable = PruneTarget | "delivery_attempts";

/** The last row a batch of pruning examined, in its target's order: the next batch starts after it. */
export interface PruneCursor {
  /** The row's time (Unix ms) or UTC day, as the target orders by. */
  readonly key: number;
  /** The row's id, which breaks ties of `key` (compared as text, code unit by code unit). */
  readonly id: string;
}

/** One batch of pruning (see `Storage.prune`). */
export interface PruneInput {
  readonly target: PruneTarget;
  /** Rows whose time (Unix ms) or, for `day_counters` and `usage_days`, UTC day is below this may go. */
  readonly before: number;
  /** The most rows of `target` the batch may examine. */
  readonly limit: number;
  /** Where the previous batch of the same run stopped (its `next`); absent or null: from the oldest. */
  readonly after?: PruneCursor | null;
}

/** What a batch of pruning deleted, and where the next one starts. */
export interface PruneResult {
  /** Rows deleted, by table (tables without deletions may be left out). */
  readonly deleted: Readonly<Partial<Record<PrunedTable, number>>>;
  /** The last row examined when the batch examined `limit` rows (there may be more: pass it as `after`); otherwise null. */
  readonly next: PruneCursor | null;
}

/** Which audit entries `Storage.listAudit` returns: one page in `seq` order, filtered. */
export interface AuditQuery {
  readonly accountId?: string;
  readonly actor?: string;
  readonly action?: AuditAction;
  /** Recorded at or after this time (Unix ms). */
  readonly from?: number;
  /** Recorded strictly before this time (Unix ms). */
  readonly to?: number;
  /** `asc`: entries after `afterSeq`; `desc` (newest first): entries before `beforeSeq`. */
  readonly order: "asc" | "desc";
  readonly afterSeq?: number;
  readonly beforeSeq?: number;
  readonly limit: number;
}

/**
 * The audit entry of an action, appended by the method that performs it: in the SAME transaction as the change,
 * and only when the method changed something (a refused, failed or no-op call leaves no entry). Appends MUST be
 * serialised across processes (PostgreSQL: the chain head's row lock; SQLite: the write lock), so the chain never
 * forks: each entry is placed after the head as it stands inside that transaction (core's `chainAuditEntry`).
 */
export interface Audited {
  readonly audit?: AuditDraft | undefined;
}

// The storage contract in facets: each caller declares the slice it uses (a worker its options' `storage`, a
// route file its `…Storage` type), and `Storage` is all of them, which every store implements. The MUST rules
// on each method hold whichever facet a caller sees it through.

/** Opening and closing a store, and its health. */
export interface StorageLifecycle {
  /** Creates or upgrades the schema; safe when several instances run it at once. */
  migrate(): Promise<void>;
  /** Releases connections. */
  close(): Promise<void>;
  /** A trivial round trip to the store (readiness probes); rejects when the store cannot answer. Optional. */
  ping?(): Promise<void>;
  /** Operational gauges (outbox depth, pool use) for metrics. Optional. */
  gauges?(): Promise<StorageGauges>;
}

/** Accounts: create, read, change, suspend. */
export interface AccountStore {
  /** Stores a new account (with `audit`, its entry in the same transaction). */
  createAccount(account: AccountRecord, audit?: AuditDraft): Promise<void>;
  /** The account, or null when there is none; a deleted account's tombstone reads as null. */
  getAccount(accountId: string): Promise<AccountRecord | null>;
  /**
   * Changes the tier, limit overrides, IP ranges, console exemption or billing refs of an account, and its version (see
   * `KeyLookup.version`). `dropScopes` (a downgrade: the scopes the new tier does not permit) are removed from
   * every key of the account in the same transaction, so nothing restores them but a new key. Null when no such
   * account, or a deleted one.
   */
  updateAccount(
    accountId: string,
    patch: { tier?: Tier; limits?: Partial<TierLimits>; allowedCidrs?: readonly string[]; consoleIpExempt?: boolean; billing?: AccountRecord["billing"]; dropScopes?: readonly Scope[] },
    audit?: AuditDraft,
  ): Promise<AccountRecord | null>;
  /**
   * Suspends or resumes an account in ONE transaction: its status, and its version (see `KeyLookup.version`, so
   * every remembered lookup of its keys is stale at once, in every process), with the event `account.suspended`
   * or `account.resumed` and its deliveries. While suspended, the account's deliveries and charges are not
   * claimed (they stay pending, never dead); resuming moves its webhooks' start of failing (`failing_since`)
   * forward by the time suspended, so the pause never counts toward disabling one. Nothing is deleted. Setting the
   * status an account already has changes and writes nothing (`changed: false`), also when two calls race.
   * Null when no such account, or a deleted one.
   */
  setAccountStatus(input: Audited & {
    accountId: string;
    status: AccountStatus;
    /** The operator's note on a suspension (kept while suspended); ignored when resuming. */
    reason?: string | null;
    now: number;
    eventId: string;
  }): Promise<{ account: AccountRecord; changed: boolean } | null>;
}

/** Console sessions and one-time sign-in links. */
export interface SessionStore {
  /**
   * Stores a console session under its token's hash; every session expires (`expiresAt`). False (nothing stored)
   * when the account does not exist or was erased, decided in the same atomic step as the insert (an erasure
   * running at the same time comes wholly before it, or after it and ends the session).
   */
  createSession(session: { tokenHash: string; accountId: string; createdAt: number; expiresAt: number }, audit?: AuditDraft): Promise<boolean>;
  /** The account of an unexpired session token hash, or null. */
  findSession(tokenHash: string, now: number): Promise<string | null>;
  /** The expiry of an unexpired session token hash, or null. */
  sessionExpiry(tokenHash: string, now: number): Promise<number | null>;
  /** Ends one session (sign-out); whether it existed. */
  deleteSession(tokenHash: string, audit?: AuditDraft): Promise<boolean>;
  /** Ends every session of an account and voids its unused sign-in links; how many sessions it ended. */
  deleteSessions(accountId: string, audit?: AuditDraft): Promise<number>;
  /** Stores a one-time sign-in link under its token's hash; false (nothing stored) for an erased or unknown account, as `createSession`. */
  createSignInLink(link: { tokenHash: string; accountId: string; createdAt: number; expiresAt: number }, audit?: AuditDraft): Promise<boolean>;
  /**
   * Redeems an unexpired, unused sign-in link for a new session, in one atomic step: the link is consumed
   * and the session stored together, so a link redeemed twice at once yields one session. The account id, or null.
   * The audit draft's null `accountId` is filled with the redeemed account.
   */
  redeemSignInLink(input: Audited & { linkHash: string; now: number; session: { tokenHash: string; createdAt: number; expiresAt: number } }): Promise<string | null>;
}

/** API keys. Each change writes its event in the same transaction. */
export interface KeyStore {
  /**
   * Stores a new key under its hash unless the account already has `maxKeys` keys that are not revoked; writes
   * `key.created`. `deleted` (nothing stored) when the account was erased, decided in the same atomic step, so a
   * key can never outlive its account's erasure however the calls race.
   */
  createKey(input: Audited & { key: ApiKeyRecord; hash: string; maxKeys: number; eventId: string }): Promise<"created" | "limit" | "deleted">;
  /** The hot-path lookup by hash, joined with the account (and its version), in one round trip. */
  findKeyByHash(hash: string): Promise<KeyLookup | null>;
  getKey(accountId: string, keyId: string): Promise<ApiKeyRecord | null>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /**
   * Replaces an active key's hash: the old hash stops working at once (lookups report it `retired`),
   * the new one works; writes `key.rotated`. With `scopes`, the key's scopes become those (rotation drops the
   * scopes a downgraded tier no longer permits). Null when no such active key of the account exists.
   */
  rotateKey(input: Audited & { accountId: string; keyId: string; newHash: string; newPrefix: string; now: number; eventId: string; scopes?: readonly Scope[] }): Promise<ApiKeyRecord | null>;
  /** Revokes a key for good; writes `key.revoked` (only on the first revocation). Null when no such key. */
  revokeKey(input: Audited & { accountId: string; keyId: string; now: number; eventId: string }): Promise<ApiKeyRecord | null>;
}

/** The hot path: admitting data requests against the key's window, the account's day and its quota. */
export interface AdmissionStore {
  /**
   * Admits one data request or refuses it: the key's sliding window, the account's UTC-day counter and, for
   * live keys, the period's quota (`quotaRequest` of core), all decided and applied in ONE atomic operation
   * (MUST be exact across processes: N concurrent calls never admit more than the limits). A warning
   * crossing writes `quota.warning`; an exhaustion that starts a charge writes a pending invoice.
   */
  admit(input: AdmitInput): Promise<AdmitResult>;
  /**
   * The key's minute window and the account's day counter as they stand, without admitting anything: for
   * the `X-RateLimit-*` headers of requests refused before admission (inactive key, scope…). Read-only.
   */
  peekLimits(input: { now: number; keyId: string; accountId: string; perMinute: number; perDay: number; windowMs: number; environment?: "live" | "test" }): Promise<{ now: number; minute: WindowInfo; day: WindowInfo }>;
}

/** What the admissions counted, as the console shows it. */
export interface UsageStore {
  /** Admitted requests per UTC day (days since the epoch) from `fromDay` through today, oldest first; days without requests are left out. */
  dailyUsage(accountId: string, fromDay: number, now: number): Promise<{ day: number; count: number }[]>;
  /** The usage summary: today's admitted requests, the period's counted calls and allowance, active keys. */
  usage(accountId: string, now: number, anchorDay: number, baseQuota: number, blockSize: number): Promise<UsageSnapshot>;
}

/** Webhook endpoints and their signing secrets. */
export interface WebhookStore {
  /** Stores a webhook unless the account already has `maxWebhooks`; `deleted` (nothing stored) when the account was erased, as for `createKey`. */
  createWebhook(webhook: WebhookRecord, maxWebhooks: number, audit?: AuditDraft): Promise<"created" | "limit" | "deleted">;
  listWebhooks(accountId: string): Promise<WebhookRecord[]>;
  getWebhook(accountId: string, webhookId: string): Promise<WebhookRecord | null>;
  /**
   * Every stored signing secret of every webhook (sealed or, from before encryption at rest, plain), for
   * re-sealing: `current` is the webhook's secret, `previous` the one a rotation keeps for its overlap.
   */
  listWebhookSecrets(): Promise<{ webhookId: string; accountId: string; field: "current" | "previous"; secret: string }[]>;
  /** Replaces one stored secret with another form of it, only if it still holds `from` (compare-and-set). */
  replaceWebhookSecret(input: { webhookId: string; field: "current" | "previous"; from: string; to: string }): Promise<boolean>;
  /**
   * Replaces a webhook's signing secret with `secret` (sealed) in one step: the secret it had becomes the
   * previous one, signing alongside until `previousUntil` (a previous secret of an earlier rotation is dropped).
   * Null when no such webhook of the account.
   */
  rotateWebhookSecret(input: Audited & { accountId: string; webhookId: string; secret: string; previousUntil: number }): Promise<WebhookRecord | null>;
  /**
   * Ends a rotation's overlap now: the previous secret and its expiry are cleared, only if the previous secret
   * still holds `previous` (compare-and-set, so a rotation made meanwhile keeps the secret it replaced). False
   * when no such webhook of the account, or its previous secret is another.
   */
  endWebhookSecretOverlap(input: Audited & { accountId: string; webhookId: string; previous: string }): Promise<boolean>;
  /**
   * Deletes a webhook; its pending deliveries stop (become dead). With `ifSecret`, only while its current secret
   * still holds that stored value (compare-and-set: a webhook whose secret was rotated meanwhile stays). False
   * when no such webhook, or its secret is another.
   */
  deleteWebhook(accountId: string, webhookId: string, audit?: AuditDraft, ifSecret?: string): Promise<boolean>;
  /** Makes a disabled webhook active again (failure history cleared); null when no such webhook of the account. */
  enableWebhook(accountId: string, webhookId: string, audit?: AuditDraft): Promise<WebhookRecord | null>;
}

/** The outbox: events, their deliveries to webhooks, and the delivery worker's claims. */
export interface OutboxStore {
  /** Writes an event and its deliveries in one transaction (for events not tied to another change). */
  emitEvent(event: EventDraft, now: number): Promise<void>;
  /**
   * Claims up to `limit` pending deliveries due at `now`, at most `perWebhook` per webhook at once, each under
   * a lease until `now + leaseMs`: no other claim returns them before the lease ends or they are completed.
   * Deliveries of a suspended account are not claimed (they wait, due, until it is resumed).
   * With `ordered`, a delivery is claimed only when no earlier one (by `seq`, numbered as it is written) to
   * the same webhook is unsettled, i.e. still pending (waiting for a retry, or in flight under a lease), and none
   * of the webhook's is in flight (an earlier one made due again waits for a later one out): so at most one per
   * webhook is out at a time, in `seq` order, whatever `perWebhook` says; decided in the
   * claim's own atomic step, so it holds across workers and processes. Only committed deliveries count: where
   * `seq` is taken before commit (PostgreSQL), concurrent writers' deliveries can go out of `seq` order.
   */
  claimDeliveries(input: { now: number; leaseMs: number; limit: number; perWebhook: number; ordered?: boolean }): Promise<ClaimedDelivery[]>;
  /**
   * Records an attempt of a claimed delivery and its next state: succeeded, retry at a time, or dead.
   * Ignored (false) if the lease token no longer holds the delivery.
   */
  completeDelivery(input: {
    deliveryId: string;
    leaseToken: string;
    attempt: AttemptRecord;
    next: { status: "succeeded" } | { status: "dead" } | { status: "pending"; at: number };
    /** The receiver answered 410 Gone: the delivery is dead (`gone`) and the webhook disabled at once. */
    gone?: boolean;
    /**
     * With it, the same transaction also keeps the webhook's health (when its failures began, its dead
     * deliveries in a row) and disables an active webhook as core's `webhookHealthAfter` decides: its
     * pending deliveries die (`webhook_disabled`) and `webhook.disabled` goes to the account's other active
     * webhooks. Without it the webhook is left as it is.
     */
    health?: WebhookHealthPolicy;
  }): Promise<boolean>;
  /** An account's deliveries to one webhook, newest first, each with its attempts. */
  listDeliveries(accountId: string, webhookId: string, limit: number): Promise<DeliveryRecord[]>;
  /** Makes a delivery (dead ones included) due again at `now`; null when no such delivery of the account. */
  retryDelivery(accountId: string, webhookId: string, deliveryId: string, now: number, audit?: AuditDraft): Promise<DeliveryRecord | null>;
  /**
   * Re-queues, in one atomic step, failed deliveries of an active webhook whose event was written at or after
   * `since`: the dead ones, and the pending ones waiting after a failed attempt (not those a worker holds under a
   * live lease), oldest first. The account's recover budget is read, decided by core's `recoverStep` and written
   * back (`afterRecover`) in the same step, so concurrent calls on any instance never spend more than it holds:
   * this MUST be atomic across processes. A refused call changes nothing. Each re-queued delivery becomes due at
   * `now` and keeps its place in event order; a delivery already due or in flight is not touched, so a second call
   * does not queue anything twice. `hasMore`: recoverable deliveries since `since` remain. `disabled` (nothing
   * changed, no budget spent) for a disabled webhook; null when no such webhook of the account.
   */
  recoverDeliveries(input: Audited & { accountId: string; webhookId: string; since: number; now: number; policy: RecoverPolicy }): Promise<RecoverOutcome | "disabled" | null>;
}

/** Charges and invoices: the billing worker's claims and settlements, and the console's retry. */
export interface BillingStore {
  /** Claims pending invoices (charges not yet sent or whose lease ran out) under a lease; a suspended account's wait. */
  claimCharges(input: { now: number; leaseMs: number; limit: number }): Promise<ClaimedCharge[]>;
  /**
   * Settles a claimed charge in one transaction: the invoice's status and processor reference, the quota
   * (paid: one more block, access resumes), and the events `quota.exhausted` (with the processor reference;
   * only for a block's first attempt, so one per exhaustion) then `invoice.paid` or `invoice.failed`, with
   * their deliveries. Ignored (false) without the lease. For an account erased while the charge was in flight
   * only the invoice's outcome is recorded (the legal record of money taken or not): no quota, no event, and no
   * decline reason (`failureReason` stays null: it describes the customer's finances).
   */
  settleCharge(input: { invoiceId: string; leaseToken: string; outcome: ChargeOutcome; eventIds: { exhausted: string; result: string } }): Promise<boolean>;
  /**
   * Starts a new charge attempt now for an exhausted account with no charge outstanding (console "retry
   * payment"), as core's `quotaManualCharge` decides: past the ceiling of automatic charges (a person asked),
   * but never for a block that buys no call. Returns the pending invoice, or null when there is nothing to
   * charge. MUST be atomic across processes with admissions and settlements.
   */
  requestCharge(input: Audited & {
    accountId: string;
    now: number;
    anchorDay: number;
    invoiceId: string;
    baseQuota: number;
    blockSize: number;
    blockPrice: number;
    currency: string;
  }): Promise<InvoiceRecord | null>;
  /**
   * The operator released an account's hold for the current period (core's `quotaReleaseHold`: the ceiling of
   * automatic charges counts again from 0). True when the period had a quota row. MUST be atomic across processes.
   */
  releaseChargeHold(input: Audited & { accountId: string; now: number; anchorDay: number }): Promise<boolean>;
  /** Every invoice of the account, newest first. */
  listInvoices(accountId: string): Promise<InvoiceRecord[]>;
}

/** Merchant snapshots, per account and environment; (account, environment, merchant, period) holds at most one. */
export interface SnapshotStore {
  /**
   * Stores a snapshot, replacing (deleting) the one of the same account, environment, merchant and period if
   * there is one, in ONE atomic operation (MUST hold across processes: concurrent saves of one period leave
   * exactly one snapshot, and each replaced snapshot is reported by exactly one save). Returns the replaced
   * snapshot, or null. `deleted` (nothing stored) when the account was erased, decided in the same atomic step,
   * so no snapshot outlives an erasure however the calls race.
   */
  saveSnapshot(snapshot: SnapshotRecord): Promise<SnapshotRecord | null | "deleted">;
  /** The account's snapshots in one environment (optionally of one merchant), newest first (`createdAt`, then `id`, descending), at most `limit`. */
  listSnapshots(accountId: string, environment: Environment, options: { merchantId?: string; limit: number }): Promise<SnapshotRecord[]>;
  /** Every snapshot of one merchant of the account in one environment (one per period), in ascending `period` text order. */
  merchantSnapshots(accountId: string, environment: Environment, merchantId: string): Promise<SnapshotRecord[]>;
  /** One snapshot by id, or null when it does not exist in that account and environment. */
  getSnapshot(accountId: string, environment: Environment, snapshotId: string): Promise<SnapshotRecord | null>;
}

/** Whole accounts: the operator finds, exports and erases them. */
export interface AccountLifecycleStore {
  /** One page of accounts matching `query`, in ascending (`createdAt`, `id`) order, at most `query.limit`. */
  listAccounts(query: AccountListQuery): Promise<AccountRecord[]>;
  /**
   * Erases an account. In ONE atomic operation (MUST hold across processes, like a revocation): the account
   * becomes a tombstone (status `deleted`, `deletedAt` now but never before the account's last invoice was made or
   * resolved, whatever clock wrote it, name, limits, IP ranges, billing refs and suspension
   * note erased, its version moved, so every remembered lookup of its keys is stale at once); its keys with every
   * hash they had and their windows, its console sessions and sign-in links, its webhooks (secrets included), its
   * quota periods, day counters and usage days are deleted. Invoices stay, with their amounts, periods and processor
   * references: a failed one loses its `failureReason` (the processor's decline code), and every pending one not in
   * flight (no live lease) becomes `failed` with the reason `account_deleted`, so no charge is made after the
   * erasure (one in flight settles as `settleCharge` says). From then on the account's deliveries and
   * charges are never claimed and nothing can be created for it (`createKey`, `createWebhook` answer `deleted`).
   * The account's deliveries with their attempts, events and merchant snapshots may remain until `purgeAccount`
   * removes them. `erased` is false (and nothing changes) when it was already deleted, also when two calls race.
   * Null when no such account. In the same transaction every audit entry of the account loses its identifying fields
   * (client address, personal fields and salt become null, `erasedAt` is set; the rest stays and the chain still
   * verifies), and then `audit`, when given, is appended. The erasure is recorded as unfinished in the same atomic
   * step (see `unfinishedErasures`), so one interrupted before its purge ends is found again.
   */
  deleteAccount(input: Audited & { accountId: string; now: number }): Promise<{ account: AccountRecord; erased: boolean } | null>;
  /**
   * Deletes up to about `limit` of a deleted account's remaining records (deliveries with their attempts, events,
   * merchant snapshots, usage analytics), in one short atomic step; how many it deleted, 0 once nothing is left.
   * Nothing for an account that is not deleted. Calling it until 0 finishes an erasure, also one interrupted
   * earlier. The call that finds nothing left also forgets the erasure as unfinished, in its own atomic step; a
   * store whose files may still hold what it deleted (SQLite's WAL) MAY keep it listed until they do not, so a
   * later call finishes that too.
   */
  purgeAccount(input: { accountId: string; limit: number }): Promise<number>;
  /**
   * Ids of erased accounts whose purge is not finished (`deleteAccount` records each, `purgeAccount` forgets it), in
   * ascending id order after `after`, at most `limit`; with `of`, only those of these ids. MUST read them by an index
   * range (or key) of this state alone, never by a scan of the tombstones, which are kept for good.
   */
  unfinishedErasures(input: { after?: string; limit: number; of?: readonly string[] }): Promise<string[]>;
  /** The account's console sessions and unused sign-in links as held (expired ones included), oldest first. */
  accountSessions(accountId: string): Promise<HeldSession[]>;
  /** The account's usage counters: admitted requests per day and environment, and its billing periods' quotas. */
  accountUsage(accountId: string): Promise<AccountUsage>;
  /** One page of the account's deliveries (every webhook's, deleted ones' included), each with its attempts. */
  accountDeliveries(accountId: string, page: RecordPage): Promise<DeliveryRecord[]>;
  /** One page of the account's events. */
  accountEvents(accountId: string, page: RecordPage): Promise<EventRecord[]>;
  /** One page of the account's merchant snapshots, both environments. */
  accountSnapshots(accountId: string, page: RecordPage): Promise<SnapshotRecord[]>;
}

/** The audit log (docs/audit.md): appended by the audited methods of the other facets, never pruned. */
export interface AuditStore {
  /** Appends one entry on its own (for audited actions that change nothing else, such as an export). */
  appendAudit(draft: AuditDraft): Promise<AuditEntry>;
  /** One page of entries matching `query`. */
  listAudit(query: AuditQuery): Promise<AuditEntry[]>;
  /** The chain's head as recorded: the last entry's position and hash. */
  auditHead(): Promise<AuditHead>;
}

/** Retention: pruning what is no longer kept, in bounded batches. */
export interface RetentionStore {
  /**
   * Deletes one batch of what retention no longer keeps, in ONE short transaction (one statement on PostgreSQL):
   * it MUST examine at most `limit` rows of `target`, the oldest after `after` in the target's order, by an index
   * range (never a scan of the table), so no batch holds SQLite's write lock or PostgreSQL's row locks for long.
   * Of those rows it deletes
   * - `deliveries` (order: `createdAt`, `id`): the succeeded and dead ones whose event was written before `before`,
   *   with their attempts (`delivery_attempts`). A pending delivery MUST never be deleted, whatever its age;
   * - `events` (`createdAt`, `id`): those written before `before` that no delivery refers to, checked in the same
   *   transaction (a delivery's event MUST outlive it: claims and listings read it);
   * - `sessions`, `sign_in_links` (`expiresAt`, token hash): those that expired before `before`;
   * - `day_counters` (`day`, counter id: `dayCounterId`): the counters of UTC days before `before`. A count above 0
   *   MUST first be kept in the usage history, so `dailyUsage` reports that day as before;
   * - `usage_days` (`day`, counter id): the usage history of UTC days before `before`;
   * - `key_usage_hours`, `key_usage_days` (hour or day start, then any order): the analytics rows of hours or UTC
   *   days starting before `before` (Unix ms). Every row examined is deleted, so `after` only says more may be left.
   * Nothing else is ever pruned: invoices, quota rows, accounts, keys, webhooks and snapshots stay. Safe from
   * several processes at once: each row is deleted once and counted by the call that deleted it (a row another
   * process holds locked may be skipped, for a later run).
   */
  prune(input: PruneInput): Promise<PruneResult>;
}

/** Usage analytics per key (docs/analytics.md): written by each instance's aggregator every few seconds, never per request. */
export interface KeyAnalyticsStore {
  /**
   * Adds one flush of an instance's aggregate in ONE atomic write: each row's calls, latency buckets and slowest
   * call onto its hour's row and its UTC day's row (created at zero), and each key's last use (the later time
   * kept). MUST be additive across processes: two instances' flushes add up, never overwrite each other. Rows of
   * keys that no longer exist (an erased account's) are skipped.
   */
  addKeyUsage(batch: KeyUsageBatch): Promise<void>;
  /** One page of the account's usage groups (see `KeyUsageQuery`), in ascending (start, key, endpoint, outcome) order. */
  keyUsage(query: KeyUsageQuery): Promise<KeyUsageGroup[]>;
  /** When each of the account's keys was last used (Unix ms, to the minute), by key id; keys never used are left out. */
  keysLastUsed(accountId: string): Promise<Record<string, number>>;
}

/** Benchmark data (live): the imported cells. */
export interface CellStore {
  /** The imported live data, prepared per cell. */
  readonly benchmarks: BenchmarkSource;
  /**
   * Publishes prepared cells, replacing every cell of each (category, period) in `replace`, in one
   * transaction: readers see the old data or the new, never a mix. Resolves to the pairs of `replace` that
   * held cells before (found in the same transaction), so an import can tell what it replaced from what it added.
   */
  replaceCells(cells: readonly PreparedCell[], replace: readonly { category: Category; period: string }[]): Promise<{ category: Category; period: string }[]>;
}

/** The storage contract: every facet, as one store implements them. */
export interface Storage
  extends StorageLifecycle,
    AccountStore,
    SessionStore,
    KeyStore,
    AdmissionStore,
    UsageStore,
    WebhookStore,
    OutboxStore,
    BillingStore,
    SnapshotStore,
    AccountLifecycleStore,
    AuditStore,
    RetentionStore,
    KeyAnalyticsStore,
    CellStore {}
