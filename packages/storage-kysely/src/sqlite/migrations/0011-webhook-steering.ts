/**
 * SQLite migration 11: webhooks receivers steer and operators recover: status, failure history, dead reasons, secret rotation.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "webhooks receivers steer and operators recover: status, failure history, dead reasons, secret rotation";

export const sql = `
-- active | disabled (a 410, or failing for too long); a disabled webhook gets no deliveries and no attempts.
ALTER TABLE webhooks ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
ALTER TABLE webhooks ADD COLUMN disabled_reason TEXT;
ALTER TABLE webhooks ADD COLUMN disabled_at INTEGER;
-- core's webhookHealthAfter: when the current run of failed attempts began, and dead deliveries in a row.
ALTER TABLE webhooks ADD COLUMN failing_since INTEGER;
ALTER TABLE webhooks ADD COLUMN dead_streak INTEGER NOT NULL DEFAULT 0;
-- A rotation keeps the replaced secret (sealed) signing until previous_secret_until.
ALTER TABLE webhooks ADD COLUMN previous_secret TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_until INTEGER;
-- attempts_exhausted | gone | webhook_disabled, for dead deliveries.
ALTER TABLE deliveries ADD COLUMN dead_reason TEXT;
-- Ordered claims look for the oldest pending delivery of a webhook.
CREATE INDEX deliveries_pending_by_webhook ON deliveries (webhook_id, seq) WHERE status = 'pending';
`;
