/**
 * PostgreSQL migration 2: admit and outbox functions.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash). Its functions are those of the release it
 * came with (commit 4dfca6f); today's are applied after the migrations (../functions.ts).
 */
export const name = "admit and outbox functions";

export const sql = `
-- The database's clock in Unix ms (clock_timestamp, not now(): the time of the call, not of the transaction).
CREATE FUNCTION benchdata_clock_ms() RETURNS bigint LANGUAGE sql VOLATILE AS $$
  SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
$$;

-- ISO 8601 UTC with milliseconds and Z, exactly as core's isoTime (Date#toISOString) writes it.
CREATE FUNCTION benchdata_iso(ms bigint) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT to_char(TIMESTAMP '1970-01-01 00:00:00' + ms * INTERVAL '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- Midnight UTC (Unix ms) of the anchor day in month m (1-12) of year y; an anchor past the month's end
-- falls on its last day (core's billingPeriod).
CREATE FUNCTION benchdata_anchored(y integer, m integer, anchor integer) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT ((make_date(y, m, 1)
           + (least(anchor, extract(day FROM make_date(y, m, 1) + INTERVAL '1 month' - INTERVAL '1 day')::integer) - 1))
          - DATE '1970-01-01')::bigint * 86400000
$$;

-- The billing period [start_ms, end_ms) containing now_ms, as core's billingPeriod computes it.
CREATE FUNCTION benchdata_billing_period(now_ms bigint, anchor integer, OUT start_ms bigint, OUT end_ms bigint)
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
CREATE FUNCTION benchdata_idempotency_key(p_account_id text, p_period_start_iso text, p_block integer, p_attempt integer)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'benchdata:' || p_account_id || ':' || p_period_start_iso || ':block-' || p_block
         || CASE WHEN p_attempt <= 1 THEN '' ELSE ':attempt-' || p_attempt END
$$;

-- Writes an event and one pending delivery per webhook of its account subscribed to its type (the
-- outbox), in the caller's transaction. Delivery ids follow the memory store: dlv_ + event id + sequence.
CREATE FUNCTION benchdata_insert_event(p_id text, p_type text, p_account_id text, p_created_at bigint, p_body text)
RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n integer;
BEGIN
  INSERT INTO events (id, type, account_id, created_at, body) VALUES (p_id, p_type, p_account_id, p_created_at, p_body);
  INSERT INTO deliveries (id, event_id, webhook_id, account_id, status, attempts, next_attempt_at, created_at)
  SELECT 'dlv_' || substr(p_id, 5) || lpad(s.n::text, greatest(6, length(s.n::text)), '0'), p_id, s.wid, p_account_id, 'pending', 0, p_created_at, p_created_at
  FROM (SELECT w.id AS wid, nextval('delivery_seq') AS n
        FROM webhooks w
        WHERE w.account_id = p_account_id AND p_type = ANY (w.events)
        ORDER BY w.id) s;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;

-- One data request asking to be admitted: the key's sliding window, the account's UTC-day counter and,
-- for live keys (p_quota), the period's quota, decided and applied in this one call, which is one
-- statement and one round trip. It mirrors core's slidingWindow, dailyWindow, quotaRequest and
-- warningThreshold step by step; the conformance suite holds it to the memory store.
--
-- Concurrency: under READ COMMITTED each statement of a VOLATILE function sees a fresh snapshot, and every
-- read of state that is then written is a SELECT ... FOR UPDATE, so concurrent calls queue on the rows and
-- each decides on the state the previous one committed: no read-then-write race. Rows are always locked in
-- the same order (key window, account day, account quota) so that calls never deadlock. Refusals by the
-- rate limits are usually decided before any lock (see the two passes below).
--
-- p_now NULL means "use the database clock": one clock for windows, UTC days and billing periods, whatever
-- the callers' clocks say; the time used is returned as "now".
CREATE FUNCTION benchdata_admit(
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
) RETURNS json LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_now bigint := coalesce(p_now, benchdata_clock_ms());
  v_day integer := floor(v_now / 86400000.0)::integer;
  v_stamps bigint[];
  v_live bigint[];
  v_n integer;
  v_lo integer;
  v_hi integer;
  v_mid integer;
  v_pass integer;
  m_allowed boolean;
  m_remaining integer;
  m_reset bigint;
  m_retry bigint;
  d_stored_day integer;
  d_count integer;
  d_allowed boolean;
  d_remaining integer;
  d_reset bigint := (v_day + 1)::bigint * 86400000;
  d_retry bigint;
  v_minute json;
  v_dayj json;
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
  -- Two passes over the rate limits. Pass 1 reads without locks: a request the committed state already
  -- refuses is refused at once (windows only fill up as concurrent requests commit, so that state is a
  -- valid moment to decide at), with no lock, no write and no commit to wait for: cheap when a client
  -- hammers a closed window. Otherwise pass 2 locks the rows and decides again on the latest state.
  FOR v_pass IN 1..2 LOOP
    IF v_pass = 1 THEN
      SELECT stamps INTO v_stamps FROM rate_windows WHERE key_id = p_key_id;
      SELECT day, count INTO d_stored_day, d_count FROM day_counters WHERE account_id = p_account_id;
    ELSE
      -- Lock (creating if needed) the key's window row, then the account's day row.
      SELECT stamps INTO v_stamps FROM rate_windows WHERE key_id = p_key_id FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO rate_windows (key_id, stamps) VALUES (p_key_id, '{}') ON CONFLICT (key_id) DO NOTHING;
        SELECT stamps INTO v_stamps FROM rate_windows WHERE key_id = p_key_id FOR UPDATE;
      END IF;
      SELECT day, count INTO d_stored_day, d_count FROM day_counters WHERE account_id = p_account_id FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO day_counters (account_id, day, count) VALUES (p_account_id, v_day, 0) ON CONFLICT (account_id) DO NOTHING;
        SELECT day, count INTO d_stored_day, d_count FROM day_counters WHERE account_id = p_account_id FOR UPDATE;
      END IF;
    END IF;
    v_stamps := coalesce(v_stamps, '{}');
    d_stored_day := coalesce(d_stored_day, v_day);
    d_count := coalesce(d_count, 0);

    -- The sliding window (core's slidingWindow): the stamps still inside it, then room for one more?
    -- The log is ascending, so a binary search finds the first stamp inside the window.
    v_lo := 1;
    v_hi := cardinality(v_stamps) + 1;
    WHILE v_lo < v_hi LOOP
      v_mid := (v_lo + v_hi) / 2;
      IF v_stamps[v_mid] <= v_now - p_window_ms THEN v_lo := v_mid + 1; ELSE v_hi := v_mid; END IF;
    END LOOP;
    v_live := v_stamps[v_lo:];
    v_n := coalesce(cardinality(v_live), 0);
    IF p_per_minute <= 0 THEN
      m_allowed := false; m_remaining := 0; m_reset := v_now + p_window_ms; m_retry := p_window_ms;
    ELSIF v_n < p_per_minute THEN
      v_live := array_append(v_live, v_now);
      -- A clock that stepped back can leave a stamp newer than now; keep the log ordered.
      IF v_n >= 1 AND v_live[v_n] > v_now THEN
        v_live := ARRAY(SELECT s FROM unnest(v_live) AS s ORDER BY s);
      END IF;
      m_allowed := true; m_remaining := p_per_minute - (v_n + 1); m_reset := v_live[1] + p_window_ms; m_retry := 0;
    ELSE
      -- Full: a slot frees when the (n - limit + 1)-th oldest stamp leaves the window.
      m_allowed := false; m_remaining := 0; m_reset := v_live[v_n - p_per_minute + 1] + p_window_ms;
      m_retry := greatest(1, m_reset - v_now);
    END IF;

    -- The UTC day (core's dailyWindow).
    IF d_stored_day <> v_day THEN d_count := 0; END IF;
    IF d_count >= p_per_day THEN
      d_allowed := false; d_remaining := 0; d_retry := greatest(1, d_reset - v_now);
    ELSE
      d_allowed := true; d_count := d_count + 1; d_remaining := p_per_day - d_count; d_retry := 0;
    END IF;

    -- A refusal writes nothing; the window that would have allowed it is reported as it was before.
    IF NOT m_allowed OR NOT d_allowed THEN
      RETURN json_build_object(
        'kind', 'rate_limited', 'now', v_now,
        'window', CASE WHEN NOT m_allowed THEN 'minute' ELSE 'day' END,
        'minute', json_build_object('limit', p_per_minute, 'remaining', CASE WHEN m_allowed THEN m_remaining + 1 ELSE m_remaining END, 'resetAt', m_reset),
        'day', json_build_object('limit', p_per_day, 'remaining', CASE WHEN d_allowed THEN d_remaining + 1 ELSE d_remaining END, 'resetAt', d_reset),
        'retryAfterMs', greatest(m_retry, d_retry));
    END IF;
  END LOOP;

  -- Admitted by the rate limits, decided under the locks: apply.
  UPDATE rate_windows SET stamps = v_live WHERE key_id = p_key_id;
  UPDATE day_counters SET day = v_day, count = d_count WHERE account_id = p_account_id;
  v_minute := json_build_object('limit', p_per_minute, 'remaining', m_remaining, 'resetAt', m_reset);
  v_dayj := json_build_object('limit', p_per_day, 'remaining', d_remaining, 'resetAt', d_reset);
  IF NOT p_quota THEN
    RETURN json_build_object('kind', 'allowed', 'now', v_now, 'minute', v_minute, 'day', v_dayj, 'quota', NULL);
  END IF;

  -- 4. The period's quota (core's quotaRequest), its row locked (created if needed) last.
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
`;
