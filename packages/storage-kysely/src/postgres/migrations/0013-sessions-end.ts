/**
 * PostgreSQL migration 13: sessions end: sign-out, revocation, a maximum lifetime; one-time sign-in links; daily usage history.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "sessions end: sign-out, revocation, a maximum lifetime; one-time sign-in links; daily usage history";

export const sql = `
UPDATE sessions SET expires_at = created_at + 7776000000 WHERE expires_at IS NULL;
CREATE INDEX sessions_by_account ON sessions (account_id);

CREATE TABLE sign_in_links (
  token_hash text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX sign_in_links_by_account ON sign_in_links (account_id);

-- The day counter keeps only the current UTC day; when it rolls over, the day it leaves is kept here.
CREATE TABLE usage_days (
  account_id text COLLATE "C" NOT NULL,
  day        integer NOT NULL,
  count      integer NOT NULL,
  PRIMARY KEY (account_id, day)
);
CREATE FUNCTION benchdata_keep_usage_day() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO usage_days (account_id, day, count) VALUES (OLD.account_id, OLD.day, OLD.count)
  ON CONFLICT (account_id, day) DO UPDATE SET count = excluded.count;
  RETURN NULL;
END $$;
CREATE TRIGGER day_counters_history AFTER UPDATE OF day ON day_counters
  FOR EACH ROW WHEN (OLD.day <> NEW.day AND OLD.count > 0) EXECUTE FUNCTION benchdata_keep_usage_day();
`;
