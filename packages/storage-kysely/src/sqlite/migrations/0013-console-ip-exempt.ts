/**
 * SQLite migration 13: the IP allow-list guards console sessions; the operator's override.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "the IP allow-list guards console sessions; the operator's override";

export const sql = `
-- 1: the account's console sessions work from any address (its allowed_cidrs then guard data requests only).
ALTER TABLE accounts ADD COLUMN console_ip_exempt INTEGER NOT NULL DEFAULT 0;
`;
