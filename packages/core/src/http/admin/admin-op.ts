/** One operation of the admin API: its method and path, its schemas, what the OpenAPI document says, and its handler. */
import type * as v from "valibot";
import type { AppContext } from "../app-options.ts";
import type { AuditRecorder } from "../audit/audit-recorder.ts";
import type { QuerySchema } from "../query.ts";
import type { Reply } from "../reply.ts";
import type { RouteDoc } from "../route.ts";

/** An admin operation under `/api/v1/admin`, authenticated by the admin token. */
export interface AdminOp<B extends v.GenericSchema | undefined, Q extends QuerySchema | undefined = undefined> {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  readonly path: string;
  readonly doc: Omit<RouteDoc, "tag" | "security" | "body" | "bodyOptional" | "errors" | "query"> & { readonly errors: readonly number[] };
  readonly body?: B;
  /** The body may be left out (read as `{}`). */
  readonly bodyOptional?: boolean;
  readonly query?: Q;
  handle(
    app: AppContext,
    params: Readonly<Record<string, string>>,
    body: B extends v.GenericSchema ? v.InferOutput<B> : undefined,
    now: number,
    request: Request,
    query: Q extends QuerySchema ? v.InferOutput<Q> : undefined,
    /** Drafts this request's audit entries (actor `admin`, or the app's `auditActor`). */
    audit: AuditRecorder,
  ): Promise<Reply>;
}

/** Declares an admin operation with its handler typed by its schemas. */
export function op<B extends v.GenericSchema | undefined = undefined, Q extends QuerySchema | undefined = undefined>(o: AdminOp<B, Q>): AdminOp<B, Q> {
  return o;
}

/** The path parameter of every per-account operation. */
export const ACCOUNT_ID = { account_id: "The account's identifier (`acc_…`)." } as const;
