/** `createApp`: the whole HTTP service as one Web-standard `fetch(request, ctx)`, runtime-agnostic. */
import * as v from "valibot";
import { cryptoRandom, systemClock } from "../clock/clock.ts";
import { DEFAULT_CONFIG } from "../config/config.ts";
import { createSyntheticSource } from "../data/synthetic.ts";
import { ERROR_CODES } from "../errors/error-codes.ts";
import { ServiceError } from "../errors/service-error.ts";
import type { Logger } from "../log/logger.ts";
import { silentLogger } from "../log/logger.ts";
import type { FaultLog } from "../log/fault-log.ts";
import { faultLog } from "../log/fault-log.ts";
import { timingSafeEqual } from "../keys/constant-time.ts";
import type { MetricsRegistry } from "../metrics/metrics-registry.ts";
import { createMetricsRegistry, PROMETHEUS_CONTENT_TYPE } from "../metrics/metrics-registry.ts";
import type { ServiceMetrics } from "../metrics/service-metrics.ts";
import { serviceMetrics } from "../metrics/service-metrics.ts";
import { hashSecret } from "../keys/api-key.ts";
import type { AppContext, AppHooks, AppOptions, ClientInfo } from "./app-options.ts";
import { ADMIN_BASE, adminRoutes } from "./admin/admin-routes.ts";
import { adminAuthThrottle, refuseWrongToken } from "./admin/auth-throttle.ts";
import { clientAddressOf } from "./data/key-checks.ts";
import { CONSOLE_BASE, consoleRoute, sessionTokenAuth } from "./console/console-route.ts";
import { CONSOLE_ROUTES } from "./console/console-routes.ts";
import { dataPipeline } from "./data/data-pipeline.ts";
import { DATA_ENDPOINTS } from "./data/endpoints.ts";
import { failClosedSource, failClosedStorage } from "./fail-closed.ts";
import type { OpenApiDocument } from "./openapi/openapi.ts";
import { buildOpenApi } from "./openapi/openapi.ts";
import { pooledRandom } from "./pooled-random.ts";
import { asServiceError, errorResponse, JSON_TYPE, NOSNIFF } from "./reply.ts";
import { bearerToken, splitUrl } from "./request-url.ts";
import { assignRequestId, markStamped, REQUEST_ID_HEADER, requestIdOf, stampRequestId } from "./request-id.ts";
import type { Route, RouteRun } from "./route.ts";
import type { Miss } from "./base-router.ts";
import { baseRouter } from "./base-router.ts";
import { consoleUiResponse, isConsolePath } from "./console-ui/console-ui.ts";

/** The base path of the data endpoints. */
export const DATA_BASE = "/data/v1";

const DATA_PREFIX = DATA_BASE + "/";
const CONSOLE_PREFIX = CONSOLE_BASE + "/";
const ADMIN_PREFIX = ADMIN_BASE + "/";

/** The error body's schema, `{detail, code, status}`. */
export const ErrorBodySchema = v.object({
  detail: v.pipe(v.string(), v.description("Human-readable explanation.")),
  code: v.pipe(v.picklist(ERROR_CODES), v.description("Stable machine-readable code, e.g. `auth.unknown_key`.")),
  status: v.pipe(v.number(), v.integer(), v.description("The HTTP status, repeated.")),
});

/** A route's method and path, as listed by `App.routes`. */
export interface RouteInfo {
  readonly method: string;
  readonly path: string;
  readonly operationId: string;
}

