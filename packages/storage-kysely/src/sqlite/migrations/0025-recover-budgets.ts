/**
 * SQLite migration 25: recover cannot flood a receiver: each account's hourly recover budget.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "recover cannot flood a receiver: each account's hourly recover budget";

export const sql = `
-- core's RecoverBudget, one row per account: the window's start and the calls and re-queued deliveries spent in it.
CREATE TABLE recover_budgets (
  account_id   TEXT PRIMARY KEY,
  window_start INTEGER NOT NULL,
  calls        INTEGER NOT NULL,
  requeued     INTEGER NOT NULL
) WITHOUT ROWID;
`;
