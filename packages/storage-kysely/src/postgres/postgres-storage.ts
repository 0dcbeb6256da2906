/**
 * The PostgreSQL Storage: Kysely (PostgresDialect over a pg Pool) running hand-written SQL through its
 * `sql` tag, so every statement reads as the SQL it is, with bound parameters.
 *
 * The hot path goes straight to the pool as named (once-planned) statements, batched (batch/batcher.ts):
 * `findKeyByHash` (hash → key → account join, for every hash looked up at once) and `admit`
 * (`SELECT benchdata_admit_arrays(...)`, a plpgsql function holding the whole decision for every admission
 * in flight; see functions.ts), which skips the key checks it remembers passing (verified-keys.ts).
 * Everything else is one guarded statement or a short READ COMMITTED transaction that takes row locks
 * before it decides (accounts for the key/webhook limits, quota rows for charges), claims with
 * `FOR UPDATE SKIP LOCKED`, and leases with tokens.
 */
import { Kysely, PostgresDialect, sql } from "kysely";
import type { RawBuilder } from "kysely";
import type { Pool } from "pg";
import type {
  AccountRecord,
  AuditDraft,
  AuditEntry,
  AdmitInput,
  AdmitResult,
  ApiKeyRecord,
  ClaimedCharge,
  ClaimedDelivery,
  DeliveryRecord,
  EventDraft,
  EventType,
  HeldSession,
  WebhookHealthPolicy,
  InvoiceRecord,
  RecoverOutcome,
  KeyLookup,
  Logger,
  PreparedCell,
  SnapshotRecord,
  Storage,
  WebhookRecord,
} from "@benchdata/core";
import {
  accountResumedEvent,
  accountSuspendedEvent,
  chainAuditEntry,
  dailyPeek,
  dayCounterId,
  invoiceFailedEvent,
  invoicePaidEvent,
  keyCreatedEvent,
  keyRevokedEvent,
  keyRotatedEvent,
  webhookDisabledEvent,
  webhookHealthAfter,
  afterRecover,
  recoverStep,
  parsePeriod,
  quotaExhaustedEvent,
  serializeEvent,
  silentLogger,
} from "@benchdata/core";
import { cachedBenchmarks, DEFAULT_CACHE_TTL_MS } from "../cells/cached-benchmarks.ts";
import { encodeFloat64, encodeUint32 } from "../cells/cell-codec.ts";
import { failClosed, isPostgresUnavailable, mapUnavailable } from "../database-unavailable.ts";
import { batcher } from "../batch/batcher.ts";
import { registerImportBackend, RowCodec } from "../import/staging.ts";
import type { ReplacedPeriod, StagedRow, Staging } from "../import/staging.ts";
import type { SqlStorage } from "../sql-storage.ts";
import { AUDIT_COLUMNS, auditEntryFromRow, auditHeadFromRow, auditRowValues } from "../audit-rows.ts";
import type { Row } from "../rows.ts";
import { accountFromRow, deliveryFromRow, invoiceFromRow, json, keyFromRow, lookupAccountFromRow, num, numOrNull, pageStart, snapshotFromRow, strOrNull, webhookFromRow } from "../rows.ts";
import { migratePostgres } from "./postgres-migrate.ts";
import { verifiedKeys } from "./verified-keys.ts";
import { postgresPruneBatch, pruneResultOf } from "./postgres-prune.ts";
import { postgresKeyUsage } from "../key-usage/postgres-key-usage.ts";
import { isIndexedTarget } from "../prune-spec.ts";

/** Options of the PostgreSQL storage. */
export interface PostgresStorageOptions {
  /**
   * `database` (default): windows, UTC days and billing periods use the database's clock, one clock for
   * every instance, reported back as `now`. `app`: they use the `now` each call is given.
   */
  readonly clock?: "database" | "app";
  readonly logger?: Logger;
  /** How long decoded benchmark cells are trusted before the data version is checked (ms, default 1000). */
  readonly cacheTtlMs?: number;
  /** How many batches of admissions (each one round trip) may be out at once (default 1: while one is out, the next fills up). */
  readonly admitConcurrency?: number;
  /**
   * Stamps per chunk of a key's admission log (default 128, set per connection as `benchdata.window_chunk`).
   * Every server on a database must use the same; only tests set it, to cross chunk boundaries with few stamps.
   */
  readonly windowChunkSize?: number;
}

/** Kysely over a database whose tables are only ever reached through raw SQL. */
type Db = Kysely<Record<string, never>>;

// Advisory lock keys: one class for per-webhook claim locks (transaction locks); migrations use their own (postgres-migrate.ts).
const CLAIM_LOCK_CLASS = 1_650_617_446;


/** A delivery row with its attempts aggregated as `attempt_log` (JSON). */
const deliveryWithLog = (r: Row): DeliveryRecord => deliveryFromRow(r, json<Row[]>(r.attempt_log));

/** The rows of a query (typed by the caller: the SQL is the schema). */
async function all<T = Row>(db: Db, query: RawBuilder<unknown>): Promise<T[]> {
  return (await query.execute(db)).rows as T[];
}

/** The first row of a query, if any. */
async function one<T = Row>(db: Db, query: RawBuilder<unknown>): Promise<T | undefined> {
  return (await query.execute(db)).rows[0] as T | undefined;
}

/** Writes an event and its deliveries in the caller's transaction (one round trip). */
/**
 * The webhooks with pending deliveries, as the recursive CTE `pending_webhooks`: a skip scan of
 * deliveries_pending_by_webhook, one index seek per webhook however many deliveries each has queued.
 */
export const PENDING_WEBHOOKS: RawBuilder<unknown> = sql`pending_webhooks(webhook_id) AS (
  (SELECT webhook_id FROM deliveries WHERE status = 'pending' ORDER BY webhook_id LIMIT 1)
  UNION ALL
  SELECT (SELECT p.webhook_id FROM deliveries p WHERE p.status = 'pending' AND p.webhook_id > pw.webhook_id ORDER BY p.webhook_id LIMIT 1)
  FROM pending_webhooks pw WHERE pw.webhook_id IS NOT NULL
)`;

/** The head of webhook `pw.webhook_id` (its earliest pending delivery), for a LATERAL join: one index seek. */
export const HEAD_OF_PENDING_WEBHOOK: RawBuilder<unknown> = sql`SELECT p.id, p.webhook_id, p.account_id, p.event_id, p.seq, p.next_attempt_at, p.lease_token, p.lease_until
  FROM deliveries p WHERE p.webhook_id = pw.webhook_id AND p.status = 'pending' ORDER BY p.seq LIMIT 1`;

async function insertEvent(db: Db, draft: EventDraft, now: number): Promise<void> {
  await sql`SELECT benchdata_insert_event(${draft.id}, ${draft.type}, ${draft.accountId}, ${now}::bigint, ${serializeEvent(draft)})`.execute(db);
}

/** After a failed attempt, in the caller's transaction: the webhook's failure history, and its disabling if core decides so. */
async function applyHealth(trx: Db, webhookId: string, a: { status: string; gone: boolean; at: number }, health: WebhookHealthPolicy): Promise<void> {
  const w = await one(trx, sql`SELECT id, account_id, url, status, failing_since, dead_streak FROM webhooks WHERE id = ${webhookId} FOR UPDATE`);
  if (!w || w.status !== "active") return;
  const before = { failingSince: numOrNull(w.failing_since), deadStreak: num(w.dead_streak) };
  const h = webhookHealthAfter(before, { succeeded: false, dead: a.status === "dead", gone: a.gone, at: a.at }, health);
  if (h.disable !== null) {
    await sql`UPDATE webhooks SET failing_since = ${h.failingSince}::bigint, dead_streak = ${h.deadStreak}::integer,
                     status = 'disabled', disabled_reason = ${h.disable}, disabled_at = ${a.at}::bigint WHERE id = ${webhookId}`.execute(trx);
    await sql`UPDATE deliveries SET status = 'dead', next_attempt_at = NULL, dead_reason = 'webhook_disabled' WHERE webhook_id = ${webhookId} AND status = 'pending'`.execute(trx);
    await insertEvent(trx, webhookDisabledEvent(health.eventId, String(w.account_id), a.at, { webhookId, url: String(w.url), reason: h.disable }), a.at);
  } else if (h.failingSince !== before.failingSince || h.deadStreak !== before.deadStreak) {
    await sql`UPDATE webhooks SET failing_since = ${h.failingSince}::bigint, dead_streak = ${h.deadStreak}::integer WHERE id = ${webhookId}`.execute(trx);
  }
}

/** Replaces cells inside the caller's transaction and bumps the data version; resolves to the pairs of `replace` that held cells. */
async function replaceCellsIn(db: Db, prepared: readonly PreparedCell[], replace: readonly ReplacedPeriod[]): Promise<ReplacedPeriod[]> {
  let held: ReplacedPeriod[] = [];
  if (replace.length > 0) {
    const gone = await sql<{ category: string; period: string }>`
      WITH gone AS (
        DELETE FROM cells WHERE (category, period) IN (SELECT * FROM unnest(${replace.map((r) => r.category)}::text[], ${replace.map((r) => r.period)}::text[]))
        RETURNING category, period)
      SELECT DISTINCT category, period FROM gone`.execute(db);
    const had = new Set(gone.rows.map((r) => `${r.category}|${r.period}`));
    held = replace.filter((r) => had.has(`${r.category}|${r.period}`)).map((r) => ({ category: r.category, period: r.period }));
  }
  // The last of several cells with one key wins, as in the memory store (and ON CONFLICT cannot touch a row twice).
  const byKey = new Map<string, PreparedCell>();
  for (const pc of prepared) byKey.set(`${pc.category}|${pc.period}|${pc.segment}|${pc.metric}`, pc);
  let batch: PreparedCell[] = [];
  let bytes = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const cells = batch;
    batch = [];
    bytes = 0;
    await sql`
      INSERT INTO cells (category, period, segment, metric, granularity, sample_size, sorted, businesses)
      SELECT * FROM unnest(
        ${cells.map((c) => c.category)}::text[], ${cells.map((c) => c.period)}::text[], ${cells.map((c) => c.segment)}::text[],
        ${cells.map((c) => c.metric)}::text[], ${cells.map((c) => parsePeriod(c.period)?.granularity ?? "")}::text[],
        ${cells.map((c) => c.cell.sampleSize)}::integer[], ${cells.map((c) => Buffer.from(encodeFloat64(c.cell.sorted).buffer))}::bytea[],
        ${cells.map((c) => (c.cell.businesses ? Buffer.from(encodeUint32(c.cell.businesses).buffer) : null))}::bytea[])
      ON CONFLICT (category, period, segment, metric)
      DO UPDATE SET granularity = excluded.granularity, sample_size = excluded.sample_size, sorted = excluded.sorted, businesses = excluded.businesses`.execute(db);
  };
  for (const pc of byKey.values()) {
    batch.push(pc);
    bytes += pc.cell.sorted.length * 8 + (pc.cell.businesses?.length ?? 0) * 4;
    // Keep each statement's parameters to a few MB (bytea travels hex-encoded).
    if (batch.length >= 2000 || bytes >= 4_000_000) await flush();
  }
  await flush();
  await sql`UPDATE data_version SET version = version + 1 WHERE id = 1`.execute(db);
  return held;
}

