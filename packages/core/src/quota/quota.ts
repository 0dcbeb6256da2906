/**
 * The account quota of a billing period as a pure state machine. Storage keeps one `QuotaState` per
 * (account, period) and applies each step atomically; SQL stores may express the same step as guarded
 * statements, and the shared conformance suite holds every implementation to this one.
 */

/** The sizes that shape a period's quota. */
export interface QuotaPlan {
  /** Calls included in the period. */
  readonly baseQuota: number;
  /** Calls one purchased block adds. */
  readonly blockSize: number;
  /** Price of one block in the currency's minor unit. */
  readonly blockPrice: number;
  /** After a failed charge, how long before a request may start another automatic attempt (ms). */
  readonly retryAfterFailureMs: number;
  /** Automatic charge attempts allowed in one period before the account is held for review. */
  readonly maxAutoCharges: number;
}

/** The contract's defaults for the retry policy (the sizes come from the tier). */
export const DEFAULT_CHARGE_POLICY = { retryAfterFailureMs: 3_600_000, maxAutoCharges: 10 } as const;

/** A period's quota as stored. */
export interface QuotaState {
  /** Calls counted in the period (live keys only). */
  readonly used: number;
  /** Blocks bought and paid in the period. */
  readonly blocks: number;
  /** True from the request after the allowance ran out until a charge clears. */
  readonly exhausted: boolean;
  /** The block number a charge is outstanding for, or null. */
  readonly pendingBlock: number | null;
  /** Automatic charge attempts started since the period began or its last successful charge (the review cap counts these). */
  readonly chargeAttempts: number;
  /** Attempts started for the next block (`blocks + 1`); back to 0 when a block is paid. */
  readonly blockAttempts: number;
  /** When the last charge failed (Unix ms), or null. */
  readonly lastFailureAt: number | null;
}

/** A fresh period's state. */
export const EMPTY_QUOTA: QuotaState = {
  used: 0,
  blocks: 0,
  exhausted: false,
  pendingBlock: null,
  chargeAttempts: 0,
  blockAttempts: 0,
  lastFailureAt: null,
};

/** Calls allowed in the period: the base plus every paid block. */
export function allowance(plan: QuotaPlan, state: QuotaState): number {
  return plan.baseQuota + state.blocks * plan.blockSize;
}

/**
 * The usage levels at which `quota.warning` fires: 80% of the base quota (rounded up to a whole call: with
 * a quota of 20, the 16th call), and 80% of each purchased block. A step that makes `used` equal to one of
 * them warns; since `used` grows by one per atomic step, each fires exactly once.
 */
export function warningThreshold(plan: QuotaPlan, used: number): number | null {
  const base = Math.ceil(plan.baseQuota * 0.8);
  if (used === base) return base;
  if (used <= plan.baseQuota || plan.blockSize <= 0) return null;
  const into = used - plan.baseQuota;
  const block = Math.ceil(into / plan.blockSize);
  const t = plan.baseQuota + (block - 1) * plan.blockSize + Math.ceil(plan.blockSize * 0.8);
  return used === t ? t : null;
}

/** A charge the storage must record (as a pending invoice) in the same atomic step. */
export interface ChargeRequest {
  /** The block the charge buys (1 for the first block of the period). */
  readonly block: number;
  /** 1 for the first attempt at this block, then 2, 3… after definite failures. */
  readonly attempt: number;
  readonly amount: number;
}

/** What one live request does to the quota. */
export type QuotaStep =
  | { readonly kind: "allow"; readonly state: QuotaState; readonly used: number; readonly allowance: number; readonly warn: number | null }
  | { readonly kind: "exhausted"; readonly state: QuotaState; readonly flipped: boolean; readonly charge: ChargeRequest | null; readonly heldForReview: boolean };

/**
 * One live request against the period's quota. The request that uses the last call succeeds; the next one
 * flips the quota to exhausted and starts exactly one charge; later ones are refused without a new charge
 * while it is outstanding. After a failed charge, a request may start one new attempt once
 * `retryAfterFailureMs` has passed, until `maxAutoCharges` attempts were made without one succeeding.
 */
export function quotaRequest(plan: QuotaPlan, state: QuotaState, now: number): QuotaStep {
  const limit = allowance(plan, state);
  if (!state.exhausted && state.used < limit) {
    const used = state.used + 1;
    return { kind: "allow", state: { ...state, used }, used, allowance: limit, warn: warningThreshold(plan, used) };
  }
  const flipped = !state.exhausted;
  const canCharge =
    state.pendingBlock === null &&
    state.chargeAttempts < plan.maxAutoCharges &&
    (flipped || state.lastFailureAt === null || now - state.lastFailureAt >= plan.retryAfterFailureMs);
  if (!canCharge) {
    return {
      kind: "exhausted",
      state: flipped ? { ...state, exhausted: true } : state,
      flipped,
      charge: null,
      heldForReview: state.pendingBlock === null && state.chargeAttempts >= plan.maxAutoCharges,
    };
  }
  const block = state.blocks + 1;
  const attempt = state.blockAttempts + 1;
  return {
    kind: "exhausted",
    state: { ...state, exhausted: true, pendingBlock: block, chargeAttempts: state.chargeAttempts + 1, blockAttempts: attempt },
    flipped,
    charge: { block, attempt, amount: plan.blockPrice },
    heldForReview: false,
  };
}

/** A charge for `block` cleared: one more block in the allowance, access resumes. Stale outcomes change nothing. */
export function quotaChargeSucceeded(state: QuotaState, block: number): QuotaState {
  if (state.pendingBlock !== block) return state;
  // The review cap counts attempts since the last success: an account that keeps paying is never held.
  return { ...state, blocks: block, exhausted: false, pendingBlock: null, chargeAttempts: 0, blockAttempts: 0, lastFailureAt: null };
}

/** A charge for `block` failed: the quota stays exhausted and remembers when, for the retry policy. */
export function quotaChargeFailed(state: QuotaState, block: number, now: number): QuotaState {
  if (state.pendingBlock !== block) return state;
  return { ...state, pendingBlock: null, lastFailureAt: now };
}

/**
 * The idempotency key of a charge, derived from account, period and block (and the attempt, after a
 * definite failure: a failed payment took no money, and a processor would replay the old failure for
 * the old key). A retried or timed-out attempt reuses its key, so it never charges twice.
 */
export function chargeIdempotencyKey(accountId: string, periodStart: string, block: number, attempt: number): string {
  const base = `benchdata:${accountId}:${periodStart}:block-${block}`;
  return attempt <= 1 ? base : `${base}:attempt-${attempt}`;
}
