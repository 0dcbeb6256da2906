/** The request path every method shares: URL, credentials, time-out, bounded retries, parsing and errors. */
import { BenchdataError } from "./errors.ts";
import type { ClientErrorCode } from "./errors.ts";
import type { ErrorCode } from "./generated/error-codes.ts";
import type { BenchdataResponse, CallOptions, ClientOptions, FetchLike, RateLimit, RetryOptions } from "./types.ts";

/** The default `User-Agent` (sent outside browsers only: browsers set their own). */
export const USER_AGENT = "benchdata-client/0.1.0";

/** What `send` needs to know about an operation (a row of the generated operation table). */
export interface OperationInfo {
  readonly method: string;
  readonly path: string;
  readonly security: "apiKey" | "session" | "admin" | "none";
  readonly status: number;
  readonly mediaType: string | null;
}

/** A request's variable parts: path parameters in template order, query parameters, JSON body. */
export interface RequestParts {
  readonly path?: readonly string[];
  readonly query?: object | undefined;
  readonly body?: unknown;
}

/** A configured connection to one benchdata service; the first argument of every operation function. */
export class Client {
  /** The options it was created with. */
  readonly options: ClientOptions;

  constructor(options: ClientOptions) {
    if (typeof options?.baseUrl !== "string" || options.baseUrl === "") throw new TypeError("benchdata client: `baseUrl` is required");
    this.options = options;
  }
}

/** Creates a client (the same as `new Client(options)`). */
export function createClient(options: ClientOptions): Client {
  return new Client(options);
}

const IDEMPOTENT = new Set(["GET", "HEAD", "DELETE", "PUT"]);
const inBrowser = (): boolean => typeof (globalThis as { document?: unknown }).document !== "undefined";

function buildUrl(baseUrl: string, op: OperationInfo, parts: RequestParts): string {
  let i = 0;
  const path = op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(parts.path?.[i++] ?? ""));
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parts.query ?? {})) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const item of value) search.append(name, String(item));
    else search.append(name, String(value));
  }
  const qs = search.toString();
  return baseUrl.replace(/\/+$/, "") + path + (qs === "" ? "" : "?" + qs);
}

function credential(options: ClientOptions, op: OperationInfo): string | undefined {
  switch (op.security) {
    case "apiKey":
      return options.apiKey;
    case "session":
      return options.sessionToken;
    case "admin":
      return options.adminToken;
    default:
      // Sign-out ends the session it presents, so console paths without a required credential still send it.
      return op.path.startsWith("/api/v1/console/") ? options.sessionToken : undefined;
  }
}

function intHeader(headers: Headers, name: string): number | null {
  const raw = headers.get(name);
  if (raw === null || !/^\s*\d+\s*$/.test(raw)) return null;
  return Number(raw);
}

/** The `X-RateLimit-*` headers of a response, or null when any is missing. */
export function readRateLimit(headers: Headers): RateLimit | null {
  const limit = intHeader(headers, "x-ratelimit-limit");
  const remaining = intHeader(headers, "x-ratelimit-remaining");
  const reset = intHeader(headers, "x-ratelimit-reset");
  return limit === null || remaining === null || reset === null ? null : { limit, remaining, reset };
}

/** The `X-Request-Id` of a response, or null. */
export function readRequestId(headers: Headers): string | null {
  const id = headers.get("x-request-id");
  return id === null || id === "" ? null : id;
}

function errorOf(res: Response, text: string): BenchdataError {
  const headers = res.headers;
  const common = { status: res.status, headers, requestId: readRequestId(headers), rateLimit: readRateLimit(headers), retryAfter: intHeader(headers, "retry-after") };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const b = body as { code?: unknown; detail?: unknown } | undefined;
  if (typeof b === "object" && b !== null && typeof b.code === "string" && typeof b.detail === "string") {
    // A code this client does not know yet (a newer server) passes through as is.
    return new BenchdataError({ ...common, code: b.code as ErrorCode, detail: b.detail });
  }
  return new BenchdataError({ ...common, code: "client.invalid_response", detail: `HTTP ${res.status} without an error body` });
}

function dataOf(res: Response, text: string, op: OperationInfo): unknown {
  if (res.status === 204 || text === "") return undefined;
  const type = res.headers.get("content-type") ?? op.mediaType ?? "";
  if (!type.includes("json")) return text;
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new BenchdataError({ status: res.status, code: "client.invalid_response", detail: "The response is not valid JSON.", headers: res.headers, requestId: readRequestId(res.headers), rateLimit: readRateLimit(res.headers), cause });
  }
}

