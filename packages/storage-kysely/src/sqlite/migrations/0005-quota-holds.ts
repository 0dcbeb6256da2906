/**
 * SQLite migration 5: quota holds: when automatic charging stopped in a period.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "quota holds: when automatic charging stopped in a period";

export const sql = `
-- core's QuotaState.heldAt: set once, by the admission that found the ceiling reached or a block that buys nothing.
ALTER TABLE quota_periods ADD COLUMN held_at INTEGER;
`;
