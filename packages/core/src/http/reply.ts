/** Turning results and errors into Responses: the one place that writes the `{detail, code, status}` body. */
import { isServiceError, ServiceError } from "../errors/service-error.ts";
import type { Logger } from "../log/logger.ts";
import { redact } from "../log/logger.ts";
import { requestIdOf } from "./request-id.ts";

/** What a handler answers: a status and a body to serialize, or its JSON text already built (neither: no body). */
export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  /** The body as JSON text, for hot handlers that splice cached fragments; wins over `body`. */
  readonly json?: string;
  /** The Content-Type of `json`'s text when it is not JSON (e.g. `application/xml` for an XBRL document). */
  readonly contentType?: string;
  /** A JSON body written as it is read (a large export); wins over `json` and `body`. */
  readonly stream?: ReadableStream<Uint8Array>;
  /** Extra response headers (e.g. the console's Set-Cookie). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A 200 reply. */
export function ok(body: unknown): Reply {
  return { status: 200, body };
}

/** A 200 reply whose JSON text is already built. */
export function okJson(json: string): Reply {
  return { status: 200, json };
}

/** The Content-Type of every JSON body. */
export const JSON_TYPE = "application/json";

/**
 * `X-Content-Type-Options: nosniff`, on every response the app builds (errors, 404s and 204s included): a
 * browser must never guess another type (HTML, script) for a body than the one declared.
 */
export const NOSNIFF = "nosniff";

/** A Response for a Reply, serialized once with JSON.stringify. */
export function replyResponse(reply: Reply, headers?: Record<string, string>): Response {
  const h = headers ?? {};
  h["x-content-type-options"] = NOSNIFF;
  if (reply.stream !== undefined) {
    h["content-type"] = JSON_TYPE;
    return new Response(reply.stream, { status: reply.status, headers: h });
  }
  if (reply.json !== undefined) {
    h["content-type"] = reply.contentType ?? JSON_TYPE;
    return new Response(reply.json, { status: reply.status, headers: h });
  }
  if (reply.body === undefined) return new Response(null, { status: reply.status, headers: h });
  h["content-type"] = JSON_TYPE;
  return new Response(JSON.stringify(reply.body), { status: reply.status, headers: h });
}

/** The error body of a ServiceError as a Response, with its own headers and any given. */
export function errorResponse(error: ServiceError, headers?: Record<string, string>): Response {
  const h: Record<string, string> = headers ?? {};
  h["content-type"] = JSON_TYPE;
  h["x-content-type-options"] = NOSNIFF;
  if (error.headers) for (const name in error.headers) h[name.toLowerCase()] = error.headers[name] as string;
  return new Response(JSON.stringify(error.toBody()), { status: error.status, headers: h });
}

const INTERNAL = new ServiceError(500, "internal", "Internal error. It was logged; no details are exposed.");

/** Maps anything thrown to a ServiceError: itself, or a logged 500 `internal` that leaks nothing (the line carries the request's id). */
export function asServiceError(error: unknown, logger: Logger, where: string, request?: Request): ServiceError {
  if (isServiceError(error)) return error;
  logger.error("unhandled error", { where, request_id: requestIdOf(request), error: describeError(error) });
  return INTERNAL;
}

/** A one-line, secret-free description of an error, for logs. */
export function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return redact(text).slice(0, 500);
}
