/**
 * The PL/pgSQL mirror of core's decisions. PostgreSQL keeps the admission as one statement so a server's whole
 * batch of in-flight requests is decided in one round trip; everything that statement decides is decided first by
 * core, in TypeScript, and restated here. Each block below names the core function it mirrors.
 *
 * How the two are kept in step: admit-differential.test.ts runs random sequences of requests on PostgreSQL and
 * holds every answer, window, day count, quota row, invoice and event to core's `admission` itself as the
 * oracle (and outbox-differential.test.ts does the same for the outbox). A change to a rule changes core first;
 * the differential test then fails here until this file follows.
 *
 * The text is applied by functions.ts after the migrations (see FUNCTIONS_REVISION there); the blocks are joined
 * in this order, byte for byte, so moving text between them changes nothing the database sees.
 */

/** `benchdata_clock_ms` mirrors the Clock given to every store (core/src/clock/clock.ts): one time for windows, days and periods. */
export const CLOCK_MS = `
-- The database's clock in Unix ms (clock_timestamp, not now(): the time of the call, not of the transaction).
CREATE OR REPLACE FUNCTION benchdata_clock_ms() RETURNS bigint LANGUAGE sql VOLATILE AS $$
  SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
$$;

`;

/** `benchdata_iso` mirrors `isoTime` (core/src/clock/clock.ts). */
export const ISO_TIME = `-- ISO 8601 UTC with milliseconds and Z, exactly as core's isoTime (Date#toISOString) writes it.
CREATE OR REPLACE FUNCTION benchdata_iso(ms bigint) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT to_char(TIMESTAMP '1970-01-01 00:00:00' + ms * INTERVAL '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

`;

/** `benchdata_anchored` mirrors the anchored period boundary of `billingPeriod` (core/src/quota/billing-period.ts). */
export const ANCHORED = `-- Midnight UTC (Unix ms) of the anchor day in month m (1-12) of year y; an anchor past the month's end
-- falls on its last day (core's billingPeriod).
CREATE OR REPLACE FUNCTION benchdata_anchored(y integer, m integer, anchor integer) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT ((make_date(y, m, 1)
           + (least(anchor, extract(day FROM make_date(y, m, 1) + INTERVAL '1 month' - INTERVAL '1 day')::integer) - 1))
          - DATE '1970-01-01')::bigint * 86400000
$$;

`;

/** `benchdata_billing_period` mirrors `billingPeriod` (core/src/quota/billing-period.ts). */
export const BILLING_PERIOD = `-- The billing period [start_ms, end_ms) containing now_ms, as core's billingPeriod computes it.
CREATE OR REPLACE FUNCTION benchdata_billing_period(now_ms bigint, anchor integer, OUT start_ms bigint, OUT end_ms bigint)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  d date := DATE '1970-01-01' + floor(now_ms / 86400000.0)::integer;
  y integer := extract(year FROM d);
  m integer := extract(month FROM d);
BEGIN
  start_ms := benchdata_anchored(y, m, anchor);
  IF start_ms > now_ms THEN
    m := m - 1;
    IF m < 1 THEN m := 12; y := y - 1; END IF;
    start_ms := benchdata_anchored(y, m, anchor);
  END IF;
  end_ms := CASE WHEN m = 12 THEN benchdata_anchored(y + 1, 1, anchor) ELSE benchdata_anchored(y, m + 1, anchor) END;
END $$;

`;

/** `benchdata_idempotency_key` mirrors `chargeIdempotencyKey` (core/src/quota/quota.ts). */
export const IDEMPOTENCY_KEY = `-- core's chargeIdempotencyKey: account, period and block, plus the attempt after a definite failure.
CREATE OR REPLACE FUNCTION benchdata_idempotency_key(p_account_id text, p_period_start_iso text, p_block integer, p_attempt integer)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'benchdata:' || p_account_id || ':' || p_period_start_iso || ':block-' || p_block
         || CASE WHEN p_attempt <= 1 THEN '' ELSE ':attempt-' || p_attempt END
$$;

`;

/** `benchdata_ulid` mirrors `newId`'s ULID (core/src/ids/new-id.ts). */
export const ULID = `-- A ULID for time ms: 10 Crockford base32 characters of the time's 50 low bits, then 16 of 80 random
-- bits, taken from a version-4 UUID (gen_random_uuid is built in since PostgreSQL 13) around its fixed
-- version and variant nibbles.
CREATE OR REPLACE FUNCTION benchdata_ulid(ms bigint) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  h text := replace(gen_random_uuid()::text, '-', '');
  bits bit(130) := substring(ms::bit(64) FROM 15) || ('x' || substr(h, 1, 12) || substr(h, 14, 3) || substr(h, 18, 5))::bit(80);
  ulid text := '';
BEGIN
  FOR i IN 0..25 LOOP
    ulid := ulid || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substring(bits FROM 5 * i + 1 FOR 5)::integer + 1, 1);
  END LOOP;
  RETURN ulid;
END $$;

`;

/** `benchdata_insert_event` mirrors `serializeEvent` and the outbox write of core/src/events (events.ts, builders.ts). */
export const INSERT_EVENT = `-- Writes an event and one pending delivery per webhook of its account subscribed to its type (the
-- outbox), in the caller's transaction. Delivery ids are dlv_<ULID> stamped with the event's time;
-- their seq (the column's default) records creation order, which claims follow among equally due ones.
CREATE OR REPLACE FUNCTION benchdata_insert_event(p_id text, p_type text, p_account_id text, p_created_at bigint, p_body text)
RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n integer;
BEGIN
  INSERT INTO events (id, type, account_id, created_at, body) VALUES (p_id, p_type, p_account_id, p_created_at, p_body);
  INSERT INTO deliveries (id, event_id, webhook_id, account_id, status, attempts, next_attempt_at, created_at)
  SELECT 'dlv_' || benchdata_ulid(p_created_at), p_id, w.id, p_account_id, 'pending', 0, p_created_at, p_created_at
  FROM webhooks w
  WHERE w.account_id = p_account_id AND w.status = 'active' AND p_type = ANY (w.events)
  ORDER BY w.id;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;

`;

/** `benchdata_put_quota` mirrors the quota row `admission` returns in its writes (core/src/rate-limit/admission.ts). */
export const PUT_QUOTA = `-- Writes back a quota row a batch held (benchdata_admit_arrays): the fields an admission can change. plpgsql,
-- not sql: a SQL function's body is parsed and planned again on every call, a plpgsql statement once a session.
CREATE OR REPLACE FUNCTION benchdata_put_quota(q quota_periods) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE quota_periods
     SET used = q.used, exhausted = q.exhausted, pending_block = q.pending_block, charge_attempts = q.charge_attempts,
         block_attempts = q.block_attempts, held_at = q.held_at
   WHERE account_id = q.account_id AND period_start = q.period_start;
END $$;

`;

