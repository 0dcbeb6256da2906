/**
 * PostgreSQL migration 3: merchant snapshots.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "merchant snapshots";

export const sql = `
-- Merchant financial snapshots ("vcfs"), per account and key environment; one per (merchant, period).
CREATE TABLE merchant_snapshots (
  id          text COLLATE "C" PRIMARY KEY,
  account_id  text COLLATE "C" NOT NULL,
  environment text NOT NULL,
  merchant_id text COLLATE "C" NOT NULL,
  category    text NOT NULL,
  segment     text COLLATE "C" NOT NULL,
  period      text COLLATE "C" NOT NULL,
  metrics     jsonb NOT NULL,
  created_at  bigint NOT NULL
);
CREATE UNIQUE INDEX merchant_snapshots_slot ON merchant_snapshots (account_id, environment, merchant_id, period);
CREATE INDEX merchant_snapshots_recent ON merchant_snapshots (account_id, environment, created_at, id);
`;
