/**
 * The operator's admin API under `/api/v1/admin`: create accounts, change their tier, limits, IP ranges and
 * billing references, suspend and resume them, issue console session tokens, and list, export and erase accounts
 * (account-lifecycle.ts). Bearer admin token, compared in constant time; the whole API answers 404 when no admin
 * token is configured.
 */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import { LIMIT_BOUNDS } from "../../config/limit-bounds.ts";
import { ServiceError } from "../../errors/service-error.ts";
import { newId } from "../../ids/new-id.ts";
import { timingSafeEqual } from "../../keys/constant-time.ts";
import { generateSessionToken, generateSignInToken, MAX_SESSION_DAYS, sessionLifetimeMs } from "../../keys/session-token.ts";
import { parseCidr } from "../../net/cidr.ts";
import { SCOPES, tierPermits, TIERS } from "../../scopes/scopes.ts";
import type { AccountRecord, TierLimits } from "../../storage/types.ts";
import type { AppContext, ClientInfo } from "../app-options.ts";
import { parseQuery } from "../query.ts";
import { readBody, readOptionalBody } from "../read-json-body.ts";
import type { Reply } from "../reply.ts";
import { asServiceError, errorResponse, ok, replyResponse } from "../reply.ts";
import { bearerToken } from "../request-url.ts";
import type { Route } from "../route.ts";
import { clientAddressOf } from "../data/key-checks.ts";
import { deleteAccount, exportAccount, listAccounts } from "./account-lifecycle.ts";
import { accountNotFound, AccountSchema, accountView } from "./account-view.ts";
import type { AdminOp } from "./admin-op.ts";
import { ACCOUNT_ID, op } from "./admin-op.ts";
import type { AdminAuthThrottle } from "./auth-throttle.ts";
import { adminAuthThrottle, refuseWrongToken } from "./auth-throttle.ts";

/** The admin API's base path. */
export const ADMIN_BASE = "/api/v1/admin";

const INVALID_TOKEN = new ServiceError(401, "admin.invalid_token", "Missing or wrong admin token.");
const Timestamp = v.pipe(v.string(), v.isoTimestamp());

async function issueSession(app: AppContext, accountId: string, now: number): Promise<{ token: string; expiresAt: number }> {
  const session = generateSessionToken(app.random);
  const expiresAt = now + sessionLifetimeMs(app.config.sessions.ttlDays);
  await app.storage.createSession({ tokenHash: session.hash, accountId, createdAt: now, expiresAt });
  return { token: session.raw, expiresAt };
}

/** Where a one-time sign-in token goes: in the fragment, so it never reaches a server log or a Referer header. */
export function signInPath(token: string): string {
  return `/console/#sign-in=${token}`;
}

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

const createAccount = op({
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
  async handle(app, _params, body, now) {
    const account: AccountRecord = { id: newId("acc", app.clock, app.idRandom), name: body.name, tier: body.tier, createdAt: now, limits: {}, allowedCidrs: [], billing: {} };
    await app.storage.createAccount(account);
    const s = await issueSession(app, account.id, now);
    return {
      status: 201,
      body: { account_id: account.id, name: account.name, tier: account.tier, created_at: isoTime(now), session_token: s.token, session_expires_at: isoTime(s.expiresAt) },
    };
  },
});

const getAccount = op({
  method: "GET",
  path: "/accounts/{account_id}",
  doc: { operationId: "adminGetAccount", summary: "Show an account", pathParams: ACCOUNT_ID, success: { status: 200, description: "The account.", schema: AccountSchema }, errors: [404] },
  async handle(app, params) {
    const id = params.account_id as string;
    const a = await app.storage.getAccount(id);
    if (a === null) throw accountNotFound(id);
    return ok(accountView(app, a));
  },
});

