/**
 * SQLite migration 2: merchant snapshots.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "merchant snapshots";

export const sql = `
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
`;
