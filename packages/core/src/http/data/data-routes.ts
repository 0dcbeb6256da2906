/** The data endpoints as routes under `/data/v1`, each run by the data pipeline. */
import type { Route, RouteRun } from "../route.ts";
import type { AnyDataEndpoint } from "./data-endpoint.ts";
import { DATA_ENDPOINTS } from "./endpoints.ts";

/** The base path of the data endpoints. */
export const DATA_BASE = "/data/v1";

/** Every data endpoint as a route, run by `run(endpoint)` (the pipeline: key, limits, quota, handler). */
export function dataRoutes(run: (endpoint: AnyDataEndpoint) => RouteRun): Route[] {
  return DATA_ENDPOINTS.map((e) => {
    const space = e.endpoint.indexOf(" ");
    return {
      method: e.endpoint.slice(0, space),
      path: DATA_BASE + e.endpoint.slice(space + 1),
      run: run(e),
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
}
