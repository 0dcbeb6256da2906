/** Console access the operator hands out: session tokens (issue, revoke all) and one-time sign-in links. */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import { generateSessionToken, generateSignInToken, MAX_SESSION_DAYS, sessionLifetimeMs } from "../../keys/session-token.ts";
import type { AppContext } from "../app-options.ts";
import type { AuditRecorder } from "../audit/audit-recorder.ts";
import { sessionActor } from "../audit/audit-recorder.ts";
import { Timestamp } from "../data/doc-schemas.ts";
import { ok } from "../reply.ts";
import { accountNotFound } from "./account-view.ts";
import { ACCOUNT_ID, op } from "./admin-op.ts";
import type { AccountStore, SessionStore } from "../../storage/types.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): AccountStore & SessionStore => app.storage;

/** A new console session for the account, expiring after `sessions.ttlDays`: the raw token (shown once) and its expiry. */
export async function issueSession(app: AppContext, accountId: string, now: number, audit?: AuditRecorder): Promise<{ token: string; expiresAt: number }> {
  const session = generateSessionToken(app.random);
  const expiresAt = now + sessionLifetimeMs(app.config.sessions.ttlDays);
  const draft = audit?.draft("session.create", accountId, sessionActor(session.hash), { changes: { expires_at: isoTime(expiresAt) } });
  // Refused by the store when the account was erased meanwhile, even by another instance a moment ago.
  if (!(await store(app).createSession({ tokenHash: session.hash, accountId, createdAt: now, expiresAt }, draft))) throw accountNotFound(accountId);
  return { token: session.raw, expiresAt };
}

/** Where a one-time sign-in token goes: in the fragment, so it never reaches a server log or a Referer header. */
export function signInPath(token: string): string {
  return `/console/#sign-in=${token}`;
}

/** POST /accounts/{account_id}/sessions: a new console session token. */
export const createSession = op({
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
  async handle(app, params, _body, now, _request, _query, audit) {
    const id = params.account_id as string;
    if ((await store(app).getAccount(id)) === null) throw accountNotFound(id);
    const s = await issueSession(app, id, now, audit);
    return { status: 201, body: { account_id: id, session_token: s.token, expires_at: isoTime(s.expiresAt) } };
  },
});

/** DELETE /accounts/{account_id}/sessions: ends every console session of the account. */
export const revokeSessions = op({
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
  async handle(app, params, _body, _now, _request, _query, audit) {
    const id = params.account_id as string;
    if ((await store(app).getAccount(id)) === null) throw accountNotFound(id);
    return ok({ account_id: id, revoked_sessions: await store(app).deleteSessions(id, audit.draft("session.end_all", id, id)) });
  },
});

/** POST /accounts/{account_id}/sign-in-links: a one-time console sign-in link. */
export const createSignInLink = op({
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
  async handle(app, params, _body, now, request, _query, audit) {
    const id = params.account_id as string;
    if ((await store(app).getAccount(id)) === null) throw accountNotFound(id);
    const link = generateSignInToken(app.random);
    const expiresAt = now + app.config.sessions.signInLinkMinutes * 60_000;
    const draft = audit.draft("sign_in_link.create", id, id, { changes: { expires_at: isoTime(expiresAt) } });
    if (!(await store(app).createSignInLink({ tokenHash: link.hash, accountId: id, createdAt: now, expiresAt }, draft))) throw accountNotFound(id);
    const path = signInPath(link.raw);
    return { status: 201, body: { account_id: id, sign_in_url: new URL(request.url).origin + path, sign_in_path: path, expires_at: isoTime(expiresAt) } };
  },
});
