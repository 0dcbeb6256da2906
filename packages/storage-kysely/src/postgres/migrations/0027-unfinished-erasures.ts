/**
 * PostgreSQL migration 27: erasures whose purge is not finished, so the pruning worker finishes them.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "erasures whose purge is not finished, so the pruning worker finishes them";

export const sql = `
-- An erased account's id from its erasure's atomic step until a purge finds nothing of its history left. Only
-- unfinished erasures are here, so reading them never scans the tombstones, which are kept for good. Ordered
-- code unit by code unit (COLLATE "C"), as the other stores order ids, whatever the database's collation.
CREATE TABLE unfinished_erasures (
  account_id text COLLATE "C" PRIMARY KEY
);
-- Erasures made before this table existed may have been interrupted too: each is checked once (a purge that finds
-- nothing left forgets it at once).
INSERT INTO unfinished_erasures (account_id) SELECT id FROM accounts WHERE status = 'deleted';
`;
