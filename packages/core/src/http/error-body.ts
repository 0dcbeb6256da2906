/** The contract's error body, `{detail, code, status}`, as a schema for the OpenAPI document. */
import * as v from "valibot";
import { ERROR_CODES } from "../errors/error-codes.ts";

/** The error body's schema, `{detail, code, status}`. */
export const ErrorBodySchema = v.object({
  detail: v.pipe(v.string(), v.description("Human-readable explanation.")),
  code: v.pipe(v.picklist(ERROR_CODES), v.description("Stable machine-readable code, e.g. `auth.unknown_key`.")),
  status: v.pipe(v.number(), v.integer(), v.description("The HTTP status, repeated.")),
});