function retryPolicy(retry: ClientOptions["retry"]): Required<RetryOptions> | null {
  if (retry === undefined || retry === false) return null;
  const o = retry === true ? {} : retry;
  return { maxRetries: o.maxRetries ?? 2, maxDelayMs: o.maxDelayMs ?? 60_000, baseDelayMs: o.baseDelayMs ?? 500 };
}

/** How long to wait before retrying `err`, or null when it must not be retried (402 never is). */
function retryDelay(err: BenchdataError, method: string, attempt: number, policy: Required<RetryOptions>): number | null {
  if (attempt >= policy.maxRetries) return null;
  let ms: number;
  if (err.status === 429) ms = err.retryAfter !== null ? err.retryAfter * 1000 : policy.baseDelayMs * 2 ** attempt;
  // A 503 may come after a write was done: only methods that are safe to repeat are retried.
  else if (err.status === 503 && IDEMPOTENT.has(method)) ms = err.retryAfter !== null ? err.retryAfter * 1000 : policy.baseDelayMs * 2 ** attempt;
  else return null;
  return ms > policy.maxDelayMs ? null : ms;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function clientError(code: ClientErrorCode, detail: string, cause?: unknown): BenchdataError {
  return new BenchdataError({ status: 0, code, detail, cause });
}

/**
 * One attempt: fetch and read the whole body under the time-out and the caller's signal (a stalled body times out
 * too), mapping transport failures to `client.*` errors.
 */
async function attempt(fetchFn: FetchLike, request: (signal: AbortSignal) => Request, timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<{ res: Response; text: string }> {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = (): void => controller.abort(signal!.reason);
  if (signal?.aborted) throw clientError("client.aborted", "The call was aborted.", signal.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, timeoutMs);
  try {
    const res = await fetchFn(request(controller.signal));
    return { res, text: await res.text() };
  } catch (cause) {
    if (timedOut) throw clientError("client.timeout", `No response within ${timeoutMs} ms.`, cause);
    if (signal?.aborted) throw clientError("client.aborted", "The call was aborted.", cause);
    throw clientError("client.network_error", cause instanceof Error ? cause.message : "The request failed.", cause);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** Sends one operation and resolves to its parsed success response; throws `BenchdataError` otherwise. */
export async function send<T>(client: Client, op: OperationInfo, parts: RequestParts = {}, call: CallOptions = {}): Promise<BenchdataResponse<T>> {
  const options = client.options;
  const url = buildUrl(options.baseUrl, op, parts);
  const headers: Record<string, string> = { accept: op.mediaType ?? "application/json" };
  const token = credential(options, op);
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const ua = options.userAgent === undefined ? USER_AGENT : options.userAgent;
  if (ua !== false && !inBrowser()) headers["user-agent"] = ua;
  // The console's CSRF guard wants this header on state-changing calls; it is harmless on the others.
  if (op.path.startsWith("/api/v1/console/")) headers["x-benchdata-console"] = "1";
  const hasBody = parts.body !== undefined;
  if (hasBody) headers["content-type"] = "application/json";
  for (const [name, value] of Object.entries(call.headers ?? {})) headers[name.toLowerCase()] = value;
  const body = hasBody ? JSON.stringify(parts.body) : undefined;
  const fetchFn: FetchLike = options.fetch ?? ((r) => globalThis.fetch(r));
  const policy = retryPolicy(options.retry);
  const timeoutMs = call.timeoutMs ?? options.timeoutMs;
  for (let n = 0; ; n++) {
    const { res, text } = await attempt(fetchFn, (signal) => new Request(url, { method: op.method, headers, signal, ...(body !== undefined ? { body } : {}) }), timeoutMs, call.signal);
    if (res.ok) {
      const data = dataOf(res, text, op) as T;
      return { data, status: res.status, headers: res.headers, rateLimit: readRateLimit(res.headers), requestId: readRequestId(res.headers) };
    }
    const err = errorOf(res, text);
    const wait = policy === null ? null : retryDelay(err, op.method, n, policy);
    if (wait === null) throw err;
    try {
      await sleep(wait, call.signal);
    } catch (cause) {
      throw clientError("client.aborted", "The call was aborted while waiting to retry.", cause);
    }
  }
}
