/**
 * SQLite migration 23: retention: the pruning worker reads each table's oldest rows by an index range.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "retention: the pruning worker reads each table's oldest rows by an index range";

export const sql = `
-- Finished deliveries by their event's time (pending ones are not in it: never pruned).
CREATE INDEX deliveries_finished ON deliveries (created_at, id) WHERE status <> 'pending';
-- Whether a delivery still refers to an event, which must outlive its deliveries.
CREATE INDEX deliveries_by_event ON deliveries (event_id);
CREATE INDEX events_by_time ON events (created_at, id);
CREATE INDEX sessions_by_expiry ON sessions (expires_at, token_hash);
CREATE INDEX sign_in_links_by_expiry ON sign_in_links (expires_at, token_hash);
CREATE INDEX day_counters_by_day ON day_counters (day, account_id);
CREATE INDEX usage_days_by_day ON usage_days (day, account_id);
`;