/** How many remembered lookups' key checks a storage remembers (see verified-keys.ts). */
const VERIFIED_KEYS_SIZE = 20_000;

/** A value of a one-dimensional PostgreSQL array. */
type ArrayElement = string | number | boolean | null;

/**
 * A one-dimensional PostgreSQL array literal. The hot path sends each batch as 18 arrays; pg's own conversion
 * runs two regular expressions over every element, this one only looks for the two characters that need it.
 */
export function arrayLiteral(values: readonly ArrayElement[]): string {
  let out = "{";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ",";
    const v = values[i];
    if (v === null || v === undefined) out += "NULL";
    else if (typeof v === "boolean") out += v ? "t" : "f";
    else if (typeof v === "number") {
      if (!Number.isFinite(v)) throw new Error(`not a finite number: ${v}`);
      out += String(v);
    } else out += NEEDS_ESCAPE.test(v) ? `"${v.replace(/[\\"]/g, "\\$&")}"` : `"${v}"`;
  }
  return out + "}";
}
const NEEDS_ESCAPE = /[\\"]/;

/** benchdata_admit_arrays's ten quota arrays (whether each admission has a quota, then its terms), as array literals. */
function quotaArrays(inputs: readonly AdmitInput[]): string[] {
  const columns: ArrayElement[][] = Array.from({ length: 10 }, () => new Array<ArrayElement>(inputs.length));
  for (let i = 0; i < inputs.length; i++) {
    const q = inputs[i]!.quota;
    columns[0]![i] = q !== null;
    columns[1]![i] = q?.anchorDay ?? null;
    columns[2]![i] = q?.baseQuota ?? null;
    columns[3]![i] = q?.blockSize ?? null;
    columns[4]![i] = q?.blockPrice ?? null;
    columns[5]![i] = q?.currency ?? null;
    columns[6]![i] = q?.retryAfterFailureMs ?? null;
    columns[7]![i] = q?.maxAutoCharges ?? null;
    columns[8]![i] = q?.warningEventId ?? null;
    columns[9]![i] = q?.invoiceId ?? null;
  }
  return columns.map(arrayLiteral);
}
/** The quota arrays of a batch without quota: empty, which unnest pads with NULLs (no quota). */
const EMPTY_QUOTA_ARRAYS: readonly string[] = Array.from({ length: 10 }, () => "{}");

/**
 * benchdata_admit_arrays's result: the clock, then per admission its kind, minute remaining and reset, day remaining,
 * retry-after and whole result, then the admission epoch it read, then the days counted.
 */
type AdmitArrays = [
  clock: number,
  kinds: number[],
  minuteRemaining: number[],
  minuteResets: number[],
  dayRemaining: number[],
  retries: number[],
  whole: (AdmitResult | null)[],
  epoch: number | null,
  /** Null, or the day each admission counted toward where that is not its own (core's countedDay). */
  daysCounted?: (number | null)[] | null,
];

const DAY_MS = 86_400_000;

/**
 * The results of a batch in AdmitResult's shape, from benchdata_admit_arrays's compact answer and what the
 * caller sent: the limits, and the time used (its own now with the app's clock, the database's otherwise),
 * from which the day's reset follows as in core's dailyWindow, unless the answer names another day counted
 * (core's countedDay: a clock behind the account's stored day).
 */
export function admitResults(answer: AdmitArrays, inputs: readonly AdmitInput[], appClock: boolean): AdmitResult[] {
  const [clock, kinds, minuteRemaining, minuteResets, dayRemaining, retries, whole, , daysCounted] = answer;
  return inputs.map((input, i): AdmitResult => {
    const kind = kinds[i]!;
    if (kind === 4) return whole[i]!;
    const now = appClock ? input.now : clock;
    if (kind === 0) return { kind: "stale", now };
    const minute = { limit: input.perMinute, remaining: minuteRemaining[i]!, resetAt: minuteResets[i]! };
    const day = { limit: input.perDay, remaining: dayRemaining[i]!, resetAt: ((daysCounted?.[i] ?? Math.floor(now / DAY_MS)) + 1) * DAY_MS };
    if (kind === 1) return { kind: "allowed", now, minute, day, quota: null };
    return { kind: "rate_limited", now, window: kind === 3 ? "day" : "minute", minute, day, retryAfterMs: retries[i]! };
  });
}

/**
 * A Storage over a pg Pool (give it `connectionTimeoutMillis`, so an unreachable server fails fast).
 * `migrate()` creates the schema; `close()` ends the pool.
 */
export function createPostgresStorage(pool: Pool, options: PostgresStorageOptions = {}): SqlStorage {
  const logger = options.logger ?? silentLogger;
  // A client whose server goes away emits 'error'; with no listener that event would crash the process.
  // Idle clients report through the pool (which drops them, so the next query connects afresh); a client
  // checked out at that moment only has its query rejected, so it gets a listener of its own too.
  if (pool.listenerCount("error") === 0) pool.on("error", (e) => logger.warn("postgres idle client error", { error: e.message }));
  const chunkSize = options.windowChunkSize;
  pool.on("connect", (client) => {
    client.on("error", (e) => logger.warn("postgres client error", { error: e.message }));
    // Queued ahead of the client's first query.
    if (chunkSize !== undefined) void client.query(`SET benchdata.window_chunk = ${Math.max(1, Math.floor(chunkSize))}`).catch(() => {});
  });
  const db: Db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  /** The `now` passed to SQL: the app's, or NULL for the database's clock. */
  const clockArg = (now: number): number | null => (options.clock === "app" ? now : null);

  /** A READ COMMITTED transaction, retried if PostgreSQL picked it as a deadlock victim. */
  const keyUsage = postgresKeyUsage(db);
  async function tx<T>(fn: (trx: Db) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await db.transaction().execute(fn);
      } catch (e) {
        const code = (e as { code?: unknown }).code;
        if (attempt < 4 && (code === "40P01" || code === "40001")) continue;
        throw e;
      }
    }
  }

  /** Runs `fn` in a transaction of its own, or inside the caller's when `on` is one already. */
  const inTx = <T>(on: Db, fn: (trx: Db) => Promise<T>): Promise<T> => (on === db ? tx(fn) : fn(on));

  /**
   * Appends an entry after the chain's head inside the caller's transaction. The head's row lock (taken last, after
   * the action's own locks) serialises appends across instances, so the chain never forks; it is held to the commit.
   */
  async function appendAuditIn(trx: Db, draft: AuditDraft, accountId: string | null): Promise<AuditEntry> {
    const head = auditHeadFromRow((await one(trx, sql`SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE`))!);
    const e = chainAuditEntry(draft, head, accountId);
    const values = auditRowValues(e);
    await sql`WITH moved AS (UPDATE audit_head SET seq = ${e.seq}::bigint, hash = ${e.hash} WHERE id = 1 RETURNING 1)
              INSERT INTO audit_log (${sql.raw(AUDIT_COLUMNS)}) VALUES (${sql.join(values)})`.execute(trx);
    return e;
  }

  /** Whether a recover call re-queued (so is audited): a refusal, an unknown or a disabled webhook changed nothing. */
  const recovered = (r: RecoverOutcome | "disabled" | null): boolean => r !== null && r !== "disabled" && r.kind === "recovered";

  /**
   * Runs an action and appends its entry in ONE transaction, when `changed` says the action changed something: true
   * (the draft's account), an account id (the draft left it null), or false. Without a draft the action runs as before.
   */
  async function audited<R>(draft: AuditDraft | undefined, run: (on: Db) => Promise<R>, changed: (r: R) => boolean | string): Promise<R> {
    if (draft === undefined) return run(db);
    return tx(async (trx) => {
      const r = await run(trx);
      const c = changed(r);
      if (c !== false) await appendAuditIn(trx, draft, typeof c === "string" ? c : draft.accountId);
      return r;
    });
  }

  /** A named statement through the pool: parsed and planned once per connection, not per call. */
  const prepared = async (name: string, text: string, values: unknown[]): Promise<Row[]> => (await pool.query({ name, text, values })).rows as Row[];

  // The hot path: lookups and admissions made close together go out as one statement each (batcher.ts).
  const findKeys = batcher(
    async (hashes: readonly string[]): Promise<(KeyLookup | null)[]> => {
      const rows = await prepared(
        "benchdata_find_keys",
        `SELECT h.hash, h.retired,
                k.id, k.account_id, k.name, k.environment, k.scopes, k.prefix, k.is_active, k.created_at, k.rotated_at, k.revoked_at,
                a.id AS a_id, a.name AS a_name, a.tier AS a_tier, a.created_at AS a_created_at, a.limits AS a_limits,
                a.allowed_cidrs AS a_allowed_cidrs, a.console_ip_exempt AS a_console_ip_exempt, a.billing AS a_billing, a.version AS a_version,
                a.status AS a_status, a.suspended_at AS a_suspended_at, a.suspended_reason AS a_suspended_reason
         FROM key_hashes h JOIN api_keys k ON k.id = h.key_id JOIN accounts a ON a.id = k.account_id
         WHERE h.hash = ANY ($1::text[])`,
        [hashes],
      );
      const found = new Map<string, KeyLookup>();
      for (const r of rows) {
        found.set(String(r.hash), {
          key: keyFromRow(r),
          account: lookupAccountFromRow(r),
          retired: Boolean(r.retired),
          version: num(r.a_version),
        });
      }
      return hashes.map((h) => found.get(h) ?? null);
    },
    { maxBatch: 256, concurrency: 2 },
  );

  // Which remembered lookups this storage's admissions found to hold, and at which epoch (verified-keys.ts).
  const keys = verifiedKeys(VERIFIED_KEYS_SIZE);

  /**
   * A batch of admissions as benchdata_admit_arrays's arguments: its distinct accounts, one array element per
   * admission (as array literals), the epoch last heard, and which admissions' keys were verified at it.
   */
  const admitArrays = (inputs: readonly AdmitInput[]): { values: (string | number | null)[]; epoch: number | null; trusted: boolean[] } => {
    const n = inputs.length;
    const accounts = new Set<string>();
    const keyIds = new Array<string>(n);
    const accountIds = new Array<string>(n);
    const perMinute = new Array<number>(n);
    const perDay = new Array<number>(n);
    const windowMs = new Array<number>(n);
    const hashes = new Array<string | null>(n);
    const versions = new Array<number | null>(n);
    const epoch = keys.epoch;
    const trusted = new Array<boolean>(n);
    let anyTrusted = false;
    let quotas = false;
    for (let i = 0; i < n; i++) {
      const input = inputs[i]!;
      // The admission's day row (and lock): the account's own for live keys, `<account>/test` for test keys (a
      // test admission touches no quota row, so a key's window is still always written under one row's lock).
      const dayId = dayCounterId(input.accountId, input.environment);
      accounts.add(dayId);
      keyIds[i] = input.keyId;
      accountIds[i] = dayId;
      perMinute[i] = input.perMinute;
      perDay[i] = input.perDay;
      windowMs[i] = input.windowMs;
      hashes[i] = input.expect?.keyHash ?? null;
      versions[i] = input.expect?.version ?? null;
      trusted[i] = input.expect !== undefined && keys.holds(input.expect.keyHash, input.keyId, input.accountId);
      if (trusted[i]) anyTrusted = true;
      if (input.quota !== null) quotas = true;
    }
    // unnest pads a shorter array with NULLs: the database's clock and a batch without quota (test keys, the usual
    // case) send empty arrays instead of a NULL per admission.
    const nows = options.clock === "app" ? arrayLiteral(inputs.map((input) => input.now)) : "{}";
    const quota = quotas ? quotaArrays(inputs) : EMPTY_QUOTA_ARRAYS;
    const values = [
      arrayLiteral([...accounts]),
      nows,
      arrayLiteral(keyIds),
      arrayLiteral(accountIds),
      arrayLiteral(perMinute),
      arrayLiteral(perDay),
      arrayLiteral(windowMs),
      arrayLiteral(hashes),
      arrayLiteral(versions),
      ...quota,
      epoch,
      anyTrusted ? arrayLiteral(trusted) : "{}",
    ];
    return { values, epoch, trusted };
  };
  /** Remembers the key checks a batch passed, at the epoch it read. */
  const rememberChecks = (inputs: readonly AdmitInput[], answer: AdmitArrays, sent: { epoch: number | null; trusted: boolean[] }): void => {
    const epoch = answer[7] ?? null;
    keys.heard(epoch);
    if (epoch === null) return;
    const kinds = answer[1];
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i]!;
      if (input.expect === undefined || (sent.trusted[i] && epoch === sent.epoch)) continue;
      if (kinds[i] === 0) keys.forget(input.expect.keyHash);
      else keys.verified(input.expect.keyHash, input.keyId, input.accountId, epoch);
    }
  };
  // One batch, one statement (see benchdata_admit_arrays in functions.ts).
  const runAdmitBatch = async (inputs: readonly AdmitInput[]): Promise<AdmitResult[]> => {
    const sent = admitArrays(inputs);
    for (let attempt = 1; ; attempt++) {
      try {
        const rows = await prepared(
          "benchdata_admit_arrays",
          `SELECT benchdata_admit_arrays($1::text[], $2::bigint[], $3::text[], $4::text[], $5::integer[], $6::integer[], $7::bigint[], $8::text[],
                  $9::bigint[], $10::boolean[], $11::integer[], $12::bigint[], $13::bigint[], $14::bigint[], $15::text[], $16::bigint[],
                  $17::integer[], $18::text[], $19::text[], $20::bigint, $21::boolean[]) AS r`,
          sent.values,
        );
        const answer = json<AdmitArrays>(rows[0]!.r);
        rememberChecks(inputs, answer, sent);
        return admitResults(answer, inputs, options.clock === "app");
      } catch (e) {
        // A batch that had to create an account's day row can deadlock with another (see benchdata_admit_arrays);
        // it was rolled back whole.
        if (attempt < 4 && (e as { code?: unknown }).code === "40P01") continue;
        throw e;
      }
    }
  };
  const admitBatch = batcher(
    async (inputs: readonly AdmitInput[]): Promise<(AdmitResult | Error)[]> => {
      try {
        return await runAdmitBatch(inputs);
      } catch (e) {
        // The statement was rolled back whole. Losing the database (or a lock) fails every admission; any other
        // error is one admission's (a value out of range, say): run them one by one, so only that one fails.
        if (isPostgresUnavailable(e) || inputs.length === 1) throw e;
        return Promise.all(inputs.map((input) => runAdmitBatch([input]).then((r) => r[0]!, (one: unknown) => (one instanceof Error ? one : new Error(String(one))))));
      }
    },
    { maxBatch: 256, concurrency: options.admitConcurrency ?? 1 },
  );

  const benchmarks = cachedBenchmarks(
    {
      async dataVersion() {
        return num((await one(db, sql`SELECT version FROM data_version WHERE id = 1`))?.version ?? 0);
      },
      async latestPeriod(category, segment, granularity) {
        const r = await one(db, sql`SELECT max(period) AS p FROM cells WHERE category = ${category} AND segment = ${segment} AND granularity = ${granularity}`);
        return strOrNull(r?.p);
      },
      async recentPeriods(category, segment, metric, granularity, count) {
        const rows = await all(
          db,
          sql`SELECT period FROM cells WHERE category = ${category} AND segment = ${segment} AND granularity = ${granularity} AND metric = ${metric}
              ORDER BY period DESC LIMIT ${Math.max(0, count)}`,
        );
        return rows.map((r) => String(r.period)).reverse();
      },
      async cells(category, segment, period, metrics) {
        const rows = await all(
          db,
          sql`SELECT metric, sample_size, sorted, businesses FROM cells WHERE category = ${category} AND segment = ${segment} AND period = ${period} AND metric = ANY (${[...metrics]}::text[])`,
        );
        return rows.map((r) => ({ metric: String(r.metric), sampleSize: num(r.sample_size), sorted: r.sorted as Uint8Array, businesses: (r.businesses ?? null) as Uint8Array | null }));
      },
      async segments(category) {
        const rows = await all(db, sql`SELECT DISTINCT segment FROM cells WHERE category = ${category} AND segment <> 'all' ORDER BY segment`);
        return rows.map((r) => String(r.segment));
      },
    },
    options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS,
  );

  const DELIVERY_SELECT = sql`
    SELECT d.*, e.type AS event_type,
      coalesce((SELECT json_agg(json_build_object('attempt', a.attempt, 'at', a.at, 'status_code', a.status_code, 'latency_ms', a.latency_ms,
                                                  'error', a.error, 'response_body', a.response_body) ORDER BY a.seq)
                FROM delivery_attempts a WHERE a.delivery_id = d.id), '[]') AS attempt_log
    FROM deliveries d JOIN events e ON e.id = d.event_id`;

  const storage: SqlStorage & Storage = {
    kind: "postgres",
    async migrate() {
      await migratePostgres(db, logger);
    },
    async close() {
      await db.destroy();
    },
    async ping() {
      await pool.query("SELECT 1");
    },
    async gauges() {
      const { rows } = await pool.query("SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'");
      return { outboxDepth: Number((rows[0] as { n: number }).n), poolSize: pool.options.max ?? 10, poolInUse: pool.totalCount - pool.idleCount, poolWaiting: pool.waitingCount };
    },

    async createAccount(a, draft) {
      try {
        // With its (empty) day counter, so admissions only ever lock existing rows (see benchdata_admit_arrays).
        await audited(draft, (on) => sql`WITH a AS (
                    INSERT INTO accounts (id, name, tier, created_at, limits, allowed_cidrs, console_ip_exempt, billing)
                    VALUES (${a.id}, ${a.name}, ${a.tier}, ${a.createdAt}::bigint, ${JSON.stringify(a.limits)}::jsonb, ${[...a.allowedCidrs]}::text[], ${a.consoleIpExempt === true}::boolean, ${JSON.stringify(a.billing)}::jsonb)
                    RETURNING id)
                  INSERT INTO day_counters (account_id, day, count) SELECT d.id, 0, 0 FROM a, LATERAL (VALUES (a.id), (a.id || '/test')) AS d(id)
                  ON CONFLICT (account_id) DO NOTHING`.execute(on), () => true);
      } catch (e) {
        if ((e as { code?: unknown }).code === "23505") throw new Error(`account ${a.id} exists`);
        throw e;
      }
    },
    async getAccount(accountId) {
      const r = await one(db, sql`SELECT * FROM accounts WHERE id = ${accountId} AND status <> 'deleted'`);
      return r ? accountFromRow(r) : null;
    },
    async updateAccount(accountId, patch, draft) {
      const drop = patch.dropScopes !== undefined && patch.dropScopes.length > 0 ? [...patch.dropScopes] : null;
      // With scopes to drop, the account and its keys change in one statement (one transaction).
      const r = await audited(draft, (on) => one(
        on,
        sql`WITH dropped AS (
              UPDATE api_keys SET scopes = ARRAY(SELECT s FROM unnest(scopes) WITH ORDINALITY AS t(s, i) WHERE s <> ALL (${drop}::text[]) ORDER BY i)
               WHERE ${drop}::text[] IS NOT NULL AND account_id = ${accountId} AND scopes && ${drop}::text[]
               RETURNING 1
            )
            UPDATE accounts SET
              tier = coalesce(${patch.tier ?? null}::text, tier),
              limits = coalesce(${patch.limits !== undefined ? JSON.stringify(patch.limits) : null}::jsonb, limits),
              allowed_cidrs = coalesce(${patch.allowedCidrs !== undefined ? [...patch.allowedCidrs] : null}::text[], allowed_cidrs),
              console_ip_exempt = coalesce(${patch.consoleIpExempt ?? null}::boolean, console_ip_exempt),
              billing = coalesce(${patch.billing !== undefined ? JSON.stringify(patch.billing) : null}::jsonb, billing)
            WHERE id = ${accountId} AND status <> 'deleted' RETURNING *`,
      ), (row) => row !== undefined);
      return r ? accountFromRow(r) : null;
    },
    async setAccountStatus({ accountId, status, reason, now, eventId, audit }) {
      return audited(audit, (on) => inTx(on, async (trx) => {
        // The row lock orders racing changes: the second sees the first's status and changes nothing.
        const before = await one(trx, sql`SELECT * FROM accounts WHERE id = ${accountId} FOR UPDATE`);
        if (!before || before.status === "deleted") return null;
        if ((before.status === "suspended" ? "suspended" : "active") === status) return { account: accountFromRow(before), changed: false };
        const suspending = status === "suspended";
        // The version trigger moves the account's version with its status: remembered lookups are stale at once.
        const after = (await one(
          trx,
          sql`UPDATE accounts SET status = ${status}, suspended_at = ${suspending ? now : null}::bigint, suspended_reason = ${suspending ? (reason ?? null) : null}::text
              WHERE id = ${accountId} RETURNING *`,
        ))!;
        if (suspending) await insertEvent(trx, accountSuspendedEvent(eventId, accountId, now), now);
        else {
          const since = numOrNull(before.suspended_at) ?? now;
          // core's failingSinceAfterPause: the suspension does not count toward disabling a failing webhook.
          await sql`UPDATE webhooks SET failing_since = least(failing_since + greatest(0, ${now}::bigint - ${since}::bigint), ${now}::bigint)
                    WHERE account_id = ${accountId} AND failing_since IS NOT NULL`.execute(trx);
          await insertEvent(trx, accountResumedEvent(eventId, accountId, since, now), now);
        }
        return { account: accountFromRow(after), changed: true };
      }), (r) => r !== null && r.changed);
    },
    async createSession(s, draft) {
      // The account's row, shared, in the same statement: an erasure (which takes it exclusively first) comes wholly
      // before (the row is then seen as deleted and nothing is stored) or after (and deletes this session).
      const r = await audited(
        draft,
        (on) =>
          sql`INSERT INTO sessions (token_hash, account_id, created_at, expires_at)
              SELECT ${s.tokenHash}, id, ${s.createdAt}::bigint, ${s.expiresAt}::bigint FROM accounts WHERE id = ${s.accountId} AND status <> 'deleted' FOR SHARE
              ON CONFLICT (token_hash) DO UPDATE SET account_id = excluded.account_id, created_at = excluded.created_at, expires_at = excluded.expires_at`.execute(on),
        (x) => Number(x.numAffectedRows ?? 0) > 0,
      );
      return Number(r.numAffectedRows ?? 0) > 0;
    },
    async findSession(tokenHash, now) {
      const r = await one(db, sql`SELECT account_id FROM sessions WHERE token_hash = ${tokenHash} AND expires_at > ${now}::bigint`);
      return r ? String(r.account_id) : null;
    },
    async sessionExpiry(tokenHash, now) {
      const r = await one(db, sql`SELECT expires_at FROM sessions WHERE token_hash = ${tokenHash} AND expires_at > ${now}::bigint`);
      return r ? Number(r.expires_at) : null;
    },
    async deleteSession(tokenHash, draft) {
      const r = await audited(draft, (on) => one(on, sql`DELETE FROM sessions WHERE token_hash = ${tokenHash} RETURNING account_id`), (row) => (row === undefined ? false : (draft?.accountId ?? String(row.account_id))));
      return r !== undefined;
    },
    async deleteSessions(accountId, draft) {
      return audited(draft, (on) => inTx(on, async (trx) => {
        await sql`DELETE FROM sign_in_links WHERE account_id = ${accountId}`.execute(trx);
        const r = await sql`DELETE FROM sessions WHERE account_id = ${accountId}`.execute(trx);
        return Number(r.numAffectedRows ?? 0);
      }), () => true);
    },
    async createSignInLink(link, draft) {
      // As createSession: the account's row, shared, orders it with an erasure.
      const r = await audited(
        draft,
        (on) =>
          sql`INSERT INTO sign_in_links (token_hash, account_id, created_at, expires_at)
              SELECT ${link.tokenHash}, id, ${link.createdAt}::bigint, ${link.expiresAt}::bigint FROM accounts WHERE id = ${link.accountId} AND status <> 'deleted' FOR SHARE`.execute(on),
        (x) => Number(x.numAffectedRows ?? 0) > 0,
      );
      return Number(r.numAffectedRows ?? 0) > 0;
    },
    async redeemSignInLink({ linkHash, now, session, audit }) {
      const owner = await one(db, sql`SELECT account_id FROM sign_in_links WHERE token_hash = ${linkHash}`);
      if (!owner) return null;
      return tx(async (trx) => {
        // The account's row first, shared, as an erasure takes it first (exclusively): the two never wait on each
        // other's link and session rows, and a redemption after an erasure finds the account deleted.
        const a = await one(trx, sql`SELECT status FROM accounts WHERE id = ${owner.account_id} FOR SHARE`);
        if (!a || a.status === "deleted") return null;
        // The DELETE consumes the link (a concurrent redemption finds it gone), the INSERT uses what it returned.
        const r = await one(
          trx,
          sql`WITH link AS (DELETE FROM sign_in_links WHERE token_hash = ${linkHash} AND account_id = ${owner.account_id} RETURNING account_id, expires_at)
              INSERT INTO sessions (token_hash, account_id, created_at, expires_at)
              SELECT ${session.tokenHash}, account_id, ${session.createdAt}::bigint, ${session.expiresAt}::bigint FROM link WHERE expires_at > ${now}::bigint
              RETURNING account_id`,
        );
        if (r && audit !== undefined) await appendAuditIn(trx, audit, audit.accountId ?? String(r.account_id));
        return r ? String(r.account_id) : null;
      });
    },
    async dailyUsage(accountId, fromDay, now) {
      const today = Math.floor(now / 86_400_000);
      const testDay = dayCounterId(accountId, "test");
      const r = await sql<{ day: number; count: number }>`
        SELECT day, sum(count)::bigint AS count FROM (
          SELECT day, count FROM usage_days WHERE account_id IN (${accountId}, ${testDay}) AND day >= ${fromDay}::integer
          UNION ALL SELECT day, count FROM day_counters WHERE account_id IN (${accountId}, ${testDay}) AND day <= ${today}::integer AND day >= ${fromDay}::integer AND count > 0
        ) AS u GROUP BY day ORDER BY day`.execute(db);
      return r.rows.map((x) => ({ day: Number(x.day), count: Number(x.count) }));
    },

    async createKey({ key, hash, maxKeys, eventId, audit }) {
      return audited(audit, (on) => inTx(on, async (trx) => {
        // The account's row lock serialises key creation per account, so the limit is exact under concurrency, and
        // orders it with an erasure: a key is never stored for an erased account.
        if ((await one(trx, sql`SELECT status FROM accounts WHERE id = ${key.accountId} FOR UPDATE`))?.status === "deleted") return "deleted" as const;
        const { n } = (await one<{ n: string }>(trx, sql`SELECT count(*) AS n FROM api_keys WHERE account_id = ${key.accountId} AND revoked_at IS NULL`))!;
        if (Number(n) >= maxKeys) return "limit" as const;
        await sql`INSERT INTO api_keys (id, account_id, name, environment, scopes, prefix, is_active, created_at, rotated_at, revoked_at)
                  VALUES (${key.id}, ${key.accountId}, ${key.name}, ${key.environment}, ${[...key.scopes]}::text[], ${key.prefix}, ${key.isActive},
                          ${key.createdAt}::bigint, ${key.rotatedAt}::bigint, ${key.revokedAt}::bigint)`.execute(trx);
        await sql`INSERT INTO rate_windows (key_id, stamps) VALUES (${key.id}, '{}') ON CONFLICT (key_id) DO NOTHING`.execute(trx);
        await sql`INSERT INTO key_hashes (hash, key_id, retired) VALUES (${hash}, ${key.id}, false)
                  ON CONFLICT (hash) DO UPDATE SET key_id = excluded.key_id, retired = false`.execute(trx);
        await insertEvent(trx, keyCreatedEvent(eventId, key), key.createdAt);
        return "created" as const;
      }), (r) => r === "created");
    },
    async findKeyByHash(hash): Promise<KeyLookup | null> {
      return findKeys(hash);
    },
    async getKey(accountId, keyId) {
      const r = await one(db, sql`SELECT * FROM api_keys WHERE id = ${keyId} AND account_id = ${accountId}`);
      return r ? keyFromRow(r) : null;
    },
    async listKeys(accountId) {
      return (await all(db, sql`SELECT * FROM api_keys WHERE account_id = ${accountId} ORDER BY id`)).map(keyFromRow);
    },
    async rotateKey({ accountId, keyId, newHash, newPrefix, now, eventId, scopes, audit }) {
      return audited(audit, (on) => inTx(on, async (trx) => {
        const newScopes = scopes === undefined ? null : [...scopes];
        const r = await one(
          trx,
          sql`UPDATE api_keys SET prefix = ${newPrefix}, rotated_at = ${now}::bigint, scopes = coalesce(${newScopes}::text[], scopes)
              WHERE id = ${keyId} AND account_id = ${accountId} AND is_active RETURNING *`,
        );
        if (!r) return null;
        await sql`UPDATE key_hashes SET retired = true WHERE key_id = ${keyId} AND NOT retired`.execute(trx);
        await sql`INSERT INTO key_hashes (hash, key_id, retired) VALUES (${newHash}, ${keyId}, false)
                  ON CONFLICT (hash) DO UPDATE SET key_id = excluded.key_id, retired = false`.execute(trx);
        const next = keyFromRow(r);
        await insertEvent(trx, keyRotatedEvent(eventId, next, now), now);
        return next;
      }), (r) => r !== null);
    },
    async revokeKey({ accountId, keyId, now, eventId, audit }) {
      let flipped = false;
      return audited(audit, (on) => inTx(on, async (trx) => {
        // Only the statement that flips revoked_at writes the event, so it is written once.
        const r = await one(trx, sql`UPDATE api_keys SET is_active = false, revoked_at = ${now}::bigint WHERE id = ${keyId} AND account_id = ${accountId} AND revoked_at IS NULL RETURNING *`);
        if (!r) {
          const existing = await one(trx, sql`SELECT * FROM api_keys WHERE id = ${keyId} AND account_id = ${accountId}`);
          return existing ? keyFromRow(existing) : null;
        }
        flipped = true;
        const next = keyFromRow(r);
        await insertEvent(trx, keyRevokedEvent(eventId, next, now), now);
        return next;
      }), (r) => r !== null && flipped);
    },

    async admit(input) {
      return admitBatch(input);
    },
    async peekLimits({ now, keyId, accountId, perMinute, perDay, windowMs, environment }) {
      // One read-only statement, on the same clock as admit: the window as it stands (benchdata_window_peek, the
      // admission's walk over the key's chunks) and the account's day.
      const r = (await one(
        db,
        sql`WITH t AS (SELECT coalesce(${clockArg(now)}::bigint, benchdata_clock_ms()) AS now)
            SELECT t.now, w.live AS n, w.oldest, c.day, c.count
            FROM t CROSS JOIN benchdata_window_peek(${keyId}, t.now, ${perMinute}::integer, ${windowMs}::bigint) AS w
            LEFT JOIN day_counters c ON c.account_id = ${dayCounterId(accountId, environment)}`,
      ))!;
      const at = num(r.now);
      const oldest = r.oldest === null ? at : num(r.oldest);
      return {
        now: at,
        minute: { limit: perMinute, remaining: Math.max(0, perMinute - num(r.n)), resetAt: oldest + windowMs },
        day: dailyPeek(r.day === null ? undefined : num(r.day), r.count === null ? 0 : num(r.count), at, perDay),
      };
    },
    async usage(accountId, now, anchorDay, baseQuota, blockSize) {
      const r = (await one(
        db,
        sql`WITH t AS (SELECT coalesce(${clockArg(now)}::bigint, benchdata_clock_ms()) AS now),
                 p AS (SELECT b.start_ms, b.end_ms FROM t, benchdata_billing_period(t.now, ${anchorDay}::integer) AS b)
            SELECT p.start_ms, p.end_ms, q.used, q.blocks, q.exhausted,
              coalesce((SELECT c.count FROM day_counters c, t WHERE c.account_id = ${accountId} AND c.day = floor(t.now / 86400000.0)::integer), 0) AS today,
              coalesce((SELECT c.count FROM day_counters c, t WHERE c.account_id = ${dayCounterId(accountId, "test")} AND c.day = floor(t.now / 86400000.0)::integer), 0) AS today_test,
              (SELECT count(*) FROM api_keys k WHERE k.account_id = ${accountId} AND k.is_active) AS active_keys
            FROM p LEFT JOIN quota_periods q ON q.account_id = ${accountId} AND q.period_start = p.start_ms`,
      ))!;
      return {
        today: num(r.today) + num(r.today_test),
        todayTest: num(r.today_test),
        month: num(r.used ?? 0),
        allowance: baseQuota + num(r.blocks ?? 0) * blockSize,
        exhausted: Boolean(r.exhausted),
        activeKeys: num(r.active_keys),
        periodStart: num(r.start_ms),
        periodEnd: num(r.end_ms),
      };
    },

    async createWebhook(w, maxWebhooks, draft) {
      return audited(draft, (on) => inTx(on, async (trx) => {
        if ((await one(trx, sql`SELECT status FROM accounts WHERE id = ${w.accountId} FOR UPDATE`))?.status === "deleted") return "deleted" as const;
        const { n } = (await one<{ n: string }>(trx, sql`SELECT count(*) AS n FROM webhooks WHERE account_id = ${w.accountId}`))!;
        if (Number(n) >= maxWebhooks) return "limit" as const;
        await sql`INSERT INTO webhooks (id, account_id, url, events, secret, created_at)
                  VALUES (${w.id}, ${w.accountId}, ${w.url}, ${[...w.events]}::text[], ${w.secret}, ${w.createdAt}::bigint)`.execute(trx);
        return "created" as const;
      }), (r) => r === "created");
    },
    async listWebhooks(accountId) {
      return (await all(db, sql`SELECT * FROM webhooks WHERE account_id = ${accountId} ORDER BY id`)).map(webhookFromRow);
    },
    async getWebhook(accountId, webhookId) {
      const r = await one(db, sql`SELECT * FROM webhooks WHERE id = ${webhookId} AND account_id = ${accountId}`);
      return r ? webhookFromRow(r) : null;
    },
    async listWebhookSecrets() {
      return (await all(db, sql`SELECT id, account_id, secret, previous_secret FROM webhooks ORDER BY id`)).flatMap((r) => [
        { webhookId: String(r.id), accountId: String(r.account_id), field: "current" as const, secret: String(r.secret) },
        ...(r.previous_secret == null ? [] : [{ webhookId: String(r.id), accountId: String(r.account_id), field: "previous" as const, secret: String(r.previous_secret) }]),
      ]);
    },
    async replaceWebhookSecret({ webhookId, field, from, to }) {
      if (field === "previous") return (await one(db, sql`UPDATE webhooks SET previous_secret = ${to} WHERE id = ${webhookId} AND previous_secret = ${from} RETURNING id`)) !== undefined;
      return (await one(db, sql`UPDATE webhooks SET secret = ${to} WHERE id = ${webhookId} AND secret = ${from} RETURNING id`)) !== undefined;
    },
    async rotateWebhookSecret({ accountId, webhookId, secret, previousUntil, audit }) {
      // One statement: SET reads the row as it was, so the old value moves to previous_secret as the new one lands.
      const r = await audited(audit, (on) => one(
        on,
        sql`UPDATE webhooks SET previous_secret = secret, previous_secret_until = ${previousUntil}::bigint, secret = ${secret}
            WHERE id = ${webhookId} AND account_id = ${accountId} RETURNING *`,
      ), (row) => row !== undefined);
      return r ? webhookFromRow(r) : null;
    },
    async endWebhookSecretOverlap({ accountId, webhookId, previous, audit }) {
      const r = await audited(audit, (on) => one(
        on,
        sql`UPDATE webhooks SET previous_secret = NULL, previous_secret_until = NULL
            WHERE id = ${webhookId} AND account_id = ${accountId} AND previous_secret = ${previous} RETURNING id`,
      ), (row) => row !== undefined);
      return r !== undefined;
    },
    async deleteWebhook(accountId, webhookId, draft, ifSecret) {
      return audited(draft, (on) => inTx(on, async (trx) => {
        const guard = ifSecret === undefined ? sql`` : sql` AND secret = ${ifSecret}`;
        const gone = await one(trx, sql`DELETE FROM webhooks WHERE id = ${webhookId} AND account_id = ${accountId}${guard} RETURNING id`);
        if (!gone) return false;
        await sql`UPDATE deliveries SET status = 'dead', next_attempt_at = NULL WHERE webhook_id = ${webhookId} AND status = 'pending'`.execute(trx);
        return true;
      }), (r) => r);
    },
    async emitEvent(event, now) {
      await insertEvent(db, event, now);
    },
    async claimDeliveries({ now, leaseMs, limit, perWebhook, ordered = false }) {
      const rows = await tx(async (trx) => {
        // 1. Take the claim lock of each webhook with due work, skipping webhooks another worker is claiming
        //    for right now: `perWebhook` counts leases, and only the lock holder adds leases to a webhook.
        //    Ordered: due work is a due head (the webhook's earliest pending delivery), found per webhook (a
        //    skip scan of deliveries_pending_by_webhook, then one seek), so the deliveries queued behind a head
        //    that waits for its retry are never read.
        const locked = await all<{ webhook_id: string }>(
          trx,
          ordered
            ? sql`WITH RECURSIVE ${PENDING_WEBHOOKS},
                  due AS MATERIALIZED (
                    SELECT h.webhook_id FROM pending_webhooks pw CROSS JOIN LATERAL (${HEAD_OF_PENDING_WEBHOOK}) h
                      JOIN accounts a ON a.id = h.account_id AND a.status = 'active'
                    WHERE h.next_attempt_at <= ${now}::bigint AND (h.lease_token IS NULL OR h.lease_until <= ${now}::bigint)
                  )
                  SELECT webhook_id FROM due WHERE pg_try_advisory_xact_lock(${CLAIM_LOCK_CLASS}::integer, hashtext(webhook_id))`
            : sql`SELECT w.webhook_id FROM (
                    SELECT DISTINCT d.webhook_id FROM deliveries d JOIN accounts a ON a.id = d.account_id AND a.status = 'active'
                    WHERE d.status = 'pending' AND d.next_attempt_at <= ${now}::bigint AND (d.lease_token IS NULL OR d.lease_until <= ${now}::bigint)
                  ) w
                  WHERE pg_try_advisory_xact_lock(${CLAIM_LOCK_CLASS}::integer, hashtext(w.webhook_id))`,
        );
        if (locked.length === 0) return [];
        const lockedIds = locked.map((l) => l.webhook_id);
        // 2. A fresh snapshot (this statement starts after the locks): the due deliveries of those webhooks in
        //    order, at most perWebhook minus the leases already out, up to limit; each locked (SKIP LOCKED
        //    passes over a row a completing worker holds) and leased. Ordered: only each webhook's head, and
        //    only while none of the webhook's is in flight (an earlier one can turn pending behind a later one's
        //    lease: a retry, a recover, a transaction that numbered its delivery first but committed last); only
        //    the lock holder adds leases, so two workers never both take a webhook's head and its successor.
        const chosen = ordered
          ? sql`chosen AS (
                SELECT h.id FROM unnest(${lockedIds}::text[]) AS pw(webhook_id) CROSS JOIN LATERAL (${HEAD_OF_PENDING_WEBHOOK}) h
                  JOIN webhooks w ON w.id = h.webhook_id AND w.status = 'active' JOIN events e ON e.id = h.event_id
                  JOIN accounts a ON a.id = h.account_id AND a.status = 'active'
                WHERE h.next_attempt_at <= ${now}::bigint AND (h.lease_token IS NULL OR h.lease_until <= ${now}::bigint)
                  AND NOT EXISTS (
                    SELECT 1 FROM deliveries l WHERE l.webhook_id = h.webhook_id AND l.status = 'pending' AND l.lease_token IS NOT NULL AND l.lease_until > ${now}::bigint
                  )
                ORDER BY h.next_attempt_at, h.seq
                LIMIT ${limit}::integer
              )`
          : sql`inflight AS (
                SELECT webhook_id, count(*) AS n FROM deliveries
                WHERE status = 'pending' AND lease_token IS NOT NULL AND lease_until > ${now}::bigint
                GROUP BY webhook_id
              ),
              ranked AS (
                SELECT d.id, d.webhook_id, d.next_attempt_at, d.seq,
                       row_number() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.seq) AS rn
                FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.status = 'active' JOIN events e ON e.id = d.event_id
                  JOIN accounts a ON a.id = d.account_id AND a.status = 'active'
                WHERE d.webhook_id = ANY (${lockedIds}::text[])
                  AND d.status = 'pending' AND d.next_attempt_at <= ${now}::bigint AND (d.lease_token IS NULL OR d.lease_until <= ${now}::bigint)
              ),
              chosen AS (
                SELECT r.id FROM ranked r LEFT JOIN inflight i ON i.webhook_id = r.webhook_id
                WHERE r.rn <= ${perWebhook}::integer - coalesce(i.n, 0)
                ORDER BY r.next_attempt_at, r.seq
                LIMIT ${limit}::integer
              )`;
        return all(
          trx,
          sql`WITH ${chosen},
              claimable AS (
                SELECT d.id FROM deliveries d
                WHERE d.id IN (SELECT id FROM chosen)
                  AND d.status = 'pending' AND d.next_attempt_at <= ${now}::bigint AND (d.lease_token IS NULL OR d.lease_until <= ${now}::bigint)
                FOR UPDATE SKIP LOCKED
              )
              UPDATE deliveries d SET lease_token = gen_random_uuid()::text, lease_until = ${now}::bigint + ${leaseMs}::bigint
              FROM events e, webhooks w
              WHERE d.id IN (SELECT id FROM claimable) AND e.id = d.event_id AND w.id = d.webhook_id
              RETURNING d.id, d.seq, d.event_id, d.webhook_id, d.account_id, d.attempts, d.next_attempt_at, d.lease_token,
                        e.type, e.body, e.created_at AS event_created_at, w.url, w.secret, w.previous_secret, w.previous_secret_until`,
        );
      });
      return rows
        .sort((a, b) => num(a.next_attempt_at) - num(b.next_attempt_at) || num(a.seq) - num(b.seq))
        .map(
          (r): ClaimedDelivery => ({
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
            leaseToken: String(r.lease_token),
          }),
        );
    },
    async completeDelivery({ deliveryId, leaseToken, attempt, next, gone = false, health }) {
      const status = gone ? "dead" : next.status;
      const deadReason = status === "dead" ? (gone ? "gone" : "attempts_exhausted") : null;
      // The attempt and the delivery's next state; a success also clears its webhook's failure history, all
      // in one statement (the common case, one round trip).
      const record = (conn: Db) =>
        one<{ delivery_id: string; webhook_id: string }>(
          conn,
          sql`WITH done AS (
                UPDATE deliveries SET attempts = ${attempt.attempt}::integer, lease_token = NULL, lease_until = 0, status = ${status},
                       next_attempt_at = ${next.status === "pending" && !gone ? next.at : null}::bigint, dead_reason = ${deadReason}::text
                WHERE id = ${deliveryId} AND lease_token = ${leaseToken} AND status = 'pending'
                RETURNING id, webhook_id
              ),
              healthy AS (
                UPDATE webhooks SET failing_since = NULL, dead_streak = 0
                WHERE ${health !== undefined && status === "succeeded"}::boolean AND id = (SELECT webhook_id FROM done)
                  AND status = 'active' AND (failing_since IS NOT NULL OR dead_streak <> 0)
                RETURNING id
              )
              INSERT INTO delivery_attempts (delivery_id, attempt, at, status_code, latency_ms, error, response_body)
              SELECT id, ${attempt.attempt}::integer, ${attempt.at}::bigint, ${attempt.statusCode}::integer, ${attempt.latencyMs}::double precision,
                     ${attempt.error}::text, ${attempt.responseBody}::text
              FROM done
              RETURNING delivery_id, (SELECT webhook_id FROM done) AS webhook_id`,
        );
      if (health === undefined || status === "succeeded") return (await record(db)) !== undefined;
      // A failure: the webhook's failure history and, as core's webhookHealthAfter decides, its disabling,
      // under its row lock in the same transaction.
      return tx(async (trx) => {
        const done = await record(trx);
        if (!done) return false;
        await applyHealth(trx, done.webhook_id, { status, gone, at: attempt.at }, health);
        return true;
      });
    },
    async enableWebhook(accountId, webhookId, draft) {
      const r = await audited(draft, (on) => one(
        on,
        sql`UPDATE webhooks SET status = 'active', disabled_reason = NULL, disabled_at = NULL, failing_since = NULL, dead_streak = 0
            WHERE id = ${webhookId} AND account_id = ${accountId} RETURNING *`,
      ), (row) => row !== undefined);
      return r ? webhookFromRow(r) : null;
    },
    async listDeliveries(accountId, webhookId, limit) {
      const rows = await all(db, sql`${DELIVERY_SELECT} WHERE d.account_id = ${accountId} AND d.webhook_id = ${webhookId} ORDER BY d.created_at DESC, d.seq DESC LIMIT ${limit}::integer`);
      return rows.map(deliveryWithLog);
    },
    async retryDelivery(accountId, webhookId, deliveryId, now, draft) {
      return audited(draft, (on) => inTx(on, async (trx) => {
        const target = await one(
          trx,
          sql`SELECT d.id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
              WHERE d.id = ${deliveryId} AND d.account_id = ${accountId} AND d.webhook_id = ${webhookId} FOR UPDATE OF d`,
        );
        if (!target) return null;
        // A delivery a worker holds under a live lease is left to it; anything else is due again now.
        await sql`UPDATE deliveries SET status = 'pending', next_attempt_at = ${now}::bigint, lease_token = NULL, lease_until = 0, dead_reason = NULL
                  WHERE id = ${deliveryId} AND NOT (status = 'pending' AND lease_token IS NOT NULL AND lease_until > ${now}::bigint)`.execute(trx);
        const r = await one(trx, sql`${DELIVERY_SELECT} WHERE d.id = ${deliveryId}`);
        return r ? deliveryWithLog(r) : null;
      }), (r) => r !== null);
    },

    async recoverDeliveries({ accountId, webhookId, since, now, policy, audit }) {
      const recover = async (trx: Db): Promise<RecoverOutcome | "disabled" | null> => {
        const w = await one(trx, sql`SELECT status FROM webhooks WHERE id = ${webhookId} AND account_id = ${accountId}`);
        if (!w) return null;
        if (w.status !== "active") return "disabled";
        // The account's budget row, made if missing and locked until commit: concurrent calls on any instance queue
        // here, each deciding (core's recoverStep) over what the one before it wrote. A row of no calls is a new one.
        const b = (await one(
          trx,
          sql`INSERT INTO recover_budgets (account_id, window_start, calls, requeued) VALUES (${accountId}, 0, 0, 0)
              ON CONFLICT (account_id) DO UPDATE SET account_id = excluded.account_id
              RETURNING window_start, calls, requeued`,
        ))!;
        const stored = num(b.calls) === 0 ? null : { windowStart: num(b.window_start), calls: num(b.calls), requeued: num(b.requeued) };
        const step = recoverStep(stored, now, policy);
        if (step.kind === "refused") return step;
        // The dead, and the pending waiting after a failed attempt, oldest first. A delivery a completing worker
        // holds is waited for and judged as it then stands (READ COMMITTED re-checks the WHERE on the updated row).
        const recoverable = sql`d.webhook_id = ${webhookId} AND d.created_at >= ${since}::bigint
          AND (d.status = 'dead' OR (d.status = 'pending' AND d.attempts > 0 AND d.next_attempt_at > ${now}::bigint
                                    AND NOT (d.lease_token IS NOT NULL AND d.lease_until > ${now}::bigint)))`;
        const requeued = await all(
          trx,
          sql`UPDATE deliveries d SET status = 'pending', next_attempt_at = ${now}::bigint, lease_token = NULL, lease_until = 0, dead_reason = NULL
              WHERE d.id IN (SELECT d.id FROM deliveries d WHERE ${recoverable} ORDER BY d.created_at, d.seq LIMIT ${step.limit}::integer)
                AND ${recoverable}
              RETURNING d.id`,
        );
        const more = await one(trx, sql`SELECT EXISTS (SELECT 1 FROM deliveries d WHERE ${recoverable}) AS more`);
        const next = afterRecover(step, requeued.length);
        await sql`UPDATE recover_budgets SET window_start = ${next.windowStart}::bigint, calls = ${next.calls}::integer, requeued = ${next.requeued}::integer
                  WHERE account_id = ${accountId}`.execute(trx);
        return { kind: "recovered", recovered: requeued.length, hasMore: more?.more === true };
      };
      // Audited: the entry goes in the same transaction, when the call re-queued (a refusal changes nothing).
      return audit === undefined ? tx(recover) : audited(audit, recover, recovered);
    },

    async claimCharges({ now, leaseMs, limit }) {
      const rows = await all(
        db,
        sql`UPDATE invoices i SET lease_token = gen_random_uuid()::text, lease_until = ${now}::bigint + ${leaseMs}::bigint
            FROM accounts a
            WHERE a.id = i.account_id AND i.id IN (
              -- A suspended account's charges wait (pending) until it is resumed.
              SELECT p.id FROM invoices p JOIN accounts pa ON pa.id = p.account_id AND pa.status = 'active'
              WHERE p.status = 'pending' AND (p.lease_token IS NULL OR p.lease_until <= ${now}::bigint)
              ORDER BY p.created_at, p.id
              LIMIT ${limit}::integer
              FOR UPDATE SKIP LOCKED)
            RETURNING i.*, row_to_json(a.*) AS account`,
      );
      return rows
        .map((r): ClaimedCharge => ({ invoice: invoiceFromRow(r), account: accountFromRow(json<Row>(r.account)), leaseToken: String(r.lease_token) }))
        .sort((x, y) => x.invoice.createdAt - y.invoice.createdAt || (x.invoice.id < y.invoice.id ? -1 : 1));
    },
    async settleCharge({ invoiceId, leaseToken, outcome, eventIds }) {
      return tx(async (trx) => {
        // The account's row, shared: an erasure (which takes it exclusively) comes wholly before or after this
        // settlement, so it either erases the events written here or is seen here, and then none are written.
        const owner = await one(trx, sql`SELECT a.status FROM invoices i JOIN accounts a ON a.id = i.account_id WHERE i.id = ${invoiceId} FOR SHARE OF a`);
        const failure = outcome.status === "failed" ? outcome.reason : null;
        const r = await one(
          trx,
          sql`UPDATE invoices SET status = ${outcome.status}, processor_ref = ${outcome.processorRef}, resolved_at = ${outcome.at}::bigint,
                                  failure_reason = ${failure}::text, lease_token = NULL
              WHERE id = ${invoiceId} AND lease_token = ${leaseToken} AND status = 'pending'
              RETURNING *`,
        );
        if (!r) return false;
        const inv = invoiceFromRow(r);
        // An account erased while its charge was in flight: the invoice records what the processor did, nothing more
        // (not the decline reason: it describes the customer's finances, which the erasure removed).
        if (owner?.status === "deleted") {
          if (failure !== null) await sql`UPDATE invoices SET failure_reason = NULL WHERE id = ${invoiceId}`.execute(trx);
          return true;
        }
        const start = Date.parse(inv.periodStart);
        // core's quotaChargeSucceeded / quotaChargeFailed, guarded on the block the charge was for (a stale outcome changes nothing).
        if (outcome.status === "paid") {
          // The ceiling of automatic charges keeps counting paid ones (charge_attempts is not reset).
          await sql`UPDATE quota_periods SET blocks = ${inv.block}::integer, exhausted = false, pending_block = NULL, block_attempts = 0, last_failure_at = NULL
                    WHERE account_id = ${inv.accountId} AND period_start = ${start}::bigint AND pending_block = ${inv.block}::integer`.execute(trx);
        } else {
          await sql`UPDATE quota_periods SET pending_block = NULL, last_failure_at = ${outcome.at}::bigint
                    WHERE account_id = ${inv.accountId} AND period_start = ${start}::bigint AND pending_block = ${inv.block}::integer`.execute(trx);
        }
        if (inv.attempt === 1) await insertEvent(trx, quotaExhaustedEvent(eventIds.exhausted, inv, outcome.processorRef, outcome.at), outcome.at);
        await insertEvent(
          trx,
          outcome.status === "paid"
            ? invoicePaidEvent(eventIds.result, inv, outcome.processorRef, outcome.at)
            : invoiceFailedEvent(eventIds.result, inv, outcome.processorRef, outcome.reason, outcome.at),
          outcome.at,
        );
        return true;
      });
    },
    async requestCharge({ accountId, now, anchorDay, invoiceId, baseQuota, blockSize, blockPrice, currency, audit }) {
      // One statement: the guarded quota update (core's quotaManualCharge: exhausted, nothing outstanding, and a
      // block that buys at least one call) and the invoice it implies.
      const r = await audited(audit, (on) => one(
        on,
        sql`WITH t AS (SELECT coalesce(${clockArg(now)}::bigint, benchdata_clock_ms()) AS now),
                 p AS (SELECT b.start_ms FROM t, benchdata_billing_period(t.now, ${anchorDay}::integer) AS b),
                 q AS (
                   UPDATE quota_periods
                      SET pending_block = blocks + 1, charge_attempts = charge_attempts + 1, block_attempts = block_attempts + 1
                    WHERE account_id = ${accountId} AND period_start = (SELECT start_ms FROM p) AND exhausted AND pending_block IS NULL
                      AND ${blockSize}::bigint >= 1 AND ${baseQuota}::bigint + (blocks + 1) * ${blockSize}::bigint > used
                   RETURNING period_start, period_end, pending_block, block_attempts, used
                 )
            INSERT INTO invoices (id, account_id, period_start, period_end, block, attempt, amount, currency, status, idempotency_key, calls_used, created_at)
            SELECT ${invoiceId}, ${accountId}, benchdata_iso(q.period_start), benchdata_iso(q.period_end), q.pending_block, q.block_attempts,
                   ${blockPrice}::bigint, ${currency}, 'pending',
                   benchdata_idempotency_key(${accountId}, benchdata_iso(q.period_start), q.pending_block, q.block_attempts),
                   q.used, (SELECT now FROM t)
            FROM q
            RETURNING *`,
      ), (row) => row !== undefined);
      return r ? invoiceFromRow(r) : null;
    },
    async releaseChargeHold({ accountId, now, anchorDay, audit }) {
      // core's quotaReleaseHold, in one guarded statement.
      const r = await audited(audit, (on) => one(
        on,
        sql`UPDATE quota_periods SET charge_attempts = 0, held_at = NULL
             WHERE account_id = ${accountId}
               AND period_start = (SELECT b.start_ms FROM benchdata_billing_period(coalesce(${clockArg(now)}::bigint, benchdata_clock_ms()), ${anchorDay}::integer) AS b)
            RETURNING account_id`,
      ), (row) => row !== undefined);
      return r !== undefined && r !== null;
    },
    async listInvoices(accountId) {
      return (await all(db, sql`SELECT * FROM invoices WHERE account_id = ${accountId} ORDER BY created_at DESC, id DESC`)).map(invoiceFromRow);
    },

    async saveSnapshot(r) {
      // Delete the slot's snapshot, then insert: under READ COMMITTED a concurrent save of the same slot
      // makes the insert fail with a unique violation (its row was not visible to our delete); the whole
      // transaction is then retried and replaces that row instead.
      for (let attempt = 1; ; attempt++) {
        try {
          return await tx(async (trx) => {
            // The account's row, shared: an erasure (which takes it exclusively) comes wholly before (nothing is
            // stored) or after (and purges this snapshot with the rest).
            if ((await one(trx, sql`SELECT status FROM accounts WHERE id = ${r.accountId} FOR SHARE`))?.status === "deleted") return "deleted" as const;
            const old = await one(
              trx,
              sql`DELETE FROM merchant_snapshots
                  WHERE account_id = ${r.accountId} AND environment = ${r.environment} AND merchant_id = ${r.merchantId} AND period = ${r.period}
                  RETURNING *`,
            );
            await sql`INSERT INTO merchant_snapshots (id, account_id, environment, merchant_id, category, segment, period, metrics, created_at)
                      VALUES (${r.id}, ${r.accountId}, ${r.environment}, ${r.merchantId}, ${r.category}, ${r.segment}, ${r.period},
                              ${JSON.stringify(r.metrics)}::jsonb, ${r.createdAt}::bigint)`.execute(trx);
            return old ? snapshotFromRow(old) : null;
          });
        } catch (e) {
          if (attempt < 20 && (e as { code?: unknown }).code === "23505") continue;
          throw e;
        }
      }
    },
    async listSnapshots(accountId, environment, { merchantId, limit }) {
      const rows = await all(
        db,
        sql`SELECT * FROM merchant_snapshots
            WHERE account_id = ${accountId} AND environment = ${environment} AND (${merchantId ?? null}::text IS NULL OR merchant_id = ${merchantId ?? null}::text)
            ORDER BY created_at DESC, id DESC LIMIT ${limit}::integer`,
      );
      return rows.map(snapshotFromRow);
    },
    async merchantSnapshots(accountId, environment, merchantId) {
      const rows = await all(db, sql`SELECT * FROM merchant_snapshots WHERE account_id = ${accountId} AND environment = ${environment} AND merchant_id = ${merchantId} ORDER BY period`);
      return rows.map(snapshotFromRow);
    },
    async getSnapshot(accountId, environment, snapshotId) {
      const r = await one(db, sql`SELECT * FROM merchant_snapshots WHERE id = ${snapshotId} AND account_id = ${accountId} AND environment = ${environment}`);
      return r ? snapshotFromRow(r) : null;
    },

    async listAccounts(query) {
      const rows = await all(
        db,
        sql`SELECT * FROM accounts
            WHERE CASE WHEN ${query.status ?? null}::text IS NULL THEN status <> 'deleted' ELSE status = ${query.status ?? null}::text END
              AND (${query.tier ?? null}::text IS NULL OR tier = ${query.tier ?? null}::text)
              AND (${query.createdFrom ?? null}::bigint IS NULL OR created_at >= ${query.createdFrom ?? null}::bigint)
              AND (${query.createdBefore ?? null}::bigint IS NULL OR created_at < ${query.createdBefore ?? null}::bigint)
              AND (${query.nameContains ?? null}::text IS NULL OR strpos(lower(name), lower(${query.nameContains ?? null}::text)) > 0)
              AND (created_at, id) > (${query.after?.createdAt ?? Number.MIN_SAFE_INTEGER}::bigint, ${query.after?.id ?? ""}::text)
            ORDER BY created_at, id
            LIMIT ${query.limit}::integer`,
      );
      return rows.map(accountFromRow);
    },
    async deleteAccount({ accountId, now, audit }) {
      return audited(audit, (on) => inTx(on, async (trx) => {
        // The account's row first (racing erasures, key and webhook creations and settlements queue on it), then its
        // day rows, which every admission of its keys locks before anything else: an admission either committed
        // before (and what it wrote is erased below) or comes after, sees the moved version, and writes nothing.
        const row = await one(trx, sql`SELECT * FROM accounts WHERE id = ${accountId} FOR UPDATE`);
        if (!row) return null;
        if (row.status === "deleted") return { account: accountFromRow(row), erased: false };
        const days = [accountId, dayCounterId(accountId, "test")];
        await sql`SELECT 1 FROM day_counters WHERE account_id = ANY (${days}::text[]) ORDER BY account_id FOR UPDATE`.execute(trx);
        // Never before the account's last invoice (another instance's clock may run ahead): the record stays in order.
        const last = await one(trx, sql`SELECT max(greatest(created_at, coalesce(resolved_at, 0))) AS at FROM invoices WHERE account_id = ${accountId}`);
        const at = Math.max(now, last?.at == null ? 0 : Number(last.at));
        // The version trigger moves the account's version; deleting keys and hashes moves admission_epoch.
        const tombstone = (await one(
          trx,
          sql`UPDATE accounts SET name = '', limits = '{}', allowed_cidrs = '{}', billing = '{}', console_ip_exempt = false,
                                  status = 'deleted', suspended_at = NULL, suspended_reason = NULL, deleted_at = ${at}::bigint
              WHERE id = ${accountId} RETURNING *`,
        ))!;
        const keys = sql`SELECT id FROM api_keys WHERE account_id = ${accountId}`;
        await sql`DELETE FROM window_chunks WHERE key_id IN (${keys})`.execute(trx);
        await sql`DELETE FROM rate_windows WHERE key_id IN (${keys})`.execute(trx);
        await sql`DELETE FROM key_hashes WHERE key_id IN (${keys})`.execute(trx);
        for (const table of ["api_keys", "sessions", "sign_in_links", "webhooks", "quota_periods", "recover_budgets"]) {
          await sql`DELETE FROM ${sql.table(table)} WHERE account_id = ${accountId}`.execute(trx);
        }
        // The day rows stay, at zero, so an admission queued on them finds them (rather than making new ones for an
        // erased account); the day they held moves to usage_days by its trigger, deleted just after.
        await sql`UPDATE day_counters SET day = 0, count = 0 WHERE account_id = ANY (${days}::text[])`.execute(trx);
        await sql`DELETE FROM usage_days WHERE account_id = ANY (${days}::text[])`.execute(trx);
        // Invoices stay for the legal record; a decline reason is the customer's, and a charge not yet in flight is never made.
        await sql`UPDATE invoices SET failure_reason = NULL WHERE account_id = ${accountId} AND status = 'failed'`.execute(trx);
        await sql`UPDATE invoices SET status = 'failed', failure_reason = 'account_deleted', resolved_at = ${at}::bigint, lease_token = NULL
                  WHERE account_id = ${accountId} AND status = 'pending' AND NOT (lease_token IS NOT NULL AND lease_until > ${now}::bigint)`.execute(trx);
        // Audit entries stay, without what identifies a person; the hash covers their digest, so the chain still verifies.
        await sql`UPDATE audit_log SET client_address = NULL, personal = NULL, salt = NULL, erased_at = ${at}::bigint
                  WHERE account_id = ${accountId} AND erased_at IS NULL`.execute(trx);
        // Unfinished until a purge finds nothing left: should this instance die before, the pruning worker finds it.
        await sql`INSERT INTO unfinished_erasures (account_id) VALUES (${accountId}) ON CONFLICT (account_id) DO NOTHING`.execute(trx);
        return { account: accountFromRow(tombstone), erased: true };
      }), (r) => r !== null && r.erased);
    },
    async purgeAccount({ accountId, limit }) {
      const n = Math.max(1, Math.floor(limit));
      return tx(async (trx) => {
        if ((await one(trx, sql`SELECT status FROM accounts WHERE id = ${accountId}`))?.status !== "deleted") return 0;
        // Deliveries before their attempts: a worker completing one meanwhile is waited for, and the attempt it
        // recorded is then seen by the next statement.
        for (;;) {
          const gone = await all<{ id: string }>(trx, sql`DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE account_id = ${accountId} LIMIT ${n}::integer) RETURNING id`);
          if (gone.length > 0) {
            const attempts = await sql`DELETE FROM delivery_attempts WHERE delivery_id = ANY (${gone.map((d) => d.id)}::text[])`.execute(trx);
            return gone.length + Number(attempts.numAffectedRows ?? 0);
          }
          for (const table of ["events", "merchant_snapshots"]) {
            const r = await sql`DELETE FROM ${sql.table(table)} WHERE id IN (SELECT id FROM ${sql.table(table)} WHERE account_id = ${accountId} LIMIT ${n}::integer)`.execute(trx);
            if (Number(r.numAffectedRows ?? 0) > 0) return Number(r.numAffectedRows);
          }
          const usage = await keyUsage.purge(trx, accountId, n);
          if (usage > 0) return usage;
          // 0 MUST mean nothing is left. Deleting nothing can also mean a concurrent purge (a second DELETE) held the
          // rows these statements picked and deleted them first: look again, and go on while any remain (each new
          // statement sees what that purge committed, and picks other rows).
          const left = await one<{ left: boolean }>(
            trx,
            sql`SELECT EXISTS (SELECT 1 FROM deliveries WHERE account_id = ${accountId}) OR EXISTS (SELECT 1 FROM events WHERE account_id = ${accountId})
                       OR EXISTS (SELECT 1 FROM merchant_snapshots WHERE account_id = ${accountId}) OR EXISTS (SELECT 1 FROM key_usage_hours WHERE account_id = ${accountId})
                       OR EXISTS (SELECT 1 FROM key_usage_days WHERE account_id = ${accountId}) OR EXISTS (SELECT 1 FROM key_last_used WHERE account_id = ${accountId}) AS left`,
          );
          if (left?.left !== true) {
            // Nothing left, and nothing can be made for a deleted account: the erasure is finished.
            await sql`DELETE FROM unfinished_erasures WHERE account_id = ${accountId}`.execute(trx);
            return 0;
          }
        }
      });
    },
    async unfinishedErasures({ after, limit, of }) {
      const only = of === undefined ? sql`` : sql` AND account_id = ANY (${[...of]}::text[])`;
      const rows = await all<{ account_id: string }>(
        db,
        sql`SELECT account_id FROM unfinished_erasures WHERE account_id > ${after ?? ""}${only} ORDER BY account_id LIMIT ${Math.max(0, Math.floor(limit))}::integer`,
      );
      return rows.map((r) => r.account_id);
    },
    async accountSessions(accountId) {
      const rows = await all(
        db,
        sql`SELECT 'session' AS kind, created_at, expires_at FROM sessions WHERE account_id = ${accountId}
            UNION ALL SELECT 'sign_in_link', created_at, expires_at FROM sign_in_links WHERE account_id = ${accountId}
            ORDER BY created_at, kind`,
      );
      return rows.map((r) => ({ kind: r.kind as HeldSession["kind"], createdAt: num(r.created_at), expiresAt: num(r.expires_at) }));
    },
    async accountUsage(accountId) {
      const ids = [accountId, dayCounterId(accountId, "test")];
      const days = await all(
        db,
        sql`SELECT day, account_id, count FROM usage_days WHERE account_id = ANY (${ids}::text[])
            UNION ALL SELECT day, account_id, count FROM day_counters WHERE account_id = ANY (${ids}::text[]) AND count > 0
            ORDER BY day, account_id`,
      );
      const periods = await all(db, sql`SELECT * FROM quota_periods WHERE account_id = ${accountId} ORDER BY period_start`);
      return {
        days: days.map((r) => ({ day: num(r.day), environment: r.account_id === accountId ? ("live" as const) : ("test" as const), count: num(r.count) })),
        periods: periods.map((r) => ({ periodStart: num(r.period_start), periodEnd: num(r.period_end), used: num(r.used), blocks: num(r.blocks), exhausted: Boolean(r.exhausted), heldAt: numOrNull(r.held_at) })),
      };
    },
    async accountDeliveries(accountId, page) {
      const [at, id] = pageStart(page);
      const rows = await all(db, sql`${DELIVERY_SELECT} WHERE d.account_id = ${accountId} AND (d.created_at, d.id) > (${at}::bigint, ${id}::text) ORDER BY d.created_at, d.id LIMIT ${page.limit}::integer`);
      return rows.map(deliveryWithLog);
    },
    async accountEvents(accountId, page) {
      const [at, id] = pageStart(page);
      const rows = await all(db, sql`SELECT * FROM events WHERE account_id = ${accountId} AND (created_at, id) > (${at}::bigint, ${id}::text) ORDER BY created_at, id LIMIT ${page.limit}::integer`);
      return rows.map((r) => ({ id: String(r.id), accountId: String(r.account_id), type: r.type as EventType, createdAt: num(r.created_at), body: String(r.body) }));
    },
    async accountSnapshots(accountId, page) {
      const [at, id] = pageStart(page);
      const rows = await all(
        db,
        sql`SELECT * FROM merchant_snapshots WHERE account_id = ${accountId} AND (created_at, id) > (${at}::bigint, ${id}::text) ORDER BY created_at, id LIMIT ${page.limit}::integer`,
      );
      return rows.map(snapshotFromRow);
    },

    async appendAudit(draft) {
      return tx((trx) => appendAuditIn(trx, draft, draft.accountId));
    },
    async listAudit(query) {
      const desc = query.order === "desc";
      const cursor = desc ? sql`seq < ${query.beforeSeq ?? Number.MAX_SAFE_INTEGER}::bigint` : sql`seq > ${query.afterSeq ?? 0}::bigint`;
      const rows = await all(
        db,
        sql`SELECT * FROM audit_log
            WHERE ${cursor}
              AND (${query.accountId ?? null}::text IS NULL OR account_id = ${query.accountId ?? null}::text)
              AND (${query.actor ?? null}::text IS NULL OR actor = ${query.actor ?? null}::text)
              AND (${query.action ?? null}::text IS NULL OR action = ${query.action ?? null}::text)
              AND (${query.from ?? null}::bigint IS NULL OR at >= ${query.from ?? null}::bigint)
              AND (${query.to ?? null}::bigint IS NULL OR at < ${query.to ?? null}::bigint)
            ORDER BY seq ${sql.raw(desc ? "DESC" : "ASC")} LIMIT ${query.limit}::integer`,
      );
      return rows.map(auditEntryFromRow);
    },
    async auditHead() {
      return auditHeadFromRow((await one(db, sql`SELECT seq, hash FROM audit_head WHERE id = 1`))!);
    },
    async prune(input) {
      const target = input.target;
      if (!isIndexedTarget(target)) return keyUsage.prune(input);
      return pruneResultOf(input, (await one(db, postgresPruneBatch({ ...input, target })))!);
    },

    addKeyUsage: (batch) => keyUsage.addKeyUsage(batch),
    keyUsage: (query) => keyUsage.keyUsage(query),
    keysLastUsed: (accountId) => keyUsage.keysLastUsed(accountId),

    benchmarks,
    async replaceCells(prepared, replace) {
      try {
        return await tx((trx) => replaceCellsIn(trx, prepared, replace));
      } finally {
        benchmarks.invalidate();
      }
    },
  };

  const guarded = failClosed(storage, isPostgresUnavailable);
  registerImportBackend(guarded, {
    withStaging: async (fn) => {
      try {
        return await db.transaction().execute((trx) => fn(postgresStaging(trx)));
      } catch (e) {
        throw mapUnavailable(e, isPostgresUnavailable);
      } finally {
        benchmarks.invalidate();
      }
    },
  });
  return guarded;
}

