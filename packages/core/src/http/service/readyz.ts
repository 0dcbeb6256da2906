/**
 * `GET /readyz`: the readiness probe. 503 while draining, or when storage's trivial query fails or does not answer
 * within the time-out (under a load balancer's 1 s probe), so traffic goes elsewhere; `/healthz` is liveness.
 */
import * as v from "valibot";
import type { FaultLog } from "../../log/fault-log.ts";
import type { ServiceMetrics } from "../../metrics/service-metrics.ts";
import type { AppOptions } from "../app-options.ts";
import { JSON_TYPE, NOSNIFF } from "../reply.ts";
import type { Route } from "../route.ts";

/** How long `/readyz` waits for storage's trivial query before answering 503 (under a 1 s probe time-out). */
export const READINESS_TIMEOUT_MS = 800;

/** What the readiness route reads: storage's ping, where faults go, and whether the server is draining. */
export interface ReadinessInputs {
  readonly storage: AppOptions["storage"];
  readonly faults: FaultLog;
  readonly metrics: ServiceMetrics;
  readonly timeoutMs: number;
  readonly draining: () => boolean;
}

/** The readiness route over `inputs`. */
export function readyzRoute(inputs: ReadinessInputs): Route {
  return {
    method: "GET",
    path: "/readyz",
    run: () => readiness(inputs),
    doc: {
      operationId: "readyz",
      summary: "Readiness",
      description:
        "200 while storage answers a trivial query within " + String(inputs.timeoutMs) + " ms and the server is not draining; otherwise 503 with `reason` " +
        "(`draining`, `storage_timeout` or `storage_unavailable`). For load balancers and Kubernetes readiness probes; `/healthz` is the liveness probe.",
      tag: "Service",
      security: "none",
      success: { status: 200, description: "Ready to serve.", schema: v.object({ ready: v.literal(true) }) },
      errors: [503],
    },
  };
}

const NO_STORE_JSON = { "content-type": JSON_TYPE, "cache-control": "no-store", "x-content-type-options": NOSNIFF } as const;

function notReady(reason: "draining" | "storage_timeout" | "storage_unavailable", detail: string): Response {
  const body = { ready: false, reason, detail, code: "service.unavailable", status: 503 };
  return new Response(JSON.stringify(body), { status: 503, headers: { ...NO_STORE_JSON, "retry-after": "1" } });
}

/** Not draining, and storage's trivial query answered in time. A failure is a fault (logged rate-limited). */
async function readiness(inputs: ReadinessInputs): Promise<Response> {
  const response = await readinessCheck(inputs);
  if (response.status === 503) inputs.metrics.unavailable.not_ready.inc();
  return response;
}

async function readinessCheck({ storage, faults, timeoutMs, draining }: ReadinessInputs): Promise<Response> {
  if (draining()) return notReady("draining", "The server is shutting down: send new requests elsewhere.");
  if (storage.ping) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
    try {
      const outcome = await Promise.race([storage.ping().then(() => "ok" as const), timedOut]);
      if (outcome === "timeout") {
        faults.fault("ping", new Error(`readiness query timed out after ${timeoutMs} ms`));
        return notReady("storage_timeout", `Storage did not answer a trivial query within ${timeoutMs} ms.`);
      }
    } catch (error) {
      faults.fault("ping", error);
      return notReady("storage_unavailable", "Storage is unreachable.");
    } finally {
      clearTimeout(timer);
    }
  }
  if (draining()) return notReady("draining", "The server is shutting down: send new requests elsewhere.");
  return new Response('{"ready":true}', { status: 200, headers: NO_STORE_JSON });
}