/** The app: a fetch handler plus introspection. */
export interface App {
  /** Handles one request; `ctx.clientAddress` is the peer's IP as the adapter saw it. */
  fetch(request: Request, ctx?: ClientInfo): Promise<Response>;
  /**
   * Handles one request on the admin listener: the admin API only (every other path is 404). With
   * `adminSeparate` this is the only way to the admin API.
   */
  adminFetch(request: Request, ctx?: ClientInfo): Promise<Response>;
  /**
   * The OpenAPI 3.1 document of every route the app defines (admin routes included even when the admin API is off
   * or on its own listener): what clients are generated from. `GET /openapi.json` on each listener lists only the
   * operations that listener serves.
   */
  readonly openapi: OpenApiDocument;
  /** Every route (method, OpenAPI path, operation id). */
  readonly routes: readonly RouteInfo[];
  /** Starts draining: `/readyz` answers 503 from now on, so load balancers stop sending; requests are still served. */
  drain(): void;
  /** Whether `drain()` was called. */
  readonly draining: boolean;
  /** The metrics registry (`GET /metrics` renders it); give it to the workers so their metrics show there too. */
  readonly metrics: MetricsRegistry;
}

/** An API key's length (`svc_live_` or `svc_test_` and 48 characters), and its logged prefix's (the contract's `prefix`). */
const API_KEY_LENGTH = 57;
const KEY_PREFIX_LENGTH = 12;

/** How long `/readyz` waits for storage's trivial query before answering 503 (under a 1 s probe time-out). */
export const READINESS_TIMEOUT_MS = 800;

function safeHooks(hooks: AppHooks | undefined, logger: Logger): Required<AppHooks> {
  const guard =
    <A extends unknown[]>(name: string, fn: ((...args: A) => void) | undefined) =>
    (...args: A): void => {
      if (!fn) return;
      try {
        fn(...args);
      } catch (error) {
        logger.warn("hook failed", { hook: name, error: error instanceof Error ? error.message : String(error) });
      }
    };
  return { chargeRequested: guard("chargeRequested", hooks?.chargeRequested?.bind(hooks)), eventsWritten: guard("eventsWritten", hooks?.eventsWritten?.bind(hooks)) };
}

const PREFLIGHT_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "Authorization, Content-Type",
  "access-control-max-age": "86400",
  "x-content-type-options": NOSNIFF,
} as const;

