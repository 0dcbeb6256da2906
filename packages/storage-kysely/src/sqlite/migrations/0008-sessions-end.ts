/**
 * SQLite migration 8: sessions end: sign-out, revocation, a maximum lifetime; one-time sign-in links; daily usage history.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "sessions end: sign-out, revocation, a maximum lifetime; one-time sign-in links; daily usage history";

export const sql = `
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
`;
