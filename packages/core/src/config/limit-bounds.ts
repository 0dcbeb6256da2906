/**
 * The bounds every account limit keeps wherever it is set (a tier in the config file, an account's override in
 * the admin API), so that no combination of them can make a charge that buys nothing or a quota that overflows:
 * the largest allowance, `monthlyQuota + maxAutoChargesPerPeriod × blockSize` (about 10^15), stays an exact
 * JavaScript integer and fits PostgreSQL's bigint, and an amount stays an exact integer of minor units.
 */
export const LIMIT_BOUNDS = {
  // The sliding window keeps one timestamp per request admitted in the last minute. An admission costs the same
  // whatever the window holds (the SQL stores keep it in fixed-size chunks), so the cap is about memory and disk:
  // a full window of 1,000,000 is about 2 MB in SQLite, 8 MB in PostgreSQL and in the memory store.
  perMinute: { min: 1, max: 1_000_000 },
  // The daily counter is a 32-bit integer in the databases.
  perDay: { min: 1, max: 2_147_483_647 },
  monthlyQuota: { min: 0, max: 1_000_000_000_000 },
  // A block of zero calls would be charged for and add nothing, so the next request would charge again.
  blockSize: { min: 1, max: 1_000_000_000_000 },
  // Minor units (cents): up to a billion in the currency's major unit per block; never negative.
  blockPrice: { min: 0, max: 100_000_000_000 },
} as const;

/** The largest `billing.maxAutoChargesPerPeriod` an operator may set. */
export const MAX_AUTO_CHARGES_CEILING = 1000;
