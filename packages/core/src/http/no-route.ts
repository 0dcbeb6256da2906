/**
 * What no route takes: the CORS preflight of data paths (204), 405 with `Allow` when the path has other methods,
 * else 404, whose detail says why an admin path is missing (the API is off, or on its own listener).
 */
import { ServiceError } from "../errors/service-error.ts";
import type { Miss } from "./base-router.ts";
import { errorResponse } from "./reply.ts";
import { preflightResponse } from "./preflight.ts";

/** Where the admin API is served, for the 404's detail on an admin path. */
export interface NoRouteOptions {
  /** Data paths' prefix: their misses get CORS headers and their OPTIONS the preflight. */
  readonly dataPrefix: string;
  readonly adminPrefix: string;
  /** Whether the admin API is on (an admin token is configured). */
  readonly adminOn: boolean;
  /** Whether the admin API is on a listener of its own. */
  readonly adminSeparate: boolean;
}

/** The app's answer to a request no route takes. */
export function noRoute({ dataPrefix, adminPrefix, adminOn, adminSeparate }: NoRouteOptions): Miss {
  return (request, path, allow) => {
    const method = request.method;
    const data = path.startsWith(dataPrefix);
    if (method === "OPTIONS" && data) return preflightResponse();
    const cors: Record<string, string> = data && request.headers.get("origin") !== null ? { "access-control-allow-origin": "*" } : {};
    if (allow.length > 0) {
      const list = allow.join(", ");
      return errorResponse(new ServiceError(405, "method_not_allowed", `${method} is not allowed on ${path}; allowed: ${list}.`), { ...cors, allow: list });
    }
    const what = !path.startsWith(adminPrefix)
      ? `No route ${method} ${path}.`
      : !adminOn
        ? "The admin API is not enabled."
        : adminSeparate
          ? "The admin API is served on its own listener (the operator's admin port), not here."
          : `No route ${method} ${path}.`;
    return errorResponse(new ServiceError(404, "not_found", what), cors);
  };
}