/** `benchdata_admit_arrays` mirrors `admission` for a batch (core/src/rate-limit/admission.ts): the window rule of `slidingWindow`/`recordAdmission` (core/src/rate-limit/sliding-window.ts), the day counter, and `quotaRequest`/`warningThreshold` (core/src/quota/quota.ts) with their events. */
export const ADMIT_ARRAYS = `-- Data requests asking to be admitted, in one statement and one round trip for all of them: for each, the
-- key's sliding window, the account's UTC-day counter and, for live keys (quota), the period's quota, decided
-- and applied in one transaction. It mirrors core's slidingWindow, dailyWindow, quotaRequest and
-- warningThreshold step by step; the conformance suite and the differential test hold it to the memory store.
--
-- The admissions come as parallel arrays, one element per admission (postgres-storage.ts builds them; arrays,
-- not JSON, so that nothing is parsed twice and lookups go through the indexes), after the distinct accounts
-- they name. An admission with an expected hash is admitted only if that hash still names an active key, not
-- retired by a rotation, of an account at the expected version; otherwise it is stale and changes nothing.
--
-- Remembered key checks: the account's version is read by every batch, but the key check (a join of key_hashes
-- and api_keys) is skipped for an admission flagged in p_trusted when the statement that would make it reads
-- admission_epoch = p_epoch. The caller flags only the hashes it saw pass that check in a statement that read
-- the same epoch; since the epoch moves with every change of those tables, in the same transaction, and never
-- repeats, the tables are then exactly as they were, and the check would pass again. Old servers send no epoch
-- (the wrapper below) and every check is made. The epoch read is returned, for the caller to remember by
-- (postgres/verified-keys.ts).
--
-- The result is compact, for the server to put together (postgres-storage.ts, admitResults), because building
-- JSON objects in plpgsql costs more than the decision: [clock, kinds, minute remaining, minute resets, day
-- remaining, retry-after, whole results, epoch, days counted], each but the first, the eighth and the last an
-- array in the admissions' order. Kinds: 0 stale, 1 allowed (no quota), 2 and 3 rate limited by the minute and
-- by the day, 4 a quota admission, whose result (AdmitResult's JSON, built by the quota step) is in the whole
-- results. What the caller knows is left out: the limits, the time used (its own now, or the clock when it gave
-- none) and the day's reset, which follows from that time; the days counted are NULL, or an array holding the
-- day an admission counted toward where that is not its own (core's countedDay: a clock behind the stored day).
--
-- Concurrency: one lock per account serialises everything an admission touches. The batch first locks the
-- day rows of its accounts (SELECT ... FOR UPDATE, in account order), and a key's window and its account's
-- quota rows are only ever written under that account's lock (a key belongs to one account for good; callers
-- pass the key's own account). So concurrent batches, from any number of servers, queue on those rows and each
-- decides on the state the previous one committed: no read-then-write race. Every batch locks in the same
-- order (accounts ascending; the items are handled in account order, so quota rows follow it too). An
-- account's day row normally exists from its creation (createAccount writes it); one that does not (an account
-- made by an older server, or an account id without an account in tests) is created once the existing ones are
-- locked. Such a freshly inserted row is held out of that order, so two batches creating rows can still
-- deadlock: PostgreSQL's detector aborts one, which the caller retries whole. Row locks are taken per
-- account, not per key, because each one is a write (and a WAL record), and a batch of a hundred keys has far
-- fewer accounts.
--
-- Quota rows: a live key's admission counts quota on its account's row of the billing period of its time. The
-- batch keeps the row it is working on in hand: locked and read when the batch first needs it, stepped in
-- memory by each admission of that account and period, and written back once, when the batch moves to another
-- row and at the end, instead of an UPDATE per admission. Nothing in the batch reads quota_periods in between,
-- and the admissions go in the same order as before, so every step decides on the same state. Warning events
-- and invoices are written at the step that makes them.
--
-- Durability: a batch that changes no billing state (no admission reached the quota step, so no quota use,
-- event or invoice) commits with synchronous_commit off when it is its own transaction, as the server sends
-- it: its commit does not wait for the WAL flush, so a crash of PostgreSQL can forget the rate-limit
-- admissions of its last moments (at most about three times wal_writer_delay), never corrupt anything, and
-- never lose money. A batch that reached the quota step commits as usual. See docs/operations.md.
--
-- An admission's now NULL means "use the database's clock": one clock for windows, UTC days and billing
-- periods, whatever the callers' clocks say.
CREATE OR REPLACE FUNCTION benchdata_admit_arrays(
  p_accounts text[],
  p_nows bigint[],
  p_key_ids text[],
  p_account_ids text[],
  p_per_minute integer[],
  p_per_day integer[],
  p_window_ms bigint[],
  p_expect_hashes text[],
  p_expect_versions bigint[],
  p_quota boolean[],
  p_anchor_day integer[],
  p_base_quota bigint[],
  p_block_size bigint[],
  p_block_price bigint[],
  p_currency text[],
  p_retry_after_failure_ms bigint[],
  p_max_auto_charges integer[],
  p_warning_event_ids text[],
  p_invoice_ids text[],
  p_epoch bigint,
  p_trusted boolean[]
) RETURNS json LANGUAGE plpgsql VOLATILE
-- Every statement here reads rows by key, one admission's at a time. On small tables the planner prefers a
-- sequential scan (or a hash or merge join) that reads the whole table, which costs more than the index at
-- any size: keep to the indexes, and plan each statement once (custom plans for each array's length would be
-- re-planned on every call).
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET plan_cache_mode = force_generic_plan
-- A lock held elsewhere for long (a stuck session) fails this batch (the server answers 503) instead of
-- stalling every request of the server behind it.
SET lock_timeout = '10s'
AS $$
DECLARE
  v_n integer := cardinality(p_key_ids);
  -- Nothing written before this call in its transaction: the commit is this batch's alone (see Durability).
  v_alone boolean := pg_current_xact_id_if_assigned() IS NULL;
  v_billing boolean := false;
  v_clock bigint;
  v_epoch bigint;
  v_kind smallint[] := array_fill(0::smallint, ARRAY[v_n]);
  v_mrem integer[] := array_fill(0, ARRAY[v_n]);
  v_mreset bigint[] := array_fill(0::bigint, ARRAY[v_n]);
  v_drem integer[] := array_fill(0, ARRAY[v_n]);
  v_retry bigint[] := array_fill(0::bigint, ARRAY[v_n]);
  v_whole json[] := array_fill(NULL::json, ARRAY[v_n]);
  it record;
  -- The batch's day rows (account order), as read and as the batch leaves them, and its accounts' versions.
  v_accs text[];
  v_ddays0 integer[];
  v_dcounts0 integer[];
  v_ddays integer[];
  v_dcounts integer[];
  v_versions bigint[];
  -- The window in hand: the key whose admissions are being decided (they come one after another), and the
  -- changed windows' rows, written back after the loop. A key's log is kept in chunks of v_size stamps
  -- (window_chunks, see WINDOW_CHUNKS): the stamps at indices v_head … v_next − 1, stamp i in chunk i / v_size.
  -- In hand: the chunk the next stamp goes to (v_tc, v_tail; written back when it fills or the key changes),
  -- and two chunks read (v_hc/v_hs, where the live stamps start; v_xc/v_xs, the limit-th newest stamp's).
  v_size bigint := coalesce(nullif(current_setting('benchdata.window_chunk', true), '')::bigint, 128);
  v_key text;
  v_head bigint;
  v_head0 bigint;
  v_next bigint;
  v_tc bigint;
  v_tail bigint[];
  v_tdirty boolean := false;
  v_hc bigint;
  v_hs bigint[];
  v_xc bigint;
  v_xs bigint[];
  v_arr bigint[];
  v_c bigint;
  v_base bigint;
  v_end bigint;
  v_i bigint;
  v_p bigint;
  v_oldest bigint;
  r_head bigint;
  r_next bigint;
  r_stamps bigint[];
  v_wdirty boolean := false;
  v_w integer;
  v_ws rate_windows[] := '{}';
  v_lo bigint;
  v_live bigint;
  m_allowed boolean;
  m_remaining integer;
  m_reset bigint;
  m_retry bigint;
  d_count integer;
  v_day integer;
  v_dahead integer[];
  d_allowed boolean;
  d_reset bigint;
  d_retry bigint;
  -- The quota row in hand (see Quota rows), whether it changed since it was read, and the billing period last
  -- worked out (its anchor day and bounds).
  q quota_periods%ROWTYPE;
  q_dirty boolean := false;
  q_anchor integer;
  q_start bigint;
  q_end bigint;
  q_allowance bigint;
  q_t bigint;
  q_held_id text;
  q_warn bigint;
  q_flipped boolean;
  q_due boolean;
  q_hold text;
  q_held_now boolean;
  q_minute json;
  q_day json;
BEGIN
  -- The accounts' day rows, locked in account order and counted by one statement. An account without one (made
  -- by an older server) gets it now, and the rows are locked again with it (the others are already held).
  IF (SELECT count(*) FROM (SELECT 1 FROM day_counters WHERE account_id = ANY (p_accounts) ORDER BY account_id FOR UPDATE) AS d)
     < cardinality(p_accounts) THEN
    INSERT INTO day_counters (account_id, day, count)
    SELECT u.id, 0, 0 FROM unnest(p_accounts) AS u(id) ORDER BY 1
    ON CONFLICT (account_id) DO NOTHING;
    PERFORM 1 FROM (SELECT account_id FROM day_counters WHERE account_id = ANY (p_accounts) ORDER BY account_id FOR UPDATE) AS d;
  END IF;
  -- The database's time once the locks are held: a batch that waited for another decides after it, never before.
  v_clock := benchdata_clock_ms();
  -- Read after the locks, so a change committed while this batch waited is seen.
  SELECT array_agg(d.account_id ORDER BY d.account_id), array_agg(d.day ORDER BY d.account_id),
         array_agg(d.count ORDER BY d.account_id), array_agg(acc.version ORDER BY d.account_id)
    INTO v_accs, v_ddays0, v_dcounts0, v_versions
    FROM day_counters d LEFT JOIN accounts acc ON acc.id = split_part(d.account_id, '/', 1)
   WHERE d.account_id = ANY (p_accounts);
  v_ddays := v_ddays0;
  v_dcounts := v_dcounts0;

  -- The admissions in account and key order (sorted before the windows are joined, so the sorts move no
  -- window), each with its key's window and whether it may go ahead: its account's day row is in hand and, if it
  -- has an expected hash, that hash still names an active, unretired key, this one, of this account, at the
  -- expected version. The key check is one join, skipped for the admissions the caller says it verified at the
  -- epoch this statement reads (see admission_epoch): no key or hash has changed since.
  FOR it IN
    SELECT x.i, x.key_id, x.account_id, x.now, floor(x.now / 86400000.0)::integer AS day, x.per_minute, x.per_day, x.window_ms,
           x.quota, x.again, x.a, x.epoch, r.key_id IS NOT NULL AS has_window, r.stamps, r.head, r.next, t.stamps AS tail,
           x.a IS NOT NULL AND (x.expect_hash IS NULL
             OR (coalesce(x.trusted OR (k.id = x.key_id AND k.account_id = split_part(x.account_id, '/', 1)), false)
                 AND v_versions[x.a] IS NOT DISTINCT FROM x.expect_version)) AS ok
      FROM (SELECT u.ord::integer AS i, u.key_id, u.account_id, coalesce(u.now, v_clock) AS now, u.per_minute, u.per_day,
                   u.window_ms, u.expect_hash, u.expect_version, coalesce(u.quota, false) AS quota,
                   array_position(v_accs, u.account_id) AS a, e.epoch, coalesce(u.trusted AND e.epoch = p_epoch, false) AS trusted,
                   -- A key given with two accounts (a caller's mistake) comes round again in the later account's turn.
                   u.account_id <> min(u.account_id COLLATE "C") OVER (PARTITION BY u.key_id COLLATE "C") AS again
              FROM unnest(p_nows, p_key_ids, p_account_ids, p_per_minute, p_per_day, p_window_ms, p_expect_hashes,
                          p_expect_versions, p_quota, p_trusted)
                   WITH ORDINALITY AS u(now, key_id, account_id, per_minute, per_day, window_ms, expect_hash, expect_version,
                                        quota, trusted, ord),
                   (SELECT (SELECT epoch FROM admission_epoch WHERE id = 1) AS epoch OFFSET 0) AS e
             ORDER BY u.account_id COLLATE "C", u.key_id COLLATE "C", 1) AS x
      LEFT JOIN rate_windows r ON r.key_id = x.key_id
      LEFT JOIN window_chunks t ON t.key_id = x.key_id AND t.chunk = r.next / v_size
      LEFT JOIN LATERAL (
        SELECT k.id, k.account_id FROM key_hashes h JOIN api_keys k ON k.id = h.key_id AND k.is_active
         WHERE NOT x.trusted AND h.hash = x.expect_hash AND NOT h.retired
        -- Kept a subquery (not merged into the join), so that NOT x.trusted gates its index scans.
        OFFSET 0
      ) AS k ON true
     ORDER BY x.account_id COLLATE "C", x.key_id COLLATE "C", x.i
  LOOP
    IF NOT it.ok THEN
      IF it.a IS NULL THEN
        RAISE EXCEPTION 'benchdata_admit_arrays: no day row for account %', it.account_id;
      END IF;
      CONTINUE;
    END IF;

    IF it.key_id IS DISTINCT FROM v_key THEN
      IF v_key IS NOT NULL THEN
        -- The key in hand is done with: its last chunk written back, its chunks wholly behind head deleted, its row kept.
        IF v_tdirty THEN
          INSERT INTO window_chunks (key_id, chunk, stamps) VALUES (v_key, v_tc, v_tail)
            ON CONFLICT (key_id, chunk) DO UPDATE SET stamps = excluded.stamps;
          v_tdirty := false;
        END IF;
        IF v_head / v_size > v_head0 / v_size THEN
          DELETE FROM window_chunks WHERE key_id = v_key AND chunk < v_head / v_size;
        END IF;
        IF v_wdirty AND v_w IS NOT NULL THEN
          v_ws[v_w] := ROW(v_key, '{}'::bigint[], v_head, v_next)::rate_windows;
        ELSIF v_wdirty THEN
          v_ws := array_append(v_ws, ROW(v_key, '{}'::bigint[], v_head, v_next)::rate_windows);
        END IF;
      END IF;
      v_key := it.key_id;
      v_wdirty := false;
      v_w := NULL;
      v_hc := NULL;
      v_xc := NULL;
      v_tail := NULL;
      IF it.again THEN
        -- The key's window as this batch left it, if it changed it.
        v_w := array_position(ARRAY(SELECT u.key_id FROM unnest(v_ws) AS u), it.key_id);
      END IF;
      IF v_w IS NOT NULL THEN
        r_head := (v_ws[v_w]).head;
        r_next := (v_ws[v_w]).next;
        r_stamps := '{}';
      ELSIF it.has_window THEN
        r_head := it.head;
        r_next := it.next;
        r_stamps := it.stamps;
        v_tail := it.tail;
      ELSE
        -- A key without a window row (made by an older server): created now, guarded by its account's lock.
        INSERT INTO rate_windows (key_id, stamps, head, next) VALUES (it.key_id, '{}', 0, 0) ON CONFLICT (key_id) DO NOTHING;
        SELECT head, next, stamps INTO r_head, r_next, r_stamps FROM rate_windows WHERE key_id = it.key_id;
      END IF;
      IF cardinality(r_stamps) > 0 THEN
        -- A whole log in the row, written by a server before schema 14: split into chunks now.
        DELETE FROM window_chunks WHERE key_id = it.key_id;
        INSERT INTO window_chunks (key_id, chunk, stamps)
          SELECT it.key_id, (u.o - 1) / v_size, array_agg(u.s ORDER BY u.o)
            FROM unnest(r_stamps) WITH ORDINALITY AS u(s, o) GROUP BY (u.o - 1) / v_size;
        r_head := 0;
        r_next := cardinality(r_stamps);
        v_tail := NULL;
        v_wdirty := true;
      END IF;
      v_head := coalesce(r_head, 0);
      v_head0 := v_head;
      v_next := coalesce(r_next, 0);
      v_tc := v_next / v_size;
      IF v_tail IS NULL THEN
        SELECT stamps INTO v_tail FROM window_chunks WHERE key_id = it.key_id AND chunk = v_tc;
      END IF;
      v_tail := coalesce(v_tail, '{}');
    END IF;

    -- The sliding window (core's slidingWindow): the stamps still inside it, then room for one more? The log is
    -- ascending, so width_bucket finds the first stamp inside the window, chunk by chunk from head: it counts
    -- the stamps at or before the window's start by the same halving search as core's. Whole chunks of expired
    -- stamps are passed once (head moves past them when the request is admitted).
    v_lo := v_head;
    WHILE v_lo < v_next LOOP
      v_c := v_lo / v_size;
      IF v_c = v_tc THEN
        v_arr := v_tail;
      ELSE
        IF v_hc IS DISTINCT FROM v_c THEN
          SELECT stamps INTO v_hs FROM window_chunks WHERE key_id = v_key AND chunk = v_c;
          v_hc := v_c;
        END IF;
        v_arr := v_hs;
      END IF;
      v_base := v_c * v_size;
      v_end := least(coalesce(cardinality(v_arr), 0), v_next - v_base);
      IF v_end <= v_lo - v_base THEN
        RAISE EXCEPTION 'benchdata_admit_arrays: window chunk % of key % is missing stamps', v_c, v_key;
      END IF;
      v_lo := v_lo + width_bucket(it.now - it.window_ms, v_arr[(v_lo - v_base + 1):v_end]);
      EXIT WHEN v_lo < v_base + v_end;
    END LOOP;
    v_live := v_next - v_lo;
    -- The oldest stamp that counts once now is in (the minute's reset when admitted).
    v_oldest := CASE WHEN v_live = 0 THEN it.now ELSE least(v_arr[v_lo - v_base + 1], it.now) END;
    -- The account's UTC day (core's dailyWindow), from the batch's copy of its day row; the day counted is the
    -- later of the request's and the stored one (core's countedDay: the counter never moves back).
    v_day := greatest(it.day, v_ddays[it.a]);
    IF v_day <> it.day THEN
      -- Made whole (1 … n) at its first use: an assignment to a NULL array would start it at it.i, and the answer
      -- (json_build_array ignores bounds) would no longer line up with the admissions.
      IF v_dahead IS NULL THEN
        v_dahead := array_fill(NULL::integer, ARRAY[v_n]);
      END IF;
      v_dahead[it.i] := v_day;
    END IF;
    d_count := CASE WHEN v_ddays[it.a] = v_day THEN v_dcounts[it.a] ELSE 0 END;

    IF v_live < it.per_minute AND d_count < it.per_day THEN
      -- Admitted by the rate limits: apply (to the chunk in hand, written back when it fills or the key changes).
      -- The expired stamps leave the log (head moves); now joins it in order: a clock that stepped back can leave
      -- stamps newer than now, and the insertion point is found from the end, chunk by chunk.
      v_head := v_lo;
      v_p := v_next;
      IF v_next > v_head AND NOT (v_next > v_tc * v_size AND v_tail[v_next - v_tc * v_size] <= it.now) THEN
        LOOP
          v_c := (v_p - 1) / v_size;
          IF v_c = v_tc THEN
            v_arr := v_tail;
          ELSE
            IF v_hc IS DISTINCT FROM v_c THEN
              SELECT stamps INTO v_hs FROM window_chunks WHERE key_id = v_key AND chunk = v_c;
              v_hc := v_c;
            END IF;
            v_arr := v_hs;
          END IF;
          v_base := v_c * v_size;
          v_i := greatest(v_head, v_base);
          v_end := width_bucket(it.now, v_arr[(v_i - v_base + 1):(v_p - v_base)]);
          IF v_end > 0 OR v_i <= v_head THEN
            v_p := v_i + v_end;
            EXIT;
          END IF;
          v_p := v_i;
        END LOOP;
      END IF;
      IF v_p = v_next THEN
        v_tail := v_tail || it.now;
      ELSIF v_p >= v_tc * v_size THEN
        v_tail := v_tail[1:(v_p - v_tc * v_size)] || it.now || v_tail[(v_p - v_tc * v_size + 1):];
      ELSE
        -- The stamp goes into an earlier chunk: the chunk in hand is written, the stamps from v_p on move up one
        -- index (one statement over the chunks from v_p's on), and the last chunk is read again.
        IF v_tdirty THEN
          INSERT INTO window_chunks (key_id, chunk, stamps) VALUES (v_key, v_tc, v_tail)
            ON CONFLICT (key_id, chunk) DO UPDATE SET stamps = excluded.stamps;
        END IF;
        INSERT INTO window_chunks (key_id, chunk, stamps)
          SELECT v_key, m.i / v_size, array_agg(m.s ORDER BY m.i)
            FROM (SELECT CASE WHEN c.chunk * v_size + u.o - 1 >= v_p THEN c.chunk * v_size + u.o ELSE c.chunk * v_size + u.o - 1 END AS i, u.s
                    FROM window_chunks c, unnest(c.stamps) WITH ORDINALITY AS u(s, o)
                   WHERE c.key_id = v_key AND c.chunk >= v_p / v_size AND c.chunk * v_size + u.o - 1 < v_next
                  UNION ALL SELECT v_p, it.now) AS m
           GROUP BY m.i / v_size
        ON CONFLICT (key_id, chunk) DO UPDATE SET stamps = excluded.stamps;
        SELECT stamps INTO v_tail FROM window_chunks WHERE key_id = v_key AND chunk = v_tc;
        v_hc := NULL;
        v_xc := NULL;
      END IF;
      v_next := v_next + 1;
      v_tdirty := true;
      IF v_next % v_size = 0 THEN
        -- The chunk in hand is full: written now, and the next one starts empty.
        INSERT INTO window_chunks (key_id, chunk, stamps) VALUES (v_key, v_tc, v_tail)
          ON CONFLICT (key_id, chunk) DO UPDATE SET stamps = excluded.stamps;
        v_tc := v_tc + 1;
        v_tail := '{}';
        v_tdirty := false;
      END IF;
      v_wdirty := true;
      v_ddays[it.a] := v_day;
      v_dcounts[it.a] := d_count + 1;
      IF it.quota THEN
        v_billing := true;
        v_kind[it.i] := 4;
        -- The quota step (core's quotaRequest and warningThreshold, step by step) on the quota row in hand: it
        -- is counted or flipped to exhausted, and a quota.warning event or a pending invoice written. The period
        -- of it.now: for anchor days 1-31 periods tile time, so the one last worked out serves while now is inside
        -- it (with the same anchor); any other anchor (never sent by a server) is worked out every time.
        IF NOT coalesce(p_anchor_day[it.i] BETWEEN 1 AND 31 AND q_anchor = p_anchor_day[it.i] AND it.now >= q_start AND it.now < q_end, false) THEN
          SELECT b.start_ms, b.end_ms INTO q_start, q_end FROM benchdata_billing_period(it.now, p_anchor_day[it.i]) AS b;
          q_anchor := p_anchor_day[it.i];
        END IF;
        IF q.account_id IS DISTINCT FROM it.account_id OR q.period_start IS DISTINCT FROM q_start THEN
          -- Another row: the one in hand is written back, and this one locked and read (created if needed).
          IF q_dirty THEN
            PERFORM benchdata_put_quota(q);
            q_dirty := false;
          END IF;
          SELECT * INTO q FROM quota_periods WHERE account_id = it.account_id AND period_start = q_start FOR UPDATE;
          IF NOT FOUND THEN
            INSERT INTO quota_periods (account_id, period_start, period_end) VALUES (it.account_id, q_start, q_end) ON CONFLICT DO NOTHING;
            SELECT * INTO q FROM quota_periods WHERE account_id = it.account_id AND period_start = q_start FOR UPDATE;
          END IF;
        END IF;
        q_allowance := p_base_quota[it.i] + q.blocks * p_block_size[it.i];
        q_minute := json_build_object('limit', it.per_minute, 'remaining', it.per_minute - (v_live + 1), 'resetAt', v_oldest + it.window_ms);
        q_day := json_build_object('limit', it.per_day, 'remaining', it.per_day - (d_count + 1), 'resetAt', (v_day + 1)::bigint * 86400000);
        IF NOT q.exhausted AND q.used < q_allowance THEN
          q.used := q.used + 1;
          q_dirty := true;
          -- core's warningThreshold, in float8 so that the rounding is JavaScript's.
          q_t := ceil(p_base_quota[it.i]::float8 * 0.8::float8)::bigint;
          IF q.used = q_t THEN
            q_warn := q_t;
          ELSIF q.used <= p_base_quota[it.i] OR p_block_size[it.i] <= 0 THEN
            q_warn := NULL;
          ELSE
            q_t := p_base_quota[it.i]
                 + (ceil((q.used - p_base_quota[it.i])::float8 / p_block_size[it.i]::float8)::bigint - 1) * p_block_size[it.i]
                 + ceil(p_block_size[it.i]::float8 * 0.8::float8)::bigint;
            q_warn := CASE WHEN q.used = q_t THEN q_t END;
          END IF;
          IF q_warn IS NOT NULL THEN
            -- The body is serializeEvent(quotaWarningEvent(...)) byte for byte: the same keys in the same order,
            -- strings escaped by to_json (as JSON.stringify does for these ASCII values).
            PERFORM benchdata_insert_event(p_warning_event_ids[it.i], 'quota.warning', it.account_id, it.now,
              '{"id":' || to_json(p_warning_event_ids[it.i])::text
              || ',"type":"quota.warning","account_id":' || to_json(it.account_id)::text
              || ',"created_at":"' || benchdata_iso(it.now) || '"'
              || ',"data":{"calls_used":' || q.used
              || ',"monthly_limit":' || q_allowance
              || ',"threshold":' || q_warn
              || ',"period_start":"' || benchdata_iso(q.period_start) || '"'
              || ',"period_end":"' || benchdata_iso(q.period_end) || '"}}');
          END IF;
          v_whole[it.i] := json_build_object('kind', 'allowed', 'now', it.now, 'minute', q_minute, 'day', q_day,
            'quota', json_build_object('used', q.used, 'allowance', q_allowance, 'periodStart', q.period_start, 'periodEnd', q.period_end, 'warned', q_warn));
        ELSE
          -- Exhausted (core's quotaRequest): the first refusal flips the quota; a charge is due when none is
          -- outstanding and (after a failure) the retry delay has passed. It starts only if the block buys at
          -- least one call and the period's ceiling of automatic charges (paid ones included) is not reached;
          -- otherwise the account is held, and the request that first finds it so writes quota.held, once. The
          -- pending invoice is written here, once.
          q_flipped := NOT q.exhausted;
          q_due := q.pending_block IS NULL AND (q_flipped OR q.last_failure_at IS NULL OR it.now - q.last_failure_at >= p_retry_after_failure_ms[it.i]);
          q_hold := CASE WHEN NOT (p_block_size[it.i] >= 1 AND p_base_quota[it.i] + (q.blocks + 1) * p_block_size[it.i] > q.used) THEN 'block_buys_nothing'
                         WHEN q.charge_attempts >= p_max_auto_charges[it.i] THEN 'charge_limit' END;
          IF NOT q_due OR q_hold IS NOT NULL THEN
            q_held_now := q_due AND q_hold IS NOT NULL AND q.held_at IS NULL;
            IF q_flipped OR q_held_now THEN
              q.exhausted := true;
              q_dirty := true;
            END IF;
            IF q_held_now THEN
              q.held_at := it.now;
              -- The body is serializeEvent(quotaHeldEvent(...)) byte for byte; the id is minted here (evt_<ULID>).
              q_held_id := 'evt_' || benchdata_ulid(it.now);
              PERFORM benchdata_insert_event(q_held_id, 'quota.held', it.account_id, it.now,
                '{"id":' || to_json(q_held_id)::text
                || ',"type":"quota.held","account_id":' || to_json(it.account_id)::text
                || ',"created_at":"' || benchdata_iso(it.now) || '"'
                || ',"data":{"reason":"' || q_hold || '"'
                || ',"calls_used":' || q.used
                || ',"monthly_limit":' || q_allowance
                || ',"automatic_charges":' || q.charge_attempts
                || ',"period_start":"' || benchdata_iso(q.period_start) || '"'
                || ',"period_end":"' || benchdata_iso(q.period_end) || '"}}');
            END IF;
            v_whole[it.i] := json_build_object('kind', 'quota_exhausted', 'now', it.now, 'minute', q_minute, 'day', q_day,
              'quota', json_build_object('used', q.used, 'allowance', q_allowance, 'periodStart', q.period_start, 'periodEnd', q.period_end, 'warned', NULL),
              'flipped', q_flipped, 'chargeInvoiceId', NULL,
              'heldForReview', q.pending_block IS NULL AND q_hold IS NOT NULL, 'heldNow', q_held_now);
          ELSE
            q.exhausted := true;
            q.pending_block := q.blocks + 1;
            q.charge_attempts := q.charge_attempts + 1;
            q.block_attempts := q.block_attempts + 1;
            q_dirty := true;
            INSERT INTO invoices (id, account_id, period_start, period_end, block, attempt, amount, currency, status, idempotency_key, calls_used, created_at)
            VALUES (p_invoice_ids[it.i], it.account_id, benchdata_iso(q.period_start), benchdata_iso(q.period_end), q.pending_block, q.block_attempts,
                    p_block_price[it.i], p_currency[it.i], 'pending',
                    benchdata_idempotency_key(it.account_id, benchdata_iso(q.period_start), q.pending_block, q.block_attempts), q.used, it.now);
            v_whole[it.i] := json_build_object('kind', 'quota_exhausted', 'now', it.now, 'minute', q_minute, 'day', q_day,
              'quota', json_build_object('used', q.used, 'allowance', q_allowance, 'periodStart', q.period_start, 'periodEnd', q.period_end, 'warned', NULL),
              'flipped', q_flipped, 'chargeInvoiceId', p_invoice_ids[it.i], 'heldForReview', false, 'heldNow', false);
          END IF;
        END IF;
      ELSE
        v_kind[it.i] := 1;
        v_mrem[it.i] := it.per_minute - (v_live + 1);
        v_mreset[it.i] := v_oldest + it.window_ms;
        v_drem[it.i] := it.per_day - (d_count + 1);
      END IF;
      CONTINUE;
    END IF;

    -- Refused: nothing is written; the window that would have allowed it is reported as it was before. The
    -- binding window is the one with the longer wait (the day, when both refuse near midnight).
    IF it.per_minute <= 0 THEN
      m_allowed := false; m_remaining := 0; m_reset := it.now + it.window_ms; m_retry := it.window_ms;
    ELSIF v_live < it.per_minute THEN
      m_allowed := true; m_remaining := it.per_minute - (v_live + 1); m_retry := 0;
      m_reset := v_oldest + it.window_ms;
    ELSE
      -- Full: a slot frees when the (n - limit + 1)-th oldest stamp (the limit-th newest) leaves the window.
      v_i := v_next - it.per_minute;
      v_c := v_i / v_size;
      IF v_c = v_tc THEN
        v_arr := v_tail;
      ELSIF v_c = v_hc THEN
        v_arr := v_hs;
      ELSE
        IF v_xc IS DISTINCT FROM v_c THEN
          SELECT stamps INTO v_xs FROM window_chunks WHERE key_id = v_key AND chunk = v_c;
          v_xc := v_c;
        END IF;
        v_arr := v_xs;
      END IF;
      m_allowed := false; m_remaining := 0; m_reset := v_arr[v_i - v_c * v_size + 1] + it.window_ms;
      m_retry := greatest(1, m_reset - it.now);
    END IF;
    IF d_count >= it.per_day THEN
      d_allowed := false; d_reset := (v_day + 1)::bigint * 86400000; d_retry := greatest(1, d_reset - it.now);
    ELSE
      d_allowed := true; d_count := d_count + 1; d_retry := 0;
    END IF;
    v_kind[it.i] := CASE WHEN NOT d_allowed AND (m_allowed OR d_retry >= m_retry) THEN 3 ELSE 2 END;
    v_mrem[it.i] := CASE WHEN m_allowed THEN m_remaining + 1 ELSE m_remaining END;
    v_mreset[it.i] := m_reset;
    v_drem[it.i] := CASE WHEN d_allowed THEN it.per_day - d_count + 1 ELSE 0 END;
    v_retry[it.i] := greatest(m_retry, d_retry);
  END LOOP;
  -- The loop's record keeps its last row (all NULL when there was none): every row carries the one epoch read.
  v_epoch := it.epoch;
  IF v_key IS NOT NULL THEN
    -- The key in hand is done with: its last chunk written back, its chunks wholly behind head deleted, its row kept.
    IF v_tdirty THEN
      INSERT INTO window_chunks (key_id, chunk, stamps) VALUES (v_key, v_tc, v_tail)
        ON CONFLICT (key_id, chunk) DO UPDATE SET stamps = excluded.stamps;
      v_tdirty := false;
    END IF;
    IF v_head / v_size > v_head0 / v_size THEN
      DELETE FROM window_chunks WHERE key_id = v_key AND chunk < v_head / v_size;
    END IF;
    IF v_wdirty AND v_w IS NOT NULL THEN
      v_ws[v_w] := ROW(v_key, '{}'::bigint[], v_head, v_next)::rate_windows;
    ELSIF v_wdirty THEN
      v_ws := array_append(v_ws, ROW(v_key, '{}'::bigint[], v_head, v_next)::rate_windows);
    END IF;
  END IF;

  IF q_dirty THEN
    PERFORM benchdata_put_quota(q);
  END IF;
  UPDATE rate_windows AS r SET stamps = u.stamps, head = u.head, next = u.next FROM unnest(v_ws) AS u WHERE r.key_id = u.key_id;
  UPDATE day_counters AS d SET day = u.day, count = u.count
    FROM unnest(v_accs, v_ddays, v_dcounts, v_ddays0, v_dcounts0) AS u(account_id, day, count, day0, count0)
   WHERE (u.day, u.count) IS DISTINCT FROM (u.day0, u.count0) AND d.account_id = u.account_id;
  IF v_alone AND NOT v_billing THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  RETURN json_build_array(v_clock, v_kind, v_mrem, v_mreset, v_drem, v_retry, v_whole, v_epoch, v_dahead);
END $$;

`;

