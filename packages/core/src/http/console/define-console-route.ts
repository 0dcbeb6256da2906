/** Console routes under `/api/v1/console`: session-authenticated, JSON in and out, one definition per operation. */
import type * as v from "valibot";
import { ServiceError } from "../../errors/service-error.ts";
import type { SecretHasher } from "../../keys/api-key.ts";
import { hashSecret } from "../../keys/api-key.ts";
import { isSessionToken } from "../../keys/session-token.ts";
import { isServiceError } from "../../errors/service-error.ts";
import type { AccountRecord, AccountStore, SessionStore } from "../../storage/types.ts";
import type { Clock } from "../../clock/clock.ts";
import type { AppContext, ClientInfo, ConsoleAuth } from "../app-options.ts";
import { ACCOUNT_SUSPENDED } from "../account-suspended.ts";
import { addressAllowed, clientAddressOf } from "../data/key-checks.ts";
import { unavailable } from "../fail-closed-storage.ts";
import type { QuerySchema } from "../query.ts";
import { parseQuery } from "../query.ts";
import { readBody } from "../read-json-body.ts";
import type { Reply } from "../reply.ts";
import { asServiceError, errorResponse, replyResponse } from "../reply.ts";
import { requestIdOf } from "../request-id.ts";
import { checkCsrf, presentedSession } from "./session-cookie.ts";
import type { AuditRecorder } from "../audit/audit-recorder.ts";
import { auditRecorder, consoleActor } from "../audit/audit-recorder.ts";
import type { Route, RouteDoc } from "../route.ts";

/** The console's base path. */
export const CONSOLE_BASE = "/api/v1/console";

/** 401 `console.invalid_session`: no session, or one that is unknown, ended or expired. */
export const INVALID_SESSION = new ServiceError(401, "console.invalid_session", "Missing, unknown or expired console session: send `Authorization: Bearer <session token>`, or sign in again.");

/** 403 `auth.ip_not_allowed` on the console: the session is valid, the address is outside the account's allow-list. */
export const CONSOLE_IP_NOT_ALLOWED = new ServiceError(
  403,
  "auth.ip_not_allowed",
  "This account's console sessions work only from its allowed IP ranges, and this request comes from outside them. Ask your operator to add the address, or to exempt the account's console.",
);

/**
 * Refuses (403 `auth.ip_not_allowed`) a console request from outside the account's allow-list, the way the data
 * API refuses a key, unless the operator exempted the account's console. An unknown address is outside.
 */
export function checkConsoleAddress(account: AccountRecord, request: Request, client: ClientInfo, trustProxy: boolean): void {
  if (account.allowedCidrs.length === 0 || account.consoleIpExempt === true) return;
  if (!addressAllowed(clientAddressOf(request, client, trustProxy), account.allowedCidrs)) throw CONSOLE_IP_NOT_ALLOWED;
}

/** What a console handler receives once the session is known. */
export interface ConsoleCall<B, Q> {
  readonly accountId: string;
  /** The signed-in account as read when the request began (null on the routes without a session). */
  readonly account: AccountRecord | null;
  readonly params: Readonly<Record<string, string>>;
  readonly body: B;
  readonly query: Q;
  readonly request: Request;
  /** What the adapter knows about the connection (the client address). */
  readonly client: ClientInfo;
  readonly now: number;
  readonly app: AppContext;
  /** Drafts this request's audit entries (actor: the session's id, or the app's `auditActor`). */
  readonly audit: AuditRecorder;
}

/** One console operation. */
export interface ConsoleRoute<B extends v.GenericSchema | undefined = undefined, Q extends QuerySchema | undefined = undefined> {
  readonly method: "GET" | "POST" | "DELETE" | "PATCH";
  /** Path under CONSOLE_BASE, with `{params}`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly pathParams?: Readonly<Record<string, string>>;
  /** `none` for the one route that starts a session (sign-in); every other route needs one. */
  readonly auth?: "session" | "none";
  readonly body?: B;
  readonly query?: Q;
  readonly success: RouteDoc["success"];
  /** Statuses besides 401 and 503, which every console route may answer. */
  readonly errors: readonly number[];
  handle(call: ConsoleCall<B extends v.GenericSchema ? v.InferOutput<B> : undefined, Q extends QuerySchema ? v.InferOutput<Q> : undefined>): Promise<Reply>;
}

