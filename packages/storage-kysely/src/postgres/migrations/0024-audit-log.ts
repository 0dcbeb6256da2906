/**
 * PostgreSQL migration 24: the audit log: a hash chain of who changed what, and its head.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "the audit log: a hash chain of who changed what, and its head";

export const sql = `
CREATE TABLE audit_log (
  seq             bigint PRIMARY KEY,
  id              text NOT NULL UNIQUE,
  at              bigint NOT NULL,
  actor           text NOT NULL,
  action          text NOT NULL,
  account_id      text,
  target_id       text,
  request_id      text,
  client_address  text,
  changes         text NOT NULL,
  personal        text,
  salt            text,
  personal_digest text NOT NULL,
  prev_hash       text NOT NULL,
  hash            text NOT NULL,
  erased_at       bigint
);
CREATE INDEX audit_log_by_account ON audit_log (account_id, seq);
-- The chain's head: one row, locked (SELECT ... FOR UPDATE) and moved by every append, so two instances never fork the chain.
CREATE TABLE audit_head (id integer PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL, hash text NOT NULL);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
`;