/** `benchdata_admit_arrays` mirrors nothing new: `admission` as servers of version 6 call it (legacy entry point, kept for the upgrade window in docs/operations.md "Upgrading"). */
export const ADMIT_ARRAYS_V6 = `-- The batch as servers of version 6 call it (kept for them during an upgrade): without an epoch, so every
-- expectation is checked by the join. Its answer adds the epoch and the days counted, which those servers do not read.
CREATE OR REPLACE FUNCTION benchdata_admit_arrays(
  p_accounts text[],
  p_nows bigint[],
  p_key_ids text[],
  p_account_ids text[],
  p_per_minute integer[],
  p_per_day integer[],
  p_window_ms bigint[],
  p_expect_hashes text[],
  p_expect_versions bigint[],
  p_quota boolean[],
  p_anchor_day integer[],
  p_base_quota bigint[],
  p_block_size bigint[],
  p_block_price bigint[],
  p_currency text[],
  p_retry_after_failure_ms bigint[],
  p_max_auto_charges integer[],
  p_warning_event_ids text[],
  p_invoice_ids text[]
) RETURNS json LANGUAGE sql VOLATILE AS $$
  SELECT benchdata_admit_arrays(p_accounts, p_nows, p_key_ids, p_account_ids, p_per_minute, p_per_day, p_window_ms, p_expect_hashes,
    p_expect_versions, p_quota, p_anchor_day, p_base_quota, p_block_size, p_block_price, p_currency, p_retry_after_failure_ms,
    p_max_auto_charges, p_warning_event_ids, p_invoice_ids, NULL::bigint, NULL::boolean[])
$$;

`;

