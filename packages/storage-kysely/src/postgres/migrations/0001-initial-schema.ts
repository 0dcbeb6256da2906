/**
 * PostgreSQL migration 1: initial schema.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "initial schema";

export const sql = `
CREATE TABLE accounts (
  id            text COLLATE "C" PRIMARY KEY,
  name          text NOT NULL,
  tier          text NOT NULL,
  created_at    bigint NOT NULL,
  limits        jsonb NOT NULL DEFAULT '{}',
  allowed_cidrs text[] NOT NULL DEFAULT '{}',
  billing       jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE sessions (
  token_hash text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint
);

CREATE TABLE api_keys (
  id          text COLLATE "C" PRIMARY KEY,
  account_id  text COLLATE "C" NOT NULL,
  name        text NOT NULL,
  environment text NOT NULL,
  scopes      text[] NOT NULL,
  prefix      text NOT NULL,
  is_active   boolean NOT NULL,
  created_at  bigint NOT NULL,
  rotated_at  bigint,
  revoked_at  bigint
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, id);

-- Every hash a key ever had; a rotation retires the old one, so lookups can tell "rotated away" from "unknown".
CREATE TABLE key_hashes (
  hash    text COLLATE "C" PRIMARY KEY,
  key_id  text COLLATE "C" NOT NULL,
  retired boolean NOT NULL DEFAULT false
);
CREATE INDEX key_hashes_by_key ON key_hashes (key_id) WHERE NOT retired;

-- The newest admission stamps of each key (at most its per-minute limit), ascending.
CREATE TABLE rate_windows (
  key_id text COLLATE "C" PRIMARY KEY,
  stamps bigint[] NOT NULL
);
-- A long log (a high per-minute limit) goes out of line uncompressed: it is rewritten on every admission,
-- and compressing it each time costs more than the bytes it saves.
ALTER TABLE rate_windows ALTER COLUMN stamps SET STORAGE EXTERNAL;

CREATE TABLE day_counters (
  account_id text COLLATE "C" PRIMARY KEY,
  day        integer NOT NULL,
  count      integer NOT NULL
);

-- core's QuotaState, one row per (account, billing period).
CREATE TABLE quota_periods (
  account_id      text COLLATE "C" NOT NULL,
  period_start    bigint NOT NULL,
  period_end      bigint NOT NULL,
  used            bigint NOT NULL DEFAULT 0,
  blocks          integer NOT NULL DEFAULT 0,
  exhausted       boolean NOT NULL DEFAULT false,
  pending_block   integer,
  charge_attempts integer NOT NULL DEFAULT 0,
  block_attempts  integer NOT NULL DEFAULT 0,
  last_failure_at bigint,
  PRIMARY KEY (account_id, period_start)
);

CREATE TABLE webhooks (
  id         text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  url        text NOT NULL,
  events     text[] NOT NULL,
  secret     text NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX webhooks_by_account ON webhooks (account_id, id);

-- The outbox: each event's exact body, written with the change that caused it.
CREATE TABLE events (
  id         text COLLATE "C" PRIMARY KEY,
  type       text NOT NULL,
  account_id text COLLATE "C" NOT NULL,
  created_at bigint NOT NULL,
  body       text NOT NULL
);

CREATE SEQUENCE delivery_seq;

CREATE TABLE deliveries (
  id              text COLLATE "C" PRIMARY KEY,
  event_id        text COLLATE "C" NOT NULL,
  webhook_id      text COLLATE "C" NOT NULL,
  account_id      text COLLATE "C" NOT NULL,
  status          text NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at bigint,
  lease_token     text,
  lease_until     bigint NOT NULL DEFAULT 0,
  created_at      bigint NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX deliveries_by_webhook ON deliveries (webhook_id, created_at, id);

CREATE TABLE delivery_attempts (
  seq           bigserial PRIMARY KEY,
  delivery_id   text COLLATE "C" NOT NULL,
  attempt       integer NOT NULL,
  at            bigint NOT NULL,
  status_code   integer,
  latency_ms    double precision NOT NULL,
  error         text,
  response_body text NOT NULL
);
CREATE INDEX delivery_attempts_by_delivery ON delivery_attempts (delivery_id, seq);

CREATE TABLE invoices (
  id              text COLLATE "C" PRIMARY KEY,
  account_id      text COLLATE "C" NOT NULL,
  period_start    text NOT NULL,
  period_end      text NOT NULL,
  block           integer NOT NULL,
  attempt         integer NOT NULL,
  amount          bigint NOT NULL,
  currency        text NOT NULL,
  status          text NOT NULL,
  idempotency_key text NOT NULL,
  processor_ref   text,
  calls_used      bigint NOT NULL,
  created_at      bigint NOT NULL,
  resolved_at     bigint,
  failure_reason  text,
  lease_token     text,
  lease_until     bigint NOT NULL DEFAULT 0
);
CREATE INDEX invoices_pending ON invoices (created_at, id) WHERE status = 'pending';
CREATE INDEX invoices_by_account ON invoices (account_id, created_at);

-- Published benchmark cells; the primary key starts with (category, period), the unit an import replaces.
CREATE TABLE cells (
  category    text COLLATE "C" NOT NULL,
  period      text COLLATE "C" NOT NULL,
  segment     text COLLATE "C" NOT NULL,
  metric      text COLLATE "C" NOT NULL,
  granularity text NOT NULL,
  sample_size integer NOT NULL,
  sorted      bytea NOT NULL,
  PRIMARY KEY (category, period, segment, metric)
);
CREATE INDEX cells_periods ON cells (category, segment, granularity, period);

-- Bumped by every publication, so caches in other processes notice new data.
CREATE TABLE data_version (
  id      integer PRIMARY KEY CHECK (id = 1),
  version bigint NOT NULL
);
INSERT INTO data_version (id, version) VALUES (1, 0);
`;
