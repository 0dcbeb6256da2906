/**
 * SQLite migration 24: the audit log: a hash chain of who changed what, and its head.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "the audit log: a hash chain of who changed what, and its head";

export const sql = `
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
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
`;
