/** `GET /openapi.json`: each listener's OpenAPI document, built on first request. */
import { ErrorBodySchema } from "../error-body.ts";
import { JSON_TYPE, NOSNIFF } from "../reply.ts";
import type { Route } from "../route.ts";
import { buildOpenApi } from "./openapi.ts";

/** The path of each listener's OpenAPI document. */
export const OPENAPI_PATH = "/openapi.json";

/** `GET /openapi.json` of one listener: the document of `routes()` (the operations that listener serves), built once. */
export function openapiRoute(routes: () => readonly Route[]): Route {
  let json: string | undefined;
  return {
    method: "GET",
    path: OPENAPI_PATH,
    run: () => Promise.resolve(new Response((json ??= JSON.stringify(buildOpenApi(routes(), ErrorBodySchema))), { status: 200, headers: { "content-type": JSON_TYPE, "access-control-allow-origin": "*", "x-content-type-options": NOSNIFF } })),
    doc: {
      operationId: "openapi",
      summary: "This OpenAPI 3.1 document",
      description: "The operations this listener serves: with the admin API on a listener of its own, each listener's document lists its own.",
      tag: "Service",
      security: "none",
      success: { status: 200, description: "The document." },
      errors: [],
    },
  };
}
