/** The client's options and the types every method shares, derived from the generated OpenAPI types. */
import type { operations } from "./generated/openapi.ts";
import type { OperationId, OPERATIONS } from "./generated/operations.ts";

/** A fetch function (the runtime's, or one you inject: a test double, a proxy-aware one). */
export type FetchLike = (input: Request) => Promise<Response>;

/** Retries of refused requests: off unless you pass this. */
export interface RetryOptions {
  /** Retries after the first attempt (default 2). */
  readonly maxRetries?: number;
  /** The longest wait before one retry, in ms (default 60 000); a 429 whose `Retry-After` is longer is not retried. */
  readonly maxDelayMs?: number;
  /** First wait after a 503 without `Retry-After`, doubled each time (default 500 ms). */
  readonly baseDelayMs?: number;
}

/** Options of a client. */
export interface ClientOptions {
  /** Where the service is, e.g. `https://api.example.com` (no trailing path needed). */
  readonly baseUrl: string;
  /** An API key (`svc_live_…` / `svc_test_…`) for the data endpoints. */
  readonly apiKey?: string;
  /** A console session token (`bds_sess_…`) for the console endpoints. */
  readonly sessionToken?: string;
  /** The operator's admin token for the admin endpoints (account creation…). Never ship it to a browser. */
  readonly adminToken?: string;
  /** The fetch to use (default: the global `fetch`). */
  readonly fetch?: FetchLike;
  /** Abort a request (each attempt) after this many ms (default: no time-out). */
  readonly timeoutMs?: number;
  /** `User-Agent` sent outside browsers (default `benchdata-client/0.1.0`; `false` sends none). */
  readonly userAgent?: string | false;
  /** Retry `429` (after `Retry-After`) and `503` (idempotent methods only); never `402`. Off by default. */
  readonly retry?: RetryOptions | boolean;
}

/** Options of one call. */
export interface CallOptions {
  /** Aborts the call. */
  readonly signal?: AbortSignal;
  /** Overrides the client's time-out for this call. */
  readonly timeoutMs?: number;
  /** Extra request headers. */
  readonly headers?: Record<string, string>;
}

/** The `X-RateLimit-*` headers of a data response (null on responses that do not carry them). */
export interface RateLimit {
  /** Requests allowed in the reported window. */
  readonly limit: number;
  /** Requests left in that window. */
  readonly remaining: number;
  /** When that window frees a slot or starts again, Unix seconds. */
  readonly reset: number;
}

/** A successful response: the parsed body plus the request id, rate-limit headers, status and headers. */
export interface BenchdataResponse<T> {
  /** The body: parsed JSON, text for non-JSON media types (XBRL), undefined for 204. */
  readonly data: T;
  readonly status: number;
  readonly headers: Headers;
  /** `X-RateLimit-*` of the response, or null when absent (console and admin responses). */
  readonly rateLimit: RateLimit | null;
  /** The response's `X-Request-Id` (every answer of the service has one; null only if a proxy dropped it). */
  readonly requestId: string | null;
}

/** The operation table's row of `K`. */
export type OperationOf<K extends OperationId> = (typeof OPERATIONS)[K];

type Params<K extends OperationId> = operations[K]["parameters"];

/** The query parameters of operation `K`. */
export type QueryOf<K extends OperationId> = NonNullable<Params<K>["query"]>;

/** The JSON request body of operation `K`. */
export type BodyOf<K extends OperationId> = JsonBody<NonNullable<operations[K]["requestBody"]>>;

// An operation without a body has `requestBody?: never`; one whose body may be left out, `requestBody?: {…}`.
type JsonBody<R> = [R] extends [never] ? never : R extends { content: { "application/json": infer B } } ? B : never;

type SuccessResponse<K extends OperationId> = OperationOf<K>["status"] extends keyof operations[K]["responses"] ? operations[K]["responses"][OperationOf<K>["status"]] : never;

/** The body of operation `K`'s success response. */
export type DataOf<K extends OperationId> = SuccessResponse<K> extends { content: infer C } ? C[keyof C] : OperationOf<K>["status"] extends 204 ? undefined : unknown;

/** What a call of operation `K` resolves to. */
export type ResponseOf<K extends OperationId> = BenchdataResponse<DataOf<K>>;
