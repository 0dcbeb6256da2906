/**
 * `createApp`: the whole HTTP service as one Web-standard `fetch(request, ctx)`, runtime-agnostic. Wiring only:
 * the capabilities become the app's context, each base path gets its router, and every answer passes through
 * the request ids and the access log; what each route does lives in its own module.
 */
import { cryptoRandom, systemClock } from "../clock/clock.ts";
import { DEFAULT_CONFIG } from "../config/config.ts";
import { createSyntheticSource } from "../data/synthetic.ts";
import { ServiceError } from "../errors/service-error.ts";
import { silentLogger } from "../log/logger.ts";
import { faultLog } from "../log/fault-log.ts";
import type { MetricsRegistry } from "../metrics/metrics-registry.ts";
import { createMetricsRegistry } from "../metrics/metrics-registry.ts";
import { serviceMetrics } from "../metrics/service-metrics.ts";
import { hashSecret } from "../keys/api-key.ts";
import { accessLog } from "./access-log.ts";
import type { AppContext, AppOptions, ClientInfo } from "./app-options.ts";
import { ADMIN_BASE, adminRoutes } from "./admin/admin-routes.ts";
import { adminAuthThrottle, refuseWrongToken } from "./admin/auth-throttle.ts";
import { clientAddressOf } from "./data/key-checks.ts";
import { CONSOLE_BASE, consoleRoute, sessionTokenAuth } from "./console/define-console-route.ts";
import { CONSOLE_ROUTES } from "./console/console-routes.ts";
import { dataPipeline } from "./data/data-pipeline.ts";
import { DATA_BASE, dataRoutes } from "./data/data-routes.ts";
import { ErrorBodySchema } from "./error-body.ts";
import { failClosedSource, failClosedStorage } from "./fail-closed-storage.ts";
import { noRoute } from "./no-route.ts";
import type { OpenApiDocument } from "./openapi/openapi.ts";
import { buildOpenApi } from "./openapi/openapi.ts";
import { OPENAPI_PATH, openapiRoute } from "./openapi/openapi-route.ts";
import { pooledRandom } from "./pooled-random.ts";
import { asServiceError, errorResponse } from "./reply.ts";
import { splitUrl } from "./request-url.ts";
import type { Handler } from "./request-id.ts";
import { withRequestIds } from "./request-id.ts";
import type { Route } from "./route.ts";
import { timed } from "./route-metrics.ts";
import type { Miss } from "./base-router.ts";
import { baseRouter } from "./base-router.ts";
import { consoleUiResponse, isConsolePath } from "./console-ui/console-ui.ts";
import { safeHooks } from "./safe-hooks.ts";
import { healthzRoute } from "./service/healthz.ts";
import { METRICS_TOKEN, metricsRoute, readGauges } from "./service/metrics-route.ts";
import { READINESS_TIMEOUT_MS, readyzRoute } from "./service/readyz.ts";
import type { UsageAggregator } from "../analytics/usage-aggregator.ts";
import { createUsageAggregator } from "../analytics/usage-aggregator.ts";

export { DATA_BASE } from "./data/data-routes.ts";
export { ErrorBodySchema } from "./error-body.ts";
export { READINESS_TIMEOUT_MS } from "./service/readyz.ts";