/** Creates the HTTP app over a storage and the capabilities it needs. */
export function createApp(options: AppOptions): App {
  const config = options.config ?? DEFAULT_CONFIG;
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? cryptoRandom;
  const registry = options.metrics ?? createMetricsRegistry();
  const metrics = serviceMetrics(registry);
  const faults = faultLog(logger, clock, { onFault: (cause) => metrics.storageError(cause) });
  const sink = { faults, metrics };
  const storage = failClosedStorage(options.storage, sink);
  const app: AppContext = {
    storage,
    clock,
    random,
    idRandom: pooledRandom(random),
    hashSecret: options.hashSecret ?? hashSecret,
    config,
    logger,
    faults,
    metrics,
    hooks: safeHooks(options.hooks, logger),
    webhooks: options.webhooks ?? {},
    // The built-in synthetic dataset is pure in-process computation, not a store that can be unreachable: a throw
    // there is a bug (500 like any handler's), and skipping the guard saves a promise and a tick per source call.
    testData: options.testData ? failClosedSource(options.testData, sink, "testData") : createSyntheticSource(config.data.syntheticSeed),
    liveData: failClosedSource(options.liveData ?? options.storage.benchmarks, sink, "liveData"),
    consoleAuth: options.consoleAuth ?? sessionTokenAuth(storage, clock, options.hashSecret ?? hashSecret, { trustProxy: config.trustProxy }),
    adminToken: options.adminToken ? options.adminToken : null,
  };

  const pipeline = dataPipeline(app, options.storage);
  const consoleUi = options.consoleUi !== false;
  const adminSeparate = options.adminSeparate === true;
  const dataRoutes: Route[] = DATA_ENDPOINTS.map((e) => {
    const space = e.endpoint.indexOf(" ");
    return {
      method: e.endpoint.slice(0, space),
      path: DATA_BASE + e.endpoint.slice(space + 1),
      run: pipeline(e),
      doc: {
        operationId: e.operationId,
        summary: e.summary,
        ...(e.description !== undefined ? { description: e.description } : {}),
        tag: "Data",
        security: "apiKey",
        ...(e.query ? { query: e.query } : {}),
        ...(e.body ? { body: e.body } : {}),
        success: { status: e.successStatus ?? 200, description: e.summary + ".", ...(e.response ? { schema: e.response } : {}), ...(e.mediaType ? { mediaType: e.mediaType } : {}) },
        errors: [...new Set([401, 402, 403, 429, 503, ...(e.query ? [422] : []), ...(e.errors ?? [])])],
        rateLimited: true,
      },
    };
  });
  let draining = false;
  const readinessTimeoutMs = options.readinessTimeoutMs ?? READINESS_TIMEOUT_MS;
  const serviceRoutes: Route[] = [
    {
      method: "GET",
      path: "/healthz",
      // The id built in (see markStamped): probes come often, and this answer stays the adapter's cheap kind.
      run: (request) => {
        const headers: Record<string, string> = { "content-type": JSON_TYPE, "cache-control": "no-store", "x-content-type-options": NOSNIFF };
        const id = requestIdOf(request);
        if (id === undefined) return Promise.resolve(new Response('{"ok":true}', { status: 200, headers }));
        headers[REQUEST_ID_HEADER] = id;
        return Promise.resolve(markStamped(new Response('{"ok":true}', { status: 200, headers })));
      },
      doc: {
        operationId: "healthz",
        summary: "Liveness",
        tag: "Service",
        security: "none",
        success: { status: 200, description: "The service is up.", schema: v.object({ ok: v.literal(true) }) },
        errors: [],
      },
    },
    {
      method: "GET",
      path: "/readyz",
      run: () => readiness(options.storage, faults, metrics, readinessTimeoutMs, () => draining),
      doc: {
        operationId: "readyz",
        summary: "Readiness",
        description:
          "200 while storage answers a trivial query within " + String(readinessTimeoutMs) + " ms and the server is not draining; otherwise 503 with `reason` " +
          "(`draining`, `storage_timeout` or `storage_unavailable`). For load balancers and Kubernetes readiness probes; `/healthz` is the liveness probe.",
        tag: "Service",
        security: "none",
        success: { status: 200, description: "Ready to serve.", schema: v.object({ ready: v.literal(true) }) },
        errors: [503],
      },
    },
    openapiRoute(() => mainRoutes),
  ];
  const consoleRoutes = CONSOLE_ROUTES.map((r) => consoleRoute(app, r));
  // One throttle of failed operator authentications, shared by the admin API and /metrics.
  const authThrottle = adminAuthThrottle(clock, logger);
  const admin = adminRoutes(app, authThrottle);
  const allRoutes = [...dataRoutes, ...consoleRoutes, ...admin, ...serviceRoutes];
  // Each listener documents what it serves: the main one the admin API only when it serves it (a token, and no
  // listener of its own); the admin listener the admin API and its own document.
  const adminServed = app.adminToken !== null;
  const mainRoutes = [...dataRoutes, ...consoleRoutes, ...(adminServed && !adminSeparate ? admin : []), ...serviceRoutes];
  const adminOpenapi = openapiRoute(() => adminListenerRoutes);
  const adminListenerRoutes = [...(adminServed ? admin : []), adminOpenapi];
  // Storage's gauges at each scrape, bounded in time so a dead database cannot hang the scrape.
  const rawStorage = options.storage;
  if (rawStorage.gauges) registry.collect(() => readGauges(rawStorage, metrics, readinessTimeoutMs));
  // Outside the OpenAPI document on purpose: an operator's endpoint with its own token and a text format.
  const metricsRoute: Route = {
    method: "GET",
    path: "/metrics",
    run: (request, _params, _search, client) => scrape(request, config.metrics.token, registry, () => refuseWrongToken(authThrottle, clientAddressOf(request, client, config.trustProxy), "metrics", METRICS_TOKEN)),
    doc: { operationId: "metrics", summary: "Prometheus metrics", tag: "Service", security: "none", success: { status: 200, description: "Metrics." }, errors: [401, 404, 429] },
  };
  let openapi: OpenApiDocument | undefined;
  const documented = (): OpenApiDocument => (openapi ??= buildOpenApi(allRoutes, ErrorBodySchema));
  const noClient: ClientInfo = {};

  // What no route takes: the CORS preflight of data paths, 405 with `Allow` when the path has other methods, else 404.
  const miss = (request: Request, path: string, allow: readonly string[]): Response => {
    const method = request.method;
    const data = path.startsWith(DATA_PREFIX);
    if (method === "OPTIONS" && data) return new Response(null, { status: 204, headers: PREFLIGHT_HEADERS });
    const cors: Record<string, string> = data && request.headers.get("origin") !== null ? { "access-control-allow-origin": "*" } : {};
    if (allow.length > 0) {
      const list = allow.join(", ");
      return errorResponse(new ServiceError(405, "method_not_allowed", `${method} is not allowed on ${path}; allowed: ${list}.`), { ...cors, allow: list });
    }
    const what = !path.startsWith(ADMIN_PREFIX)
      ? `No route ${method} ${path}.`
      : app.adminToken === null
        ? "The admin API is not enabled."
        : adminSeparate
          ? "The admin API is served on its own listener (the operator's admin port), not here."
          : `No route ${method} ${path}.`;
    return errorResponse(new ServiceError(404, "not_found", what), cors);
  };

  // One itty-router per base path: a request is matched only against its own base's routes.
  // Each route counted and timed by its template; a request no route takes is counted as `(unmatched)`.
  const unmatched = metrics.route("*", "(unmatched)");
  const counted: Miss = (request, path, allow) => {
    const response = miss(request, path, allow);
    unmatched.count(response.status);
    return response;
  };
  // The data pipeline counts and times its own requests (without an extra promise on the hot path).
  // With the access log on, each route notes its template for the request's line (off: routes run as they are).
  const accessLog = config.log.access;
  const templates = new WeakMap<Request, string>();
  const noted = (routes: readonly Route[]): readonly Route[] =>
    accessLog
      ? routes.map((route) => {
          const run = route.run;
          const template = route.path;
          const noting: RouteRun = (request, params, search, client) => {
            templates.set(request, template);
            return run(request, params, search, client);
          };
          return { ...route, run: noting };
        })
      : routes;
  const dataRouter = baseRouter(DATA_BASE, noted(dataRoutes), counted);
  const consoleRouter = baseRouter(CONSOLE_BASE, noted(timed(metrics, consoleRoutes)), counted);
  const serviceRouter = baseRouter("", noted(timed(metrics, [...serviceRoutes, metricsRoute])), counted);
  // Without an admin token the admin paths fall through to the service router's 404.
  const adminRouter = app.adminToken === null ? serviceRouter : baseRouter(ADMIN_BASE, noted(timed(metrics, admin)), counted);
  const adminServiceRouter = baseRouter("", noted(timed(metrics, [adminOpenapi])), counted);
  // With a separate admin listener the main one answers 404 on admin paths.
  const mainAdminRouter = adminSeparate ? serviceRouter : adminRouter;

  // Not async: the router's promise is returned as is (every route catches its own errors), saving a frame
  // per request on the hot path.
  const route = (request: Request, ctx: ClientInfo | undefined): Promise<Response> => {
    try {
      const { path, search } = splitUrl(request.url);
      const client = ctx ?? noClient;
      if (path.startsWith(DATA_PREFIX)) return dataRouter.fetch(request, path, search, client);
      if (path.startsWith(CONSOLE_PREFIX)) return consoleRouter.fetch(request, path, search, client);
      if (path.startsWith(ADMIN_PREFIX)) return mainAdminRouter.fetch(request, path, search, client);
      if (consoleUi && isConsolePath(path)) {
        if (accessLog) templates.set(request, "(console-ui)");
        return Promise.resolve(consoleUiResponse(request, path));
      }
      return serviceRouter.fetch(request, path, search, client);
    } catch (error) {
      return Promise.resolve(errorResponse(asServiceError(error, logger, "fetch", request)));
    }
  };

  // The admin listener: admin paths and its own OpenAPI document; anything else is 404 (counted as unmatched).
  const routeAdmin = (request: Request, ctx: ClientInfo | undefined): Promise<Response> => {
    try {
      const { path, search } = splitUrl(request.url);
      if (path.startsWith(ADMIN_PREFIX)) return adminRouter.fetch(request, path, search, ctx ?? noClient);
      if (path === OPENAPI_PATH) return adminServiceRouter.fetch(request, path, search, ctx ?? noClient);
      const response = errorResponse(new ServiceError(404, "not_found", `No route ${request.method} ${path}: this listener serves the admin API (${ADMIN_BASE}) and its description (${OPENAPI_PATH}) only.`));
      unmatched.count(404);
      return Promise.resolve(response);
    } catch (error) {
      return Promise.resolve(errorResponse(asServiceError(error, logger, "fetch", request)));
    }
  };

  // The access log's line: no query string, no Authorization, no raw key or token; at most a key's prefix.
  const logAccess = (request: Request, response: Response, id: string, start: number): void => {
    const raw = bearerToken(request.headers.get("authorization"));
    logger.info("request", {
      request_id: id,
      method: request.method,
      route: templates.get(request) ?? "(unmatched)",
      status: response.status,
      duration_ms: Math.round((performance.now() - start) * 10) / 10,
      key_prefix: raw !== null && raw.length === API_KEY_LENGTH && /^svc_(live|test)_/.test(raw) ? raw.slice(0, KEY_PREFIX_LENGTH) : undefined,
    });
  };

  // Every answer carries `X-Request-Id` (echoed when sane, else generated), also carried in its log lines.
  const stamped =
    (router: (request: Request, ctx: ClientInfo | undefined) => Promise<Response>) =>
    (request: Request, ctx?: ClientInfo): Promise<Response> => {
      const id = assignRequestId(request, clock, app.idRandom);
      if (!accessLog) return router(request, ctx).then((response) => stampRequestId(response, id));
      const start = performance.now();
      return router(request, ctx).then((response) => {
        logAccess(request, response, id, start);
        return stampRequestId(response, id);
      });
    };
  const fetch = stamped(route);

  return {
    fetch,
    adminFetch: stamped(routeAdmin),
    get openapi(): OpenApiDocument {
      return documented();
    },
    routes: allRoutes.map((r) => ({ method: r.method, path: r.path, operationId: r.doc.operationId })),
    metrics: registry,
    drain() {
      if (draining) return;
      draining = true;
      metrics.draining.set(1);
      logger.info("draining: /readyz answers 503 from now on");
    },
    get draining(): boolean {
      return draining;
    },
  };
}

