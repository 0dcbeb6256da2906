/**
 * @benchdata/client: a typed client for every benchdata endpoint (data, console, admin) and webhook verification,
 * on Web APIs only (fetch, WebCrypto), so it runs unchanged on Node ≥ 20, Bun, Deno and in browsers.
 */
export { Client, createClient, readRateLimit, readRequestId, USER_AGENT } from "./client-core.ts";
export type { OperationInfo, RequestParts } from "./client-core.ts";
export { BenchdataError, isBenchdataError } from "./errors.ts";
export type { ClientErrorCode, ErrorBody } from "./errors.ts";
export type { BenchdataResponse, BodyOf, CallOptions, ClientOptions, DataOf, FetchLike, QueryOf, RateLimit, ResponseOf, RetryOptions } from "./types.ts";
export { verifyWebhook } from "./verify-webhook.ts";
export type { HeadersLike, VerifyWebhookOptions, WebhookFailure, WebhookVerification } from "./verify-webhook.ts";
export { Benchdata } from "./generated/benchdata.ts";
export * from "./generated/functions.ts";
export { OPERATIONS } from "./generated/operations.ts";
export type { OperationId } from "./generated/operations.ts";
export { ERROR_CODES } from "./generated/error-codes.ts";
export type { ErrorCode } from "./generated/error-codes.ts";
export { EVENT_TYPES } from "./generated/events.ts";
export type { EventData, EventType, WebhookEvent } from "./generated/events.ts";
export type { components, operations, paths } from "./generated/openapi.ts";
