/**
 * SQLite migration 26: usage analytics: calls per key, endpoint, outcome and hour or day, with latency histograms; each key's last use.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "usage analytics: calls per key, endpoint, outcome and hour or day, with latency histograms; each key's last use";

export const sql = `
-- Usage analytics (docs/analytics.md): calls per key, endpoint, outcome and hour (and UTC day), with a fixed latency
-- histogram (l0 … l13, core's LATENCY_BOUNDS_MS) and the slowest call. Written by each instance's aggregator every
-- few seconds as additive upserts; pruned oldest first by the primary key's order.

CREATE TABLE key_usage_hours (
  start      INTEGER NOT NULL,
  key_id     TEXT NOT NULL,
  endpoint   TEXT NOT NULL,
  outcome    TEXT NOT NULL,
  account_id TEXT NOT NULL,
  calls      INTEGER NOT NULL,
  max_ms     REAL NOT NULL,
  l0 INTEGER NOT NULL DEFAULT 0,
  l1 INTEGER NOT NULL DEFAULT 0,
  l2 INTEGER NOT NULL DEFAULT 0,
  l3 INTEGER NOT NULL DEFAULT 0,
  l4 INTEGER NOT NULL DEFAULT 0,
  l5 INTEGER NOT NULL DEFAULT 0,
  l6 INTEGER NOT NULL DEFAULT 0,
  l7 INTEGER NOT NULL DEFAULT 0,
  l8 INTEGER NOT NULL DEFAULT 0,
  l9 INTEGER NOT NULL DEFAULT 0,
  l10 INTEGER NOT NULL DEFAULT 0,
  l11 INTEGER NOT NULL DEFAULT 0,
  l12 INTEGER NOT NULL DEFAULT 0,
  l13 INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (start, key_id, endpoint, outcome)
) WITHOUT ROWID;
-- A breakdown reads one account's range; an erasure deletes one account's rows.
CREATE INDEX key_usage_hours_by_account ON key_usage_hours (account_id, start);

CREATE TABLE key_usage_days (
  start      INTEGER NOT NULL,
  key_id     TEXT NOT NULL,
  endpoint   TEXT NOT NULL,
  outcome    TEXT NOT NULL,
  account_id TEXT NOT NULL,
  calls      INTEGER NOT NULL,
  max_ms     REAL NOT NULL,
  l0 INTEGER NOT NULL DEFAULT 0,
  l1 INTEGER NOT NULL DEFAULT 0,
  l2 INTEGER NOT NULL DEFAULT 0,
  l3 INTEGER NOT NULL DEFAULT 0,
  l4 INTEGER NOT NULL DEFAULT 0,
  l5 INTEGER NOT NULL DEFAULT 0,
  l6 INTEGER NOT NULL DEFAULT 0,
  l7 INTEGER NOT NULL DEFAULT 0,
  l8 INTEGER NOT NULL DEFAULT 0,
  l9 INTEGER NOT NULL DEFAULT 0,
  l10 INTEGER NOT NULL DEFAULT 0,
  l11 INTEGER NOT NULL DEFAULT 0,
  l12 INTEGER NOT NULL DEFAULT 0,
  l13 INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (start, key_id, endpoint, outcome)
) WITHOUT ROWID;
-- A breakdown reads one account's range; an erasure deletes one account's rows.
CREATE INDEX key_usage_days_by_account ON key_usage_days (account_id, start);
-- Each key's latest data request, to the minute.
CREATE TABLE key_last_used (
  key_id     TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  at         INTEGER NOT NULL
);
CREATE INDEX key_last_used_by_account ON key_last_used (account_id);
`;
