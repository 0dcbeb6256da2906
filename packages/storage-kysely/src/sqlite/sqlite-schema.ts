/**
 * The SQLite schema. Times are INTEGER Unix milliseconds, booleans 0/1, lists JSON text, and the two
 * arrays of numbers (a key's admission log, a cell's sorted values) float64 little-endian BLOBs.
 */
import type { Migration } from "../migration.ts";
import { RETENTION_INDEXES } from "../prune-spec.ts";

/** The SQLite migrations, oldest first. */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial schema",
    sql: `
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
`,
  },
  {
    version: 2,
    name: "merchant snapshots",
    sql: `
-- Merchant financial snapshots ("vcfs"), per account and key environment; one per (merchant, period).
CREATE TABLE merchant_snapshots (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  category    TEXT NOT NULL,
  segment     TEXT NOT NULL,
  period      TEXT NOT NULL,
  metrics     TEXT NOT NULL,
  created_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX merchant_snapshots_slot ON merchant_snapshots (account_id, environment, merchant_id, period);
CREATE INDEX merchant_snapshots_recent ON merchant_snapshots (account_id, environment, created_at, id);
`,
  },
  {
    version: 3,
    name: "account versions",
    sql: `
-- Bumped by every account update, whoever makes it: admissions check it against the lookup the caller decided on.
ALTER TABLE accounts ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER accounts_version AFTER UPDATE OF name, tier, limits, allowed_cidrs, billing ON accounts
BEGIN
  UPDATE accounts SET version = version + 1 WHERE id = NEW.id;
END;
`,
  },
  {
    version: 5,
    name: "quota holds: when automatic charging stopped in a period",
    sql: `
-- core's QuotaState.heldAt: set once, by the admission that found the ceiling reached or a block that buys nothing.
ALTER TABLE quota_periods ADD COLUMN held_at INTEGER;
`,
  },
  {
    version: 8,
    name: "sessions end: sign-out, revocation, a maximum lifetime; one-time sign-in links; daily usage history",
    sql: `
-- Sessions never last forever any more: old ones without an expiry get the maximum lifetime (90 days).
UPDATE sessions SET expires_at = created_at + 7776000000 WHERE expires_at IS NULL;
CREATE INDEX sessions_by_account ON sessions (account_id);

-- One-time sign-in links: only the token's hash; a redeemed link is deleted.
CREATE TABLE sign_in_links (
  token_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX sign_in_links_by_account ON sign_in_links (account_id);

-- The day counter keeps only the current UTC day; when it rolls over, the day it leaves is kept here.
CREATE TABLE usage_days (
  account_id TEXT NOT NULL,
  day        INTEGER NOT NULL,
  count      INTEGER NOT NULL,
  PRIMARY KEY (account_id, day)
);
CREATE TRIGGER day_counters_history AFTER UPDATE OF day ON day_counters
WHEN OLD.day <> NEW.day AND OLD.count > 0
BEGIN
  INSERT INTO usage_days (account_id, day, count) VALUES (OLD.account_id, OLD.day, OLD.count)
  ON CONFLICT (account_id, day) DO UPDATE SET count = excluded.count;
END;
`,
  },
  {
    version: 9,
    name: "admission logs in fixed-size chunks: an admission's cost no longer grows with the key's window",
    sql: `
-- A key's log is the stamps at indices head … next − 1, kept in chunks (window-chunks.ts); \`stamps\` is empty
-- once a key's row is in this form (a whole log there, written by an older server, is split at its next admission).
ALTER TABLE rate_windows ADD COLUMN head INTEGER;
ALTER TABLE rate_windows ADD COLUMN next INTEGER;
CREATE TABLE window_chunks (
  key_id TEXT NOT NULL,
  chunk  INTEGER NOT NULL,
  stamps BLOB NOT NULL,
  PRIMARY KEY (key_id, chunk)
) WITHOUT ROWID;
`,
  },
  {
    version: 11,
    name: "webhooks receivers steer and operators recover: status, failure history, dead reasons, secret rotation",
    sql: `
-- active | disabled (a 410, or failing for too long); a disabled webhook gets no deliveries and no attempts.
ALTER TABLE webhooks ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
ALTER TABLE webhooks ADD COLUMN disabled_reason TEXT;
ALTER TABLE webhooks ADD COLUMN disabled_at INTEGER;
-- core's webhookHealthAfter: when the current run of failed attempts began, and dead deliveries in a row.
ALTER TABLE webhooks ADD COLUMN failing_since INTEGER;
ALTER TABLE webhooks ADD COLUMN dead_streak INTEGER NOT NULL DEFAULT 0;
-- A rotation keeps the replaced secret (sealed) signing until previous_secret_until.
ALTER TABLE webhooks ADD COLUMN previous_secret TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_until INTEGER;
-- attempts_exhausted | gone | webhook_disabled, for dead deliveries.
ALTER TABLE deliveries ADD COLUMN dead_reason TEXT;
-- Ordered claims look for the oldest pending delivery of a webhook.
CREATE INDEX deliveries_pending_by_webhook ON deliveries (webhook_id, seq) WHERE status = 'pending';
`,
  },
  {
    version: 12,
    name: "suspended accounts: status, when and why; a status change moves the account's version",
    sql: `
-- active | suspended: a suspended account's keys and console are refused, its deliveries and charges wait.
ALTER TABLE accounts ADD COLUMN status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended'));
ALTER TABLE accounts ADD COLUMN suspended_at INTEGER;
ALTER TABLE accounts ADD COLUMN suspended_reason TEXT;
-- The version must move with the status too, so every remembered lookup of the account's keys is stale at once.
DROP TRIGGER accounts_version;
CREATE TRIGGER accounts_version AFTER UPDATE OF name, tier, limits, allowed_cidrs, billing, status, suspended_at, suspended_reason ON accounts
BEGIN
  UPDATE accounts SET version = version + 1 WHERE id = NEW.id;
END;
`,
  },
  {
    version: 13,
    name: "the IP allow-list guards console sessions; the operator's override",
    sql: `
-- 1: the account's console sessions work from any address (its allowed_cidrs then guard data requests only).
ALTER TABLE accounts ADD COLUMN console_ip_exempt INTEGER NOT NULL DEFAULT 0;
`,
  },
  {
    version: 16,
    name: "cells keep their businesses, so sample_size of several metrics counts distinct businesses",
    sql: `
-- The cell's business ordinals (uint32 little-endian, ascending), numbered per import; NULL for cells
-- published before (their (category, period) counts as before until it is imported again).
ALTER TABLE cells ADD COLUMN businesses BLOB;
`,
  },
  {
    version: 17,
    name: "accounts an operator can find, export and erase: tombstones, and the indexes that read an account's records",
    sql: `
-- An erased account stays as a tombstone (status 'deleted', deleted_at), so its id is never reused and its invoices
-- keep their reference. SQLite cannot change a CHECK constraint in place: the table is rebuilt with the new one
-- (its trigger goes with it and is made again, also moving the version with deleted_at).
CREATE TABLE accounts_next (
  id                TEXT PRIMARY KEY,
  name              TEXT NOT NULL,
  tier              TEXT NOT NULL,
  created_at        INTEGER NOT NULL,
  limits            TEXT NOT NULL DEFAULT '{}',
  allowed_cidrs     TEXT NOT NULL DEFAULT '[]',
  billing           TEXT NOT NULL DEFAULT '{}',
  version           INTEGER NOT NULL DEFAULT 0,
  status            TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'deleted')),
  suspended_at      INTEGER,
  suspended_reason  TEXT,
  console_ip_exempt INTEGER NOT NULL DEFAULT 0,
  deleted_at        INTEGER
);
INSERT INTO accounts_next (id, name, tier, created_at, limits, allowed_cidrs, billing, version, status, suspended_at, suspended_reason, console_ip_exempt)
  SELECT id, name, tier, created_at, limits, allowed_cidrs, billing, version, status, suspended_at, suspended_reason, console_ip_exempt FROM accounts;
DROP TABLE accounts;
ALTER TABLE accounts_next RENAME TO accounts;
CREATE TRIGGER accounts_version AFTER UPDATE OF name, tier, limits, allowed_cidrs, billing, status, suspended_at, suspended_reason, deleted_at ON accounts
BEGIN
  UPDATE accounts SET version = version + 1 WHERE id = NEW.id;
END;
-- The operator's list pages in (created_at, id) order; an export and an erasure read an account's records in it.
CREATE INDEX accounts_by_created ON accounts (created_at, id);
CREATE INDEX deliveries_by_account ON deliveries (account_id, created_at, id);
CREATE INDEX events_by_account ON events (account_id, created_at, id);
CREATE INDEX merchant_snapshots_by_account ON merchant_snapshots (account_id, created_at, id);
`,
  },
  {
    version: 23,
    name: "retention: the pruning worker reads each table's oldest rows by an index range",
    sql: RETENTION_INDEXES,
  },
  {
    version: 24,
    name: "the audit log: a hash chain of who changed what, and its head",
    sql: `
-- One row per audited action, in chain order (docs/audit.md). client_address, personal and salt are what an
-- account's erasure blanks; personal_digest, which the hash covers, stays.
CREATE TABLE audit_log (
  seq             INTEGER PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,
  at              INTEGER NOT NULL,
  actor           TEXT NOT NULL,
  action          TEXT NOT NULL,
  account_id      TEXT,
  target_id       TEXT,
  request_id      TEXT,
  client_address  TEXT,
  changes         TEXT NOT NULL,
  personal        TEXT,
  salt            TEXT,
  personal_digest TEXT NOT NULL,
  prev_hash       TEXT NOT NULL,
  hash            TEXT NOT NULL,
  erased_at       INTEGER
);
CREATE INDEX audit_log_by_account ON audit_log (account_id, seq);
-- The chain's head: one row, read and moved by every append inside the appending write transaction.
CREATE TABLE audit_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '${"0".repeat(64)}');
`,
  },
];
