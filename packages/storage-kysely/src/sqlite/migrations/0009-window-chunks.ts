/**
 * SQLite migration 9: admission logs in fixed-size chunks: an admission's cost no longer grows with the key's window.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "admission logs in fixed-size chunks: an admission's cost no longer grows with the key's window";

export const sql = `
-- A key's log is the stamps at indices head … next − 1, kept in chunks (window-chunks.ts); \`stamps\` is empty
-- once a key's row is in this form (a whole log there, written by an older server, is split at its next admission).
ALTER TABLE rate_windows ADD COLUMN head INTEGER;
ALTER TABLE rate_windows ADD COLUMN next INTEGER;
CREATE TABLE window_chunks (
  key_id TEXT NOT NULL,
  chunk  INTEGER NOT NULL,
  stamps BLOB NOT NULL,
  PRIMARY KEY (key_id, chunk)
) WITHOUT ROWID;
`;
