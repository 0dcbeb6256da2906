/**
 * SQLite migration 17: accounts an operator can find, export and erase: tombstones, and the indexes that read an account's records.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "accounts an operator can find, export and erase: tombstones, and the indexes that read an account's records";

export const sql = `
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
`;