async function updateAccount(app: AppContext, params: Readonly<Record<string, string>>, body: v.InferOutput<typeof UpdateAccountBody>): Promise<Reply> {
  const id = params.account_id as string;
  const current = await app.storage.getAccount(id);
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
  const updated = await app.storage.updateAccount(id, patch);
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

const patchAccount = op({
  method: "PATCH",
  path: "/accounts/{account_id}",
  body: UpdateAccountBody,
  doc: { operationId: "adminUpdateAccount", ...UPDATE_DOC },
  handle: (app, params, body) => updateAccount(app, params, body),
});

const postAccount = op({
  method: "POST",
  path: "/accounts/{account_id}",
  body: UpdateAccountBody,
  doc: { operationId: "adminUpdateAccountPost", ...UPDATE_DOC, summary: "Update an account (POST alias of PATCH)" },
  handle: (app, params, body) => updateAccount(app, params, body),
});

const createSession = op({
  method: "POST",
  path: "/accounts/{account_id}/sessions",
  doc: {
    operationId: "adminCreateSession",
    summary: "Issue a console session token",
    description: `A new session token for the account; it expires after \`sessions.ttlDays\` days (default 30, at most ${MAX_SESSION_DAYS}). No body.`,
    pathParams: ACCOUNT_ID,
    success: { status: 201, description: "The session token (shown only here).", schema: v.object({ account_id: v.string(), session_token: v.string(), expires_at: Timestamp }) },
    errors: [404],
  },
  async handle(app, params, _body, now) {
    const id = params.account_id as string;
    if ((await app.storage.getAccount(id)) === null) throw accountNotFound(id);
    const s = await issueSession(app, id, now);
    return { status: 201, body: { account_id: id, session_token: s.token, expires_at: isoTime(s.expiresAt) } };
  },
});

const revokeSessions = op({
  method: "DELETE",
  path: "/accounts/{account_id}/sessions",
  doc: {
    operationId: "adminRevokeSessions",
    summary: "End all of an account's console sessions",
    description: "Every session token of the account stops working at once, on every instance, and its unused sign-in links are voided. Keys are not touched. No body.",
    pathParams: ACCOUNT_ID,
    success: { status: 200, description: "How many sessions were ended.", schema: v.object({ account_id: v.string(), revoked_sessions: v.pipe(v.number(), v.integer()) }) },
    errors: [404],
  },
  async handle(app, params) {
    const id = params.account_id as string;
    if ((await app.storage.getAccount(id)) === null) throw accountNotFound(id);
    return ok({ account_id: id, revoked_sessions: await app.storage.deleteSessions(id) });
  },
});

const createSignInLink = op({
  method: "POST",
  path: "/accounts/{account_id}/sign-in-links",
  doc: {
    operationId: "adminCreateSignInLink",
    summary: "Create a one-time console sign-in link",
    description:
      "A link to hand the customer: opening it signs the browser console in with a new session. It works once and expires after `sessions.signInLinkMinutes` (default 15). Only its hash is stored. `sign_in_url` uses the request's origin; behind a proxy, join your public origin and `sign_in_path`. No body.",
    pathParams: ACCOUNT_ID,
    success: {
      status: 201,
      description: "The link (shown only here).",
      schema: v.object({ account_id: v.string(), sign_in_url: v.string(), sign_in_path: v.string(), expires_at: Timestamp }),
    },
    errors: [404],
  },
  async handle(app, params, _body, now, request) {
    const id = params.account_id as string;
    if ((await app.storage.getAccount(id)) === null) throw accountNotFound(id);
    const link = generateSignInToken(app.random);
    const expiresAt = now + app.config.sessions.signInLinkMinutes * 60_000;
    await app.storage.createSignInLink({ tokenHash: link.hash, accountId: id, createdAt: now, expiresAt });
    const path = signInPath(link.raw);
    return { status: 201, body: { account_id: id, sign_in_url: new URL(request.url).origin + path, sign_in_path: path, expires_at: isoTime(expiresAt) } };
  },
});

const releaseHold = op({
  method: "POST",
  path: "/accounts/{account_id}/billing/release",
  doc: {
    operationId: "adminReleaseChargeHold",
    summary: "Release an account's hold on automatic charges",
    description:
      "After the period's ceiling of automatic charges (`billing.maxAutoChargesPerPeriod`, paid charges included) an account is held: " +
      "its exhausted quota answers 402 `quota.held` and nothing more is charged until a person acts. This starts the ceiling's count " +
      "afresh for the current billing period; the next refused request starts a charge again. No body.",
    pathParams: ACCOUNT_ID,
    success: { status: 200, description: "Whether the current period had a quota to release.", schema: v.object({ account_id: v.string(), released: v.boolean() }) },
    errors: [404],
  },
  async handle(app, params, _body, now) {
    const id = params.account_id as string;
    if ((await app.storage.getAccount(id)) === null) throw accountNotFound(id);
    const released = await app.storage.releaseChargeHold({ accountId: id, now, anchorDay: app.config.billing.anchorDay });
    if (released) app.logger.info("automatic charges released by the operator", { account_id: id });
    return ok({ account_id: id, released });
  },
});

const SuspendBody = v.strictObject({
  reason: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.minLength(1, "must not be empty"),
      v.maxLength(500, "must be at most 500 characters"),
      v.description("The operator's note on why (shown in the admin API and the operator's log, never to the customer)."),
    ),
  ),
});

