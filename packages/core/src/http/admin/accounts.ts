/** The account resource of the admin API: create an account (with a first console session), show and update one. */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import { LIMIT_BOUNDS } from "../../config/limit-bounds.ts";
import { newId } from "../../ids/new-id.ts";
import { parseCidr } from "../../net/cidr.ts";
import { SCOPES, tierPermits, TIERS } from "../../scopes/scopes.ts";
import type { AccountRecord, AccountStore, TierLimits } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";
import { Timestamp } from "../data/doc-schemas.ts";
import type { Reply } from "../reply.ts";
import { ok } from "../reply.ts";
import { accountNotFound, AccountSchema, accountView } from "./account-view.ts";
import { ACCOUNT_ID, op } from "./admin-op.ts";
import { issueSession } from "./sessions.ts";
import type { AuditRecorder } from "../audit/audit-recorder.ts";
import { fromTo } from "../audit/audit-recorder.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): AccountStore => app.storage;

const CreateAccountBody = v.strictObject({
  name: v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(200, "must be at most 200 characters")),
  tier: v.picklist(TIERS, `must be one of ${TIERS.join(", ")}`),
});

// Each limit keeps LIMIT_BOUNDS (a block buys at least one call; no allowance or amount overflows).
const bounded = ({ min, max }: { readonly min: number; readonly max: number }) =>
  v.nullable(v.pipe(v.number(), v.integer("must be an integer"), v.minValue(min, `must be at least ${min}`), v.maxValue(max, `must be at most ${max}`)));
const Cidr = v.pipe(
  v.string(),
  v.check((s) => parseCidr(s) !== null, (issue) => `${JSON.stringify(issue.input)} is not an IPv4 or IPv6 CIDR range`),
);

const UpdateAccountBody = v.strictObject({
  tier: v.optional(v.picklist(TIERS, `must be one of ${TIERS.join(", ")}`)),
  limits: v.optional(
    v.pipe(
      v.strictObject({
        per_minute: v.optional(bounded(LIMIT_BOUNDS.perMinute)),
        per_day: v.optional(bounded(LIMIT_BOUNDS.perDay)),
        monthly_quota: v.optional(bounded(LIMIT_BOUNDS.monthlyQuota)),
        block_size: v.optional(bounded(LIMIT_BOUNDS.blockSize)),
        block_price: v.optional(bounded(LIMIT_BOUNDS.blockPrice)),
      }),
      v.description("Overrides of the tier's limits: a number sets one, null removes it, an absent field keeps it."),
    ),
  ),
  allowed_cidrs: v.optional(
    v.pipe(v.array(Cidr), v.maxLength(100), v.description("IP allow-list for data requests and console sessions (replaces the list; empty allows any address).")),
  ),
  console_ip_exempt: v.optional(
    v.pipe(v.boolean("must be true or false"), v.description("true: the account's console sessions work from any address (the allow-list then guards data requests only); false: they obey it.")),
  ),
  billing: v.optional(
    v.pipe(
      v.strictObject({ customer_ref: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200)))), payment_method_ref: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200)))) }),
      v.description("The payment processor's customer and payment method: a string sets, null clears, absent keeps."),
    ),
  ),
});

/** POST /accounts: a new account of a tier, with its first console session token. */
export const createAccount = op({
  method: "POST",
  path: "/accounts",
  body: CreateAccountBody,
  doc: {
    operationId: "adminCreateAccount",
    summary: "Create an account",
    description: "Creates an account of a tier and a first console session token for it.",
    success: {
      status: 201,
      description: "The account id, its tier and a console session token (shown only here).",
      schema: v.object({ account_id: v.string(), name: v.string(), tier: v.picklist(TIERS), created_at: Timestamp, session_token: v.string(), session_expires_at: Timestamp }),
    },
    errors: [],
  },
  async handle(app, _params, body, now, _request, _query, audit) {
    const account: AccountRecord = { id: newId("acc", app.clock, app.idRandom), name: body.name, tier: body.tier, createdAt: now, limits: {}, allowedCidrs: [], billing: {} };
    // Its first session comes with it: one action, one entry.
    await store(app).createAccount(account, audit.draft("account.create", account.id, account.id, { changes: { tier: account.tier }, personal: { name: account.name } }));
    const s = await issueSession(app, account.id, now);
    return {
      status: 201,
      body: { account_id: account.id, name: account.name, tier: account.tier, created_at: isoTime(now), session_token: s.token, session_expires_at: isoTime(s.expiresAt) },
    };
  },
});

