/** The quota part of a live request's admission, from the config and the account (for `storage.admit`). */
import type { Clock, RandomSource } from "../clock/clock.ts";
import type { ServiceConfig } from "../config/config.ts";
import { effectiveLimits } from "../config/config.ts";
import { newId } from "../ids/new-id.ts";
import type { AccountRecord, AdmitQuota, TierLimits } from "../storage/types.ts";

/**
 * The `quota` of an AdmitInput for a live key: the account's effective quota, block size and price, the
 * billing policy (`retryAfterFailureSeconds`, `maxAutoChargesPerPeriod`), and fresh ids for the warning
 * event and the invoice this request may create.
 */
export function quotaAdmission(config: ServiceConfig, account: AccountRecord, clock: Clock, random: RandomSource): AdmitQuota {
  return quotaForLimits(config, effectiveLimits(config, account.tier, account.limits), clock, random);
}

/**
 * `quotaAdmission` for limits already resolved. The ids are minted on first read: most requests cross no
 * warning threshold and start no charge. The getters are own enumerable properties, so a store that copies
 * or spreads the input still gets values.
 */
export function quotaForLimits(config: ServiceConfig, limits: TierLimits, clock: Clock, random: RandomSource): AdmitQuota {
  let warningEventId: string | undefined;
  let invoiceId: string | undefined;
  let heldEventId: string | undefined;
  return {
    anchorDay: config.billing.anchorDay,
    baseQuota: limits.monthlyQuota,
    blockSize: limits.blockSize,
    blockPrice: limits.blockPrice,
    currency: config.currency,
    retryAfterFailureMs: config.billing.retryAfterFailureSeconds * 1000,
    maxAutoCharges: config.billing.maxAutoChargesPerPeriod,
    get warningEventId(): string {
      return (warningEventId ??= newId("evt", clock, random));
    },
    get invoiceId(): string {
      return (invoiceId ??= newId("inv", clock, random));
    },
    get heldEventId(): string {
      return (heldEventId ??= newId("evt", clock, random));
    },
  };
}
