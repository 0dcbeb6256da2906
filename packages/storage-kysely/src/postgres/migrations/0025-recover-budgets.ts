/**
 * PostgreSQL migration 25: recover cannot flood a receiver: each account's hourly recover budget.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "recover cannot flood a receiver: each account's hourly recover budget";

export const sql = `
-- core's RecoverBudget, one row per account, locked by each recover call for its transaction so that
-- concurrent calls on any instance spend it one after the other.
CREATE TABLE recover_budgets (
  account_id   text PRIMARY KEY,
  window_start bigint NOT NULL,
  calls        integer NOT NULL,
  requeued     integer NOT NULL
);
`;
