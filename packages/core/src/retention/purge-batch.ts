/**
 * History records of an erased account deleted per `purgeAccount` call, by the erasure's handler and by the pruning
 * worker alike: each call is one short transaction, so neither holds SQLite's write lock for long.
 */
export const PURGE_BATCH = 1000;
