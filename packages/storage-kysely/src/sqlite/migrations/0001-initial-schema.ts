/**
 * SQLite migration 1: initial schema.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "initial schema";

export const sql = `
CREATE TABLE accounts (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  tier          TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  limits        TEXT NOT NULL DEFAULT '{}',
  allowed_cidrs TEXT NOT NULL DEFAULT '[]',
  billing       TEXT NOT NULL DEFAULT '{}'
);

CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER
);

CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL,
  name        TEXT NOT NULL,
  environment TEXT NOT NULL,
  scopes      TEXT NOT NULL,
  prefix      TEXT NOT NULL,
  is_active   INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  rotated_at  INTEGER,
  revoked_at  INTEGER
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, id);

-- Every hash a key ever had; a rotation retires the old one, so lookups can tell "rotated away" from "unknown".
CREATE TABLE key_hashes (
  hash    TEXT PRIMARY KEY,
  key_id  TEXT NOT NULL,
  retired INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX key_hashes_by_key ON key_hashes (key_id);

-- The newest admission stamps of each key (at most its per-minute limit): float64 LE, or compact (stamp-log.ts).
CREATE TABLE rate_windows (
  key_id TEXT PRIMARY KEY,
  stamps BLOB NOT NULL
);

CREATE TABLE day_counters (
  account_id TEXT PRIMARY KEY,
  day        INTEGER NOT NULL,
  count      INTEGER NOT NULL
);

-- core's QuotaState, one row per (account, billing period).
CREATE TABLE quota_periods (
  account_id      TEXT NOT NULL,
  period_start    INTEGER NOT NULL,
  period_end      INTEGER NOT NULL,
  used            INTEGER NOT NULL DEFAULT 0,
  blocks          INTEGER NOT NULL DEFAULT 0,
  exhausted       INTEGER NOT NULL DEFAULT 0,
  pending_block   INTEGER,
  charge_attempts INTEGER NOT NULL DEFAULT 0,
  block_attempts  INTEGER NOT NULL DEFAULT 0,
  last_failure_at INTEGER,
  PRIMARY KEY (account_id, period_start)
);

CREATE TABLE webhooks (
  id         TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  url        TEXT NOT NULL,
  events     TEXT NOT NULL,
  secret     TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX webhooks_by_account ON webhooks (account_id, id);

-- The outbox: each event's exact body, written with the change that caused it.
CREATE TABLE events (
  id         TEXT PRIMARY KEY,
  type       TEXT NOT NULL,
  account_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  body       TEXT NOT NULL
);

CREATE TABLE deliveries (
  seq             INTEGER PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,
  event_id        TEXT NOT NULL,
  webhook_id      TEXT NOT NULL,
  account_id      TEXT NOT NULL,
  status          TEXT NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  lease_token     TEXT,
  lease_until     INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX deliveries_by_webhook ON deliveries (webhook_id, created_at, id);

CREATE TABLE delivery_attempts (
  seq           INTEGER PRIMARY KEY,
  delivery_id   TEXT NOT NULL,
  attempt       INTEGER NOT NULL,
  at            INTEGER NOT NULL,
  status_code   INTEGER,
  latency_ms    REAL NOT NULL,
  error         TEXT,
  response_body TEXT NOT NULL
);
CREATE INDEX delivery_attempts_by_delivery ON delivery_attempts (delivery_id, seq);

CREATE TABLE invoices (
  id              TEXT PRIMARY KEY,
  account_id      TEXT NOT NULL,
  period_start    TEXT NOT NULL,
  period_end      TEXT NOT NULL,
  block           INTEGER NOT NULL,
  attempt         INTEGER NOT NULL,
  amount          INTEGER NOT NULL,
  currency        TEXT NOT NULL,
  status          TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  processor_ref   TEXT,
  calls_used      INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  resolved_at     INTEGER,
  failure_reason  TEXT,
  lease_token     TEXT,
  lease_until     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX invoices_pending ON invoices (created_at, id) WHERE status = 'pending';
CREATE INDEX invoices_by_account ON invoices (account_id, created_at);

-- Published benchmark cells; the primary key starts with (category, period), the unit an import replaces.
CREATE TABLE cells (
  category    TEXT NOT NULL,
  period      TEXT NOT NULL,
  segment     TEXT NOT NULL,
  metric      TEXT NOT NULL,
  granularity TEXT NOT NULL,
  sample_size INTEGER NOT NULL,
  sorted      BLOB NOT NULL,
  PRIMARY KEY (category, period, segment, metric)
);
CREATE INDEX cells_periods ON cells (category, segment, granularity, period);

-- Bumped by every publication, so caches in other processes notice new data.
CREATE TABLE data_version (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
);
INSERT INTO data_version (id, version) VALUES (1, 0);
`;
