/**
 * `GET /metrics`: the Prometheus scrape, off without `metrics.token`, and for that bearer token only. Outside the
 * OpenAPI document on purpose: an operator's endpoint with its own token and a text format.
 */
import { ServiceError } from "../../errors/service-error.ts";
import { timingSafeEqual } from "../../keys/constant-time.ts";
import type { MetricsRegistry } from "../../metrics/metrics-registry.ts";
import { PROMETHEUS_CONTENT_TYPE } from "../../metrics/metrics-registry.ts";
import type { ServiceMetrics } from "../../metrics/service-metrics.ts";
import type { AppOptions, ClientInfo } from "../app-options.ts";
import { errorResponse } from "../reply.ts";
import { bearerToken } from "../request-url.ts";
import type { Route } from "../route.ts";

const METRICS_OFF = new ServiceError(404, "not_found", "Metrics are off: set metrics.token in the config to serve them (with that bearer token).");

/** 401 `metrics.invalid_token`: the error a wrong or missing metrics token is refused with (before the throttle). */
export const METRICS_TOKEN = new ServiceError(401, "metrics.invalid_token", "Missing or wrong metrics token: send `Authorization: Bearer <metrics.token>`.", { "www-authenticate": 'Bearer realm="metrics"' });

/**
 * The scrape route: the registry rendered for `token`; a wrong token is refused by `refuse(request, client)`,
 * which counts it in the operator-authentication throttle shared with the admin API.
 */
export function metricsRoute(token: string | null, registry: MetricsRegistry, refuse: (request: Request, client: ClientInfo) => ServiceError): Route {
  return {
    method: "GET",
    path: "/metrics",
    run: (request, _params, _search, client) => scrape(request, token, registry, () => refuse(request, client)),
    doc: { operationId: "metrics", summary: "Prometheus metrics", tag: "Service", security: "none", success: { status: 200, description: "Metrics." }, errors: [401, 404, 429] },
  };
}

async function scrape(request: Request, token: string | null, registry: MetricsRegistry, refuse: () => ServiceError): Promise<Response> {
  if (token === null) return errorResponse(METRICS_OFF);
  const presented = bearerToken(request.headers.get("authorization"));
  if (presented === null || !timingSafeEqual(presented, token)) return errorResponse(refuse(), { "cache-control": "no-store" });
  return new Response(await registry.render(), { status: 200, headers: { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" } });
}

/** Reads storage's gauges into the metrics at each scrape; `storage_up` says whether that worked within `timeoutMs`. */
export async function readGauges(storage: AppOptions["storage"], metrics: ServiceMetrics, timeoutMs: number): Promise<void> {
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