const suspendAccount = op({
  method: "POST",
  path: "/accounts/{account_id}/suspend",
  body: SuspendBody,
  bodyOptional: true,
  doc: {
    operationId: "adminSuspendAccount",
    summary: "Suspend an account",
    description:
      "Stops an account without deleting anything, at once on every instance: every data request with any of its keys, every console request " +
      "(so no new key can be made) and every console sign-in is refused with 403 `account.suspended`; its webhook deliveries and pending " +
      "charges wait, neither sent nor dead. Emits `account.suspended` (the operator's log line at once; the " +
      "account's webhooks receive it after a resumption, since theirs are paused). Suspending a suspended account changes nothing and keeps " +
      "the first reason. The body (`reason`) may be left out. Undo with the resume operation.",
    pathParams: ACCOUNT_ID,
    success: { status: 200, description: "The account, suspended.", schema: AccountSchema },
    errors: [404],
  },
  async handle(app, params, body, now) {
    const id = params.account_id as string;
    const eventId = newId("evt", app.clock, app.idRandom);
    const r = await app.storage.setAccountStatus({ accountId: id, status: "suspended", reason: body.reason ?? null, now, eventId });
    if (r === null) throw accountNotFound(id);
    if (r.changed) {
      // The operator's copy of account.suspended (the account's own webhooks get it once it is resumed).
      app.logger.warn("account suspended by the operator: its keys and console are refused, its webhooks and charges wait", {
        account_id: id,
        reason: r.account.suspendedReason ?? null,
        event_id: eventId,
      });
      app.hooks.eventsWritten();
    }
    return ok(accountView(app, r.account));
  },
});

const resumeAccount = op({
  method: "POST",
  path: "/accounts/{account_id}/resume",
  doc: {
    operationId: "adminResumeAccount",
    summary: "Resume a suspended account",
    description:
      "Undoes a suspension, at once on every instance: the account's keys (those active before, and only those) and console sessions work " +
      "again, its waiting webhook deliveries go out (`account.suspended` first, then `account.resumed`) and its pending charges are " +
      "attempted. The time suspended does not count toward disabling a failing webhook. Resuming an active account changes nothing. No body.",
    pathParams: ACCOUNT_ID,
    success: { status: 200, description: "The account, active.", schema: AccountSchema },
    errors: [404],
  },
  async handle(app, params, _body, now) {
    const id = params.account_id as string;
    const eventId = newId("evt", app.clock, app.idRandom);
    const before = await app.storage.getAccount(id);
    const r = await app.storage.setAccountStatus({ accountId: id, status: "active", now, eventId });
    if (r === null) throw accountNotFound(id);
    if (r.changed) {
      app.logger.info("account resumed by the operator", { account_id: id, suspended_at: before?.suspendedAt != null ? isoTime(before.suspendedAt) : null, event_id: eventId });
      app.hooks.eventsWritten();
    }
    return ok(accountView(app, r.account));
  },
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const OPS: readonly AdminOp<any, any>[] = [
  createAccount,
  listAccounts,
  getAccount,
  patchAccount,
  postAccount,
  deleteAccount,
  exportAccount,
  suspendAccount,
  resumeAccount,
  createSession,
  revokeSessions,
  createSignInLink,
  releaseHold,
];

/**
 * The admin routes (for the router when an admin token is configured, and for the OpenAPI document always). Wrong
 * tokens count in `throttle`, the app's one throttle (per instance, bounded in memory), shared with `/metrics`.
 */
export function adminRoutes(app: AppContext, throttle: AdminAuthThrottle = adminAuthThrottle(app.clock, app.logger)): Route[] {
  const token = app.adminToken;
  const trustProxy = app.config.trustProxy;
  return OPS.map((o) => {
    const label = `${o.method} ${ADMIN_BASE}${o.path}`;
    const run = async (request: Request, params: Readonly<Record<string, string>>, search: string, client: ClientInfo): Promise<Response> => {
      try {
        const given = bearerToken(request.headers.get("authorization"));
        // The token is compared first, in constant time: a correct one is admitted even from a throttled address.
        if (token === null || given === null || !timingSafeEqual(given, token)) throw refuseWrongToken(throttle, clientAddressOf(request, client, trustProxy), "admin", INVALID_TOKEN);
        const query = o.query ? parseQuery(o.query, search) : undefined;
        const body = o.body ? await (o.bodyOptional === true ? readOptionalBody : readBody)(request, o.body) : undefined;
        const reply = await o.handle(app, params, body, app.clock.now(), request, query);
        return replyResponse(reply, { ...reply.headers, "cache-control": "no-store" });
      } catch (error) {
        return errorResponse(asServiceError(error, app.logger, label, request), { "cache-control": "no-store" });
      }
    };
    const errors = [401, 429, ...o.doc.errors, 503];
    if (o.body) errors.push(400, 413, 415, 422);
    if (o.query) errors.push(422);
    return {
      method: o.method,
      path: ADMIN_BASE + o.path,
      run,
      doc: {
        ...o.doc,
        tag: "Admin",
        security: "admin",
        ...(o.query ? { query: o.query } : {}),
        ...(o.body ? { body: o.body } : {}),
        ...(o.bodyOptional === true ? { bodyOptional: true } : {}),
        errors: [...new Set(errors)],
      },
    };
  });
}
