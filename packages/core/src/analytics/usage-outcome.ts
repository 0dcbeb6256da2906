/** The outcome classes usage analytics count a data request under, by its HTTP status. */

/**
 * The outcomes, in their stored order: `2xx`; `401/403` (key refused); `402` (quota); `404`; `422`; `429`;
 * `5xx`; `4xx` (any other client error: a bad body's 400, 413 or 415).
 */
export const USAGE_OUTCOMES = ["2xx", "401/403", "402", "404", "422", "429", "5xx", "4xx"] as const;

/** One outcome class. */
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

/** The number of outcome classes. */
export const OUTCOME_COUNT: number = USAGE_OUTCOMES.length;

/** The index in USAGE_OUTCOMES of a status's class (a status below 400 other than 2xx never reaches a client here: `4xx`). */
export function outcomeIndex(status: number): number {
  if (status < 300 && status >= 200) return 0;
  switch (status) {
    case 401:
    case 403:
      return 1;
    case 402:
      return 2;
    case 404:
      return 3;
    case 422:
      return 4;
    case 429:
      return 5;
  }
  return status >= 500 ? 6 : 7;
}
