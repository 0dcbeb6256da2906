/**
 * Every error code the service answers with (CONTRACT.md's table plus the project's own). `ServiceError` takes
 * only these, the OpenAPI document lists them as the error body's `code` enum, and `@benchdata/client` types
 * `err.code` from that enum: a new code is added here (then `npm run generate:client`).
 */
export const ERROR_CODES = [
  "request.invalid_json",
  "auth.missing_key",
  "auth.malformed_key",
  "auth.unknown_key",
  "auth.inactive_key",
  "console.invalid_session",
  "console.invalid_sign_in",
  "admin.invalid_token",
  "auth.too_many_failures",
  "metrics.invalid_token",
  "quota.exhausted",
  "quota.held",
  "auth.insufficient_scope",
  "auth.ip_not_allowed",
  "auth.environment_mismatch",
  "auth.live_key_in_browser",
  "account.suspended",
  "console.scope_not_permitted",
  "console.csrf_refused",
  "not_found",
  "data.not_found",
  "data.insufficient_sample",
  "method_not_allowed",
  "console.limit_reached",
  "console.key_revoked",
  "console.webhook_disabled",
  "billing.nothing_to_charge",
  "request.too_large",
  "request.unsupported_media_type",
  "validation.missing_parameter",
  "validation.invalid_parameter",
  "validation.out_of_range",
  "validation.invalid_category",
  "validation.invalid_metric",
  "validation.metric_not_offered",
  "validation.invalid_body",
  "validation.invalid_url",
  "rate_limit.exceeded",
  "internal",
  "not_implemented",
  "service.unavailable",
  // Answered by the Node adapter before a request reaches the app (docs/api.md, "Errors").
  "request.invalid",
  "request.headers_too_large",
  "request.timeout",
] as const;

/** An error code of the contract. */
export type ErrorCode = (typeof ERROR_CODES)[number];
