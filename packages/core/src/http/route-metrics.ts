/** Per-route request metrics: each run's status and duration recorded under its route's template. */
import type { ServiceMetrics } from "../metrics/service-metrics.ts";
import type { Route } from "./route.ts";

/** The routes, each recording its status and duration under its template (the metric children resolved here, once). */
export function timed(metrics: ServiceMetrics, routes: readonly Route[]): Route[] {
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
