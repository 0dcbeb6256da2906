/**
 * SQLite migration 12: suspended accounts: status, when and why; a status change moves the account's version.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "suspended accounts: status, when and why; a status change moves the account's version";

export const sql = `
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
`;
