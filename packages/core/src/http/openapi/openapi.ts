/**
 * The OpenAPI 3.1 document, generated from the routes and the very valibot schemas that validate requests
 * (via @valibot/to-json-schema, targeting JSON Schema 2020-12, OpenAPI 3.1's dialect), so docs cannot drift.
 */
import type * as v from "valibot";
import { toJsonSchema } from "@valibot/to-json-schema";
import type { JsonSchema } from "@valibot/to-json-schema";
import type { Route, RouteDoc } from "../route.ts";

/** An OpenAPI document (a JSON object). */
export type OpenApiDocument = Record<string, unknown>;

const ERROR_CODES: Readonly<Record<number, string>> = {
  400: "Bad request: `request.invalid_json`.",
  401: "Not authenticated: `auth.missing_key`, `auth.malformed_key`, `auth.unknown_key`, `auth.inactive_key` (data); `console.invalid_session` (console); `admin.invalid_token` (admin).",
  402: "Quota exhausted: `quota.exhausted` (a charge for the next block is pending, failed or held for review).",
  403: "Forbidden: `auth.insufficient_scope`, `auth.ip_not_allowed`, `auth.environment_mismatch`, `auth.live_key_in_browser` (data); `console.scope_not_permitted`, `console.csrf_refused`, `auth.ip_not_allowed` (console).",
  404: "Not found: `not_found`, `data.not_found`, `data.insufficient_sample`.",
  409: "Conflict: `console.limit_reached`, `console.key_revoked`, `console.webhook_disabled`, `billing.nothing_to_charge`.",
  413: "Body too large: `request.too_large` (more than 1 MB).",
  415: "Unsupported media type: `request.unsupported_media_type` (send application/json).",
  422: "Validation failed: `validation.missing_parameter`, `validation.invalid_parameter`, `validation.out_of_range`, `validation.invalid_category`, `validation.invalid_metric`, `validation.metric_not_offered`, `validation.invalid_body`, `validation.invalid_url`.",
  429: "Rate limited: `rate_limit.exceeded` (data; the detail names the minute or day window); `auth.too_many_failures` (admin: too many wrong admin or metrics tokens from this address, a correct token is still admitted).",
  500: "Internal error: `internal` (no details are exposed).",
  501: "Not implemented: `not_implemented`.",
  503: "Storage unreachable: `service.unavailable` (fail closed; retry).",
};

/** Fixes what JSON Schema conversion leaves for OpenAPI: no `$schema` per fragment, numeric defaults as numbers. */
function tidy(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) tidy(item);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const o = node as Record<string, unknown>;
  delete o.$schema;
  // Query defaults are given as the strings they replace; the documented type is the parsed number.
  if ((o.type === "integer" || o.type === "number") && typeof o.default === "string") o.default = Number(o.default);
  for (const value of Object.values(o)) tidy(value);
}

function jsonSchema(schema: v.GenericSchema, typeMode: "input" | "output"): JsonSchema {
  const out = toJsonSchema(schema, { target: "draft-2020-12", typeMode, errorMode: "ignore" });
  tidy(out);
  return out;
}

function queryParameters(doc: RouteDoc): unknown[] {
  if (!doc.query) return [];
  const out: unknown[] = [];
  for (const [name, entry] of Object.entries(doc.query.entries)) {
    const schema = jsonSchema(entry as v.GenericSchema, "output") as Record<string, unknown>;
    const description = schema.description;
    delete schema.description;
    const optional = (entry as { type: string }).type === "optional";
    out.push({ name, in: "query", required: !optional, ...(typeof description === "string" ? { description } : {}), schema });
  }
  return out;
}

function pathParameters(doc: RouteDoc): unknown[] {
  return Object.entries(doc.pathParams ?? {}).map(([name, description]) => ({ name, in: "path", required: true, description, schema: { type: "string" } }));
}

/** On every response of the app. */
const REQUEST_ID = { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } };

const RATE_HEADERS = {
  ...REQUEST_ID,
  "X-RateLimit-Limit": { $ref: "#/components/headers/X-RateLimit-Limit" },
  "X-RateLimit-Remaining": { $ref: "#/components/headers/X-RateLimit-Remaining" },
  "X-RateLimit-Reset": { $ref: "#/components/headers/X-RateLimit-Reset" },
};

