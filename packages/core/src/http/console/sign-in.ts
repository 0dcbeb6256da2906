/** Console sign-in (a one-time link or a session token, into the browser's session cookie), sign-out, and the signed-in account. */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import { effectiveLimits } from "../../config/config.ts";
import { isServiceError, ServiceError } from "../../errors/service-error.ts";
import { auditRecorder, sessionActor } from "../audit/audit-recorder.ts";
import { generateSessionToken, isSessionToken, isSignInToken, sessionLifetimeMs } from "../../keys/session-token.ts";
import { scopesForTier, SCOPES, TIERS } from "../../scopes/scopes.ts";
import { ACCOUNT_SUSPENDED } from "../account-suspended.ts";
import { ok } from "../reply.ts";
import { accountOf, checkConsoleAddress, defineConsoleRoute } from "./define-console-route.ts";
import { checkCsrf, clearedSessionCookie, presentedSession, sessionCookie } from "./session-cookie.ts";
import type { AccountStore, SessionStore } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): AccountStore & SessionStore => app.storage;

const Timestamp = v.pipe(v.string(), v.isoTimestamp());
const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

const INVALID_SIGN_IN = new ServiceError(
  401,
  "console.invalid_sign_in",
  "This sign-in link or session token is unknown, already used, ended or expired. Ask your operator for a new sign-in link.",
);

/** The body of POST /sign-in. */
export const SignInBody = v.strictObject({
  token: v.pipe(v.string(), v.maxLength(200, "must be at most 200 characters"), v.description("A one-time sign-in token (`bds_link_…`, from a sign-in link) or a session token (`bds_sess_…`).")),
});

const SignedInSchema = v.object({ account_id: v.string(), expires_at: Timestamp });

/** POST /sign-in: exchanges a one-time sign-in link (or a session token) for the browser console's session cookie. */
export const signIn = defineConsoleRoute({
  method: "POST",
  path: "/sign-in",
  auth: "none",
  operationId: "consoleSignIn",
  summary: "Sign the browser console in",
  description:
    "For the browser console: a one-time sign-in token (`bds_link_…`) is consumed and exchanged for a new session; a session token (`bds_sess_…`) is kept as is. Either way the session is set as an `HttpOnly; Secure; SameSite=Strict` cookie. Needs the `X-Benchdata-Console` header (CSRF). Scripts send `Authorization: Bearer <session token>` instead and need not call this. A suspended account is refused: 403 `account.suspended`; so is a request from outside the account's IP allow-list (unless the operator exempted its console): 403 `auth.ip_not_allowed`. Either way no session is set and a link is used up.",
  body: SignInBody,
  success: { status: 200, description: "Signed in; `Set-Cookie` carries the session.", schema: SignedInSchema },
  errors: [401, 403],
  async handle({ app, body, request, client, now, audit }) {
    checkCsrf(request);
    const token = body.token.trim();
    let accountId: string | null = null;
    let sessionToken = token;
    let expiresAt: number | null = null;
    let redeemed: string | null = null;
    if (isSignInToken(token)) {
      const session = generateSessionToken(app.random);
      expiresAt = now + sessionLifetimeMs(app.config.sessions.ttlDays);
      // Recorded with the redemption (the link is used up either way), as the new session; the store names the account.
      const draft = auditRecorder(app, request, client, sessionActor(session.hash)).draft("session.sign_in", null, sessionActor(session.hash), { changes: { via: "sign_in_link" } });
      accountId = await store(app).redeemSignInLink({ linkHash: app.hashSecret(token), now, session: { tokenHash: session.hash, createdAt: now, expiresAt }, audit: draft });
      sessionToken = session.raw;
      redeemed = session.hash;
    } else if (isSessionToken(token)) {
      const hash = app.hashSecret(token);
      accountId = await store(app).findSession(hash, now);
      expiresAt = accountId === null ? null : await store(app).sessionExpiry(hash, now);
    }
    if (accountId === null || expiresAt === null) throw INVALID_SIGN_IN;
    const account = await store(app).getAccount(accountId);
    try {
      if (account === null) throw INVALID_SIGN_IN;
      if (account.status === "suspended") throw ACCOUNT_SUSPENDED;
      checkConsoleAddress(account, request, client, app.config.trustProxy);
    } catch (refusal) {
      // The link is used up either way; the session it made is ended, so nothing outlives the refusal.
      if (redeemed !== null) {
        const code = isServiceError(refusal) ? refusal.code : "refused";
        await store(app).deleteSession(redeemed, audit.draft("session.sign_out", accountId, sessionActor(redeemed), { changes: { refused: code } }));
      }
      throw refusal;
    }
    return {
      status: 200,
      body: { account_id: accountId, expires_at: isoTime(expiresAt) },
      headers: { "set-cookie": sessionCookie(sessionToken, (expiresAt - now) / 1000) },
    };
  },
});

/** POST /sign-out: ends the session that presents itself (bearer or cookie) and clears the cookie. */
export const signOut = defineConsoleRoute({
  method: "POST",
  path: "/sign-out",
  auth: "none",
  operationId: "consoleSignOut",
  summary: "Sign out",
  description: "Ends the presented session at once, on every instance (its token stops working), and clears the console's cookie. Answers 200 even when the session had already ended. No body.",
  success: { status: 200, description: "Whether a session was ended.", schema: v.object({ signed_out: v.boolean() }) },
  errors: [403],
  async handle({ app, request, audit }) {
    const presented = presentedSession(request);
    if (presented?.via === "cookie") checkCsrf(request);
    // The session's own entry (actor and target: its id); the store names the account it belonged to.
    const ended =
      presented !== null && isSessionToken(presented.token) ? await store(app).deleteSession(app.hashSecret(presented.token), audit.draft("session.sign_out", null, audit.actor)) : false;
    return { status: 200, body: { signed_out: ended }, headers: { "set-cookie": clearedSessionCookie() } };
  },
});

const LimitsSchema = v.object({ per_minute: Count, per_day: Count, monthly_quota: Count, block_size: Count, block_price: Count });

/** GET /account: the signed-in account, its tier, the scopes the tier permits, its limits and the session's expiry. */
export const getAccount = defineConsoleRoute({
  method: "GET",
  path: "/account",
  operationId: "getConsoleAccount",
  summary: "The signed-in account",
  description: "The account's name and tier, the scopes its tier permits (what a new key may carry), its effective limits, and when the presented session expires (null under an embedder's own authentication).",
  success: {
    status: 200,
    description: "The account.",
    schema: v.object({
      account_id: v.string(),
      name: v.string(),
      tier: v.picklist(TIERS),
      permitted_scopes: v.array(v.picklist(SCOPES)),
      limits: LimitsSchema,
      currency: v.string(),
      session_expires_at: v.nullable(Timestamp),
    }),
  },
  errors: [],
  async handle(call) {
    const { app, now, request } = call;
    const account = await accountOf(call);
    const l = effectiveLimits(app.config, account.tier, account.limits);
    const presented = presentedSession(request);
    const expiry = presented !== null && isSessionToken(presented.token) ? await store(app).sessionExpiry(app.hashSecret(presented.token), now) : null;
    return ok({
      account_id: account.id,
      name: account.name,
      tier: account.tier,
      permitted_scopes: scopesForTier(account.tier),
      limits: { per_minute: l.perMinute, per_day: l.perDay, monthly_quota: l.monthlyQuota, block_size: l.blockSize, block_price: l.blockPrice },
      currency: app.config.currency,
      session_expires_at: expiry === null ? null : isoTime(expiry),
    });
  },
});