/**
 * Import staging in PostgreSQL: a temporary table inside the import's own transaction (not WAL-logged,
 * dropped at commit), read back through a server-side cursor, and published in the same transaction, so
 * an import is all or nothing by construction. Other sessions see nothing until the commit.
 */
function postgresStaging(trx: Db): Staging {
  const codec = new RowCodec();
  let created: Promise<unknown> | null = null;
  const ready = (): Promise<unknown> =>
    (created ??= (async () => {
      // Sorting a million staged rows in memory rather than in temporary files.
      await sql`SET LOCAL work_mem = '128MB'`.execute(trx);
      await sql`CREATE TEMP TABLE benchdata_import_obs (
                  grp integer NOT NULL, business_id text COLLATE "C" NOT NULL, seg integer NOT NULL,
                  line integer NOT NULL, value double precision NOT NULL
                ) ON COMMIT DROP`.execute(trx);
    })());
  return {
    async add(rows: readonly StagedRow[]) {
      await ready();
      await sql`INSERT INTO benchdata_import_obs (grp, business_id, seg, line, value)
                SELECT * FROM unnest(${rows.map((r) => codec.group(r))}::integer[], ${rows.map((r) => r.businessId)}::text[],
                                     ${rows.map((r) => codec.segment(r.segment))}::integer[], ${rows.map((r) => r.line)}::integer[],
                                     ${rows.map((r) => r.value)}::double precision[])`.execute(trx);
    },
    async *ordered() {
      await ready();
      await sql`DECLARE benchdata_import_cursor NO SCROLL CURSOR FOR
                SELECT grp, business_id, seg, line, value FROM benchdata_import_obs ORDER BY grp, business_id, seg, line`.execute(trx);
      let failed = false;
      try {
        for (;;) {
          const rows = await all<{ grp: number; business_id: string; seg: number; line: number; value: number }>(trx, sql`FETCH FORWARD 20000 FROM benchdata_import_cursor`).catch((e: unknown) => {
            failed = true;
            throw e;
          });
          if (rows.length === 0) break;
          yield rows.map((r) => codec.row(r.line, r.business_id, r.grp, r.seg, r.value));
        }
      } finally {
        // After a failed FETCH the transaction is aborted (and rolls back): closing would only mask the error.
        if (!failed) await sql`CLOSE benchdata_import_cursor`.execute(trx);
      }
    },
    async countBusinesses() {
      await ready();
      return num((await one(trx, sql`SELECT count(DISTINCT business_id) AS n FROM benchdata_import_obs`))?.n ?? 0);
    },
    publish: (cells, replace) => replaceCellsIn(trx, cells, replace),
  };
}
