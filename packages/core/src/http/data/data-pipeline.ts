/**
 * The data request pipeline, in the spec's order: bearer key → format → lookup → active → (account not suspended)
 * → IP allow-list → environment → browser use of a live key → scopes → ONE `storage.admit` (per-key window,
 * per-account day and, for live keys, quota) → query validation and the handler. This is the hot path: everything per endpoint is
 * prepared once, storage is called once (`admit`, checking a remembered lookup) or twice (`findKeyByHash`
 * first, for a key not seen lately), and the body is serialized once. A request refused after its key was
 * found costs one more read (`peekLimits`) so that it too carries the `X-RateLimit-*` headers.
 */
import type { ServiceConfig } from "../../config/config.ts";
import { effectiveLimits } from "../../config/config.ts";
import { ServiceError } from "../../errors/service-error.ts";
import { quotaForLimits } from "../../billing/quota-admission.ts";
import { parseApiKey } from "../../keys/api-key.ts";
import { ENDPOINT_SCOPES, SCOPE_MIN_TIER, tierPermits } from "../../scopes/scopes.ts";
import type { AccountRecord, AdmissionStore, AdmitInput, AdmitQuota, AdmitResult, ApiKeyRecord, KeyLookup, KeyStore, TierLimits, WindowInfo } from "../../storage/types.ts";
import type { AppContext, ClientInfo } from "../app-options.ts";
import { ACCOUNT_SUSPENDED } from "../account-suspended.ts";
import { unavailable } from "../fail-closed-storage.ts";
import { parseQuery } from "../query.ts";
import { asServiceError, describeError, JSON_TYPE, NOSNIFF } from "../reply.ts";
import { bearerToken } from "../request-url.ts";
import { markStamped, requestIdOf } from "../request-id.ts";
import type { RouteRun } from "../route.ts";
import type { AnyDataEndpoint } from "./data-endpoint.ts";
import { addressAllowed, clientAddressOf, requestTarget } from "./key-checks.ts";
import type { LookupCache } from "./lookup-cache.ts";
import { lookupCache } from "./lookup-cache.ts";

/** How many key lookups the pipeline remembers (about 1 KB each), and for how long at most. */
const LOOKUP_CACHE_SIZE = 10_000;
const LOOKUP_MAX_AGE_MS = 60_000;
/** The length of every API key (`svc_live_` or `svc_test_` and 48 characters). */
const KEY_LENGTH = 57;
/** Admissions tried in a row while the key keeps changing under them, before answering 503. */
const MAX_STALE_TRIES = 3;

const MISSING_KEY = new ServiceError(401, "auth.missing_key", "Missing API key: send `Authorization: Bearer svc_live_…` or `svc_test_…`.");
const MALFORMED_KEY = new ServiceError(401, "auth.malformed_key", "Malformed API key: expected `svc_live_` or `svc_test_` followed by 48 URL-safe characters.");
const UNKNOWN_KEY = new ServiceError(401, "auth.unknown_key", "Unknown API key.");
const INACTIVE_KEY = new ServiceError(401, "auth.inactive_key", "This API key is no longer active: it was revoked or replaced by a rotation.");
const IP_NOT_ALLOWED = new ServiceError(403, "auth.ip_not_allowed", "Requests from this IP address are not allowed for this account.");
const LIVE_KEY_IN_BROWSER = new ServiceError(
  403,
  "auth.live_key_in_browser",
  "Live keys must not be used from browsers (the request has an Origin header). Call the API from your server, or use a test key in browser code.",
);
const ENV_MISMATCH = {
  live: new ServiceError(403, "auth.environment_mismatch", "This is a test key, but the request targets the live environment. Use a live key, or the sandbox host."),
  test: new ServiceError(403, "auth.environment_mismatch", "This is a live key, but the request targets the test environment. Use a test key here."),
} as const;

/** The key or its account kept changing under its admissions (not a storage fault: storage answered each time). */
const KEY_CHURN = new ServiceError(503, "service.unavailable", "The key changed while this request was being admitted. Retry shortly.", { "retry-after": "1" });