const NO_STORE_JSON = { "content-type": JSON_TYPE, "cache-control": "no-store", "x-content-type-options": NOSNIFF } as const;

function notReady(reason: "draining" | "storage_timeout" | "storage_unavailable", detail: string): Response {
  const body = { ready: false, reason, detail, code: "service.unavailable", status: 503 };
  return new Response(JSON.stringify(body), { status: 503, headers: { ...NO_STORE_JSON, "retry-after": "1" } });
}

/** Routes whose runs record their status and duration under their template (the children resolved here, once). */
const OPENAPI_PATH = "/openapi.json";

/** `GET /openapi.json` of one listener: the document of `routes()` (the operations that listener serves), built once. */
function openapiRoute(routes: () => readonly Route[]): Route {
  let json: string | undefined;
  return {
    method: "GET",
    path: OPENAPI_PATH,
    run: () => Promise.resolve(new Response((json ??= JSON.stringify(buildOpenApi(routes(), ErrorBodySchema))), { status: 200, headers: { "content-type": JSON_TYPE, "access-control-allow-origin": "*", "x-content-type-options": NOSNIFF } })),
    doc: {
      operationId: "openapi",
      summary: "This OpenAPI 3.1 document",
      description: "The operations this listener serves: with the admin API on a listener of its own, each listener's document lists its own.",
      tag: "Service",
      security: "none",
      success: { status: 200, description: "The document." },
      errors: [],
    },
  };
}