/** GET /accounts/{account_id}: one account as the operator sees it. */
export const getAccount = op({
  method: "GET",
  path: "/accounts/{account_id}",
  doc: { operationId: "adminGetAccount", summary: "Show an account", pathParams: ACCOUNT_ID, success: { status: 200, description: "The account.", schema: AccountSchema }, errors: [404] },
  async handle(app, params) {
    const id = params.account_id as string;
    const a = await store(app).getAccount(id);
    if (a === null) throw accountNotFound(id);
    return ok(accountView(app, a));
  },
});

async function updateAccount(app: AppContext, params: Readonly<Record<string, string>>, body: v.InferOutput<typeof UpdateAccountBody>, audit: AuditRecorder): Promise<Reply> {
  const id = params.account_id as string;
  const current = await store(app).getAccount(id);
  if (current === null) throw accountNotFound(id);
  const patch: { -readonly [K in keyof Parameters<AppContext["storage"]["updateAccount"]>[1]]: Parameters<AppContext["storage"]["updateAccount"]>[1][K] } = {};
  if (body.tier !== undefined) {
    patch.tier = body.tier;
    // A downgrade takes from every key the scopes the new tier does not permit, at once (see docs/api.md).
    patch.dropScopes = SCOPES.filter((s) => !tierPermits(body.tier!, s));
  }
  if (body.limits !== undefined) {
    const next: Record<string, number | undefined> = { ...current.limits };
    const names = { per_minute: "perMinute", per_day: "perDay", monthly_quota: "monthlyQuota", block_size: "blockSize", block_price: "blockPrice" } as const;
    for (const [field, key] of Object.entries(names)) {
      const value = body.limits[field as keyof typeof names];
      if (value === null) delete next[key];
      else if (value !== undefined) next[key] = value;
    }
    patch.limits = next as Partial<TierLimits>;
  }
  if (body.allowed_cidrs !== undefined) patch.allowedCidrs = body.allowed_cidrs.map((c) => c.trim());
  if (body.console_ip_exempt !== undefined) patch.consoleIpExempt = body.console_ip_exempt;
  if (body.billing !== undefined) {
    const billing: { customerRef?: string; paymentMethodRef?: string } = { ...current.billing };
    if (body.billing.customer_ref === null) delete billing.customerRef;
    else if (body.billing.customer_ref !== undefined) billing.customerRef = body.billing.customer_ref;
    if (body.billing.payment_method_ref === null) delete billing.paymentMethodRef;
    else if (body.billing.payment_method_ref !== undefined) billing.paymentMethodRef = body.billing.payment_method_ref;
    patch.billing = billing;
  }
  // What changed, before and after; IP ranges and billing references may identify a person (erased with the account).
  const changes = {
    tier: fromTo(current.tier, patch.tier ?? current.tier),
    limits: patch.limits === undefined ? undefined : fromTo(current.limits, patch.limits),
    console_ip_exempt: patch.consoleIpExempt === undefined ? undefined : fromTo(current.consoleIpExempt === true, patch.consoleIpExempt),
  };
  const personal = {
    allowed_cidrs: patch.allowedCidrs === undefined ? undefined : fromTo(current.allowedCidrs, patch.allowedCidrs),
    billing: patch.billing === undefined ? undefined : fromTo(current.billing, patch.billing),
  };
  const updated = await store(app).updateAccount(id, patch, audit.draft("account.update", id, id, { changes, personal }));
  if (updated === null) throw accountNotFound(id);
  return ok(accountView(app, updated));
}

const UPDATE_DOC = {
  summary: "Update an account",
  description: "Changes the tier, limit overrides (e.g. an enterprise account's own limits), the IP allow-list (of data requests and console sessions), the console's exemption from it or the billing references. Fields left out are kept. Takes effect on the next request, on every instance. A lower tier removes from every key of the account the scopes it does not permit (they stop working at once); a higher tier restores none.",
  pathParams: ACCOUNT_ID,
  success: { status: 200, description: "The updated account.", schema: AccountSchema },
  errors: [404],
} as const;

/** PATCH /accounts/{account_id}: changes tier, limits, allow-list or billing references. */
export const patchAccount = op({
  method: "PATCH",
  path: "/accounts/{account_id}",
  body: UpdateAccountBody,
  doc: { operationId: "adminUpdateAccount", ...UPDATE_DOC },
  handle: (app, params, body, _now, _request, _query, audit) => updateAccount(app, params, body, audit),
});

/** POST /accounts/{account_id}: the same update, for clients that cannot send PATCH. */
export const postAccount = op({
  method: "POST",
  path: "/accounts/{account_id}",
  body: UpdateAccountBody,
  doc: { operationId: "adminUpdateAccountPost", ...UPDATE_DOC, summary: "Update an account (POST alias of PATCH)" },
  handle: (app, params, body, _now, _request, _query, audit) => updateAccount(app, params, body, audit),
});
