/**
 * The PostgreSQL functions as they are now: the SQL helpers (clock, ISO times, billing periods, ULIDs, the outbox)
 * and the hot path's admission (`benchdata_admit_arrays`, the whole decision for every request a server has in
 * flight in one statement, see its comments), with the entry points older servers still call. The text is the
 * labelled mirror of core's decisions in core-mirror.ts, one block per function.
 *
 * Not a migration: `migratePostgres` applies this text after the migrations, in one transaction, whenever the
 * database records an older FUNCTIONS_REVISION (table benchdata_functions). Every statement must be
 * idempotent (CREATE OR REPLACE); a change of a function's arguments or result type needs a DROP FUNCTION IF
 * EXISTS before it here. Bump FUNCTIONS_REVISION with every change of the text (the manifest test insists), and
 * keep what servers of the previous revision call working: during a rolling upgrade they run against it.
 */
import { MIRROR_BLOCKS } from "./core-mirror.ts";

/** Bumped with every change of POSTGRES_FUNCTIONS; a server never replaces functions of a newer revision. */
export const FUNCTIONS_REVISION = 2;

export const POSTGRES_FUNCTIONS: string = MIRROR_BLOCKS.join("");

