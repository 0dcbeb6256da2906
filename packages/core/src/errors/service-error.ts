/** The one error type of benchdata: an HTTP status, a stable code and a human-readable detail. */
import type { ErrorCode } from "./error-codes.ts";

/** The JSON body every error response carries. */
export interface ErrorBody {
  readonly detail: string;
  readonly code: string;
  readonly status: number;
}

/** An error that knows its HTTP status and contract code; one place turns it into the `{detail, code, status}` body. */
export class ServiceError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly detail: string;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(status: number, code: ErrorCode, detail: string, headers?: Record<string, string>) {
    super(detail);
    this.name = "ServiceError";
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.headers = headers;
  }

  /** The contract's error body. */
  toBody(): ErrorBody {
    return { detail: this.detail, code: this.code, status: this.status };
  }
}

/** Whether `e` is a ServiceError (works across copies of the module). */
export function isServiceError(e: unknown): e is ServiceError {
  return e instanceof ServiceError || (typeof e === "object" && e !== null && (e as { name?: unknown }).name === "ServiceError" && typeof (e as { status?: unknown }).status === "number" && typeof (e as { code?: unknown }).code === "string");
}
