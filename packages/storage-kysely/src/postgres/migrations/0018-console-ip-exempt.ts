/**
 * PostgreSQL migration 18: the IP allow-list guards console sessions; the operator's override.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "the IP allow-list guards console sessions; the operator's override";

export const sql = `
ALTER TABLE accounts ADD COLUMN console_ip_exempt boolean NOT NULL DEFAULT false;
`;
