/**
 * Reading a JSON request body defensively: `application/json` only (415), at most `maxBytes` whether or not
 * Content-Length says so (413, counted while streaming), valid UTF-8 JSON (400), then its schema (422 naming
 * the field).
 */
import * as v from "valibot";
import { ServiceError } from "../errors/service-error.ts";

/** The largest body accepted: 1 MB. */
export const MAX_BODY_BYTES = 1_048_576;

const TOO_LARGE = new ServiceError(413, "request.too_large", `Request body too large: at most ${MAX_BODY_BYTES} bytes.`);
const UNSUPPORTED = new ServiceError(415, "request.unsupported_media_type", "Content-Type must be application/json.");
const decoder = new TextDecoder("utf-8", { fatal: true });
// The body stream failed before its end: the client went away, or the server's request timeout ended the request
// (node:http has then answered 408 on the connection itself). The client's doing, so not an internal error.
const NOT_RECEIVED = new ServiceError(408, "request.timeout", "The request body did not arrive in full: the client stopped sending it, or took too long.");

function invalidJson(why: string): ServiceError {
  return new ServiceError(400, "request.invalid_json", `Request body is not valid JSON: ${why}.`);
}

/** Whether a Content-Type names JSON (`application/json`, parameters such as charset allowed). */
export function isJsonContentType(value: string | null): boolean {
  if (value === null) return false;
  const semi = value.indexOf(";");
  const type = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  return type === "application/json";
}

/** The body's bytes, refusing more than `maxBytes` as soon as they are seen. */
async function readBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  const length = request.headers.get("content-length");
  if (length !== null && /^\d+$/.test(length.trim()) && Number(length) > maxBytes) throw TOO_LARGE;
  const body = request.body;
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      throw NOT_RECEIVED;
    }
    const { done, value } = chunk;
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Let go without cancelling: the server adapter drains the rest once the 413 is out. A cancelled body makes
      // some servers (Bun) close the connection under a client still sending, which then sees a reset, not the 413.
      reader.releaseLock();
      throw TOO_LARGE;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** Reads and parses a JSON body (415, 413, 400 as described above; 408 when the body stops arriving). */
export async function readJson(request: Request, maxBytes: number = MAX_BODY_BYTES): Promise<unknown> {
  if (!isJsonContentType(request.headers.get("content-type"))) throw UNSUPPORTED;
  const bytes = await readBytes(request, maxBytes);
  if (bytes.byteLength === 0) throw invalidJson("the body is empty");
  return parseJson(bytes);
}

function parseJson(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw invalidJson("it is not UTF-8");
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw invalidJson(error instanceof Error ? error.message : "syntax error");
  }
}

/** A valibot issue path as `field`, `scopes[2]` or `limits.per_minute`. */
export function issuePath(issue: v.BaseIssue<unknown>): string {
  let out = "";
  for (const item of issue.path ?? []) {
    const key = (item as { key: unknown }).key;
    out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

const NOT_AN_OBJECT = new ServiceError(422, "validation.invalid_body", "Invalid request body: it must be a JSON object.");

/**
 * The path of the first string (a value or a field name) holding U+0000, or undefined. PostgreSQL's text cannot
 * hold that character, so a body carrying one would fail in the store as if the database were down; no field of
 * this API has a use for it, so it is refused before any schema, for every store alike.
 */
function nulAt(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? path : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulAt(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const at = path === "" ? key : `${path}.${key}`;
    if (key.includes("\u0000")) return at;
    const found = nulAt((value as Record<string, unknown>)[key], at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Refuses a parsed body that is not a JSON object, or that holds U+0000 anywhere (422 `validation.invalid_body`). */
export function assertJsonObject(value: unknown): asserts value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw NOT_AN_OBJECT;
  const nul = nulAt(value, "");
  if (nul !== undefined) {
    throw new ServiceError(422, "validation.invalid_body", `Invalid request body: \`${JSON.stringify(nul).slice(1, -1)}\` holds the character U+0000, which no field accepts.`);
  }
}

/** Validates a parsed body against its schema, or throws 422 `validation.invalid_body` naming the first bad field. */
export function validateBody<S extends v.GenericSchema>(schema: S, value: unknown): v.InferOutput<S> {
  assertJsonObject(value);
  const result = v.safeParse(schema, value, { abortEarly: true });
  if (result.success) return result.output;
  throw invalidBody(result.issues[0]);
}

/** The 422 `validation.invalid_body` of a body's schema issue, naming the field. */
export function invalidBody(issue: v.BaseIssue<unknown>): ServiceError {
  const field = issuePath(issue);
  const detail =
    issue.expected === "never"
      ? `\`${field}\` is not a known field.`
      : (issue.type === "object" || issue.type === "strict_object") && issue.received === "undefined"
        ? `\`${field}\` is required.`
        : `\`${field}\`: ${issue.message}`;
  return new ServiceError(422, "validation.invalid_body", `Invalid request body: ${detail}`);
}

/** Reads, parses and validates a JSON body in one step. */
export async function readBody<S extends v.GenericSchema>(request: Request, schema: S): Promise<v.InferOutput<S>> {
  return validateBody(schema, await readJson(request));
}

/**
 * Like `readBody`, for a body that may be left out (an action whose fields are all optional): an empty body,
 * with or without `Content-Type: application/json`, is read as `{}`; anything else is read as `readBody` would.
 */
export async function readOptionalBody<S extends v.GenericSchema>(request: Request, schema: S): Promise<v.InferOutput<S>> {
  const type = request.headers.get("content-type");
  if (type !== null && !isJsonContentType(type)) throw UNSUPPORTED;
  const bytes = await readBytes(request, MAX_BODY_BYTES);
  if (bytes.byteLength === 0) return validateBody(schema, {});
  if (type === null) throw UNSUPPORTED;
  return validateBody(schema, parseJson(bytes));
}