/** "a", "a and b", "a, b and c". */
function listOf(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/** Headers browsers may read on cross-origin responses. */
const EXPOSE_HEADERS = "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id";

/** The window the `X-RateLimit-*` headers describe: the minute window unless the day has fewer requests left. */
function reported(minute: WindowInfo, day: WindowInfo): WindowInfo {
  return day.remaining < minute.remaining ? day : minute;
}

function responseHeaders(window: WindowInfo | null, cors: boolean, requestId: string | undefined): Record<string, string> {
  const h: Record<string, string> = window
    ? {
        "content-type": JSON_TYPE,
        "x-content-type-options": NOSNIFF,
        "x-ratelimit-limit": String(window.limit),
        "x-ratelimit-remaining": String(window.remaining),
        "x-ratelimit-reset": String(Math.ceil(window.resetAt / 1000)),
      }
    : { "content-type": JSON_TYPE, "x-content-type-options": NOSNIFF };
  // Set here, at construction, rather than stamped on afterwards (see markStamped).
  if (requestId !== undefined) h["x-request-id"] = requestId;
  if (cors) {
    h["access-control-allow-origin"] = "*";
    h["access-control-expose-headers"] = EXPOSE_HEADERS;
  }
  return h;
}

function errorOut(error: ServiceError, window: WindowInfo | null, cors: boolean, requestId: string | undefined): Response {
  const h = responseHeaders(window, cors, requestId);
  if (error.headers) for (const name in error.headers) h[name.toLowerCase()] = error.headers[name] as string;
  return new Response(JSON.stringify(error.toBody()), { status: error.status, headers: h });
}

function rateLimited(result: Extract<AdmitResult, { kind: "rate_limited" }>): { error: ServiceError; window: WindowInfo } {
  const w = result.window === "minute" ? result.minute : result.day;
  const seconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
  const detail =
    result.window === "minute"
      ? `Rate limit exceeded: at most ${w.limit} requests per minute (sliding window) for this key. Retry after ${seconds} s.`
      : `Daily limit exceeded: at most ${w.limit} requests per UTC day for this account. Retry after ${seconds} s.`;
  return { error: new ServiceError(429, "rate_limit.exceeded", detail, { "retry-after": String(seconds) }), window: { limit: w.limit, remaining: 0, resetAt: w.resetAt } };
}

function quotaExhausted(result: Extract<AdmitResult, { kind: "quota_exhausted" }>): ServiceError {
  const q = result.quota;
  const used = `Monthly quota exhausted: ${q.used} of ${q.allowance} calls used this billing period.`;
  if (result.heldForReview) {
    // Its own code: no charge will start by itself, so a client that waits for one would wait for ever.
    const held =
      " Automatic charges are on hold for this billing period (their ceiling was reached, or the plan's next block would add no call)." +
      " Nothing more is charged until a person acts: retry the payment from the console, or ask the operator to release the hold or change the plan.";
    return new ServiceError(402, "quota.held", used + held);
  }
  const next = result.chargeInvoiceId
    ? ` An automatic charge for the next quota block has started (invoice ${result.chargeInvoiceId}); access resumes once it clears.`
    : " A charge for the next quota block is pending or has failed; access resumes once a charge clears (a failed charge can be retried from the console).";
  return new ServiceError(402, "quota.exhausted", used + next);
}

/**
 * Prepares what every data endpoint shares (the raw store, per-account limits), and returns the builder of
 * each endpoint's pipeline. `storage` is the raw store: its failures are caught here.
 */
export function dataPipeline(app: AppContext, storage: KeyStore & AdmissionStore): (endpoint: AnyDataEndpoint) => RouteRun {
  const { clock, idRandom } = app;
  const config: ServiceConfig = app.config;
  const limitsCache = new WeakMap<AccountRecord, TierLimits>();
  const limitsOf = (account: AccountRecord): TierLimits => {
    let l = limitsCache.get(account);
    if (l === undefined) limitsCache.set(account, (l = effectiveLimits(config, account.tier, account.limits)));
    return l;
  };
  const liveQuota = (limits: TierLimits): AdmitQuota => quotaForLimits(config, limits, clock, idRandom);
  const lookups = lookupCache(LOOKUP_CACHE_SIZE, LOOKUP_MAX_AGE_MS);
  return (endpoint) => endpointPipeline(app, storage, endpoint, limitsOf, liveQuota, lookups);
}

function endpointPipeline(
  app: AppContext,
  storage: KeyStore & AdmissionStore,
  endpoint: AnyDataEndpoint,
  limitsOf: (account: AccountRecord) => TierLimits,
  liveQuota: (limits: TierLimits) => AdmitQuota,
  lookups: LookupCache,
): RouteRun {
  const required = ENDPOINT_SCOPES[endpoint.endpoint];
  const space = endpoint.endpoint.indexOf(" ");
  const label = `${endpoint.endpoint.slice(0, space)} /data/v1${endpoint.endpoint.slice(space + 1)}`;
  const { clock, logger, hooks, faults, metrics } = app;
  const config: ServiceConfig = app.config;
  const querySchema = endpoint.query;
  const emptyQuery = Object.freeze({});

  // The checks between the lookup and admission, in the spec's order: the refusal, or null.
  const refusal = (lookup: KeyLookup, request: Request, client: ClientInfo, cors: boolean): ServiceError | null => {
    const { key, account } = lookup;
    if (lookup.retired || !key.isActive) return INACTIVE_KEY;
    // A suspension holds on every instance at its next request: it moves the account's version, so a lookup
    // remembered from before is stale at admission (`expect.version`) and the fresh one lands here.
    if (account.status === "suspended") return ACCOUNT_SUSPENDED;
    if (account.allowedCidrs.length > 0 && !addressAllowed(clientAddressOf(request, client, config.trustProxy), account.allowedCidrs)) return IP_NOT_ALLOWED;
    const target = requestTarget(config, request);
    if (key.environment !== target) return ENV_MISMATCH[target];
    if (key.environment === "live" && cors) return LIVE_KEY_IN_BROWSER;
    for (const scope of required) {
      if (!key.scopes.includes(scope)) {
        const missing = required.filter((s) => !key.scopes.includes(s));
        return new ServiceError(403, "auth.insufficient_scope", `This key lacks the ${missing.length === 1 ? "scope" : "scopes"} ${listOf(missing.map((s) => `\`${s}\``))} required by ${label}.`);
      }
    }
    // A scope the account's tier no longer permits (a downgrade) is inert: the key keeps it on record until
    // its next rotation drops it, but it grants nothing. The lookup's account is checked by admission
    // (`expect.version`), so a downgrade made on any instance applies to every instance's next request.
    for (const scope of required) {
      if (!tierPermits(account.tier, scope)) {
        return new ServiceError(
          403,
          "auth.insufficient_scope",
          `This key's scope \`${scope}\` (required by ${label}) needs the ${SCOPE_MIN_TIER[scope]} tier or above; this account is now on ${account.tier}.`,
        );
      }
    }
    return null;
  };

  // A lookup from storage; remembered only when it could be admitted (active, not retired).
  const lookUp = async (hash: string): Promise<KeyLookup | null> => {
    let lookup: KeyLookup | null;
    try {
      lookup = await storage.findKeyByHash(hash);
    } catch (error) {
      throw unavailable(app, "findKeyByHash", error);
    }
    if (lookup !== null && lookup.key.isActive && !lookup.retired) lookups.set(hash, lookup, clock.now());
    else lookups.delete(hash);
    return lookup;
  };

  // The windows as they stand, for the headers of a request refused after the lookup (it was not admitted,
  // so it counts nothing). A failing store only costs the headers: the refusal stands, never a 503.
  const peekWindow = async (key: ApiKeyRecord, account: AccountRecord): Promise<WindowInfo | null> => {
    const limits = limitsOf(account);
    try {
      const peek = await storage.peekLimits({ now: clock.now(), keyId: key.id, accountId: account.id, perMinute: limits.perMinute, perDay: limits.perDay, windowMs: 60_000, environment: key.environment });
      return reported(peek.minute, peek.day);
    } catch (error) {
      logger.warn("rate-limit headers unavailable for a refused request", { operation: "peekLimits", error: describeError(error) });
      return null;
    }
  };

  // Counted and timed here rather than by a wrapper around the route: no extra promise per request. Usage
  // analytics count the request under its key when one was found (an unknown or malformed key has none).
  const timing = metrics.route(endpoint.endpoint.slice(0, space), `/data/v1${endpoint.endpoint.slice(space + 1)}`);
  const analytics = app.analytics;
  const slot = analytics === null ? 0 : analytics.endpoint(label);
  const done = (response: Response, start: number, requestId: string | undefined, found: KeyLookup | null): Response => {
    const ms = performance.now() - start;
    timing.record(response.status, ms);
    if (found !== null && analytics !== null) analytics.record(found.key.id, found.account.id, slot, response.status, ms, clock.now());
    return requestId === undefined ? response : markStamped(response);
  };

  return async (request, _params, search, client) => {
    const start = performance.now();
    const requestId = requestIdOf(request);
    const headers = request.headers;
    const cors = headers.get("origin") !== null;
    let window: WindowInfo | null = null;
    let found: KeyLookup | null = null;
    try {
      const raw = bearerToken(headers.get("authorization"));
      if (raw === null) throw MISSING_KEY;
      if (raw.length !== KEY_LENGTH) throw MALFORMED_KEY;
      const hash = app.hashSecret(raw);
      // A remembered lookup is only a guess: admission checks it (`expect`), and refusals are decided on a
      // fresh one, so a cached entry can never let a changed key through or refuse a key that now passes.
      let lookup: KeyLookup | null = lookups.get(hash, clock.now()) ?? null;
      let fresh = lookup === null;
      if (fresh) {
        // Only hashes of issued keys are remembered, and every issued key is well formed: the format check is
        // needed only for a hash the cache does not know.
        if (parseApiKey(raw) === null) throw MALFORMED_KEY;
        lookup = await lookUp(hash);
      }
      let result: AdmitResult;
      for (let tries = 1; ; tries++) {
        if (lookup === null) throw UNKNOWN_KEY;
        found = lookup;
        const refused = refusal(lookup, request, client, cors);
        if (refused !== null) {
          if (!fresh) {
            lookup = await lookUp(hash);
            fresh = true;
            continue;
          }
          window = await peekWindow(lookup.key, lookup.account);
          throw refused;
        }
        const { key, account } = lookup;
        const limits = limitsOf(account);
        const input: AdmitInput = {
          now: clock.now(),
          keyId: key.id,
          accountId: account.id,
          perMinute: limits.perMinute,
          perDay: limits.perDay,
          windowMs: 60_000,
          environment: key.environment,
          quota: key.environment === "live" ? liveQuota(limits) : null,
          expect: { keyHash: hash, version: lookup.version },
        };
        try {
          result = await storage.admit(input);
        } catch (error) {
          throw unavailable(app, "admit", error, requestIdOf(request));
        }
        if (faults.failing) faults.ok();
        if (result.kind !== "stale") break;
        // The key or its account changed since that lookup (here or in another process): look again.
        lookups.delete(hash);
        if (tries >= MAX_STALE_TRIES) {
          logger.warn("key changed during every admission: answering 503", { key_id: lookup.key.id, tries, request_id: requestId });
          metrics.unavailable.key_churn.inc();
          throw KEY_CHURN;
        }
        lookup = await lookUp(hash);
        fresh = true;
      }
      const { key, account } = lookup;
      const live = key.environment === "live";
      if (result.kind === "rate_limited") {
        (result.window === "minute" ? metrics.refused.rate_limit : metrics.refused.daily_limit).inc();
        const limited = rateLimited(result);
        window = limited.window;
        throw limited.error;
      }
      window = reported(result.minute, result.day);
      if (result.kind === "quota_exhausted") {
        (result.heldForReview ? metrics.refused.quota_held : metrics.refused.quota).inc();
        if (result.chargeInvoiceId !== null) hooks.chargeRequested(result.chargeInvoiceId);
        if (result.heldNow) {
          // The operator's copy of quota.held (the customer's goes to the account's webhooks).
          logger.warn("automatic charges held: no charge starts until a person acts", {
            account_id: lookup.account.id,
            request_id: requestId,
            calls_used: result.quota.used,
            allowance: result.quota.allowance,
          });
          hooks.eventsWritten();
        }
        throw quotaExhausted(result);
      }
      if (result.quota !== null && result.quota.warned !== null) hooks.eventsWritten();

      const query = querySchema ? parseQuery(querySchema, search) : emptyQuery;
      const reply = await endpoint.handle({ query, request, source: live ? app.liveData : app.testData, dataset: key.environment, key, account, now: result.now, app });
      const h = responseHeaders(window, cors, requestId);
      if (reply.json !== undefined) {
        if (reply.contentType !== undefined) h["content-type"] = reply.contentType;
        return done(new Response(reply.json, { status: reply.status, headers: h }), start, requestId, found);
      }
      if (reply.body === undefined) {
        delete h["content-type"];
        return done(new Response(null, { status: reply.status, headers: h }), start, requestId, found);
      }
      return done(new Response(JSON.stringify(reply.body), { status: reply.status, headers: h }), start, requestId, found);
    } catch (error) {
      return done(errorOut(asServiceError(error, logger, label, request), window, cors, requestId), start, requestId, found);
    }
  };
}
