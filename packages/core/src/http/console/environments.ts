/** GET /environments: where each environment's keys are accepted, so that the console's quick start prints a command that works. */
import * as v from "valibot";
import type { ServiceConfig } from "../../config/config.ts";
import { ok } from "../reply.ts";
import { defineConsoleRoute } from "./define-console-route.ts";

/** How to reach the data API with one environment's keys: the origin to call, and the `Host` header to send when the origin alone does not select the environment. */
export interface EnvironmentAccess {
  readonly base_url: string;
  readonly host_header: string | null;
}

/** Each environment's access (null: the deployment refuses that environment's keys). */
export interface EnvironmentsView {
  readonly target: ServiceConfig["target"];
  readonly live: EnvironmentAccess | null;
  readonly test: EnvironmentAccess | null;
}

const SANDBOX_LABELS = new Set(["sandbox", "test"]);

function lastEntry(value: string | null): string | null {
  if (value === null) return null;
  const last = value.slice(value.lastIndexOf(",") + 1).trim();
  return last === "" ? null : last;
}

/**
 * The origin the caller reached this server at: the request's `Host` (as the target is decided from it) and
 * scheme, or, with `trustProxy`, the last `X-Forwarded-Host` and `X-Forwarded-Proto` entries (those the
 * operator's proxy set, as for `X-Forwarded-For`).
 */
export function requestOrigin(request: Request, trustProxy: boolean): URL {
  const url = new URL(request.url);
  const host = (trustProxy ? lastEntry(request.headers.get("x-forwarded-host")) : null) ?? request.headers.get("host");
  const proto = trustProxy ? lastEntry(request.headers.get("x-forwarded-proto"))?.toLowerCase() : undefined;
  const scheme = proto === "http" || proto === "https" ? `${proto}:` : url.protocol;
  try {
    return new URL(`${scheme}//${host ?? url.host}`);
  } catch {
    return new URL(url.origin);
  }
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** The origin with another host name (port and scheme kept). */
function withHostname(origin: URL, hostname: string): string {
  const u = new URL(origin.href);
  u.hostname = hostname;
  return u.origin;
}

/**
 * Where the keys of each environment are accepted, seen from `origin` (the address the console was reached at),
 * under the deployment's target:
 * - `live` or `test`: that environment at `origin`; the other's keys are refused everywhere (null).
 * - `host`: the environment `origin` selects is `origin` itself; the other is the same server under another
 *   name. From a live host `h`, the sandbox is `sandbox.h` (for `localhost` and loopback addresses,
 *   `sandbox.localhost`, which curl and browsers resolve to loopback without DNS); from a sandbox host, live is
 *   the name without its first label. Where no name can be made (an address that is not loopback), the origin
 *   is kept and the `Host` header selects the environment, since the target is read from it.
 */
export function environmentAccess(target: ServiceConfig["target"], origin: URL): EnvironmentsView {
  const here: EnvironmentAccess = { base_url: origin.origin, host_header: null };
  if (target === "live") return { target, live: here, test: null };
  if (target === "test") return { target, live: null, test: here };
  const name = origin.hostname.toLowerCase();
  const isAddress = IPV4.test(name) || name.startsWith("[");
  const port = origin.port === "" ? "" : `:${origin.port}`;
  const dot = name.indexOf(".");
  if (!isAddress && SANDBOX_LABELS.has(dot < 0 ? name : name.slice(0, dot))) {
    const rest = dot < 0 ? "" : name.slice(dot + 1);
    return { target, test: here, live: rest === "" ? { base_url: origin.origin, host_header: `localhost${port}` } : { base_url: withHostname(origin, rest), host_header: null } };
  }
  const loopback = name === "[::1]" || /^127\./.test(name);
  let test: EnvironmentAccess;
  if (!isAddress) test = { base_url: withHostname(origin, `sandbox.${name}`), host_header: null };
  else if (loopback) test = { base_url: withHostname(origin, "sandbox.localhost"), host_header: null };
  else test = { base_url: origin.origin, host_header: `sandbox.localhost${port}` };
  return { target, live: here, test };
}

const Access = v.nullable(
  v.object({
    base_url: v.pipe(v.string(), v.description("The origin to send data requests to (paths start with `/data/v1`).")),
    host_header: v.pipe(v.nullable(v.string()), v.description("A `Host` header to send with them, when the origin alone does not select the environment (a server reached at an IP address in `host` mode); null otherwise.")),
  }),
);

/** GET /environments. */
export const getEnvironments = defineConsoleRoute({
  method: "GET",
  path: "/environments",
  operationId: "getConsoleEnvironments",
  summary: "Where each environment's keys work",
  description:
    "The deployment's `target` (`live`, `test`, or `host`: the request's host decides, a first label `sandbox` or `test` selecting test) and, for each environment, where its keys are accepted, seen from the address this request reached: the origin to call and, when needed, a `Host` header. An environment whose keys the deployment refuses everywhere is null. In `host` mode, reached at `h`, test keys work at `sandbox.h` (at `sandbox.localhost` for localhost and loopback addresses). With `trustProxy`, the proxy's `X-Forwarded-Host` and `X-Forwarded-Proto` are used.",
  success: {
    status: 200,
    description: "Each environment's access.",
    schema: v.object({ target: v.picklist(["live", "test", "host"]), live: Access, test: Access }),
  },
  errors: [],
  async handle({ app, request }) {
    return ok(environmentAccess(app.config.target, requestOrigin(request, app.config.trustProxy)));
  },
});