/** A console route of any body and query (for lists). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyConsoleRoute = ConsoleRoute<any, any>;

/** Declares a console route with its handler typed by its schemas. */
export function defineConsoleRoute<B extends v.GenericSchema | undefined = undefined, Q extends QuerySchema | undefined = undefined>(route: ConsoleRoute<B, Q>): ConsoleRoute<B, Q> {
  return route;
}

/**
 * The built-in console authentication: `Authorization: Bearer bds_sess_…` or the console's session cookie,
 * looked up by its hash. A state-changing request that relies on the cookie is checked against CSRF, and a
 * valid session from outside the account's IP allow-list is refused (`checkConsoleAddress`; `trustProxy` as
 * for data requests).
 */
export function sessionTokenAuth(storage: SessionStore & AccountStore, clock: Clock, hash: SecretHasher = hashSecret, options: { readonly trustProxy?: boolean } = {}): ConsoleAuth {
  const trustProxy = options.trustProxy === true;
  return async (request, client) => {
    const presented = presentedSession(request);
    if (presented === null || !isSessionToken(presented.token)) return null;
    if (presented.via === "cookie") checkCsrf(request);
    const accountId = await storage.findSession(hash(presented.token), clock.now());
    if (accountId === null) return null;
    const account = await storage.getAccount(accountId);
    if (account === null) return null;
    checkConsoleAddress(account, request, client ?? {}, trustProxy);
    return accountId;
  };
}

/** The signed-in account's record; a session whose account is gone is an invalid session. */
export async function accountOf(call: { readonly app: AppContext; readonly accountId: string; readonly account?: AccountRecord | null }): Promise<AccountRecord> {
  if (call.account) return call.account;
  const account = await call.app.storage.getAccount(call.accountId);
  if (account === null) throw INVALID_SESSION;
  return account;
}

const NO_STORE = "no-store";

/** The Route of a console operation: session, then query, then body, then the handler. */
export function consoleRoute(app: AppContext, route: AnyConsoleRoute): Route {
  const label = `${route.method} ${CONSOLE_BASE}${route.path}`;
  const run = async (request: Request, params: Readonly<Record<string, string>>, search: string, client: ClientInfo): Promise<Response> => {
    try {
      let accountId: string | null = "";
      let account: AccountRecord | null = null;
      if (route.auth !== "none") {
        try {
          accountId = await app.consoleAuth(request, client);
        } catch (error) {
          throw isServiceError(error) ? error : unavailable(app, "consoleAuth", error, requestIdOf(request));
        }
        if (accountId === null || accountId === "") throw INVALID_SESSION;
        // Whatever authenticated the request (the built-in sessions or an embedder's own), a suspended account's
        // console is refused, at once on every instance: the status is read afresh on every request.
        account = await app.storage.getAccount(accountId);
        if (account === null) throw INVALID_SESSION;
        if (account.status === "suspended") throw ACCOUNT_SUSPENDED;
      }
      const query = route.query ? parseQuery(route.query, search) : undefined;
      const body = route.body ? await readBody(request, route.body) : undefined;
      const audit = auditRecorder(app, request, client, () => consoleActor(app, request));
      const reply = await route.handle({ accountId, account, params, body, query, request, client, now: app.clock.now(), app, audit });
      return replyResponse(reply, { ...reply.headers, "cache-control": NO_STORE });
    } catch (error) {
      return errorResponse(asServiceError(error, app.logger, label, request), { "cache-control": NO_STORE });
    }
  };
  const errors = route.auth === "none" ? [...route.errors, 503] : [401, 403, ...route.errors, 503];
  if (route.body) errors.push(400, 413, 415, 422);
  if (route.query) errors.push(422);
  return {
    method: route.method,
    path: CONSOLE_BASE + route.path,
    run,
    doc: {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description !== undefined ? { description: route.description } : {}),
      tag: "Console",
      security: route.auth === "none" ? "none" : "session",
      ...(route.query ? { query: route.query } : {}),
      ...(route.pathParams ? { pathParams: route.pathParams } : {}),
      ...(route.body ? { body: route.body } : {}),
      success: route.success,
      errors: [...new Set(errors)],
    },
  };
}

/** 404 `not_found` for a resource that does not exist or belongs to another account (the two look the same). */
export function notFound(what: string, id: string): ServiceError {
  return new ServiceError(404, "not_found", `No ${what} \`${id}\` in this account.`);
}