/** `benchdata_admit_batch` mirrors nothing new: `admission` as servers of version 5 call it (legacy entry point, kept for the upgrade window). */
export const ADMIT_BATCH_V5 = `-- The batch as servers of version 5 call it (kept for them during an upgrade): benchdata_admit_arrays, its
-- result put back into a JSON array of results in AdmitResult's shape.
CREATE OR REPLACE FUNCTION benchdata_admit_batch(
  p_nows bigint[],
  p_key_ids text[],
  p_account_ids text[],
  p_per_minute integer[],
  p_per_day integer[],
  p_window_ms bigint[],
  p_expect_hashes text[],
  p_expect_versions bigint[],
  p_quota boolean[],
  p_anchor_day integer[],
  p_base_quota bigint[],
  p_block_size bigint[],
  p_block_price bigint[],
  p_currency text[],
  p_retry_after_failure_ms bigint[],
  p_max_auto_charges integer[],
  p_warning_event_ids text[],
  p_invoice_ids text[]
) RETURNS json LANGUAGE sql VOLATILE AS $$
  WITH r AS MATERIALIZED (
    SELECT benchdata_admit_arrays(ARRAY(SELECT DISTINCT u FROM unnest(p_account_ids) AS u), p_nows, p_key_ids, p_account_ids,
      p_per_minute, p_per_day, p_window_ms, p_expect_hashes, p_expect_versions, p_quota, p_anchor_day, p_base_quota, p_block_size,
      p_block_price, p_currency, p_retry_after_failure_ms, p_max_auto_charges, p_warning_event_ids, p_invoice_ids)::jsonb AS j
  ),
  e AS (
    SELECT x.ord, x.per_minute, x.per_day, coalesce(x.now, (r.j ->> 0)::bigint) AS now, (r.j -> 1 ->> (x.ord - 1)::integer)::integer AS kind,
           (r.j -> 2 -> (x.ord - 1)::integer) AS mrem, (r.j -> 3 -> (x.ord - 1)::integer) AS mreset,
           (r.j -> 4 -> (x.ord - 1)::integer) AS drem, (r.j -> 5 -> (x.ord - 1)::integer) AS retry, (r.j -> 6 -> (x.ord - 1)::integer) AS whole,
           (r.j -> 8 ->> (x.ord - 1)::integer)::integer AS dday
      FROM r, unnest(p_nows, p_per_minute, p_per_day) WITH ORDINALITY AS x(now, per_minute, per_day, ord)
  )
  SELECT coalesce(json_agg(CASE
           WHEN e.kind = 0 THEN json_build_object('kind', 'stale', 'now', e.now)
           WHEN e.kind = 4 THEN e.whole::json
           WHEN e.kind = 1 THEN json_build_object('kind', 'allowed', 'now', e.now,
             'minute', json_build_object('limit', e.per_minute, 'remaining', e.mrem, 'resetAt', e.mreset),
             'day', json_build_object('limit', e.per_day, 'remaining', e.drem, 'resetAt', (coalesce(e.dday, floor(e.now / 86400000.0)::integer) + 1)::bigint * 86400000),
             'quota', NULL)
           ELSE json_build_object('kind', 'rate_limited', 'now', e.now, 'window', CASE WHEN e.kind = 3 THEN 'day' ELSE 'minute' END,
             'minute', json_build_object('limit', e.per_minute, 'remaining', e.mrem, 'resetAt', e.mreset),
             'day', json_build_object('limit', e.per_day, 'remaining', e.drem, 'resetAt', (coalesce(e.dday, floor(e.now / 86400000.0)::integer) + 1)::bigint * 86400000),
             'retryAfterMs', e.retry)
         END ORDER BY e.ord), '[]')
    FROM e
$$;

`;

