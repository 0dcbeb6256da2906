/**
 * PostgreSQL migration 17: suspended accounts: status, when and why.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "suspended accounts: status, when and why";

export const sql = `
ALTER TABLE accounts ADD COLUMN status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended'));
ALTER TABLE accounts ADD COLUMN suspended_at bigint;
ALTER TABLE accounts ADD COLUMN suspended_reason text;
`;
