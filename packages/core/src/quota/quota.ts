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
  /**
   * Automatic charges allowed in one period, paid or failed, before the account is held until a person acts
   * (the customer retries the payment, or the operator releases the hold or raises the ceiling).
   */
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
  /** Charges started in the period, paid or not (the ceiling `maxAutoCharges` counts these; only a release resets them). */
  readonly chargeAttempts: number;
  /** Attempts started for the next block (`blocks + 1`); back to 0 when a block is paid. */
  readonly blockAttempts: number;
  /** When the last charge failed (Unix ms), or null. */
  readonly lastFailureAt: number | null;
  /** When automatic charging stopped in this period and the account was held (Unix ms), or null. */
  readonly heldAt: number | null;
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
  heldAt: null,
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

/**
 * Why automatic charging stopped: the period's ceiling of automatic charges was reached, or the next block
 * would not buy a single call (a block size below 1, or an allowance lowered below the calls already used).
 */
export type HoldReason = "charge_limit" | "block_buys_nothing";

/** What one live request does to the quota. */
export type QuotaStep =
  | { readonly kind: "allow"; readonly state: QuotaState; readonly used: number; readonly allowance: number; readonly warn: number | null }
  | {
      readonly kind: "exhausted";
      readonly state: QuotaState;
      readonly flipped: boolean;
      readonly charge: ChargeRequest | null;
      /** No automatic charge will start until a person acts. */
      readonly heldForReview: boolean;
      /** This request is the one that put the account on hold (once a period, until released): emit `quota.held`. */
      readonly heldNow: HoldReason | null;
    };

/** Whether one more block would buy at least one call: a charge that buys nothing is never made. */
export function blockBuysCalls(plan: Pick<QuotaPlan, "baseQuota" | "blockSize">, state: Pick<QuotaState, "blocks" | "used">): boolean {
  return plan.blockSize >= 1 && plan.baseQuota + (state.blocks + 1) * plan.blockSize > state.used;
}

/**
 * One live request against the period's quota. The request that uses the last call succeeds; the next one
 * flips the quota to exhausted and starts exactly one charge; later ones are refused without a new charge
 * while it is outstanding. After a failed charge, a request may start one new attempt once
 * `retryAfterFailureMs` has passed. A charge starts only when the block buys at least one call, and at most
 * `maxAutoCharges` start in a period, paid ones included; past that the account is held (`heldNow` once).
 */
export function quotaRequest(plan: QuotaPlan, state: QuotaState, now: number): QuotaStep {
  const limit = allowance(plan, state);
  if (!state.exhausted && state.used < limit) {
    const used = state.used + 1;
    return { kind: "allow", state: { ...state, used }, used, allowance: limit, warn: warningThreshold(plan, used) };
  }
  const flipped = !state.exhausted;
  const due = state.pendingBlock === null && (flipped || state.lastFailureAt === null || now - state.lastFailureAt >= plan.retryAfterFailureMs);
  const hold: HoldReason | null = !blockBuysCalls(plan, state) ? "block_buys_nothing" : state.chargeAttempts >= plan.maxAutoCharges ? "charge_limit" : null;
  if (!due || hold !== null) {
    const heldNow = due && hold !== null && state.heldAt === null ? hold : null;
    const next = flipped || heldNow !== null ? { ...state, exhausted: true, heldAt: heldNow !== null ? now : state.heldAt } : state;
    return { kind: "exhausted", state: next, flipped, charge: null, heldForReview: state.pendingBlock === null && hold !== null, heldNow };
  }
  const block = state.blocks + 1;
  const attempt = state.blockAttempts + 1;
  return {
    kind: "exhausted",
    state: { ...state, exhausted: true, pendingBlock: block, chargeAttempts: state.chargeAttempts + 1, blockAttempts: attempt },
    flipped,
    charge: { block, attempt, amount: plan.blockPrice },
    heldForReview: false,
    heldNow: null,
  };
}

/**
 * A charge a person asked for (the customer's payment retry): it starts whatever the ceiling says, but only
 * while the quota is exhausted with nothing outstanding, and only when the block buys at least one call.
 */
export function quotaManualCharge(plan: Pick<QuotaPlan, "baseQuota" | "blockSize" | "blockPrice">, state: QuotaState): { state: QuotaState; charge: ChargeRequest } | null {
  if (!state.exhausted || state.pendingBlock !== null || !blockBuysCalls(plan, state)) return null;
  const block = state.blocks + 1;
  const attempt = state.blockAttempts + 1;
  return {
    state: { ...state, pendingBlock: block, chargeAttempts: state.chargeAttempts + 1, blockAttempts: attempt },
    charge: { block, attempt, amount: plan.blockPrice },
  };
}

/** The operator released a held account: automatic charging starts afresh in the period (its ceiling counts again from 0). */
export function quotaReleaseHold(state: QuotaState): QuotaState {
  return { ...state, chargeAttempts: 0, heldAt: null };
}

/** A charge for `block` cleared: one more block in the allowance, access resumes. Stale outcomes change nothing. */
export function quotaChargeSucceeded(state: QuotaState, block: number): QuotaState {
  if (state.pendingBlock !== block) return state;
  // The ceiling keeps counting paid charges: a runaway of paid blocks is what it exists to stop.
  return { ...state, blocks: block, exhausted: false, pendingBlock: null, blockAttempts: 0, lastFailureAt: null };
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
