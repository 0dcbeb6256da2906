/** How the admin API shows an account, and its doc schema. */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import { effectiveLimits } from "../../config/config.ts";
import { ServiceError } from "../../errors/service-error.ts";
import { TIERS } from "../../scopes/scopes.ts";
import type { AccountRecord, TierLimits } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";

const Integer = v.pipe(v.number(), v.integer());
const Timestamp = v.pipe(v.string(), v.isoTimestamp());

const LimitsSchema = v.object({ per_minute: Integer, per_day: Integer, monthly_quota: Integer, block_size: Integer, block_price: Integer });

/** An account as the admin API shows it. */
export const AccountSchema = v.object({
  account_id: v.string(),
  name: v.pipe(v.string(), v.description("Empty for a deleted account (the name is erased).")),
  tier: v.picklist(TIERS),
  created_at: Timestamp,
  limits: v.pipe(LimitsSchema, v.description("Effective limits: the tier's, overridden by the account's own.")),
  limit_overrides: v.pipe(v.partial(LimitsSchema), v.description("The account's own overrides.")),
  allowed_cidrs: v.pipe(v.array(v.string()), v.description("IP allow-list of data requests and console sessions (empty: any address).")),
  console_ip_exempt: v.pipe(v.boolean(), v.description("The operator's override: true lets the account's console sessions in from any address.")),
  billing: v.object({ customer_ref: v.nullable(v.string()), payment_method_ref: v.nullable(v.string()) }),
  status: v.pipe(
    v.picklist(["active", "suspended", "deleted"]),
    v.description("`suspended`: its keys and console are refused, its webhooks and charges wait (see the suspend operation). `deleted`: erased; only its tombstone is left (listed with `status=deleted`)."),
  ),
  suspended_at: v.pipe(v.nullable(Timestamp), v.description("When the current suspension began; null while active.")),
  suspended_reason: v.pipe(v.nullable(v.string()), v.description("The operator's note on the suspension (never shown to the customer); null while active.")),
  deleted_at: v.pipe(v.nullable(Timestamp), v.description("When the account was erased; null unless deleted.")),
});

function limitsJson(l: Partial<TierLimits>): Partial<v.InferOutput<typeof LimitsSchema>> {
  const out: Partial<v.InferOutput<typeof LimitsSchema>> = {};
  if (l.perMinute !== undefined) out.per_minute = l.perMinute;
  if (l.perDay !== undefined) out.per_day = l.perDay;
  if (l.monthlyQuota !== undefined) out.monthly_quota = l.monthlyQuota;
  if (l.blockSize !== undefined) out.block_size = l.blockSize;
  if (l.blockPrice !== undefined) out.block_price = l.blockPrice;
  return out;
}

/** The admin view of an account. */
export function accountView(app: AppContext, a: AccountRecord): v.InferOutput<typeof AccountSchema> {
  return {
    account_id: a.id,
    name: a.name,
    tier: a.tier,
    created_at: isoTime(a.createdAt),
    limits: limitsJson(effectiveLimits(app.config, a.tier, a.limits)) as v.InferOutput<typeof LimitsSchema>,
    limit_overrides: limitsJson(a.limits),
    allowed_cidrs: [...a.allowedCidrs],
    console_ip_exempt: a.consoleIpExempt === true,
    billing: { customer_ref: a.billing.customerRef ?? null, payment_method_ref: a.billing.paymentMethodRef ?? null },
    status: a.status ?? "active",
    suspended_at: a.suspendedAt != null ? isoTime(a.suspendedAt) : null,
    suspended_reason: a.suspendedReason ?? null,
    deleted_at: a.deletedAt != null ? isoTime(a.deletedAt) : null,
  };
}

/** 404 `not_found` for an account that does not exist, or was erased (the two look the same). */
export function accountNotFound(id: string): ServiceError {
  return new ServiceError(404, "not_found", `No account \`${id}\`.`);
}