/** `benchdata_admit` mirrors nothing new: one `admission`, as servers of earlier versions call it (legacy entry point, kept for the upgrade window). */
export const ADMIT_ONE = `-- One admission: the batch of one (kept for servers of earlier versions during an upgrade).
CREATE OR REPLACE FUNCTION benchdata_admit(
  p_now bigint,
  p_key_id text,
  p_account_id text,
  p_per_minute integer,
  p_per_day integer,
  p_window_ms bigint,
  p_quota boolean,
  p_anchor_day integer,
  p_base_quota bigint,
  p_block_size bigint,
  p_block_price bigint,
  p_currency text,
  p_retry_after_failure_ms bigint,
  p_max_auto_charges integer,
  p_warning_event_id text,
  p_invoice_id text
) RETURNS json LANGUAGE sql VOLATILE AS $$
  SELECT benchdata_admit_batch(ARRAY[p_now], ARRAY[p_key_id], ARRAY[p_account_id], ARRAY[p_per_minute], ARRAY[p_per_day],
    ARRAY[p_window_ms], ARRAY[NULL::text], ARRAY[NULL::bigint], ARRAY[p_quota], ARRAY[p_anchor_day], ARRAY[p_base_quota],
    ARRAY[p_block_size], ARRAY[p_block_price], ARRAY[p_currency], ARRAY[p_retry_after_failure_ms], ARRAY[p_max_auto_charges],
    ARRAY[p_warning_event_id], ARRAY[p_invoice_id]) -> 0
$$;

`;

