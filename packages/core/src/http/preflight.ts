/**
 * The CORS preflight of the data API: any origin may call it with a key (browser code embedding the data), for
 * GET and POST with `Authorization` and `Content-Type`, cached a day. The console and admin API grant none.
 */
import { NOSNIFF } from "./reply.ts";

const PREFLIGHT_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "Authorization, Content-Type",
  "access-control-max-age": "86400",
  "x-content-type-options": NOSNIFF,
} as const;

/** The 204 answer to an `OPTIONS` preflight of a data path. */
export function preflightResponse(): Response {
  return new Response(null, { status: 204, headers: PREFLIGHT_HEADERS });
}
