/** The shape of one data endpoint: its scopes' key, its query schema, its docs and its handler. One file each. */
import type * as v from "valibot";
import type { Category } from "../../data/catalog.ts";
import type { BenchmarkSource, Dataset } from "../../data/source.ts";
import type { Endpoint } from "../../scopes/scopes.ts";
import type { AccountRecord, ApiKeyRecord } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";
import type { QuerySchema } from "../query.ts";
import type { Reply } from "../reply.ts";

/** What a data handler receives once the request is authenticated and admitted. */
export interface DataCall<Q> {
  /** The validated query. */
  readonly query: Q;
  readonly request: Request;
  /** The dataset the key reads: synthetic for test keys, imported for live keys. */
  readonly source: BenchmarkSource;
  readonly dataset: Dataset;
  readonly key: ApiKeyRecord;
  readonly account: AccountRecord;
  /** The admission time (Unix ms). */
  readonly now: number;
  readonly app: AppContext;
}

/** One data endpoint under `/data/v1`. */
export interface DataEndpoint<S extends QuerySchema = QuerySchema> {
  /** Method and path under `/data/v1`; also the key of its scopes in ENDPOINT_SCOPES. */
  readonly endpoint: Endpoint;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly query?: S;
  /** Request body schema (documentation and validation), for POST endpoints. */
  readonly body?: v.GenericSchema;
  /** The success body's schema (documentation only). */
  readonly response?: v.GenericSchema;
  /** The success status when it is not 200, e.g. 201 for a creation (documentation; the Reply sets the status). */
  readonly successStatus?: number;
  /** The success body's media type when it is not JSON (documentation; the Reply's `contentType` sets the header). */
  readonly mediaType?: string;
  /** Statuses this endpoint may answer besides the pipeline's own (401, 402, 403, 429, 503…). */
  readonly errors?: readonly number[];
  handle(call: DataCall<v.InferOutput<S>>): Promise<Reply>;
}

/** A data endpoint of any query schema (handlers are contravariant in their query, so lists use this). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDataEndpoint = DataEndpoint<any>;

/** Declares a data endpoint with its handler typed by its query schema. */
export function defineDataEndpoint<S extends QuerySchema>(endpoint: DataEndpoint<S>): DataEndpoint<S> {
  return endpoint;
}

/** The segment a request asks for: the parameter, or `all`. */
export function segmentOf(segment: string | undefined): string {
  return segment ?? "all";
}

/** Refers to a category/segment pair in details. */
export function cellName(category: Category, segment: string): string {
  return segment === "all" ? `${category} (all segments)` : `${category}/${segment}`;
}
