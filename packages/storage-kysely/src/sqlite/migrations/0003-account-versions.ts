/**
 * SQLite migration 3: account versions.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "account versions";

export const sql = `
-- Bumped by every account update, whoever makes it: admissions check it against the lookup the caller decided on.
ALTER TABLE accounts ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER accounts_version AFTER UPDATE OF name, tier, limits, allowed_cidrs, billing ON accounts
BEGIN
  UPDATE accounts SET version = version + 1 WHERE id = NEW.id;
END;
`;
