/**
 * The access log (`log.access`): one line per request with its id, method, route template, status and duration.
 * No query string, no Authorization, no raw key or token; at most a key's logged prefix.
 */
import type { Logger } from "../log/logger.ts";
import { bearerToken } from "./request-url.ts";
import type { Route, RouteRun } from "./route.ts";

/** An API key's length (`svc_live_` or `svc_test_` and 48 characters), and its logged prefix's (the contract's `prefix`). */
const API_KEY_LENGTH = 57;
const KEY_PREFIX_LENGTH = 12;

/** The access log of one app: routes note their template on the request, the line is written once it is answered. */
export interface AccessLog {
  /** The routes, each noting its template for the request's line. */
  noting(routes: readonly Route[]): readonly Route[];
  /** Notes the template of a request answered outside the routers (the console's pages). */
  note(request: Request, template: string): void;
  /** Writes the request's line; `start` is `performance.now()` when it came in. */
  write(request: Request, response: Response, id: string, start: number): void;
}

/** The access log writing to `logger`. */
export function accessLog(logger: Logger): AccessLog {
  const templates = new WeakMap<Request, string>();
  return {
    noting: (routes) =>
      routes.map((route) => {
        const run = route.run;
        const template = route.path;
        const noting: RouteRun = (request, params, search, client) => {
          templates.set(request, template);
          return run(request, params, search, client);
        };
        return { ...route, run: noting };
      }),
    note: (request, template) => {
      templates.set(request, template);
    },
    write: (request, response, id, start) => {
      const raw = bearerToken(request.headers.get("authorization"));
      logger.info("request", {
        request_id: id,
        method: request.method,
        route: templates.get(request) ?? "(unmatched)",
        status: response.status,
        duration_ms: Math.round((performance.now() - start) * 10) / 10,
        key_prefix: raw !== null && raw.length === API_KEY_LENGTH && /^svc_(live|test)_/.test(raw) ? raw.slice(0, KEY_PREFIX_LENGTH) : undefined,
      });
    },
  };
}