const DATA_PREFIX = DATA_BASE + "/";
const CONSOLE_PREFIX = CONSOLE_BASE + "/";
const ADMIN_PREFIX = ADMIN_BASE + "/";

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
  /**
   * Usage analytics of this instance (null when `analytics.enabled` is false): written every `analytics.flushSeconds`
   * by a timer that does not keep the process alive; `flush()` writes now, `close()` (graceful shutdown) stops the
   * timer and writes what is left.
   */
  readonly analytics: Pick<UsageAggregator, "flush" | "close"> | null;
}

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
  // The raw store: a failed write is the aggregator's to log and retry, never a 503 or a storage fault of a request.
  const rawStore = options.storage;
  const analytics = config.analytics.enabled
    ? createUsageAggregator({ write: (batch) => rawStore.addKeyUsage(batch), logger, flushMs: config.analytics.flushSeconds * 1000, maxSeries: config.analytics.maxSeries, metrics: registry })
    : null;
  analytics?.start();
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
    analytics,
    auditActor: options.auditActor ?? null,
  };

  const consoleUi = options.consoleUi === false ? undefined : options.consoleUi;
  const adminSeparate = options.adminSeparate === true;
  let draining = false;
  const readinessTimeoutMs = options.readinessTimeoutMs ?? READINESS_TIMEOUT_MS;

  // The route tables: one per base path, and each listener's OpenAPI document lists what that listener serves.
  const data = dataRoutes(dataPipeline(app, options.storage));
  const consoleRoutes = CONSOLE_ROUTES.map((r) => consoleRoute(app, r));
  // One throttle of failed operator authentications, shared by the admin API and /metrics.
  const authThrottle = adminAuthThrottle(clock, logger);
  const admin = adminRoutes(app, authThrottle);
  const serviceRoutes: Route[] = [
    healthzRoute(),
    readyzRoute({ storage: options.storage, faults, metrics, timeoutMs: readinessTimeoutMs, draining: () => draining }),
    openapiRoute(() => mainRoutes),
  ];
  const allRoutes = [...data, ...consoleRoutes, ...admin, ...serviceRoutes];
  // The main listener documents the admin API only when it serves it (a token, and no listener of its own).
  const adminServed = app.adminToken !== null;
  const mainRoutes = [...data, ...consoleRoutes, ...(adminServed && !adminSeparate ? admin : []), ...serviceRoutes];
  const adminOpenapi = openapiRoute(() => adminListenerRoutes);
  const adminListenerRoutes = [...(adminServed ? admin : []), adminOpenapi];
  // Storage's gauges at each scrape, bounded in time so a dead database cannot hang the scrape.
  const rawStorage = options.storage;
  if (rawStorage.gauges) registry.collect(() => readGauges(rawStorage, metrics, readinessTimeoutMs));
  const scrape = metricsRoute(config.metrics.token, registry, (request, client) =>
    refuseWrongToken(authThrottle, clientAddressOf(request, client, config.trustProxy), "metrics", METRICS_TOKEN),
  );
  let openapi: OpenApiDocument | undefined;
  const documented = (): OpenApiDocument => (openapi ??= buildOpenApi(allRoutes, ErrorBodySchema));
  const noClient: ClientInfo = {};

  // One itty-router per base path: a request is matched only against its own base's routes.
  // Each route counted and timed by its template; a request no route takes is counted as `(unmatched)`.
  const unmatched = metrics.route("*", "(unmatched)");
  const miss = noRoute({ dataPrefix: DATA_PREFIX, adminPrefix: ADMIN_PREFIX, adminOn: app.adminToken !== null, adminSeparate });
  const counted: Miss = (request, path, allow) => {
    const response = miss(request, path, allow);
    unmatched.count(response.status);
    return response;
  };
  // The data pipeline counts and times its own requests (without an extra promise on the hot path).
  // With the access log on, each route notes its template for the request's line (off: routes run as they are).
  const log = config.log.access ? accessLog(logger) : null;
  const noted = (routes: readonly Route[]): readonly Route[] => (log === null ? routes : log.noting(routes));
  const dataRouter = baseRouter(DATA_BASE, noted(data), counted);
  const consoleRouter = baseRouter(CONSOLE_BASE, noted(timed(metrics, consoleRoutes)), counted);
  const serviceRouter = baseRouter("", noted(timed(metrics, [...serviceRoutes, scrape])), counted);
  // Without an admin token the admin paths fall through to the service router's 404.
  const adminRouter = app.adminToken === null ? serviceRouter : baseRouter(ADMIN_BASE, noted(timed(metrics, admin)), counted);
  const adminServiceRouter = baseRouter("", noted(timed(metrics, [adminOpenapi])), counted);
  // With a separate admin listener the main one answers 404 on admin paths.
  const mainAdminRouter = adminSeparate ? serviceRouter : adminRouter;

  // Not async: the router's promise is returned as is (every route catches its own errors), saving a frame
  // per request on the hot path.
  const route: Handler = (request, ctx) => {
    try {
      const { path, search } = splitUrl(request.url);
      const client = ctx ?? noClient;
      if (path.startsWith(DATA_PREFIX)) return dataRouter.fetch(request, path, search, client);
      if (path.startsWith(CONSOLE_PREFIX)) return consoleRouter.fetch(request, path, search, client);
      if (path.startsWith(ADMIN_PREFIX)) return mainAdminRouter.fetch(request, path, search, client);
      if (consoleUi !== undefined && isConsolePath(path)) {
        if (log !== null) log.note(request, "(console-ui)");
        return Promise.resolve(consoleUiResponse(consoleUi, request, path));
      }
      return serviceRouter.fetch(request, path, search, client);
    } catch (error) {
      return Promise.resolve(errorResponse(asServiceError(error, logger, "fetch", request)));
    }
  };

  // The admin listener: admin paths and its own OpenAPI document; anything else is 404 (counted as unmatched).
  const routeAdmin: Handler = (request, ctx) => {
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

  const observe = log === null ? null : log.write;
  return {
    fetch: withRequestIds(route, clock, app.idRandom, observe),
    adminFetch: withRequestIds(routeAdmin, clock, app.idRandom, observe),
    get openapi(): OpenApiDocument {
      return documented();
    },
    routes: allRoutes.map((r) => ({ method: r.method, path: r.path, operationId: r.doc.operationId })),
    metrics: registry,
    analytics,
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
