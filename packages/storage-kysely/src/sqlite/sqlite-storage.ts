/**
 * The SQLite Storage over better-sqlite3.
 *
 * Why not through Kysely's async SqliteDialect: a decision that reads, decides and writes must hold
 * SQLite's write lock from its first read (`BEGIN IMMEDIATE`), or a second process can commit in
 * between and the upgrade fails with SQLITE_BUSY_SNAPSHOT. better-sqlite3 runs a whole transaction
 * synchronously, so every method here is one synchronous `BEGIN IMMEDIATE … COMMIT` (or one statement):
 * atomic across processes (the file lock serialises writers), and, in this process, no other method can
 * interleave with it. The decisions themselves are core's pure functions, exactly as in the memory store.
 * `admit` is the one exception to "one call, one transaction": the admissions made in one turn of the
 * event loop share one (see batch/batcher.ts), still deciding one after another.
 */
import { randomUUID } from "node:crypto";
import type { SqliteDatabase, SqliteStatement } from "./driver.ts";
import type {
  AccountRecord,
  AuditDraft,
  AuditEntry,
  AuditHead,
  AdmitInput,
  AdmitResult,
  ApiKeyRecord,
  AttemptRecord,
  Category,
  ChargeOutcome,
  ClaimedCharge,
  ClaimedDelivery,
  DeliveryRecord,
  EventDraft,
  EventType,
  HeldSession,
  InvoiceRecord,
  KeyLookup,
  Logger,
  PreparedCell,
  QuotaPlan,
  QuotaState,
  SnapshotRecord,
  StoredQuota,
  Storage,
  UsageSnapshot,
  WebhookHealthPolicy,
  RecoverOutcome,
  RecoverPolicy,
  WebhookRecord,
  WindowInfo,
} from "@benchdata/core";
import {
  accountResumedEvent,
  accountSuspendedEvent,
  admission,
  admissionPeek,
  chainAuditEntry,
  billingPeriod,
  cryptoRandom,
  dayCounterId,
  EMPTY_QUOTA,
  invoiceFailedEvent,
  invoicePaidEvent,
  keyCreatedEvent,
  keyRevokedEvent,
  webhookDisabledEvent,
  webhookHealthAfter,
  afterRecover,
  recoverStep,
  keyRotatedEvent,
  newId,
  parsePeriod,
  pendingInvoice,
  quotaChargeFailed,
  quotaChargeSucceeded,
  quotaExhaustedEvent,
  quotaManualCharge,
  quotaReleaseHold,
  recordAdmission,
  serializeEvent,
  silentLogger,
  utcDay,
} from "@benchdata/core";
import { cachedBenchmarks, DEFAULT_CACHE_TTL_MS } from "../cells/cached-benchmarks.ts";
import { encodeFloat64, encodeUint32 } from "../cells/cell-codec.ts";
import { failClosed, isSqliteUnavailable } from "../database-unavailable.ts";
import { registerImportBackend } from "../import/staging.ts";
import { batcher } from "../batch/batcher.ts";
import type { SqlStorage } from "../sql-storage.ts";
import type { Row } from "../rows.ts";
import { AUDIT_COLUMNS, auditEntryFromRow, auditHeadFromRow, auditRowValues } from "../audit-rows.ts";
import { accountFromRow, deliveryFromRow, invoiceFromRow, keyFromRow, lookupAccountFromRow, num, numOrNull, pageStart, snapshotFromRow, strOrNull, webhookFromRow } from "../rows.ts";
import { migrateSqlite } from "./sqlite-migrate.ts";
import { withSqliteStaging } from "./sqlite-staging.ts";
import type { DatabaseMark, DayCount } from "./admission-memo.ts";
import { admissionMemo } from "./admission-memo.ts";
import type { ChunkRows } from "./window-chunks.ts";
import { ChunkedWindow, WINDOW_CHUNK_SIZE } from "./window-chunks.ts";
import { sqlitePrune } from "./sqlite-prune.ts";
import { sqliteKeyUsage } from "../key-usage/sqlite-key-usage.ts";
import { isIndexedTarget } from "../prune-spec.ts";

/** Options of the SQLite storage. */
export interface SqliteStorageOptions {
  /**
   * `app` (default): decisions use the `now` they are given. `database`: they use this host's clock read
   * inside the write lock (every process on the host shares it), and report it back as `now`.
   */
  readonly clock?: "app" | "database";
  readonly logger?: Logger;
  /** How long decoded benchmark cells are trusted before the data version is checked (ms, default 1000). */
  readonly cacheTtlMs?: number;
  /** How many windows, day counters and checked lookups admissions remember between batches (default 20,000). */
  readonly admissionMemoSize?: number;
  /** Stamps per chunk of a key's admission log (default 128; see window-chunks.ts). Tests use small ones. */
  readonly windowChunkSize?: number;
}



/** How many windows, day counters and checked lookups a connection's admissions remember (see admission-memo.ts). */
const ADMISSION_MEMO_SIZE = 20_000;

/** How long the checkpoint that ends an erasure waits for another connection's reader (ms); writers wait meanwhile. */
const CHECKPOINT_WAIT_MS = 200;

function quotaFromRow(r: Row | undefined): QuotaState {
  if (!r) return EMPTY_QUOTA;
  return {
    used: num(r.used),
    blocks: num(r.blocks),
    exhausted: r.exhausted === 1,
    pendingBlock: numOrNull(r.pending_block),
    chargeAttempts: num(r.charge_attempts),
    blockAttempts: num(r.block_attempts),
    lastFailureAt: numOrNull(r.last_failure_at),
    heldAt: numOrNull(r.held_at),
  };
}

// What a claim hands out of a due delivery, and the conditions every claimed one meets.
const CLAIM_COLUMNS: string = `d.id, d.event_id, d.webhook_id, d.account_id, d.attempts, e.type, e.body, e.created_at AS event_created_at, w.url, w.secret,
                       w.previous_secret, w.previous_secret_until`;
const CLAIM_JOINS: string = `JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id AND w.status = 'active'
                     JOIN accounts a ON a.id = d.account_id AND a.status = 'active'`;
const CLAIMABLE: string = `d.status = 'pending' AND d.next_attempt_at <= @now AND NOT (d.lease_token IS NOT NULL AND d.lease_until > @now)`;
/** Every due delivery, in claim order (unordered claims). */
const CLAIM_DUE: string = `SELECT ${CLAIM_COLUMNS} FROM deliveries d ${CLAIM_JOINS} WHERE ${CLAIMABLE} ORDER BY d.next_attempt_at, d.seq`;
/**
 * Each webhook's head, when due (ordered claims): the webhooks with pending deliveries by a skip scan of
 * deliveries_pending_by_webhook (one seek each), then each one's earliest pending delivery (one more).
 */
export const SQLITE_CLAIM_HEADS: string = `WITH RECURSIVE hooks(webhook_id) AS (
                        SELECT (SELECT webhook_id FROM deliveries WHERE status = 'pending' ORDER BY webhook_id LIMIT 1)
                        UNION ALL
                        SELECT (SELECT p.webhook_id FROM deliveries p WHERE p.status = 'pending' AND p.webhook_id > h.webhook_id ORDER BY p.webhook_id LIMIT 1)
                        FROM hooks h WHERE h.webhook_id IS NOT NULL
                      )
                      SELECT ${CLAIM_COLUMNS}
                      FROM hooks h JOIN deliveries d ON d.seq = (SELECT p.seq FROM deliveries p WHERE p.webhook_id = h.webhook_id AND p.status = 'pending' ORDER BY p.seq LIMIT 1)
                        ${CLAIM_JOINS}
                      WHERE ${CLAIMABLE}
                      ORDER BY d.next_attempt_at, d.seq`;

/** Sets the pragmas every connection to a benchdata SQLite file needs. */
export function configureSqlite(db: SqliteDatabase, busyTimeoutMs = 5000): void {
  const timeout = Math.max(0, Math.floor(busyTimeoutMs));
  // busy_timeout first: switching to WAL needs a brief lock that another starting process may hold.
  db.pragma(`busy_timeout = ${timeout}`);
  if (db.name !== "" && db.name !== ":memory:" && !db.memory) switchToWal(db, timeout);
  // NORMAL in WAL mode: a commit survives a crash of the process (not of the machine), at a fraction of FULL's cost.
  db.pragma("synchronous = NORMAL");
}

/**
 * `journal_mode = WAL`, retried for up to `timeoutMs` while SQLite answers SQLITE_BUSY. Processes that open a new
 * file at once (a server's workers, instances started together) each switch it, and SQLite refuses a switch at
 * once, without waiting in its busy handler, when waiting could deadlock (another connection holds the lock the
 * switch must upgrade), so busy_timeout alone does not cover it. Opening is synchronous (better-sqlite3's API), so
 * the pause between tries is too; it happens only while a file is being created.
 */
function switchToWal(db: SqliteDatabase, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (e) {
      if ((e as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() + pause > deadline) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pause);
    }
  }
}

/**
 * A Storage over an open better-sqlite3 database (configure it with `configureSqlite`; `migrate()`
 * creates the schema). Closing the storage closes the database.
 */
