/** `BenchdataError`: every failed call, with the service's status, code and detail, the request id and the rate-limit headers. */
import type { ErrorCode } from "./generated/error-codes.ts";
import type { RateLimit } from "./types.ts";

/** Codes of failures that happen before the service answers (or when its answer is not an error body). */
export type ClientErrorCode = "client.timeout" | "client.aborted" | "client.network_error" | "client.invalid_response";

/** The service's error body, `{detail, code, status}`. */
export interface ErrorBody {
  readonly detail: string;
  readonly code: ErrorCode;
  readonly status: number;
}

/** A failed call: the service's `{detail, code, status}` (or a `client.*` code with status 0), plus its request id and rate-limit info. */
export class BenchdataError extends Error {
  /** The HTTP status (0 when no response arrived). */
  readonly status: number;
  /** The contract's code (`switch (err.code)`), or a `client.*` code. */
  readonly code: ErrorCode | ClientErrorCode;
  /** Human-readable explanation from the service. */
  readonly detail: string;
  /** The answer's `X-Request-Id`, to quote to the operator (it names the request in their logs); null when no response arrived. */
  readonly requestId: string | null;
  /** `X-RateLimit-*` of the response, or null. */
  readonly rateLimit: RateLimit | null;
  /** `Retry-After` in seconds (429), or null. */
  readonly retryAfter: number | null;
  /** The response headers (empty when no response arrived). */
  readonly headers: Headers;

  constructor(init: { status: number; code: ErrorCode | ClientErrorCode; detail: string; requestId?: string | null; rateLimit?: RateLimit | null; retryAfter?: number | null; headers?: Headers; cause?: unknown }) {
    // The id is in the message too, so that a logged error carries what the operator needs to find the request.
    const id = init.requestId ?? null;
    super(`${init.status === 0 ? "" : init.status + " "}${init.code}: ${init.detail}${id === null ? "" : ` (request ${id})`}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "BenchdataError";
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.requestId = id;
    this.rateLimit = init.rateLimit ?? null;
    this.retryAfter = init.retryAfter ?? null;
    this.headers = init.headers ?? new Headers();
  }
}

/** Whether `e` is a BenchdataError (also across copies of this module). */
export function isBenchdataError(e: unknown): e is BenchdataError {
  return e instanceof BenchdataError || (typeof e === "object" && e !== null && (e as { name?: unknown }).name === "BenchdataError" && typeof (e as { code?: unknown }).code === "string");
}
