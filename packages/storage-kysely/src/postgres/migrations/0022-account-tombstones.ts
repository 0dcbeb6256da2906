/**
 * PostgreSQL migration 22: accounts an operator can find, export and erase: tombstones, and the indexes that read an account's records.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "accounts an operator can find, export and erase: tombstones, and the indexes that read an account's records";

export const sql = `
ALTER TABLE accounts DROP CONSTRAINT accounts_status_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_status_check CHECK (status IN ('active', 'suspended', 'deleted'));
ALTER TABLE accounts ADD COLUMN deleted_at bigint;
CREATE INDEX accounts_by_created ON accounts (created_at, id);
CREATE INDEX deliveries_by_account ON deliveries (account_id, created_at, id);
CREATE INDEX events_by_account ON events (account_id, created_at, id);
CREATE INDEX merchant_snapshots_by_account ON merchant_snapshots (account_id, created_at, id);
`;
