/**
 * PostgreSQL migration 5: account versions; batched admissions.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash). Its functions are those of the release it
 * came with (commit 5f57413); today's are applied after the migrations (../functions.ts).
 */
export const name = "account versions; batched admissions";

export const sql = `
ALTER TABLE accounts ADD COLUMN version bigint NOT NULL DEFAULT 0;
-- Every update of an account moves its version, whoever makes it (an older server, an operator in psql).
CREATE FUNCTION benchdata_account_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.version := OLD.version + 1;
  RETURN NEW;
END $$;
CREATE TRIGGER accounts_version BEFORE UPDATE ON accounts FOR EACH ROW EXECUTE FUNCTION benchdata_account_version();
INSERT INTO rate_windows (key_id, stamps) SELECT id, '{}' FROM api_keys ON CONFLICT (key_id) DO NOTHING;
INSERT INTO day_counters (account_id, day, count) SELECT id, 0, 0 FROM accounts ON CONFLICT (account_id) DO NOTHING;

-- The database's clock in Unix ms (clock_timestamp, not now(): the time of the call, not of the transaction).
CREATE OR REPLACE FUNCTION benchdata_clock_ms() RETURNS bigint LANGUAGE sql VOLATILE AS $$
  SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
$$;

-- ISO 8601 UTC with milliseconds and Z, exactly as core's isoTime (Date#toISOString) writes it.
CREATE OR REPLACE FUNCTION benchdata_iso(ms bigint) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT to_char(TIMESTAMP '1970-01-01 00:00:00' + ms * INTERVAL '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- Midnight UTC (Unix ms) of the anchor day in month m (1-12) of year y; an anchor past the month's end
-- falls on its last day (core's billingPeriod).
CREATE OR REPLACE FUNCTION benchdata_anchored(y integer, m integer, anchor integer) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT ((make_date(y, m, 1)
           + (least(anchor, extract(day FROM make_date(y, m, 1) + INTERVAL '1 month' - INTERVAL '1 day')::integer) - 1))
          - DATE '1970-01-01')::bigint * 86400000
$$;

-- The billing period [start_ms, end_ms) containing now_ms, as core's billingPeriod computes it.
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

-- core's chargeIdempotencyKey: account, period and block, plus the attempt after a definite failure.
CREATE OR REPLACE FUNCTION benchdata_idempotency_key(p_account_id text, p_period_start_iso text, p_block integer, p_attempt integer)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'benchdata:' || p_account_id || ':' || p_period_start_iso || ':block-' || p_block
         || CASE WHEN p_attempt <= 1 THEN '' ELSE ':attempt-' || p_attempt END
$$;

-- A ULID for time ms: 10 Crockford base32 characters of the time's 50 low bits, then 16 of 80 random
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

-- Writes an event and one pending delivery per webhook of its account subscribed to its type (the
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
  WHERE w.account_id = p_account_id AND p_type = ANY (w.events)
  ORDER BY w.id;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;

-- The quota step of an admission (core's quotaRequest and warningThreshold, step by step): the period's row
-- (created if needed) is locked, counted or flipped to exhausted, and a quota.warning event or a pending
-- invoice written, in the caller's transaction. v_minute and v_dayj are the windows to report.
CREATE OR REPLACE FUNCTION benchdata_admit_quota(
  v_now bigint,
  p_account_id text,
  p_anchor_day integer,
  p_base_quota bigint,
  p_block_size bigint,
  p_block_price bigint,
  p_currency text,
  p_retry_after_failure_ms bigint,
  p_max_auto_charges integer,
  p_warning_event_id text,
  p_invoice_id text,
  v_minute json,
  v_dayj json
) RETURNS json LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  q quota_periods%ROWTYPE;
  v_ps bigint;
  v_pe bigint;
  v_allowance bigint;
  v_used bigint;
  v_base_t bigint;
  v_t bigint;
  v_warn bigint;
  v_flipped boolean;
  v_block integer;
  v_attempt integer;
  v_ps_iso text;
  v_pe_iso text;
BEGIN
  SELECT b.start_ms, b.end_ms INTO v_ps, v_pe FROM benchdata_billing_period(v_now, p_anchor_day) AS b;
  SELECT * INTO q FROM quota_periods WHERE account_id = p_account_id AND period_start = v_ps FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO quota_periods (account_id, period_start, period_end) VALUES (p_account_id, v_ps, v_pe) ON CONFLICT DO NOTHING;
    SELECT * INTO q FROM quota_periods WHERE account_id = p_account_id AND period_start = v_ps FOR UPDATE;
  END IF;
  v_allowance := p_base_quota + q.blocks * p_block_size;

  IF NOT q.exhausted AND q.used < v_allowance THEN
    v_used := q.used + 1;
    -- core's warningThreshold, in float8 so that the rounding is JavaScript's.
    v_base_t := ceil(p_base_quota::float8 * 0.8::float8)::bigint;
    IF v_used = v_base_t THEN
      v_warn := v_base_t;
    ELSIF v_used <= p_base_quota OR p_block_size <= 0 THEN
      v_warn := NULL;
    ELSE
      v_t := p_base_quota
           + (ceil((v_used - p_base_quota)::float8 / p_block_size::float8)::bigint - 1) * p_block_size
           + ceil(p_block_size::float8 * 0.8::float8)::bigint;
      v_warn := CASE WHEN v_used = v_t THEN v_t END;
    END IF;
    UPDATE quota_periods SET used = v_used WHERE account_id = p_account_id AND period_start = v_ps;
    IF v_warn IS NOT NULL THEN
      -- The body is serializeEvent(quotaWarningEvent(...)) byte for byte: the same keys in the same order,
      -- strings escaped by to_json (as JSON.stringify does for these ASCII values).
      PERFORM benchdata_insert_event(p_warning_event_id, 'quota.warning', p_account_id, v_now,
        '{"id":' || to_json(p_warning_event_id)::text
        || ',"type":"quota.warning","account_id":' || to_json(p_account_id)::text
        || ',"created_at":"' || benchdata_iso(v_now) || '"'
        || ',"data":{"calls_used":' || v_used
        || ',"monthly_limit":' || v_allowance
        || ',"threshold":' || v_warn
        || ',"period_start":"' || benchdata_iso(v_ps) || '"'
        || ',"period_end":"' || benchdata_iso(q.period_end) || '"}}');
    END IF;
    RETURN json_build_object('kind', 'allowed', 'now', v_now, 'minute', v_minute, 'day', v_dayj,
      'quota', json_build_object('used', v_used, 'allowance', v_allowance, 'periodStart', v_ps, 'periodEnd', q.period_end, 'warned', v_warn));
  END IF;

  -- Exhausted: the first refusal flips the quota; a charge starts when none is outstanding, attempts are
  -- left, and (after a failure) the retry delay has passed. The pending invoice is written here, once.
  v_flipped := NOT q.exhausted;
  IF NOT (q.pending_block IS NULL AND q.charge_attempts < p_max_auto_charges
          AND (v_flipped OR q.last_failure_at IS NULL OR v_now - q.last_failure_at >= p_retry_after_failure_ms)) THEN
    IF v_flipped THEN
      UPDATE quota_periods SET exhausted = true WHERE account_id = p_account_id AND period_start = v_ps;
    END IF;
    RETURN json_build_object('kind', 'quota_exhausted', 'now', v_now, 'minute', v_minute, 'day', v_dayj,
      'quota', json_build_object('used', q.used, 'allowance', v_allowance, 'periodStart', v_ps, 'periodEnd', q.period_end, 'warned', NULL),
      'flipped', v_flipped, 'chargeInvoiceId', NULL,
      'heldForReview', q.pending_block IS NULL AND q.charge_attempts >= p_max_auto_charges);
  END IF;
  v_block := q.blocks + 1;
  v_attempt := q.block_attempts + 1;
  UPDATE quota_periods
     SET exhausted = true, pending_block = v_block, charge_attempts = q.charge_attempts + 1, block_attempts = v_attempt
   WHERE account_id = p_account_id AND period_start = v_ps;
  v_ps_iso := benchdata_iso(v_ps);
  v_pe_iso := benchdata_iso(q.period_end);
  INSERT INTO invoices (id, account_id, period_start, period_end, block, attempt, amount, currency, status, idempotency_key, calls_used, created_at)
  VALUES (p_invoice_id, p_account_id, v_ps_iso, v_pe_iso, v_block, v_attempt, p_block_price, p_currency, 'pending',
          benchdata_idempotency_key(p_account_id, v_ps_iso, v_block, v_attempt), q.used, v_now);
  RETURN json_build_object('kind', 'quota_exhausted', 'now', v_now, 'minute', v_minute, 'day', v_dayj,
    'quota', json_build_object('used', q.used, 'allowance', v_allowance, 'periodStart', v_ps, 'periodEnd', q.period_end, 'warned', NULL),
    'flipped', v_flipped, 'chargeInvoiceId', p_invoice_id, 'heldForReview', false);
END $$;

-- Data requests asking to be admitted, in one statement and one round trip for all of them: for each, the
-- key's sliding window, the account's UTC-day counter and, for live keys (quota), the period's quota, decided
-- and applied in one transaction. It mirrors core's slidingWindow, dailyWindow, quotaRequest and
-- warningThreshold step by step; the conformance suite and the differential test hold it to the memory store.
--
-- The admissions come as parallel arrays, one element per admission (postgres-storage.ts builds them; arrays,
-- not JSON, so that nothing is parsed twice and lookups go through the indexes); the result is a JSON array of
-- results in AdmitResult's shape, in the same order. An admission with an expected hash is admitted only if
-- that hash still names an active key, not retired by a rotation, of an account at the expected version;
-- otherwise its result is {"kind":"stale"} and it changes nothing.
--
-- Concurrency: one lock per account serialises everything an admission touches. The batch first locks the
-- day rows of its items' accounts (SELECT ... FOR UPDATE, in account order), and a key's window and its
-- account's quota rows are only ever written under that account's lock (a key belongs to one account for
-- good; callers pass the key's own account). So concurrent batches, from any number of servers, queue on
-- those rows and each decides on the state the previous one committed: no read-then-write race. Every batch
-- locks in the same order (accounts ascending; the items are handled in account order, so quota rows follow
-- it too). An account's day row normally exists from its creation (createAccount writes it); one that does
-- not (an account made by an older server, or an account id without an account in tests) is created at the
-- start of the batch, before any lock. Such a freshly inserted row is held out of that order, so two batches
-- creating rows can still deadlock: PostgreSQL's detector aborts one, which the caller retries whole. Row locks are taken per account, not per key, because each one is a write (and a
-- WAL record), and a batch of a hundred keys has far fewer accounts.
--
-- An admission's now NULL means "use the database's clock": one clock for windows, UTC days and billing periods,
-- whatever the callers' clocks say; the time used is returned as "now".
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
) RETURNS json LANGUAGE plpgsql VOLATILE
-- Every statement here reads rows by key. On small tables the planner prefers a sequential scan that tests
-- each row against the whole array (= ANY), which costs more than the index at any size: keep to the indexes,
-- and plan each statement once (custom plans for each array's length would be re-planned on every call).
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
-- A lock held elsewhere for long (a stuck session) fails this batch (the server answers 503) instead of
-- stalling every request of the server behind it.
SET lock_timeout = '10s'
AS $$
DECLARE
  v_clock bigint;
  v_out json[] := array_fill(NULL::json, ARRAY[cardinality(p_key_ids)]);
  v_holds text[];
  v_wkeys text[];
  v_ws rate_windows[];
  v_wdirty boolean[];
  w integer;
  v_acc text[];
  v_dday integer[];
  v_dcount integer[];
  v_dirty boolean[];
  it record;
  v_now bigint;
  v_day integer;
  a integer;
  v_stamps bigint[];
  v_live bigint[];
  v_n integer;
  v_lo integer;
  v_hi integer;
  v_mid integer;
  m_allowed boolean;
  m_remaining integer;
  m_reset bigint;
  m_retry bigint;
  d_count integer;
  d_allowed boolean;
  d_remaining integer;
  d_reset bigint;
  d_retry bigint;
  v_minute json;
  v_dayj json;
BEGIN
  -- The batch works on copies of its rows (day counters and windows) and writes each changed one back once.
  -- Locks: each account's day row, in account order (see above); they also guard the accounts' windows. An
  -- account without one (created by an older server) gets it first, so every lock is taken in that order
  -- and the windows below are read under all of them.
  INSERT INTO day_counters (account_id, day, count)
  SELECT DISTINCT u.id, 0, 0 FROM unnest(p_account_ids) AS u(id) ORDER BY 1
  ON CONFLICT (account_id) DO NOTHING;
  SELECT coalesce(array_agg(d.account_id ORDER BY d.account_id), '{}'), coalesce(array_agg(d.day ORDER BY d.account_id), '{}'),
         coalesce(array_agg(d.count ORDER BY d.account_id), '{}')
    INTO v_acc, v_dday, v_dcount
    FROM (SELECT account_id, day, count FROM day_counters
           WHERE account_id = ANY (p_account_ids)
           ORDER BY account_id FOR UPDATE) AS d;
  v_dirty := array_fill(false, ARRAY[cardinality(v_acc)]);
  -- The database's time once the locks are held: a batch that waited for another decides after it, never before.
  v_clock := benchdata_clock_ms();
  SELECT coalesce(array_agg(r.key_id), '{}'), coalesce(array_agg(r), '{}') INTO v_wkeys, v_ws
    FROM rate_windows AS r WHERE r.key_id = ANY (p_key_ids);
  v_wdirty := array_fill(false, ARRAY[cardinality(v_wkeys)]);
  -- The expected hashes that name an active, unretired key, as hash:key:account:version.
  SELECT coalesce(array_agg(h.hash || ':' || k.id || ':' || k.account_id || ':' || acc.version), '{}') INTO v_holds
    FROM key_hashes h
    JOIN api_keys k ON k.id = h.key_id AND k.is_active
    JOIN accounts acc ON acc.id = k.account_id
   WHERE h.hash = ANY (p_expect_hashes) AND NOT h.retired;

  FOR it IN
    SELECT (x.ord - 1)::integer AS i, x.*
      FROM unnest(p_nows, p_key_ids, p_account_ids, p_per_minute, p_per_day, p_window_ms, p_expect_hashes, p_expect_versions,
                  p_quota, p_anchor_day, p_base_quota, p_block_size, p_block_price, p_currency, p_retry_after_failure_ms,
                  p_max_auto_charges, p_warning_event_ids, p_invoice_ids)
           WITH ORDINALITY AS x(now, key_id, account_id, per_minute, per_day, window_ms, expect_hash, expect_version,
                  quota, anchor_day, base_quota, block_size, block_price, currency, retry_after_failure_ms,
                  max_auto_charges, warning_event_id, invoice_id, ord)
     ORDER BY x.account_id COLLATE "C", x.key_id COLLATE "C", x.ord
  LOOP
    v_now := coalesce(it.now, v_clock);
    IF it.expect_hash IS NOT NULL
       AND NOT (it.expect_hash || ':' || it.key_id || ':' || it.account_id || ':' || it.expect_version) = ANY (v_holds) THEN
      v_out[it.i + 1] := json_build_object('kind', 'stale', 'now', v_now);
      CONTINUE;
    END IF;

    -- The account's day row, locked above.
    a := array_position(v_acc, it.account_id);

    -- The key's window (read above, or created now), guarded by its account's lock.
    w := array_position(v_wkeys, it.key_id);
    IF w IS NULL THEN
      INSERT INTO rate_windows (key_id, stamps) VALUES (it.key_id, '{}') ON CONFLICT (key_id) DO NOTHING;
      SELECT stamps INTO v_stamps FROM rate_windows WHERE key_id = it.key_id;
      v_wkeys := array_append(v_wkeys, it.key_id);
      v_ws := array_append(v_ws, ROW(it.key_id, v_stamps)::rate_windows);
      v_wdirty := array_append(v_wdirty, false);
      w := cardinality(v_wkeys);
    END IF;
    v_stamps := (v_ws[w]).stamps;
    -- The sliding window (core's slidingWindow): the stamps still inside it, then room for one more?
    -- The log is ascending, so a binary search finds the first stamp inside the window.
    v_lo := 1;
    v_hi := cardinality(v_stamps) + 1;
    WHILE v_lo < v_hi LOOP
      v_mid := (v_lo + v_hi) / 2;
      IF v_stamps[v_mid] <= v_now - it.window_ms THEN v_lo := v_mid + 1; ELSE v_hi := v_mid; END IF;
    END LOOP;
    v_live := coalesce(v_stamps[v_lo:], '{}');
    v_n := cardinality(v_live);
    IF it.per_minute <= 0 THEN
      m_allowed := false; m_remaining := 0; m_reset := v_now + it.window_ms; m_retry := it.window_ms;
    ELSIF v_n < it.per_minute THEN
      v_live := array_append(v_live, v_now);
      -- A clock that stepped back can leave a stamp newer than now; keep the log ordered.
      IF v_n >= 1 AND v_live[v_n] > v_now THEN
        v_live := ARRAY(SELECT s FROM unnest(v_live) AS s ORDER BY s);
      END IF;
      m_allowed := true; m_remaining := it.per_minute - (v_n + 1); m_reset := v_live[1] + it.window_ms; m_retry := 0;
    ELSE
      -- Full: a slot frees when the (n - limit + 1)-th oldest stamp leaves the window.
      m_allowed := false; m_remaining := 0; m_reset := v_live[v_n - it.per_minute + 1] + it.window_ms;
      m_retry := greatest(1, m_reset - v_now);
    END IF;

    -- The account's UTC day (core's dailyWindow), from the batch's copy of its day row.
    v_day := floor(v_now / 86400000.0)::integer;
    d_reset := (v_day + 1)::bigint * 86400000;
    d_count := CASE WHEN v_dday[a] = v_day THEN v_dcount[a] ELSE 0 END;
    IF d_count >= it.per_day THEN
      d_allowed := false; d_remaining := 0; d_retry := greatest(1, d_reset - v_now);
    ELSE
      d_allowed := true; d_count := d_count + 1; d_remaining := it.per_day - d_count; d_retry := 0;
    END IF;

    -- A refusal writes nothing; the window that would have allowed it is reported as it was before. The
    -- binding window is the one with the longer wait (the day, when both refuse near midnight).
    IF NOT m_allowed OR NOT d_allowed THEN
      v_out[it.i + 1] := json_build_object(
        'kind', 'rate_limited', 'now', v_now,
        'window', CASE WHEN NOT d_allowed AND (m_allowed OR d_retry >= m_retry) THEN 'day' ELSE 'minute' END,
        'minute', json_build_object('limit', it.per_minute, 'remaining', CASE WHEN m_allowed THEN m_remaining + 1 ELSE m_remaining END, 'resetAt', m_reset),
        'day', json_build_object('limit', it.per_day, 'remaining', CASE WHEN d_allowed THEN d_remaining + 1 ELSE d_remaining END, 'resetAt', d_reset),
        'retryAfterMs', greatest(m_retry, d_retry));
      CONTINUE;
    END IF;

    -- Admitted by the rate limits: apply (to the copies, written back after the loop).
    v_ws[w] := ROW(it.key_id, v_live)::rate_windows;
    v_wdirty[w] := true;
    v_dday[a] := v_day;
    v_dcount[a] := d_count;
    v_dirty[a] := true;
    v_minute := json_build_object('limit', it.per_minute, 'remaining', m_remaining, 'resetAt', m_reset);
    v_dayj := json_build_object('limit', it.per_day, 'remaining', d_remaining, 'resetAt', d_reset);
    IF it.quota THEN
      v_out[it.i + 1] := benchdata_admit_quota(v_now, it.account_id, it.anchor_day, it.base_quota, it.block_size, it.block_price,
        it.currency, it.retry_after_failure_ms, it.max_auto_charges, it.warning_event_id, it.invoice_id, v_minute, v_dayj);
    ELSE
      v_out[it.i + 1] := json_build_object('kind', 'allowed', 'now', v_now, 'minute', v_minute, 'day', v_dayj, 'quota', NULL);
    END IF;
  END LOOP;

  UPDATE rate_windows AS r SET stamps = u.stamps
    FROM unnest(v_ws, v_wdirty) AS u(key_id, stamps, dirty)
   WHERE u.dirty AND r.key_id = u.key_id;
  UPDATE day_counters AS d SET day = u.day, count = u.count
    FROM unnest(v_acc, v_dday, v_dcount, v_dirty) AS u(account_id, day, count, dirty)
   WHERE u.dirty AND d.account_id = u.account_id;
  RETURN array_to_json(v_out);
END $$;

-- One admission: the batch of one (kept for servers of earlier versions during an upgrade).
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
