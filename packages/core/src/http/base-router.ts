/**
 * Routing on itty-router: the route table (the same `Route`s that generate the OpenAPI document) becomes one
 * `IttyRouter` per base path, static paths before `{param}` ones so `/webhooks/test` wins over
 * `/webhooks/{webhook_id}`. Each router ends in a catch-all that hands the miss, with the methods the path
 * does have (405's `Allow`), to the app.
 *
 * Kept lean for the hot path: a path with no `{param}` is looked up by method and exact path before itty
 * (most requests are to such routes; itty would parse a URL, scan patterns and add an `await` for the same
 * answer). Everything else goes to itty, given a request-like object whose URL is only the path the app has
 * already split off (so itty parses no query string and never touches the caller's Request), and it scans
 * only its own base's routes.
 */
import type { IRequest } from "itty-router";
import { IttyRouter } from "itty-router";
import type { ClientInfo } from "./app-options.ts";
import type { Route, RouteRun } from "./route.ts";

/** What a handler receives from itty-router: a request-like object carrying the request the app was given. */
export type Routed = IRequest & {
  /** The URL's path, one trailing slash dropped. */
  readonly path: string;
  /** The raw query string, without `?`. */
  readonly search: string;
  readonly request: Request;
  readonly client: ClientInfo;
};

/** Answers a request no route takes; `allow` lists the methods the path has (empty: the path is unknown). */
export type Miss = (request: Request, path: string, allow: readonly string[]) => Response;

/** The routes under one base path, routed by itty-router. */
export interface BaseRouter {
  /** Routes a request: `path` is its URL's path with one trailing slash dropped, `search` its query string. */
  fetch(request: Request, path: string, search: string, client: ClientInfo): Promise<Response>;
  /** The methods of the routes whose path matches `path`, in registration order (empty when none). */
  allow(path: string): string[];
}

// itty matches `new URL(url).pathname`; any fixed origin does, the path is what varies.
const ORIGIN = "http://route";
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
// Paths whose itty pattern matches exactly themselves (plus trailing slashes, refused before routing): no
// `{param}`, `:`, `*` or other pattern syntax, no empty segment. Only these are looked up exactly.
const EXACT_PATH = /^(?:\/[A-Za-z0-9._~-]+)+$/;

/** `{name}` (OpenAPI) to `:name` (itty). */
function ittyPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ":$1");
}

/** Path parameters percent-decoded, or null when one is malformed (then the path names no resource). */
function decodeParams(raw: Record<string, string>): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const name in raw) {
    const part = raw[name] as string;
    if (!part.includes("%")) {
      out[name] = part;
      continue;
    }
    try {
      out[name] = decodeURIComponent(part);
    } catch {
      return null;
    }
  }
  return out;
}

/** Builds the itty-router of the routes under `base` (every route's path must start with it; "" for the root). */
export function baseRouter(base: string, routes: readonly Route[], miss: Miss): BaseRouter {
  const router = IttyRouter<Routed>({ base });
  // Static paths first: itty takes the first match in registration order.
  const ordered = [...routes.filter((r) => !r.path.includes("{")), ...routes.filter((r) => r.path.includes("{"))];
  const seen = new Set<string>();
  // Exact path → method → run, for the routes itty would find by that path alone: those registered before
  // any pattern, which could otherwise match the same path first.
  const exact = new Map<string, Map<string, RouteRun>>();
  let beforeAnyPattern = true;
  for (const route of ordered) {
    if (!route.path.startsWith(base)) throw new Error(`route ${route.method} ${route.path} is not under ${base}`);
    const id = `${route.method} ${route.path}`;
    if (seen.has(id)) throw new Error(`duplicate route ${id}`);
    seen.add(id);
    const run = route.run;
    const handler = route.path.includes("{")
      ? (req: Routed): Promise<Response> => {
          const params = decodeParams(req.params);
          return params === null ? Promise.resolve(miss(req.request, req.path, [])) : run(req.request, params, req.search, req.client);
        }
      : (req: Routed): Promise<Response> => run(req.request, NO_PARAMS, req.search, req.client);
    router[route.method.toLowerCase()]!(ittyPath(route.path.slice(base.length)), handler);
    beforeAnyPattern &&= EXACT_PATH.test(route.path);
    if (beforeAnyPattern) {
      let methods = exact.get(route.path);
      if (methods === undefined) exact.set(route.path, (methods = new Map()));
      // itty registers methods upper-cased and compares them with the request's as given.
      methods.set(route.method.toUpperCase(), run);
    }
  }
  const allow = (path: string): string[] => {
    const methods: string[] = [];
    for (const [method, pattern] of router.routes) {
      if (method !== "ALL" && !methods.includes(method) && pattern.test(path)) methods.push(method);
    }
    return methods;
  };
  router.all("*", (req: Routed): Response => miss(req.request, req.path, allow(req.path)));

  return {
    fetch(request, path, search, client) {
      // itty's patterns accept any number of trailing slashes; the app ignores exactly one (already dropped).
      if (path.length > 1 && path.charCodeAt(path.length - 1) === 47 /* / */) return Promise.resolve(miss(request, path, []));
      const run = exact.get(path)?.get(request.method);
      if (run !== undefined) {
        // As inside itty's async fetch: a route that throws instead of rejecting still yields a rejection.
        try {
          return run(request, NO_PARAMS, search, client);
        } catch (error) {
          return Promise.reject(error);
        }
      }
      const routed = { method: request.method, url: ORIGIN + path, path, search, request, client, params: NO_PARAMS, query: NO_PARAMS, route: "" };
      return router.fetch(routed) as Promise<Response>;
    },
    allow,
  };
}