function timed(metrics: ServiceMetrics, routes: readonly Route[]): Route[] {
  return routes.map((route) => {
    const m = metrics.route(route.method, route.path);
    const run = route.run;
    return {
      ...route,
      run: (request, params, search, client) => {
        const start = performance.now();
        return run(request, params, search, client).then((response) => {
          m.record(response.status, performance.now() - start);
          return response;
        });
      },
    };
  });
}

const METRICS_OFF = new ServiceError(404, "not_found", "Metrics are off: set metrics.token in the config to serve them (with that bearer token).");
const METRICS_TOKEN = new ServiceError(401, "metrics.invalid_token", "Missing or wrong metrics token: send `Authorization: Bearer <metrics.token>`.", { "www-authenticate": 'Bearer realm="metrics"' });

/**
 * `GET /metrics`: off without a token; otherwise the registry in the text exposition format, for that bearer token
 * only. A wrong token is refused by `refuse`, which counts it in the operator-authentication throttle.
 */
async function scrape(request: Request, token: string | null, registry: MetricsRegistry, refuse: () => ServiceError): Promise<Response> {
  if (token === null) return errorResponse(METRICS_OFF);
  const presented = bearerToken(request.headers.get("authorization"));
  if (presented === null || !timingSafeEqual(presented, token)) return errorResponse(refuse(), { "cache-control": "no-store" });
  return new Response(await registry.render(), { status: 200, headers: { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" } });
}

/** Reads storage's gauges into the metrics; `storage_up` says whether that worked within `timeoutMs`. */
async function readGauges(storage: AppOptions["storage"], metrics: ServiceMetrics, timeoutMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
  try {
    const g = await Promise.race([storage.gauges!(), timedOut]);
    if (g === null) {
      metrics.storageUp.set(0);
      return;
    }
    metrics.storageUp.set(1);
    metrics.outboxDepth.set(g.outboxDepth);
    if (g.poolSize !== undefined) metrics.setPool(g.poolSize, g.poolInUse ?? 0, g.poolWaiting ?? 0);
  } catch {
    metrics.storageUp.set(0);
  } finally {
    clearTimeout(timer);
  }
}

/** `/readyz`: not draining, and storage's trivial query answered in time. A failure is a fault (logged rate-limited). */
async function readiness(storage: AppOptions["storage"], faults: FaultLog, metrics: ServiceMetrics, timeoutMs: number, draining: () => boolean): Promise<Response> {
  const response = await readinessCheck(storage, faults, timeoutMs, draining);
  if (response.status === 503) metrics.unavailable.not_ready.inc();
  return response;
}

async function readinessCheck(storage: AppOptions["storage"], faults: FaultLog, timeoutMs: number, draining: () => boolean): Promise<Response> {
  if (draining()) return notReady("draining", "The server is shutting down: send new requests elsewhere.");
  if (storage.ping) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
    try {
      const outcome = await Promise.race([storage.ping().then(() => "ok" as const), timedOut]);
      if (outcome === "timeout") {
        faults.fault("ping", new Error(`readiness query timed out after ${timeoutMs} ms`));
        return notReady("storage_timeout", `Storage did not answer a trivial query within ${timeoutMs} ms.`);
      }
    } catch (error) {
      faults.fault("ping", error);
      return notReady("storage_unavailable", "Storage is unreachable.");
    } finally {
      clearTimeout(timer);
    }
  }
  if (draining()) return notReady("draining", "The server is shutting down: send new requests elsewhere.");
  return new Response('{"ready":true}', { status: 200, headers: NO_STORE_JSON });
}
