/** A route: method, path, how to run it, and what the OpenAPI document says about it. */
import type * as v from "valibot";
import type { ClientInfo } from "./app-options.ts";
import type { QuerySchema } from "./query.ts";

/** How a route authenticates its caller. */
export type Security = "apiKey" | "session" | "admin" | "none";

/** What the OpenAPI document says about a route; the schemas are the ones that validate it. */
export interface RouteDoc {
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: "Data" | "Console" | "Admin" | "Service";
  readonly security: Security;
  readonly query?: QuerySchema;
  /** Path parameters and their descriptions. */
  readonly pathParams?: Readonly<Record<string, string>>;
  readonly body?: v.GenericSchema;
  /** The body may be left out (documented as not required). */
  readonly bodyOptional?: boolean;
  /** `mediaType` defaults to `application/json`; a body of another type without a schema is documented as text. */
  readonly success: { readonly status: number; readonly description: string; readonly schema?: v.GenericSchema; readonly mediaType?: string };
  /** Error statuses the route may answer (each with the `{detail, code, status}` body). */
  readonly errors: readonly number[];
  /** Whether responses carry `X-RateLimit-*` (data endpoints). */
  readonly rateLimited?: boolean;
}

/** Runs a matched request: path params, raw query string (no `?`) and connection info are given. */
export type RouteRun = (request: Request, params: Readonly<Record<string, string>>, search: string, client: ClientInfo) => Promise<Response>;

/** A route of the app: the one table that both routes requests and generates the OpenAPI document. */
export interface Route {
  readonly method: string;
  /** OpenAPI-style path, e.g. `/api/v1/console/keys/{key_id}`. */
  readonly path: string;
  readonly doc: RouteDoc;
  readonly run: RouteRun;
}
