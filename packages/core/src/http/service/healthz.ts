/** `GET /healthz`: the liveness probe, answered without touching storage. */
import * as v from "valibot";
import { JSON_TYPE, NOSNIFF } from "../reply.ts";
import { markStamped, REQUEST_ID_HEADER, requestIdOf } from "../request-id.ts";
import type { Route } from "../route.ts";

/** The liveness route: `{"ok":true}` while the process serves requests. */
export function healthzRoute(): Route {
  return {
    method: "GET",
    path: "/healthz",
    // The id built in (see markStamped): probes come often, and this answer stays the adapter's cheap kind.
    run: (request) => {
      const headers: Record<string, string> = { "content-type": JSON_TYPE, "cache-control": "no-store", "x-content-type-options": NOSNIFF };
      const id = requestIdOf(request);
      if (id === undefined) return Promise.resolve(new Response('{"ok":true}', { status: 200, headers }));
      headers[REQUEST_ID_HEADER] = id;
      return Promise.resolve(markStamped(new Response('{"ok":true}', { status: 200, headers })));
    },
    doc: {
      operationId: "healthz",
      summary: "Liveness",
      tag: "Service",
      security: "none",
      success: { status: 200, description: "The service is up.", schema: v.object({ ok: v.literal(true) }) },
      errors: [],
    },
  };
}