export function createSqliteStorage(db: SqliteDatabase, options: SqliteStorageOptions = {}): SqlStorage {
  const logger = options.logger ?? silentLogger;
  const clockMode = options.clock ?? "app";
  const statements = new Map<string, SqliteStatement>();
  /** A prepared statement, prepared once per SQL text (so SQL can stay inline, where it is used). */
  const q = (text: string): SqliteStatement => {
    let s = statements.get(text);
    if (!s) statements.set(text, (s = db.prepare(text)));
    return s;
  };
  const immediate = <A extends unknown[], R>(fn: (...args: A) => R): ((...args: A) => R) => {
    const tx = db.transaction(fn);
    return (...args: A) => tx.immediate(...args);
  };
  const timeOf = (now: number): number => (clockMode === "database" ? Date.now() : now);

  function insertEvent(draft: EventDraft, now: number): void {
    q("INSERT INTO events (id, type, account_id, created_at, body) VALUES (?, ?, ?, ?, ?)").run(draft.id, draft.type, draft.accountId, now, serializeEvent(draft));
    // One pending delivery per webhook of the account subscribed to the type at this moment, each
    // `dlv_<ULID>` stamped with the event's time. `seq` (the rowid) records creation order for claims.
    const hooks = q(`SELECT w.id FROM webhooks w
                     WHERE w.account_id = ? AND w.status = 'active' AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE json_each.value = ?)
                     ORDER BY w.id`).all(draft.accountId, draft.type) as { id: string }[];
    const put = q(`INSERT INTO deliveries (id, event_id, webhook_id, account_id, status, attempts, next_attempt_at, created_at)
                   VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)`);
    for (const h of hooks) put.run(newId("dlv", { now: () => now }, cryptoRandom), draft.id, h.id, draft.accountId, now, now);
  }

  /** Appends an entry after the chain's head, inside the caller's write transaction (the write lock orders appends). */
  function appendAuditIn(draft: AuditDraft, accountId: string | null): AuditEntry {
    const e = chainAuditEntry(draft, auditHeadFromRow(q("SELECT seq, hash FROM audit_head WHERE id = 1").get() as Row), accountId);
    q(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(...auditRowValues(e));
    q("UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1").run(e.seq, e.hash);
    return e;
  }
  const auditTx = db.transaction((fn: () => unknown): unknown => fn());
  /** Whether a recover call re-queued (so is audited): a refusal, an unknown or a disabled webhook changed nothing. */
  const recovered = (r: RecoverOutcome | "disabled" | null): boolean => r !== null && r !== "disabled" && r.kind === "recovered";

  /**
   * Runs an action (its own transaction becomes a savepoint) and appends its entry in ONE write transaction, when
   * `changed` says the action changed something: true (the draft's account), an account id (the draft left it null), or false.
   */
  function withAudit<R>(draft: AuditDraft | undefined, run: () => R, changed: (r: R) => boolean | string): R {
    if (draft === undefined) return run();
    return auditTx.immediate(() => {
      const r = run();
      const c = changed(r);
      if (c !== false) appendAuditIn(draft, typeof c === "string" ? c : draft.accountId);
      return r;
    }) as R;
  }
  const appendAuditTx = immediate((draft: AuditDraft): AuditEntry => appendAuditIn(draft, draft.accountId));
  /** Whether the key exists and is not yet revoked (read inside the revocation's transaction). */
  const revocable = (accountId: string, keyId: string): boolean =>
    (q("SELECT revoked_at IS NULL AS open FROM api_keys WHERE id = ? AND account_id = ?").get(keyId, accountId) as { open: number } | undefined)?.open === 1;

  function deliveryRecord(r: Row): DeliveryRecord {
    return deliveryFromRow(r, q("SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY seq").all(r.id) as Row[]);
  }

  const DELIVERY_SELECT = "SELECT d.*, e.type AS event_type FROM deliveries d JOIN events e ON e.id = d.event_id";

  function quotaRow(accountId: string, periodStart: number): Row | undefined {
    return q("SELECT * FROM quota_periods WHERE account_id = ? AND period_start = ?").get(accountId, periodStart) as Row | undefined;
  }

  function writeQuota(accountId: string, periodStart: number, periodEnd: number, s: QuotaState): void {
    q(`INSERT INTO quota_periods (account_id, period_start, period_end, used, blocks, exhausted, pending_block, charge_attempts, block_attempts, last_failure_at, held_at)
       VALUES (@account_id, @period_start, @period_end, @used, @blocks, @exhausted, @pending_block, @charge_attempts, @block_attempts, @last_failure_at, @held_at)
       ON CONFLICT (account_id, period_start) DO UPDATE SET
         used = excluded.used, blocks = excluded.blocks, exhausted = excluded.exhausted, pending_block = excluded.pending_block,
         charge_attempts = excluded.charge_attempts, block_attempts = excluded.block_attempts, last_failure_at = excluded.last_failure_at,
         held_at = excluded.held_at`).run({
      account_id: accountId,
      period_start: periodStart,
      period_end: periodEnd,
      used: s.used,
      blocks: s.blocks,
      exhausted: s.exhausted ? 1 : 0,
      pending_block: s.pendingBlock,
      charge_attempts: s.chargeAttempts,
      block_attempts: s.blockAttempts,
      last_failure_at: s.lastFailureAt,
      held_at: s.heldAt,
    });
  }

  /** The period's quota as stored, undefined when the period has no row yet (core's `AdmissionState.quota`). */
  function storedQuota(accountId: string, periodStart: number): StoredQuota | undefined {
    const row = quotaRow(accountId, periodStart);
    return row === undefined ? undefined : { state: quotaFromRow(row), periodEnd: num(row.period_end) };
  }

  /** The period's stored quota (or a fresh one, with the period's end as it is now). */
  function periodQuota(accountId: string, now: number, anchorDay: number): { state: QuotaState; start: number; end: number } {
    const period = billingPeriod(now, anchorDay);
    const row = quotaRow(accountId, period.start);
    return { state: quotaFromRow(row), start: period.start, end: row ? num(row.period_end) : period.end };
  }

  function insertInvoice(r: InvoiceRecord): void {
    q(`INSERT INTO invoices (id, account_id, period_start, period_end, block, attempt, amount, currency, status, idempotency_key, processor_ref, calls_used, created_at, resolved_at, failure_reason)
       VALUES (@id, @accountId, @periodStart, @periodEnd, @block, @attempt, @amount, @currency, @status, @idempotencyKey, @processorRef, @callsUsed, @createdAt, @resolvedAt, @failureReason)`).run(r);
  }

  // Admissions remember the rows they wrote while nothing else writes the database (admission-memo.ts).
  const memo = admissionMemo(options.admissionMemoSize ?? ADMISSION_MEMO_SIZE);
  const readMark = (): DatabaseMark => {
    const r = q("SELECT (SELECT data_version FROM pragma_data_version) AS v, total_changes() AS t").get() as { v: number; t: number };
    return { dataVersion: r.v, totalChanges: r.t };
  };

  /** Whether a remembered lookup still names this active, unretired key of this account at this version. */
  function expectationHolds(input: AdmitInput, expect: NonNullable<AdmitInput["expect"]>): boolean {
    const known = memo.expectations.get(expect.keyHash);
    if (known !== undefined && known.keyId === input.keyId && known.accountId === input.accountId && known.version === expect.version) return true;
    const holds = q(`SELECT EXISTS (SELECT 1 FROM key_hashes h JOIN api_keys k ON k.id = h.key_id JOIN accounts a ON a.id = k.account_id
                                    WHERE h.hash = ? AND h.retired = 0 AND k.id = ? AND k.is_active = 1 AND k.account_id = ? AND a.version = ?) AS holds`).get(
      expect.keyHash,
      input.keyId,
      input.accountId,
      expect.version,
    ) as { holds: number };
    if (holds.holds !== 1) return false;
    memo.expectations.set(expect.keyHash, { keyId: input.keyId, accountId: input.accountId, version: expect.version });
    return true;
  }

  const chunkSize = Math.max(1, Math.floor(options.windowChunkSize ?? WINDOW_CHUNK_SIZE));
  /** The rows of the keys' chunked admission logs (window-chunks.ts). */
  const chunkRows: ChunkRows = {
    readKey: (keyId) => q("SELECT head, next, stamps FROM rate_windows WHERE key_id = ?").get(keyId) as { head: number | null; next: number | null; stamps: Uint8Array } | undefined,
    readChunk: (keyId, chunk) => (q("SELECT stamps FROM window_chunks WHERE key_id = ? AND chunk = ?").get(keyId, chunk) as { stamps: Uint8Array } | undefined)?.stamps,
    writeChunk: (keyId, chunk, stamps) => void q("INSERT INTO window_chunks (key_id, chunk, stamps) VALUES (?, ?, ?) ON CONFLICT (key_id, chunk) DO UPDATE SET stamps = excluded.stamps").run(keyId, chunk, stamps),
    deleteChunksBelow: (keyId, chunk) => void q("DELETE FROM window_chunks WHERE key_id = ? AND chunk < ?").run(keyId, chunk),
    writeKey: (keyId, head, next) =>
      void q("INSERT INTO rate_windows (key_id, stamps, head, next) VALUES (?, X'', ?, ?) ON CONFLICT (key_id) DO UPDATE SET stamps = X'', head = excluded.head, next = excluded.next").run(keyId, head, next),
  };

  /** The key's admission log as stored (remembered, or read); the batch's own changes first (see `dirtyDays`). */
  function windowOf(keyId: string, dirtyWindows: Map<string, ChunkedWindow>): ChunkedWindow {
    let w = dirtyWindows.get(keyId) ?? memo.windows.get(keyId);
    if (w === undefined) memo.windows.set(keyId, (w = ChunkedWindow.load(chunkRows, keyId, chunkSize)));
    return w;
  }

  /** The account's day counter as stored (remembered, or read). */
  function dayOf(accountId: string, now: number): DayCount {
    let counter = memo.days.get(accountId);
    if (counter === undefined) {
      const d = q("SELECT day, count FROM day_counters WHERE account_id = ?").get(accountId) as { day: number; count: number } | undefined;
      memo.days.set(accountId, (counter = { day: d?.day ?? utcDay(now), count: d?.count ?? 0 }));
    }
    return counter;
  }

  /**
   * One admission, inside the batch's write transaction. Quotas are written per admission, windows and day
   * counters once at the end of the batch (`dirtyWindows`, `dirtyDays`); a key or account that comes twice in a
   * batch sees its own earlier admission.
   */
  function admitIn(input: AdmitInput, dirtyDays: Map<string, DayCount>, dirtyWindows: Map<string, ChunkedWindow>): AdmitResult {
    const now = timeOf(input.now);
    if (input.expect !== undefined && !expectationHolds(input, input.expect)) return { kind: "stale", now };
    const window = windowOf(input.keyId, dirtyWindows);
    // The batch's own counter first: it holds this batch's increments, which reach the table (and could be
    // missing from a memo that dropped the account mid-batch) only at the batch's end.
    // Each environment has its own day counter (`<account>/test` for test keys).
    const dayId = dayCounterId(input.accountId, input.environment);
    const counter = dirtyDays.get(dayId) ?? dayOf(dayId, now);
    const decided = admission(input, window, counter, storedQuota, now);
    const w = decided.writes;
    if (w === null) return decided.result;
    recordAdmission(window, w.first, now);
    dirtyWindows.set(input.keyId, window);
    counter.day = w.day;
    counter.count = w.count;
    dirtyDays.set(dayId, counter);
    if (w.quota !== null) writeQuota(input.accountId, w.periodStart, w.periodEnd, w.quota);
    if (w.invoice !== null) insertInvoice(w.invoice);
    for (const e of w.events) insertEvent(e, now);
    return decided.result;
  }

  // Admissions made close together share one write transaction, one BEGIN IMMEDIATE … COMMIT (batcher.ts):
  // the lock, the commit and the WAL frames of the rows they touch are paid once per batch, not per request.
  const admitTx = immediate((inputs: readonly AdmitInput[]): AdmitResult[] => {
    memo.begin(readMark());
    const dirtyDays = new Map<string, DayCount>();
    const dirtyWindows = new Map<string, ChunkedWindow>();
    const results = inputs.map((input) => admitIn(input, dirtyDays, dirtyWindows));
    for (const [keyId, w] of dirtyWindows) {
      w.flush();
      memo.windows.set(keyId, w);
    }
    // Within a day only the count changes, and an UPDATE that sets only `count` leaves the `(day, account_id)`
    // index and the `UPDATE OF day` trigger alone; setting `day` to its own value would rewrite both, an extra
    // B-tree page in every batch's WAL. The upsert runs for a new counter or a new day.
    const bump = q("UPDATE day_counters SET count = ? WHERE account_id = ? AND day = ?");
    const put = q("INSERT INTO day_counters (account_id, day, count) VALUES (?, ?, ?) ON CONFLICT (account_id) DO UPDATE SET day = excluded.day, count = excluded.count");
    for (const [accountId, d] of dirtyDays) if (bump.run(d.count, accountId, d.day).changes === 0) put.run(accountId, d.day, d.count);
    memo.end(readMark());
    return results;
  });
  const admitAll = (inputs: readonly AdmitInput[]): AdmitResult[] => {
    try {
      return admitTx(inputs);
    } catch (e) {
      // Rolled back: what the batch remembered was never stored.
      memo.forget();
      throw e;
    }
  };
  const admitBatch = batcher(
    (inputs: readonly AdmitInput[]): (AdmitResult | Error)[] => {
      try {
        return admitAll(inputs);
      } catch (e) {
        // The batch was rolled back whole. Losing the database fails every admission; any other error is
        // one admission's: run them one by one, each in its own transaction, so only that one fails.
        if (isSqliteUnavailable(e) || inputs.length === 1) throw e;
        return inputs.map((input) => {
          try {
            return admitAll([input])[0]!;
          } catch (one) {
            if (isSqliteUnavailable(one)) throw one;
            return one instanceof Error ? one : new Error(String(one));
          }
        });
      }
    },
    { maxBatch: 512, concurrency: 1 },
  );

  /** The key's window and the account's day as they stand (core's memory store reads them the same way); writes nothing. */
  const peekLimitsTx = db.transaction((input: { now: number; keyId: string; accountId: string; perMinute: number; perDay: number; windowMs: number; environment?: "live" | "test" }): { now: number; minute: WindowInfo; day: WindowInfo } => {
    const now = timeOf(input.now);
    const d = q("SELECT day, count FROM day_counters WHERE account_id = ?").get(dayCounterId(input.accountId, input.environment)) as { day: number; count: number } | undefined;
    return admissionPeek(input, ChunkedWindow.load(chunkRows, input.keyId, chunkSize), d, now);
  });

  /** Whether the account is an erased one's tombstone (read inside the caller's transaction). */
  const isDeleted = (accountId: string): boolean => (q("SELECT status FROM accounts WHERE id = ?").get(accountId) as Row | undefined)?.status === "deleted";

  const createKeyTx = immediate((key: ApiKeyRecord, hash: string, maxKeys: number, eventId: string): "created" | "limit" | "deleted" => {
    if (isDeleted(key.accountId)) return "deleted";
    const { n } = q("SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL").get(key.accountId) as { n: number };
    if (n >= maxKeys) return "limit";
    q(`INSERT INTO api_keys (id, account_id, name, environment, scopes, prefix, is_active, created_at, rotated_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(key.id, key.accountId, key.name, key.environment, JSON.stringify(key.scopes), key.prefix, key.isActive ? 1 : 0, key.createdAt, key.rotatedAt, key.revokedAt);
    q("INSERT INTO key_hashes (hash, key_id, retired) VALUES (?, ?, 0) ON CONFLICT (hash) DO UPDATE SET key_id = excluded.key_id, retired = 0").run(hash, key.id);
    insertEvent(keyCreatedEvent(eventId, key), key.createdAt);
    return "created";
  });

  const updateAccountTx = immediate((accountId: string, patch: Parameters<Storage["updateAccount"]>[1]): AccountRecord | null => {
    const r = q(`UPDATE accounts SET tier = coalesce(@tier, tier), limits = coalesce(@limits, limits),
                   allowed_cidrs = coalesce(@cidrs, allowed_cidrs), console_ip_exempt = coalesce(@exempt, console_ip_exempt),
                   billing = coalesce(@billing, billing)
                 WHERE id = @id AND status <> 'deleted' RETURNING *`).get({
      id: accountId,
      tier: patch.tier ?? null,
      limits: patch.limits !== undefined ? JSON.stringify(patch.limits) : null,
      cidrs: patch.allowedCidrs !== undefined ? JSON.stringify(patch.allowedCidrs) : null,
      exempt: patch.consoleIpExempt === undefined ? null : patch.consoleIpExempt ? 1 : 0,
      billing: patch.billing !== undefined ? JSON.stringify(patch.billing) : null,
    }) as Row | undefined;
    if (!r) return null;
    const drop = patch.dropScopes;
    if (drop !== undefined && drop.length > 0) {
      for (const k of q("SELECT id, scopes FROM api_keys WHERE account_id = ?").all(accountId) as { id: string; scopes: string }[]) {
        const scopes = JSON.parse(k.scopes) as string[];
        const kept = scopes.filter((sc) => !(drop as readonly string[]).includes(sc));
        if (kept.length < scopes.length) q("UPDATE api_keys SET scopes = ? WHERE id = ?").run(JSON.stringify(kept), k.id);
      }
    }
    return accountFromRow(r);
  });

  const setAccountStatusTx = immediate((input: Parameters<Storage["setAccountStatus"]>[0]): { account: AccountRecord; changed: boolean } | null => {
    const { accountId, status, now, eventId } = input;
    const before = q("SELECT * FROM accounts WHERE id = ? AND status <> 'deleted'").get(accountId) as Row | undefined;
    if (!before) return null;
    if ((before.status === "suspended" ? "suspended" : "active") === status) return { account: accountFromRow(before), changed: false };
    // The version trigger moves the account's version with its status: remembered lookups are stale at once.
    const suspending = status === "suspended";
    const after = q("UPDATE accounts SET status = ?, suspended_at = ?, suspended_reason = ? WHERE id = ? RETURNING *").get(
      status,
      suspending ? now : null,
      suspending ? (input.reason ?? null) : null,
      accountId,
    ) as Row;
    if (suspending) insertEvent(accountSuspendedEvent(eventId, accountId, now), now);
    else {
      const since = numOrNull(before.suspended_at) ?? now;
      // core's failingSinceAfterPause: the suspension does not count toward disabling a failing webhook.
      q("UPDATE webhooks SET failing_since = min(failing_since + max(0, ? - ?), ?) WHERE account_id = ? AND failing_since IS NOT NULL").run(now, since, now, accountId);
      insertEvent(accountResumedEvent(eventId, accountId, since, now), now);
    }
    return { account: accountFromRow(after), changed: true };
  });

  const rotateKeyTx = immediate((accountId: string, keyId: string, newHash: string, newPrefix: string, now: number, eventId: string, scopes: string | null): ApiKeyRecord | null => {
    const row = q("UPDATE api_keys SET prefix = ?, rotated_at = ?, scopes = coalesce(?, scopes) WHERE id = ? AND account_id = ? AND is_active = 1 RETURNING *").get(newPrefix, now, scopes, keyId, accountId) as
      | Row
      | undefined;
    if (!row) return null;
    q("UPDATE key_hashes SET retired = 1 WHERE key_id = ? AND retired = 0").run(keyId);
    q("INSERT INTO key_hashes (hash, key_id, retired) VALUES (?, ?, 0) ON CONFLICT (hash) DO UPDATE SET key_id = excluded.key_id, retired = 0").run(newHash, keyId);
    const next = keyFromRow(row);
    insertEvent(keyRotatedEvent(eventId, next, now), now);
    return next;
  });

  const revokeKeyTx = immediate((accountId: string, keyId: string, now: number, eventId: string): ApiKeyRecord | null => {
    const row = q("SELECT * FROM api_keys WHERE id = ? AND account_id = ?").get(keyId, accountId) as Row | undefined;
    if (!row) return null;
    if (row.revoked_at !== null) return keyFromRow(row);
    const next = keyFromRow(q("UPDATE api_keys SET is_active = 0, revoked_at = ? WHERE id = ? RETURNING *").get(now, keyId) as Row);
    insertEvent(keyRevokedEvent(eventId, next, now), now);
    return next;
  });

  const createWebhookTx = immediate((w: WebhookRecord, maxWebhooks: number): "created" | "limit" | "deleted" => {
    if (isDeleted(w.accountId)) return "deleted";
    const { n } = q("SELECT count(*) AS n FROM webhooks WHERE account_id = ?").get(w.accountId) as { n: number };
    if (n >= maxWebhooks) return "limit";
    q("INSERT INTO webhooks (id, account_id, url, events, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)").run(w.id, w.accountId, w.url, JSON.stringify(w.events), w.secret, w.createdAt);
    return "created";
  });

  const deleteWebhookTx = immediate((accountId: string, webhookId: string, ifSecret: string | undefined): boolean => {
    const gone =
      ifSecret === undefined
        ? q("DELETE FROM webhooks WHERE id = ? AND account_id = ?").run(webhookId, accountId).changes > 0
        : q("DELETE FROM webhooks WHERE id = ? AND account_id = ? AND secret = ?").run(webhookId, accountId, ifSecret).changes > 0;
    if (gone) q("UPDATE deliveries SET status = 'dead', next_attempt_at = NULL WHERE webhook_id = ? AND status = 'pending'").run(webhookId);
    return gone;
  });

  const emitEventTx = immediate((event: EventDraft, now: number) => insertEvent(event, now));

  const endSessionsTx = immediate((accountId: string): number => {
    q("DELETE FROM sign_in_links WHERE account_id = ?").run(accountId);
    return q("DELETE FROM sessions WHERE account_id = ?").run(accountId).changes;
  });

  // DELETE … RETURNING consumes the link once: a second redemption finds nothing.
  const redeemLinkTx = immediate((input: { linkHash: string; now: number; session: { tokenHash: string; createdAt: number; expiresAt: number } }): string | null => {
    const r = q("DELETE FROM sign_in_links WHERE token_hash = ? RETURNING account_id, expires_at").get(input.linkHash) as Row | undefined;
    if (!r || Number(r.expires_at) <= input.now) return null;
    const accountId = String(r.account_id);
    q("INSERT INTO sessions (token_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)").run(input.session.tokenHash, accountId, input.session.createdAt, input.session.expiresAt);
    return accountId;
  });

  const claimDeliveriesTx = immediate((now: number, leaseMs: number, limit: number, perWebhook: number, ordered: boolean): ClaimedDelivery[] => {
    const picked: Row[] = [];
    if (ordered) {
      // Only a webhook's head (its earliest pending delivery) may go, and only while none of the webhook's is in
      // flight (an earlier one can turn pending behind a later one's lease: a retry, a recover). The heads come by
      // two seeks per webhook in the partial index on (webhook_id, seq), and only a due, free head has its webhook's
      // leases looked at: the deliveries queued behind a head that waits for its retry are never read. This
      // transaction is IMMEDIATE: no other process claims in between.
      const leasedOf = q("SELECT 1 FROM deliveries WHERE webhook_id = ? AND status = 'pending' AND lease_token IS NOT NULL AND lease_until > ? LIMIT 1");
      // (All the due heads first, at most one per webhook: no statement runs while another is being iterated.)
      for (const r of q(SQLITE_CLAIM_HEADS).all({ now }) as Row[]) {
        if (picked.length >= limit) break;
        if (leasedOf.get(r.webhook_id, now) === undefined) picked.push(r);
      }
    } else {
      const inflight = new Map<string, number>();
      for (const r of q("SELECT webhook_id, count(*) AS n FROM deliveries WHERE status = 'pending' AND lease_token IS NOT NULL AND lease_until > ? GROUP BY webhook_id").all(now) as Row[]) {
        inflight.set(String(r.webhook_id), num(r.n));
      }
      for (const r of q(CLAIM_DUE).iterate({ now }) as IterableIterator<Row>) {
        if (picked.length >= limit) break;
        const wh = String(r.webhook_id);
        const n = inflight.get(wh) ?? 0;
        if (n >= perWebhook) continue;
        inflight.set(wh, n + 1);
        picked.push(r);
      }
    }
    const lease = q("UPDATE deliveries SET lease_token = ?, lease_until = ? WHERE id = ?");
    return picked.map((r) => {
      const token = randomUUID();
      lease.run(token, now + leaseMs, r.id);
      return {
        deliveryId: String(r.id),
        eventId: String(r.event_id),
        eventType: r.type as EventType,
        body: String(r.body),
        eventCreatedAt: num(r.event_created_at),
        webhookId: String(r.webhook_id),
        accountId: String(r.account_id),
        url: String(r.url),
        secret: String(r.secret),
        previousSecret: r.previous_secret == null ? null : String(r.previous_secret),
        previousSecretUntil: r.previous_secret_until == null ? null : num(r.previous_secret_until),
        attempt: num(r.attempts) + 1,
        leaseToken: token,
      };
    });
  });

  const completeDeliveryTx = immediate((
    deliveryId: string,
    token: string,
    attempt: AttemptRecord,
    next: { status: "succeeded" } | { status: "dead" } | { status: "pending"; at: number },
    gone: boolean,
    health: WebhookHealthPolicy | undefined,
  ): boolean => {
    const status = gone ? "dead" : next.status;
    const deadReason = status === "dead" ? (gone ? "gone" : "attempts_exhausted") : null;
    const done = q(`UPDATE deliveries SET attempts = ?, lease_token = NULL, lease_until = 0, status = ?, next_attempt_at = ?, dead_reason = ?
                    WHERE id = ? AND lease_token = ? AND status = 'pending' RETURNING webhook_id`).get(
      attempt.attempt,
      status,
      next.status === "pending" && !gone ? next.at : null,
      deadReason,
      deliveryId,
      token,
    ) as Row | undefined;
    if (!done) return false;
    if (health) {
      // The webhook's failure history and, as core's webhookHealthAfter decides, its disabling, in this transaction.
      const w = q("SELECT id, account_id, url, status, failing_since, dead_streak FROM webhooks WHERE id = ?").get(done.webhook_id) as Row | undefined;
      if (w && w.status === "active") {
        const h = webhookHealthAfter({ failingSince: numOrNull(w.failing_since), deadStreak: num(w.dead_streak) }, { succeeded: status === "succeeded", dead: status === "dead", gone, at: attempt.at }, health);
        if (h.failingSince !== numOrNull(w.failing_since) || h.deadStreak !== num(w.dead_streak)) {
          q("UPDATE webhooks SET failing_since = ?, dead_streak = ? WHERE id = ?").run(h.failingSince, h.deadStreak, w.id);
        }
        if (h.disable !== null) {
          q("UPDATE webhooks SET status = 'disabled', disabled_reason = ?, disabled_at = ? WHERE id = ?").run(h.disable, attempt.at, w.id);
          q("UPDATE deliveries SET status = 'dead', next_attempt_at = NULL, dead_reason = 'webhook_disabled' WHERE webhook_id = ? AND status = 'pending'").run(w.id);
          insertEvent(webhookDisabledEvent(health.eventId, String(w.account_id), attempt.at, { webhookId: String(w.id), url: String(w.url), reason: h.disable }), attempt.at);
        }
      }
    }
    q("INSERT INTO delivery_attempts (delivery_id, attempt, at, status_code, latency_ms, error, response_body) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
      deliveryId,
      attempt.attempt,
      attempt.at,
      attempt.statusCode,
      attempt.latencyMs,
      attempt.error,
      attempt.responseBody,
    );
    return true;
  });

  const listDeliveriesTx = db.transaction((accountId: string, webhookId: string, limit: number): DeliveryRecord[] =>
    (q(`${DELIVERY_SELECT} WHERE d.account_id = ? AND d.webhook_id = ? ORDER BY d.created_at DESC, d.seq DESC LIMIT ?`).all(accountId, webhookId, limit) as Row[]).map(deliveryRecord),
  );

  const retryDeliveryTx = immediate((accountId: string, webhookId: string, deliveryId: string, now: number): DeliveryRecord | null => {
    const exists = q("SELECT 1 FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ? AND d.account_id = ? AND d.webhook_id = ?").get(deliveryId, accountId, webhookId);
    if (!exists) return null;
    // A delivery a worker holds under a live lease is left to it; anything else is due again now.
    q(`UPDATE deliveries SET status = 'pending', next_attempt_at = @now, lease_token = NULL, lease_until = 0, dead_reason = NULL
       WHERE id = @id AND NOT (status = 'pending' AND lease_token IS NOT NULL AND lease_until > @now)`).run({ id: deliveryId, now });
    return deliveryRecord(q(`${DELIVERY_SELECT} WHERE d.id = ?`).get(deliveryId) as Row);
  });

  const recoverDeliveriesTx = immediate((accountId: string, webhookId: string, since: number, now: number, policy: RecoverPolicy): RecoverOutcome | "disabled" | null => {
    const w = q("SELECT status FROM webhooks WHERE id = ? AND account_id = ?").get(webhookId, accountId) as Row | undefined;
    if (!w) return null;
    if (w.status !== "active") return "disabled";
    // The account's budget, decided by core's recoverStep inside this IMMEDIATE transaction (no other writer between).
    const b = q("SELECT window_start, calls, requeued FROM recover_budgets WHERE account_id = ?").get(accountId) as Row | undefined;
    const step = recoverStep(b ? { windowStart: num(b.window_start), calls: num(b.calls), requeued: num(b.requeued) } : null, now, policy);
    if (step.kind === "refused") return step;
    // The dead, and the pending waiting after a failed attempt (a live lease is left to its worker), oldest first.
    const recoverable = `webhook_id = @webhookId AND created_at >= @since
      AND (status = 'dead' OR (status = 'pending' AND attempts > 0 AND next_attempt_at > @now AND NOT (lease_token IS NOT NULL AND lease_until > @now)))`;
    const recovered = q(`UPDATE deliveries SET status = 'pending', next_attempt_at = @now, lease_token = NULL, lease_until = 0, dead_reason = NULL
                         WHERE id IN (SELECT id FROM deliveries WHERE ${recoverable} ORDER BY created_at, seq LIMIT @limit)`).run({ webhookId, since, now, limit: step.limit }).changes;
    const hasMore = q(`SELECT 1 FROM deliveries WHERE ${recoverable} LIMIT 1`).get({ webhookId, since, now }) !== undefined;
    const next = afterRecover(step, recovered);
    q(`INSERT INTO recover_budgets (account_id, window_start, calls, requeued) VALUES (?, ?, ?, ?)
       ON CONFLICT (account_id) DO UPDATE SET window_start = excluded.window_start, calls = excluded.calls, requeued = excluded.requeued`).run(accountId, next.windowStart, next.calls, next.requeued);
    return { kind: "recovered", recovered, hasMore };
  });

  const claimChargesTx = immediate((now: number, leaseMs: number, limit: number): ClaimedCharge[] => {
    // A suspended account's charges wait (pending) until it is resumed.
    const rows = q(`SELECT i.* FROM invoices i JOIN accounts a ON a.id = i.account_id AND a.status = 'active'
                    WHERE i.status = 'pending' AND NOT (i.lease_token IS NOT NULL AND i.lease_until > ?)
                    ORDER BY i.created_at, i.id LIMIT ?`).all(now, limit) as Row[];
    const out: ClaimedCharge[] = [];
    for (const r of rows) {
      const acc = q("SELECT * FROM accounts WHERE id = ?").get(r.account_id) as Row | undefined;
      if (!acc) continue;
      const token = randomUUID();
      q("UPDATE invoices SET lease_token = ?, lease_until = ? WHERE id = ?").run(token, now + leaseMs, r.id);
      out.push({ invoice: invoiceFromRow(r), account: accountFromRow(acc), leaseToken: token });
    }
    return out;
  });

  const settleChargeTx = immediate((invoiceId: string, token: string, outcome: ChargeOutcome, eventIds: { exhausted: string; result: string }): boolean => {
    const failure = outcome.status === "failed" ? outcome.reason : null;
    const row = q(`UPDATE invoices SET status = ?, processor_ref = ?, resolved_at = ?, failure_reason = ?, lease_token = NULL
                   WHERE id = ? AND lease_token = ? AND status = 'pending' RETURNING *`).get(outcome.status, outcome.processorRef, outcome.at, failure, invoiceId, token) as Row | undefined;
    if (!row) return false;
    const inv = invoiceFromRow(row);
    // An account erased while its charge was in flight: the invoice records what the processor did, nothing more
    // (not the decline reason: it describes the customer's finances, which the erasure removed).
    if (isDeleted(inv.accountId)) {
      if (failure !== null) q("UPDATE invoices SET failure_reason = NULL WHERE id = ?").run(invoiceId);
      return true;
    }
    const start = Date.parse(inv.periodStart);
    const qr = quotaRow(inv.accountId, start);
    if (qr) {
      const s = quotaFromRow(qr);
      const next = outcome.status === "paid" ? quotaChargeSucceeded(s, inv.block) : quotaChargeFailed(s, inv.block, outcome.at);
      writeQuota(inv.accountId, start, num(qr.period_end), next);
    }
    if (inv.attempt === 1) insertEvent(quotaExhaustedEvent(eventIds.exhausted, inv, outcome.processorRef, outcome.at), outcome.at);
    insertEvent(
      outcome.status === "paid"
        ? invoicePaidEvent(eventIds.result, inv, outcome.processorRef, outcome.at)
        : invoiceFailedEvent(eventIds.result, inv, outcome.processorRef, outcome.reason, outcome.at),
      outcome.at,
    );
    return true;
  });

  const requestChargeTx = immediate((input: Parameters<SqlStorage["requestCharge"]>[0]): InvoiceRecord | null => {
    const now = timeOf(input.now);
    const { state, start, end } = periodQuota(input.accountId, now, input.anchorDay);
    const step = quotaManualCharge(input, state);
    if (step === null) return null;
    writeQuota(input.accountId, start, end, step.state);
    const record = pendingInvoice({ id: input.invoiceId, accountId: input.accountId, periodStart: start, periodEnd: end, charge: step.charge, currency: input.currency, callsUsed: step.state.used, now });
    insertInvoice(record);
    return record;
  });

  const releaseChargeHoldTx = immediate((accountId: string, nowIn: number, anchorDay: number): boolean => {
    const start = billingPeriod(timeOf(nowIn), anchorDay).start;
    const row = quotaRow(accountId, start);
    if (!row) return false;
    writeQuota(accountId, start, num(row.period_end), quotaReleaseHold(quotaFromRow(row)));
    return true;
  });

  const usageTx = db.transaction((accountId: string, nowIn: number, anchorDay: number, baseQuota: number, blockSize: number): UsageSnapshot => {
    const now = timeOf(nowIn);
    const dayCount = (id: string): number => {
      const d = q("SELECT day, count FROM day_counters WHERE account_id = ?").get(id) as { day: number; count: number } | undefined;
      return d && d.day === utcDay(now) ? d.count : 0;
    };
    const todayTest = dayCount(dayCounterId(accountId, "test"));
    const period = billingPeriod(now, anchorDay);
    const state = quotaFromRow(quotaRow(accountId, period.start));
    const { n } = q("SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND is_active = 1").get(accountId) as { n: number };
    return {
      today: dayCount(accountId) + todayTest,
      todayTest,
      month: state.used,
      allowance: baseQuota + state.blocks * blockSize,
      exhausted: state.exhausted,
      activeKeys: n,
      periodStart: period.start,
      periodEnd: period.end,
    };
  });

  const saveSnapshotTx = immediate((r: SnapshotRecord): SnapshotRecord | null | "deleted" => {
    if (isDeleted(r.accountId)) return "deleted";
    const old = q("DELETE FROM merchant_snapshots WHERE account_id = ? AND environment = ? AND merchant_id = ? AND period = ? RETURNING *").get(r.accountId, r.environment, r.merchantId, r.period) as
      | Row
      | undefined;
    q(`INSERT INTO merchant_snapshots (id, account_id, environment, merchant_id, category, segment, period, metrics, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(r.id, r.accountId, r.environment, r.merchantId, r.category, r.segment, r.period, JSON.stringify(r.metrics), r.createdAt);
    return old ? snapshotFromRow(old) : null;
  });

  /** Replaces cells in the current transaction (the caller holds the write lock). */
  function replaceCellsNow(prepared: readonly PreparedCell[], replace: readonly { category: Category; period: string }[]): { category: Category; period: string }[] {
    const del = q("DELETE FROM cells WHERE category = ? AND period = ?");
    const held: { category: Category; period: string }[] = [];
    for (const r of replace) if (del.run(r.category, r.period).changes > 0) held.push({ category: r.category, period: r.period });
    const put = q(`INSERT INTO cells (category, period, segment, metric, granularity, sample_size, sorted, businesses) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (category, period, segment, metric) DO UPDATE SET granularity = excluded.granularity, sample_size = excluded.sample_size, sorted = excluded.sorted, businesses = excluded.businesses`);
    for (const pc of prepared) {
      // A cell of an unparsable period is kept (as the memory store does) but never listed as a period.
      const g = parsePeriod(pc.period)?.granularity ?? "";
      put.run(pc.category, pc.period, pc.segment, pc.metric, g, pc.cell.sampleSize, encodeFloat64(pc.cell.sorted), pc.cell.businesses ? encodeUint32(pc.cell.businesses) : null);
    }
    q("UPDATE data_version SET version = version + 1 WHERE id = 1").run();
    return held;
  }
  const replaceCellsTx = immediate(replaceCellsNow);

  const benchmarks = cachedBenchmarks(
    {
      async dataVersion() {
        return num((q("SELECT version FROM data_version WHERE id = 1").get() as Row | undefined)?.version ?? 0);
      },
      async latestPeriod(category, segment, granularity) {
        const r = q("SELECT max(period) AS p FROM cells WHERE category = ? AND segment = ? AND granularity = ?").get(category, segment, granularity) as Row;
        return strOrNull(r.p);
      },
      async recentPeriods(category, segment, metric, granularity, count) {
        const rows = q("SELECT period FROM cells WHERE category = ? AND segment = ? AND granularity = ? AND metric = ? ORDER BY period DESC LIMIT ?").all(category, segment, granularity, metric, Math.max(0, count)) as Row[];
        return rows.map((r) => String(r.period)).reverse();
      },
      async cells(category, segment, period, metrics) {
        const rows = q("SELECT metric, sample_size, sorted, businesses FROM cells WHERE category = ? AND segment = ? AND period = ? AND metric IN (SELECT value FROM json_each(?))").all(category, segment, period, JSON.stringify(metrics)) as Row[];
        return rows.map((r) => ({ metric: String(r.metric), sampleSize: num(r.sample_size), sorted: r.sorted as Uint8Array, businesses: (r.businesses ?? null) as Uint8Array | null }));
      },
      async segments(category) {
        const rows = q("SELECT DISTINCT segment FROM cells WHERE category = ? AND segment <> 'all' ORDER BY segment").all(category) as Row[];
        return rows.map((r) => String(r.segment));
      },
    },
    options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS,
  );

  // Erasure: what stops at once, in one IMMEDIATE transaction (Storage.deleteAccount). The bounded parts of an
  // account (keys, sessions, webhooks, counters, invoices) go here; its history (deliveries, events, snapshots),
  // which can be large, goes in short steps (purgeAccountTx), so the write lock is never held for long. Both run
  // with secure_delete on (`zeroing`), and the last step truncates the WAL (`truncateWal`).
  const deleteAccountTx = immediate((accountId: string, now: number): { account: AccountRecord; erased: boolean } | null => {
    const row = q("SELECT * FROM accounts WHERE id = ?").get(accountId) as Row | undefined;
    if (!row) return null;
    if (row.status === "deleted") return { account: accountFromRow(row), erased: false };
    // Never before the account's last invoice (another process's clock may run ahead): the record stays in order.
    const last = q("SELECT max(max(created_at, coalesce(resolved_at, 0))) AS at FROM invoices WHERE account_id = ?").get(accountId) as { at: number | null };
    const at = Math.max(timeOf(now), last.at ?? 0);
    // The version trigger moves the account's version: every remembered lookup of its keys is stale at once.
    const tombstone = q(`UPDATE accounts SET name = '', limits = '{}', allowed_cidrs = '[]', billing = '{}', console_ip_exempt = 0,
                           status = 'deleted', suspended_at = NULL, suspended_reason = NULL, deleted_at = ?
                         WHERE id = ? RETURNING *`).get(at, accountId) as Row;
    const days = [accountId, dayCounterId(accountId, "test")];
    for (const table of ["key_hashes", "window_chunks", "rate_windows"]) {
      q(`DELETE FROM ${table} WHERE key_id IN (SELECT id FROM api_keys WHERE account_id = ?)`).run(accountId);
    }
    for (const table of ["api_keys", "sessions", "sign_in_links", "webhooks", "quota_periods", "recover_budgets"]) q(`DELETE FROM ${table} WHERE account_id = ?`).run(accountId);
    q("DELETE FROM day_counters WHERE account_id IN (?, ?)").run(...days);
    q("DELETE FROM usage_days WHERE account_id IN (?, ?)").run(...days);
    // Invoices stay for the legal record; a decline reason is the customer's, and a charge not yet in flight is never made.
    q("UPDATE invoices SET failure_reason = NULL WHERE account_id = ? AND status = 'failed'").run(accountId);
    q(`UPDATE invoices SET status = 'failed', failure_reason = 'account_deleted', resolved_at = @at, lease_token = NULL
       WHERE account_id = @accountId AND status = 'pending' AND NOT (lease_token IS NOT NULL AND lease_until > @now)`).run({ accountId, now, at });
    // Audit entries stay, without what identifies a person; the hash covers their digest, so the chain still verifies.
    q("UPDATE audit_log SET client_address = NULL, personal = NULL, salt = NULL, erased_at = ? WHERE account_id = ? AND erased_at IS NULL").run(at, accountId);
    // Unfinished until a purge finds nothing left: should this process die before, the pruning worker finds it.
    q("INSERT INTO unfinished_erasures (account_id) VALUES (?) ON CONFLICT (account_id) DO NOTHING").run(accountId);
    return { account: accountFromRow(tombstone), erased: true };
  });

  const keyUsage = sqliteKeyUsage(q, immediate);
  /** One short step of an erased account's history: some deliveries with their attempts, else events, else snapshots, else usage analytics. */
  const purgeAccountTx = immediate((accountId: string, limit: number): number => {
    if (!isDeleted(accountId)) return 0;
    const ids = (q("SELECT id FROM deliveries WHERE account_id = ? LIMIT ?").all(accountId, limit) as { id: string }[]).map((r) => r.id);
    if (ids.length > 0) {
      const list = JSON.stringify(ids);
      const attempts = q("DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT value FROM json_each(?))").run(list).changes;
      return attempts + q("DELETE FROM deliveries WHERE id IN (SELECT value FROM json_each(?))").run(list).changes;
    }
    const events = q("DELETE FROM events WHERE id IN (SELECT id FROM events WHERE account_id = ? LIMIT ?)").run(accountId, limit).changes;
    if (events > 0) return events;
    const snapshots = q("DELETE FROM merchant_snapshots WHERE id IN (SELECT id FROM merchant_snapshots WHERE account_id = ? LIMIT ?)").run(accountId, limit).changes;
    if (snapshots > 0) return snapshots;
    return keyUsage.purge(accountId, limit);
  });
  const forgetErasureTx = immediate((accountId: string): void => void q("DELETE FROM unfinished_erasures WHERE account_id = ?").run(accountId));

  /**
   * Runs an erasure's statements with this connection's secure_delete on, and restores it after: what they delete
   * or overwrite is then zeroed in the pages they change, instead of staying in free space, where the file and every
   * later copy of it would still hold it. Scoped to the erasure, whose extra writes only it pays for: the driver
   * runs `run` synchronously, so no other statement of this store runs on the connection meanwhile.
   */
  function zeroing<R>(run: () => R): R {
    const [{ secure_delete: before }] = db.pragma("secure_delete") as [{ secure_delete: number }];
    db.pragma("secure_delete = ON");
    try {
      return run();
    } finally {
      if (db.open) db.pragma(`secure_delete = ${before === 2 ? "FAST" : before === 1 ? "ON" : "OFF"}`);
    }
  }

  /**
   * Copies the whole WAL into the database file and truncates it (`wal_checkpoint(TRUNCATE)`), so the log keeps no
   * older image of a page an erasure zeroed. It never blocks readers; new writers wait while it runs, and it waits
   * for readers of an older snapshot (a backup's VACUUM INTO) at most CHECKPOINT_WAIT_MS before giving up. True
   * once the WAL is empty (or there is none: an in-memory database).
   */
  function truncateWal(): boolean {
    const [{ timeout }] = db.pragma("busy_timeout") as [{ timeout: number }];
    db.pragma(`busy_timeout = ${Math.min(timeout, CHECKPOINT_WAIT_MS)}`);
    try {
      const [r] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
      return r === undefined || r.busy === 0;
    } finally {
      if (db.open) db.pragma(`busy_timeout = ${timeout}`);
    }
  }

  const pruneTx = sqlitePrune(q, immediate);

  const storage: SqlStorage = {
    kind: "sqlite",
    async migrate() {
      await migrateSqlite(db, logger);
    },
    async close() {
      if (db.open) db.close();
    },
    async ping() {
      q("SELECT 1").get();
    },
    async gauges() {
      return { outboxDepth: num((q("SELECT count(*) AS n FROM deliveries WHERE status = 'pending'").get() as Row).n) };
    },

    async createAccount(a, draft) {
      try {
        withAudit(draft, () => q("INSERT INTO accounts (id, name, tier, created_at, limits, allowed_cidrs, console_ip_exempt, billing) VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(
          a.id,
          a.name,
          a.tier,
          a.createdAt,
          JSON.stringify(a.limits),
          JSON.stringify(a.allowedCidrs),
          a.consoleIpExempt === true ? 1 : 0,
          JSON.stringify(a.billing),
        ), () => true);
      } catch (e) {
        if ((e as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY") throw new Error(`account ${a.id} exists`);
        throw e;
      }
    },
    async getAccount(accountId) {
      const r = q("SELECT * FROM accounts WHERE id = ? AND status <> 'deleted'").get(accountId) as Row | undefined;
      return r ? accountFromRow(r) : null;
    },
    async updateAccount(accountId, patch, draft) {
      return withAudit(draft, () => updateAccountTx(accountId, patch), (r) => r !== null);
    },
    async setAccountStatus(input) {
      return withAudit(input.audit, () => setAccountStatusTx(input), (r) => r !== null && r.changed);
    },
    async createSession(s, draft) {
      // One statement, so it and an erasure (one IMMEDIATE transaction) come one wholly before the other.
      return withAudit(
        draft,
        () =>
          q(`INSERT INTO sessions (token_hash, account_id, created_at, expires_at) SELECT ?, id, ?, ? FROM accounts WHERE id = ? AND status <> 'deleted'
             ON CONFLICT (token_hash) DO UPDATE SET account_id = excluded.account_id, created_at = excluded.created_at, expires_at = excluded.expires_at`).run(
            s.tokenHash,
            s.createdAt,
            s.expiresAt,
            s.accountId,
          ).changes > 0,
        (stored) => stored,
      );
    },
    async findSession(tokenHash, now) {
      const r = q("SELECT account_id FROM sessions WHERE token_hash = ? AND expires_at > ?").get(tokenHash, now) as Row | undefined;
      return r ? String(r.account_id) : null;
    },
    async sessionExpiry(tokenHash, now) {
      const r = q("SELECT expires_at FROM sessions WHERE token_hash = ? AND expires_at > ?").get(tokenHash, now) as Row | undefined;
      return r ? Number(r.expires_at) : null;
    },
    async deleteSession(tokenHash, draft) {
      const ended = withAudit(
        draft,
        () => (q("DELETE FROM sessions WHERE token_hash = ? RETURNING account_id").get(tokenHash) as Row | undefined)?.account_id,
        (accountId) => (accountId === undefined ? false : (draft?.accountId ?? String(accountId))),
      );
      return ended !== undefined;
    },
    async deleteSessions(accountId, draft) {
      return withAudit(draft, () => endSessionsTx(accountId), () => true);
    },
    async createSignInLink(link, draft) {
      return withAudit(
        draft,
        () =>
          q("INSERT INTO sign_in_links (token_hash, account_id, created_at, expires_at) SELECT ?, id, ?, ? FROM accounts WHERE id = ? AND status <> 'deleted'").run(
            link.tokenHash,
            link.createdAt,
            link.expiresAt,
            link.accountId,
          ).changes > 0,
        (stored) => stored,
      );
    },
    async redeemSignInLink(input) {
      return withAudit(input.audit, () => redeemLinkTx(input), (accountId) => (accountId === null ? false : (input.audit?.accountId ?? accountId)));
    },
    async dailyUsage(accountId, fromDay, now) {
      // Both environments' counters (`<account>/test` is the test keys'), summed per day.
      const testDay = dayCounterId(accountId, "test");
      const rows = q(
        `SELECT day, sum(count) AS count FROM (
           SELECT day, count FROM usage_days WHERE account_id IN (?, ?) AND day >= ?
           UNION ALL SELECT day, count FROM day_counters WHERE account_id IN (?, ?) AND day <= ? AND day >= ? AND count > 0
         ) GROUP BY day ORDER BY day`,
      ).all(accountId, testDay, fromDay, accountId, testDay, utcDay(now), fromDay) as { day: number; count: number }[];
      return rows.map((r) => ({ day: Number(r.day), count: Number(r.count) }));
    },

    async createKey({ key, hash, maxKeys, eventId, audit }) {
      return withAudit(audit, () => createKeyTx(key, hash, maxKeys, eventId), (r) => r === "created");
    },
    async findKeyByHash(hash): Promise<KeyLookup | null> {
      // The hot-path lookup: one statement joining hash → key → account.
      const r = q(`SELECT h.retired,
                     k.id, k.account_id, k.name, k.environment, k.scopes, k.prefix, k.is_active, k.created_at, k.rotated_at, k.revoked_at,
                     a.id AS a_id, a.name AS a_name, a.tier AS a_tier, a.created_at AS a_created_at, a.limits AS a_limits,
                     a.allowed_cidrs AS a_allowed_cidrs, a.console_ip_exempt AS a_console_ip_exempt, a.billing AS a_billing, a.version AS a_version,
                     a.status AS a_status, a.suspended_at AS a_suspended_at, a.suspended_reason AS a_suspended_reason
                   FROM key_hashes h JOIN api_keys k ON k.id = h.key_id JOIN accounts a ON a.id = k.account_id
                   WHERE h.hash = ?`).get(hash) as Row | undefined;
      if (!r) return null;
      return {
        key: keyFromRow(r),
        account: lookupAccountFromRow(r),
        retired: r.retired === 1,
        version: num(r.a_version),
      };
    },
    async getKey(accountId, keyId) {
      const r = q("SELECT * FROM api_keys WHERE id = ? AND account_id = ?").get(keyId, accountId) as Row | undefined;
      return r ? keyFromRow(r) : null;
    },
    async listKeys(accountId) {
      return (q("SELECT * FROM api_keys WHERE account_id = ? ORDER BY id").all(accountId) as Row[]).map(keyFromRow);
    },
    async rotateKey({ accountId, keyId, newHash, newPrefix, now, eventId, scopes, audit }) {
      return withAudit(audit, () => rotateKeyTx(accountId, keyId, newHash, newPrefix, now, eventId, scopes === undefined ? null : JSON.stringify(scopes)), (r) => r !== null);
    },
    async revokeKey({ accountId, keyId, now, eventId, audit }) {
      let open = false;
      return withAudit(
        audit,
        () => {
          open = revocable(accountId, keyId);
          return revokeKeyTx(accountId, keyId, now, eventId);
        },
        (r) => r !== null && open,
      );
    },

    async admit(input) {
      return admitBatch(input);
    },
    async peekLimits(input) {
      return peekLimitsTx(input);
    },
    async usage(accountId, now, anchorDay, baseQuota, blockSize) {
      return usageTx(accountId, now, anchorDay, baseQuota, blockSize);
    },

    async createWebhook(webhook, maxWebhooks, draft) {
      return withAudit(draft, () => createWebhookTx(webhook, maxWebhooks), (r) => r === "created");
    },
    async listWebhooks(accountId) {
      return (q("SELECT * FROM webhooks WHERE account_id = ? ORDER BY id").all(accountId) as Row[]).map(webhookFromRow);
    },
    async getWebhook(accountId, webhookId) {
      const r = q("SELECT * FROM webhooks WHERE id = ? AND account_id = ?").get(webhookId, accountId) as Row | undefined;
      return r ? webhookFromRow(r) : null;
    },
    async listWebhookSecrets() {
      return (q("SELECT id, account_id, secret, previous_secret FROM webhooks ORDER BY id").all() as Row[]).flatMap((r) => [
        { webhookId: String(r.id), accountId: String(r.account_id), field: "current" as const, secret: String(r.secret) },
        ...(r.previous_secret == null ? [] : [{ webhookId: String(r.id), accountId: String(r.account_id), field: "previous" as const, secret: String(r.previous_secret) }]),
      ]);
    },
    async replaceWebhookSecret({ webhookId, field, from, to }) {
      if (field === "previous") return q("UPDATE webhooks SET previous_secret = ? WHERE id = ? AND previous_secret = ?").run(to, webhookId, from).changes > 0;
      return q("UPDATE webhooks SET secret = ? WHERE id = ? AND secret = ?").run(to, webhookId, from).changes > 0;
    },
    async rotateWebhookSecret({ accountId, webhookId, secret, previousUntil, audit }) {
      // One statement: the old value moves to previous_secret as the new one lands (SET reads the row as it was).
      const r = withAudit(
        audit,
        () =>
          q(`UPDATE webhooks SET previous_secret = secret, previous_secret_until = ?, secret = ?
             WHERE id = ? AND account_id = ? RETURNING *`).get(previousUntil, secret, webhookId, accountId) as Row | undefined,
        (row) => row !== undefined,
      );
      return r ? webhookFromRow(r) : null;
    },
    async endWebhookSecretOverlap({ accountId, webhookId, previous, audit }) {
      return withAudit(
        audit,
        () => q("UPDATE webhooks SET previous_secret = NULL, previous_secret_until = NULL WHERE id = ? AND account_id = ? AND previous_secret = ?").run(webhookId, accountId, previous).changes > 0,
        (r) => r,
      );
    },
    async deleteWebhook(accountId, webhookId, draft, ifSecret) {
      return withAudit(draft, () => deleteWebhookTx(accountId, webhookId, ifSecret), (r) => r);
    },
    async emitEvent(event, now) {
      emitEventTx(event, now);
    },
    async claimDeliveries({ now, leaseMs, limit, perWebhook, ordered = false }) {
      return claimDeliveriesTx(now, leaseMs, limit, perWebhook, ordered);
    },
    async completeDelivery({ deliveryId, leaseToken, attempt, next, gone = false, health }) {
      return completeDeliveryTx(deliveryId, leaseToken, attempt, next, gone, health);
    },
    async enableWebhook(accountId, webhookId, draft) {
      const r = withAudit(
        draft,
        () =>
          q(`UPDATE webhooks SET status = 'active', disabled_reason = NULL, disabled_at = NULL, failing_since = NULL, dead_streak = 0
             WHERE id = ? AND account_id = ? RETURNING *`).get(webhookId, accountId) as Row | undefined,
        (row) => row !== undefined,
      );
      return r ? webhookFromRow(r) : null;
    },
    async listDeliveries(accountId, webhookId, limit) {
      return listDeliveriesTx(accountId, webhookId, limit);
    },
    async retryDelivery(accountId, webhookId, deliveryId, now, draft) {
      return withAudit(draft, () => retryDeliveryTx(accountId, webhookId, deliveryId, now), (r) => r !== null);
    },
    async recoverDeliveries({ accountId, webhookId, since, now, policy, audit }) {
      return withAudit(audit, () => recoverDeliveriesTx(accountId, webhookId, since, now, policy), recovered);
    },

    async claimCharges({ now, leaseMs, limit }) {
      return claimChargesTx(now, leaseMs, limit);
    },
    async settleCharge({ invoiceId, leaseToken, outcome, eventIds }) {
      return settleChargeTx(invoiceId, leaseToken, outcome, eventIds);
    },
    async requestCharge(input) {
      return withAudit(input.audit, () => requestChargeTx(input), (r) => r !== null);
    },
    async releaseChargeHold({ accountId, now, anchorDay, audit }) {
      return withAudit(audit, () => releaseChargeHoldTx(accountId, now, anchorDay), (r) => r);
    },
    async listInvoices(accountId) {
      return (q("SELECT * FROM invoices WHERE account_id = ? ORDER BY created_at DESC, id DESC").all(accountId) as Row[]).map(invoiceFromRow);
    },

    async saveSnapshot(snapshot) {
      return saveSnapshotTx(snapshot);
    },
    async listSnapshots(accountId, environment, { merchantId, limit }) {
      const rows =
        merchantId === undefined
          ? q("SELECT * FROM merchant_snapshots WHERE account_id = ? AND environment = ? ORDER BY created_at DESC, id DESC LIMIT ?").all(accountId, environment, limit)
          : q("SELECT * FROM merchant_snapshots WHERE account_id = ? AND environment = ? AND merchant_id = ? ORDER BY created_at DESC, id DESC LIMIT ?").all(accountId, environment, merchantId, limit);
      return (rows as Row[]).map(snapshotFromRow);
    },
    async merchantSnapshots(accountId, environment, merchantId) {
      return (q("SELECT * FROM merchant_snapshots WHERE account_id = ? AND environment = ? AND merchant_id = ? ORDER BY period").all(accountId, environment, merchantId) as Row[]).map(snapshotFromRow);
    },
    async getSnapshot(accountId, environment, snapshotId) {
      const r = q("SELECT * FROM merchant_snapshots WHERE id = ? AND account_id = ? AND environment = ?").get(snapshotId, accountId, environment) as Row | undefined;
      return r ? snapshotFromRow(r) : null;
    },

    async listAccounts(query) {
      const rows = q(`SELECT * FROM accounts
                      WHERE CASE WHEN @status IS NULL THEN status <> 'deleted' ELSE status = @status END
                        AND (@tier IS NULL OR tier = @tier)
                        AND (@from IS NULL OR created_at >= @from) AND (@before IS NULL OR created_at < @before)
                        AND (created_at, id) > (@afterAt, @afterId)
                        AND (@text IS NULL OR instr(lower(name), @text) > 0 OR length(CAST(name AS BLOB)) <> length(name))
                      ORDER BY created_at, id`).iterate({
        status: query.status ?? null,
        tier: query.tier ?? null,
        from: query.createdFrom ?? null,
        before: query.createdBefore ?? null,
        afterAt: query.after?.createdAt ?? Number.MIN_SAFE_INTEGER,
        afterId: query.after?.id ?? "",
        text: query.nameContains?.toLowerCase() ?? null,
      }) as IterableIterator<Row>;
      // The name is matched with JavaScript's lowercasing. SQLite's lower() knows ASCII only, so the statement can
      // only rule out ASCII names (a name is ASCII when its UTF-8 bytes are as many as its characters); every other
      // name is checked here. Ruling them out in SQL is about 10x cheaper than reading each row into JavaScript
      // (docs/operations.md, "Finding accounts").
      const text = query.nameContains?.toLowerCase();
      const out: AccountRecord[] = [];
      for (const r of rows) {
        if (out.length >= query.limit) break;
        if (text === undefined || String(r.name).toLowerCase().includes(text)) out.push(accountFromRow(r));
      }
      return out;
    },
    async deleteAccount({ accountId, now, audit }) {
      return zeroing(() => withAudit(audit, () => deleteAccountTx(accountId, now), (r) => r !== null && r.erased));
    },
    async purgeAccount({ accountId, limit }) {
      const n = zeroing(() => purgeAccountTx(accountId, Math.max(1, Math.floor(limit))));
      if (n > 0 || q("SELECT 1 FROM unfinished_erasures WHERE account_id = ?").get(accountId) === undefined) return n;
      // Nothing left (and nothing can be made for a deleted account). The erasure is finished once the WAL holds no
      // older image of what it zeroed; while a reader keeps the checkpoint from finishing, it stays listed and the
      // pruning worker's next run checks again.
      if (truncateWal()) forgetErasureTx(accountId);
      return 0;
    },
    async unfinishedErasures({ after, limit, of }) {
      const rows = (
        of === undefined
          ? q("SELECT account_id FROM unfinished_erasures WHERE account_id > ? ORDER BY account_id LIMIT ?").all(after ?? "", Math.max(0, Math.floor(limit)))
          : q(`SELECT account_id FROM unfinished_erasures WHERE account_id IN (SELECT value FROM json_each(?)) AND account_id > ?
               ORDER BY account_id LIMIT ?`).all(JSON.stringify(of), after ?? "", Math.max(0, Math.floor(limit)))
      ) as Row[];
      return rows.map((r) => String(r.account_id));
    },
    async accountSessions(accountId) {
      const rows = q(`SELECT 'session' AS kind, created_at, expires_at FROM sessions WHERE account_id = ?
                      UNION ALL SELECT 'sign_in_link', created_at, expires_at FROM sign_in_links WHERE account_id = ?
                      ORDER BY created_at, kind`).all(accountId, accountId) as Row[];
      return rows.map((r) => ({ kind: r.kind as HeldSession["kind"], createdAt: num(r.created_at), expiresAt: num(r.expires_at) }));
    },
    async accountUsage(accountId) {
      const ids = [accountId, dayCounterId(accountId, "test")];
      const days = q(`SELECT day, account_id, count FROM usage_days WHERE account_id IN (?, ?)
                      UNION ALL SELECT day, account_id, count FROM day_counters WHERE account_id IN (?, ?) AND count > 0
                      ORDER BY day, account_id`).all(...ids, ...ids) as Row[];
      const periods = q("SELECT * FROM quota_periods WHERE account_id = ? ORDER BY period_start").all(accountId) as Row[];
      return {
        days: days.map((r) => ({ day: num(r.day), environment: r.account_id === accountId ? ("live" as const) : ("test" as const), count: num(r.count) })),
        periods: periods.map((r) => ({ periodStart: num(r.period_start), periodEnd: num(r.period_end), used: num(r.used), blocks: num(r.blocks), exhausted: r.exhausted === 1, heldAt: numOrNull(r.held_at) })),
      };
    },
    async accountDeliveries(accountId, page) {
      const rows = q(`${DELIVERY_SELECT} WHERE d.account_id = ? AND (d.created_at, d.id) > (?, ?) ORDER BY d.created_at, d.id LIMIT ?`).all(accountId, ...pageStart(page), page.limit) as Row[];
      return rows.map(deliveryRecord);
    },
    async accountEvents(accountId, page) {
      const rows = q("SELECT * FROM events WHERE account_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?").all(accountId, ...pageStart(page), page.limit) as Row[];
      return rows.map((r) => ({ id: String(r.id), accountId: String(r.account_id), type: r.type as EventType, createdAt: num(r.created_at), body: String(r.body) }));
    },
    async accountSnapshots(accountId, page) {
      const rows = q("SELECT * FROM merchant_snapshots WHERE account_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?").all(accountId, ...pageStart(page), page.limit) as Row[];
      return rows.map(snapshotFromRow);
    },

    async prune(input) {
      return isIndexedTarget(input.target) ? pruneTx(input) : keyUsage.prune(input);
    },

    async addKeyUsage(batch) {
      keyUsage.addKeyUsage(batch);
    },
    async keyUsage(query) {
      return keyUsage.keyUsage(query);
    },
    async keysLastUsed(accountId) {
      return keyUsage.keysLastUsed(accountId);
    },

    async appendAudit(draft) {
      return appendAuditTx(draft);
    },
    async listAudit(query) {
      const desc = query.order === "desc";
      const rows = q(`SELECT * FROM audit_log
                      WHERE (@account IS NULL OR account_id = @account) AND (@actor IS NULL OR actor = @actor) AND (@action IS NULL OR action = @action)
                        AND (@from IS NULL OR at >= @from) AND (@to IS NULL OR at < @to)
                        AND ${desc ? "seq < @cursor" : "seq > @cursor"}
                      ORDER BY seq ${desc ? "DESC" : "ASC"} LIMIT @limit`).all({
        account: query.accountId ?? null,
        actor: query.actor ?? null,
        action: query.action ?? null,
        from: query.from ?? null,
        to: query.to ?? null,
        cursor: desc ? (query.beforeSeq ?? Number.MAX_SAFE_INTEGER) : (query.afterSeq ?? 0),
        limit: query.limit,
      }) as Row[];
      return rows.map(auditEntryFromRow);
    },
    async auditHead(): Promise<AuditHead> {
      return auditHeadFromRow(q("SELECT seq, hash FROM audit_head WHERE id = 1").get() as Row);
    },

    benchmarks,
    async replaceCells(prepared, replace) {
      try {
        return replaceCellsTx(prepared, replace);
      } finally {
        benchmarks.invalidate();
      }
    },
  };

  const guarded = failClosed(storage, isSqliteUnavailable);
  registerImportBackend(guarded, { withStaging: (fn) => withSqliteStaging((cells, replace) => guarded.replaceCells(cells, replace), fn) });
  return guarded;
}