function errorResponse(status: number, rateLimited: boolean): unknown {
  if (!rateLimited) return { $ref: `#/components/responses/Error${status}` };
  // Every data response whose key was found carries them: 401 `auth.inactive_key` and the 403s as well.
  const headers: Record<string, unknown> = { ...RATE_HEADERS };
  if (status === 429) headers["Retry-After"] = { $ref: "#/components/headers/Retry-After" };
  return {
    description: ERROR_CODES[status] ?? "Error.",
    headers,
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  };
}

function operation(route: Route): Record<string, unknown> {
  const d = route.doc;
  const responses: Record<string, unknown> = {};
  const success: Record<string, unknown> = { description: d.success.description };
  success.headers = d.rateLimited ? RATE_HEADERS : REQUEST_ID;
  const mediaType = d.success.mediaType ?? "application/json";
  if (d.success.schema) success.content = { [mediaType]: { schema: jsonSchema(d.success.schema, "output") } };
  else if (mediaType !== "application/json") success.content = { [mediaType]: { schema: { type: "string" } } };
  responses[String(d.success.status)] = success;
  for (const status of [...d.errors].sort((a, b) => a - b)) responses[String(status)] = errorResponse(status, d.rateLimited === true);
  const parameters = [...pathParameters(d), ...queryParameters(d)];
  return {
    operationId: d.operationId,
    summary: d.summary,
    ...(d.description !== undefined ? { description: d.description } : {}),
    tags: [d.tag],
    security: d.security === "none" ? [] : [{ [d.security]: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(d.body ? { requestBody: { required: d.bodyOptional !== true, content: { "application/json": { schema: jsonSchema(d.body, "input") } } } } : {}),
    responses,
  };
}

/** The document's tags; a document lists those its operations use. */
const TAGS = [
  { name: "Data", description: "Benchmark data (API key)." },
  { name: "Console", description: "Keys, usage, webhooks and billing of the signed-in account (session token)." },
  { name: "Admin", description: "Operator API (admin token); off unless an admin token is configured." },
  { name: "Service", description: "Health and this document." },
];

/** Builds the OpenAPI 3.1 document of the given routes. */
export function buildOpenApi(routes: readonly Route[], errorSchema: v.GenericSchema): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  const statuses = new Set<number>();
  for (const r of routes) for (const s of r.doc.errors) statuses.add(s);
  const responses: Record<string, unknown> = {};
  for (const s of [...statuses].sort((a, b) => a - b)) {
    responses[`Error${s}`] = {
      description: ERROR_CODES[s] ?? "Error.",
      headers: s === 429 ? { ...REQUEST_ID, "Retry-After": { $ref: "#/components/headers/Retry-After" } } : REQUEST_ID,
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
  }
  const int = (description: string): unknown => ({ description, schema: { type: "integer" } });
  return {
    openapi: "3.1.0",
    info: {
      title: "benchdata API",
      version: "1.0.0",
      description:
        "Category-level financial benchmarks behind API keys. Data endpoints under /data/v1 take `Authorization: Bearer svc_live_…` or `svc_test_…`; console endpoints under /api/v1/console take a session token; the operator's admin API under /api/v1/admin takes the admin token. Every error body is `{detail, code, status}`.",
    },
    servers: [{ url: "/" }],
    tags: TAGS.filter((t) => routes.some((r) => r.doc.tag === t.name)),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", bearerFormat: "svc_live_… / svc_test_… (48 URL-safe characters after the prefix)", description: "An API key." },
        session: { type: "http", scheme: "bearer", bearerFormat: "bds_sess_…", description: "A console session token issued by the operator." },
        admin: { type: "http", scheme: "bearer", description: "The operator's admin token (BENCHDATA_ADMIN_TOKEN)." },
      },
      schemas: { Error: jsonSchema(errorSchema, "output") },
      responses,
      headers: {
        "X-RateLimit-Limit": int(
          "Requests allowed in the reported window (the per-minute window unless the daily limit has fewer left). On every data response whose key was found (refusals before admission included). Absent where no window governs the request: the key is missing, malformed or unknown, the path or method does not exist, or storage could not be read (docs/api.md, Headers).",
        ),
        "X-RateLimit-Remaining": int("Requests left in that window."),
        "X-RateLimit-Reset": int("When that window frees a slot (minute) or starts again (day), Unix seconds."),
        "Retry-After": int("Seconds to wait before retrying."),
        "X-Request-Id": {
          description:
            "The request's correlation id, on every response: the request's own `X-Request-Id` echoed when it is 1-128 characters of `A-Z a-z 0-9 . _ : -`, else a generated ULID. The server's log lines about the request carry it; error bodies stay `{detail, code, status}`.",
          schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
        },
      },
    },
  };
}
