/**
 * The operator's admin API under `/api/v1/admin`, one file per resource: accounts (accounts.ts), their status
 * (account-status.ts), console sessions and sign-in links (sessions.ts), billing (billing.ts), and listing,
 * export and erasure (account-lifecycle.ts). Bearer admin token, compared in constant time; the whole API
 * answers 404 when no admin token is configured.
 */
import { ServiceError } from "../../errors/service-error.ts";
import { timingSafeEqual } from "../../keys/constant-time.ts";
import type { AppContext, ClientInfo } from "../app-options.ts";
import { parseQuery, quote } from "../query.ts";
import { readBody, readOptionalBody } from "../read-json-body.ts";
import { asServiceError, errorResponse, replyResponse } from "../reply.ts";
import { bearerToken } from "../request-url.ts";
import type { Route } from "../route.ts";
import { clientAddressOf } from "../data/key-checks.ts";
import { auditRecorder } from "../audit/audit-recorder.ts";
import { deleteAccount, exportAccount, listAccounts } from "./account-lifecycle.ts";
import { resumeAccount, suspendAccount } from "./account-status.ts";
import { createAccount, getAccount, patchAccount, postAccount } from "./accounts.ts";
import { adminUsageBreakdown } from "./usage-breakdown.ts";
import type { AdminOp } from "./admin-op.ts";
import { releaseHold } from "./billing.ts";
import { adminListAudit } from "../audit/audit-routes.ts";
import { createSession, createSignInLink, revokeSessions } from "./sessions.ts";
import type { AdminAuthThrottle } from "./auth-throttle.ts";
import { adminAuthThrottle, refuseWrongToken } from "./auth-throttle.ts";

/** The admin API's base path. */
export const ADMIN_BASE = "/api/v1/admin";

/** What an account id can look like (ids are `acc_` and a ULID; shorter ones are well-formed, and simply unknown). */
const ACCOUNT_ID_FORM = /^acc_[0-9A-Za-z]{1,64}$/;

const INVALID_TOKEN = new ServiceError(401, "admin.invalid_token", "Missing or wrong admin token.");

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
  adminUsageBreakdown,
  adminListAudit,
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
        // A malformed account id (a control character, a space, anything an id never holds) is the caller's mistake,
        // answered before any store sees it (PostgreSQL would refuse a NUL as an error of its own).
        if (params.account_id !== undefined && !ACCOUNT_ID_FORM.test(params.account_id)) {
          throw new ServiceError(422, "validation.invalid_parameter", `\`account_id\` must be an account id (\`acc_\` and letters or digits); got ${quote(params.account_id)}.`);
        }
        const query = o.query ? parseQuery(o.query, search) : undefined;
        const body = o.body ? await (o.bodyOptional === true ? readOptionalBody : readBody)(request, o.body) : undefined;
        const reply = await o.handle(app, params, body, app.clock.now(), request, query, auditRecorder(app, request, client, app.auditActor ?? "admin"));
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