/** `benchdata_window_peek` mirrors `admissionPeek` (core/src/rate-limit/admission.ts) over `slidingWindow` (core/src/rate-limit/sliding-window.ts). */
export const WINDOW_PEEK = `-- A key's window as it stands at p_now, nothing admitted (peekLimits): how many stamps still count, and the
-- oldest that does (the limit-th newest when full); NULL when none. The same walk from head as the admission's.
CREATE OR REPLACE FUNCTION benchdata_window_peek(p_key text, p_now bigint, p_limit integer, p_window_ms bigint, OUT live bigint, OUT oldest bigint)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_size bigint := coalesce(nullif(current_setting('benchdata.window_chunk', true), '')::bigint, 128);
  v_head bigint;
  v_next bigint;
  v_stamps bigint[];
  v_lo bigint;
  v_c bigint;
  v_base bigint;
  v_end bigint;
  v_arr bigint[];
BEGIN
  SELECT head, next, stamps INTO v_head, v_next, v_stamps FROM rate_windows WHERE key_id = p_key;
  IF cardinality(v_stamps) > 0 THEN
    -- A whole log in the row, written by a server before schema 14.
    live := (SELECT count(*) FROM unnest(v_stamps) AS s WHERE s > p_now - p_window_ms);
    oldest := CASE WHEN live = 0 THEN NULL
                   WHEN p_limit > 0 AND live >= p_limit THEN v_stamps[cardinality(v_stamps) - p_limit + 1]
                   ELSE v_stamps[cardinality(v_stamps) - live + 1] END;
    RETURN;
  END IF;
  v_head := coalesce(v_head, 0);
  v_next := coalesce(v_next, 0);
  v_lo := v_head;
  WHILE v_lo < v_next LOOP
    v_c := v_lo / v_size;
    SELECT stamps INTO v_arr FROM window_chunks WHERE key_id = p_key AND chunk = v_c;
    v_base := v_c * v_size;
    v_end := least(coalesce(cardinality(v_arr), 0), v_next - v_base);
    IF v_end <= v_lo - v_base THEN
      RAISE EXCEPTION 'benchdata_window_peek: window chunk % of key % is missing stamps', v_c, p_key;
    END IF;
    v_lo := v_lo + width_bucket(p_now - p_window_ms, v_arr[(v_lo - v_base + 1):v_end]);
    EXIT WHEN v_lo < v_base + v_end;
  END LOOP;
  live := v_next - v_lo;
  IF live = 0 THEN
    oldest := NULL;
  ELSIF p_limit > 0 AND live >= p_limit THEN
    v_c := (v_next - p_limit) / v_size;
    oldest := (SELECT stamps[v_next - p_limit - v_c * v_size + 1] FROM window_chunks WHERE key_id = p_key AND chunk = v_c);
  ELSE
    oldest := v_arr[v_lo - v_base + 1];
  END IF;
END $$;
`;

/** Every block, in the order the database receives them. */
export const MIRROR_BLOCKS: readonly string[] = [
  CLOCK_MS,
  ISO_TIME,
  ANCHORED,
  BILLING_PERIOD,
  IDEMPOTENCY_KEY,
  ULID,
  INSERT_EVENT,
  PUT_QUOTA,
  ADMIT_ARRAYS,
  ADMIT_ARRAYS_V6,
  ADMIT_BATCH_V5,
  ADMIT_ONE,
  WINDOW_PEEK,
];
