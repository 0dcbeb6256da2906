// Node 20's `new Response(body)` builds a web ReadableStream up front (about 20 µs, as much as the
// whole node:http round trip). A handler that answers with a string or bytes never needs that stream,
// so this twin keeps simple bodies as given and builds the real Response only when something asks
// for more than its status. Anything it cannot represent exactly goes to the real constructor at once,
// so every error and default (status range, header syntax, text/plain content type) stays standard.

import { delegateToReal } from "./bridge-delegate.ts";

// Registered symbols, so a second copy of this module (two installed versions) reads the same slots
// and finds the runtime's own constructor behind a BridgeResponse that is already global.
const kParts = Symbol.for("benchdata.bridge-response.parts");
const kReal = Symbol.for("benchdata.bridge-response.real");
const kNative = Symbol.for("benchdata.bridge-response.native");

/** The Response constructor this runtime shipped with, even when a BridgeResponse is already global. */
export const NativeResponse: typeof Response =
  (globalThis.Response as unknown as { [kNative]?: typeof Response })[kNative] ?? globalThis.Response;

/** What the bridge writes for a simple response: status, lower-case header record and body. */
export interface SimpleParts {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array | null;
}

interface Slots {
  [kParts]?: SimpleParts;
  [kReal]?: Response;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// No NUL/CR/LF, only bytes Node accepts, no leading or trailing whitespace (the real one would trim).
const VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;

// Apps send the same few header names and values over and over: remember the ones already checked
// (name → lower-case name) so the common case is a map lookup instead of two regexes. Bounded.
const checkedNames = new Map<string, string>();
const checkedValues = new Set<string>();

// Values are remembered only under these names, whose values are the app's own constants, the same for
// every caller. Anything else (Set-Cookie, ETag, Location, a user's id…) may be a caller's secret and is
// checked every time instead: a module-wide cache must never keep it alive.
const CACHED_VALUE_NAMES: ReadonlySet<string> = new Set([
  "content-type",
  "cache-control",
  "vary",
  "allow",
  "access-control-allow-origin",
  "access-control-allow-methods",
  "access-control-allow-headers",
  "access-control-expose-headers",
  "access-control-max-age",
  "x-ratelimit-limit",
]);

function lowerName(name: string): string | undefined {
  let lower = checkedNames.get(name);
  if (lower === undefined) {
    if (!TOKEN.test(name)) return undefined;
    lower = name.toLowerCase();
    if (checkedNames.size >= 512) checkedNames.clear();
    checkedNames.set(name, lower);
  }
  return lower;
}

function validValue(value: string, name: string): boolean {
  if (checkedValues.has(value)) return true;
  if (!VALUE.test(value)) return false;
  // Short values only: long ones are unlikely to repeat and would just churn the set.
  if (value.length <= 64 && CACHED_VALUE_NAMES.has(name)) {
    if (checkedValues.size >= 512) checkedValues.clear();
    checkedValues.add(value);
  }
  return true;
}

/** Whether the header-value cache holds `value` (for tests: values of per-caller headers never are). */
export function headerValueCached(value: string): boolean {
  return checkedValues.has(value);
}

function simpleParts(body: unknown, init: ResponseInit | undefined): SimpleParts | undefined {
  let source: string | Uint8Array | null;
  if (body === undefined || body === null) source = null;
  else if (typeof body === "string") source = body;
  // The real constructor copies bytes too, so later writes by the caller do not leak into the body.
  else if (body instanceof Uint8Array) source = body.slice();
  else if (body instanceof ArrayBuffer) source = new Uint8Array(body.slice(0));
  else return undefined;

  let status = 200;
  // A literal, not Object.create(null): dictionary-mode objects make node's header loop slower.
  const headers: Record<string, string> = {};
  if (init !== undefined && init !== null) {
    if (typeof init !== "object" || init.statusText !== undefined) return undefined;
    const s = init.status;
    if (s !== undefined) {
      if (typeof s !== "number" || !Number.isInteger(s) || s < 200 || s > 599) return undefined;
      status = s;
    }
    const h = init.headers;
    if (h !== undefined) {
      if (h === null || typeof h !== "object") return undefined;
      const proto = Object.getPrototypeOf(h);
      if (proto !== Object.prototype && proto !== null) return undefined;
      const record = h as Record<string, unknown>;
      for (const name of Object.keys(record)) {
        const value = record[name];
        if (typeof value !== "string") return undefined;
        const lower = lowerName(name);
        if (lower === undefined || !validValue(value, lower)) return undefined;
        // A repeated name (or one an object literal inherits, like __proto__) takes the real path.
        if (headers[lower] !== undefined || lower === "__proto__") return undefined;
        headers[lower] = value;
      }
    }
  }
  if (source !== null && (status === 204 || status === 205 || status === 304)) return undefined;
  if (typeof source === "string" && headers["content-type"] === undefined) {
    headers["content-type"] = "text/plain;charset=UTF-8";
  }
  return { status, headers, body: source };
}

function real(response: BridgeResponse): Response {
  const slots = response as unknown as Slots;
  let built = slots[kReal];
  if (built === undefined) {
    const parts = slots[kParts] as SimpleParts;
    built = new NativeResponse(parts.body as BodyInit | null, {
      status: parts.status,
      headers: parts.headers,
    });
    slots[kReal] = built;
    slots[kParts] = undefined;
  }
  return built;
}

/** A Response that holds string/bytes bodies as given and becomes a real Response on first deep use. */
export class BridgeResponse {
  constructor(body?: BodyInit | null, init?: ResponseInit) {
    const slots = this as unknown as Slots;
    const parts = simpleParts(body, init);
    if (parts === undefined) slots[kReal] = new NativeResponse(body, init);
    else slots[kParts] = parts;
  }

  /** A JSON response like `Response.json`, kept simple when the data serialises. */
  static json(data: unknown, init?: ResponseInit): Response {
    const text = JSON.stringify(data) as string | undefined;
    if (text === undefined) return NativeResponse.json(data, init);
    const response = new BridgeResponse(text, init) as unknown as Slots;
    const parts = response[kParts];
    if (parts === undefined) return NativeResponse.json(data, init);
    // Response.json only sets the type when the caller did not; the constructor set text/plain.
    const given = init?.headers as Record<string, string> | undefined;
    const explicit = given !== undefined && Object.keys(given).some((k) => k.toLowerCase() === "content-type");
    if (!explicit) parts.headers["content-type"] = "application/json";
    return response as unknown as Response;
  }

  /** Like `Response.error()`. */
  static error(): Response {
    return NativeResponse.error();
  }

  /** Like `Response.redirect()`. */
  static redirect(url: string | URL, status?: number): Response {
    return NativeResponse.redirect(url, status);
  }

  /** `instanceof Response` holds for real and lightweight responses alike once this class is global. */
  static [Symbol.hasInstance](value: unknown): boolean {
    if (this === BridgeResponse) return value instanceof NativeResponse;
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }
}

const proto = BridgeResponse.prototype as unknown as Record<string, unknown>;
delegateToReal(proto, NativeResponse.prototype, Object.getOwnPropertyNames(NativeResponse.prototype), new Set(["constructor"]), real);
// status and ok are read by routers and middleware all the time; answer them without building anything.
Object.defineProperty(proto, "status", {
  configurable: true,
  get(this: Slots): number {
    return this[kParts]?.status ?? (this[kReal] as Response).status;
  },
});
Object.defineProperty(proto, "ok", {
  configurable: true,
  get(this: Slots): boolean {
    const parts = this[kParts];
    return parts === undefined ? (this[kReal] as Response).ok : parts.status < 300;
  },
});
// Internal symbols the runtime may read off a Response it is handed are answered by the real one.
for (const key of Object.getOwnPropertySymbols(new NativeResponse(null))) {
  Object.defineProperty(proto, key, {
    configurable: true,
    get(this: BridgeResponse): unknown {
      return (real(this) as unknown as Record<symbol, unknown>)[key];
    },
  });
}
Object.setPrototypeOf(BridgeResponse.prototype, NativeResponse.prototype);
Object.setPrototypeOf(BridgeResponse, NativeResponse);
Object.defineProperty(BridgeResponse, kNative, { value: NativeResponse });

/** The simple parts of a lightweight response nobody has looked into yet, else undefined. */
export function simpleResponseParts(response: Response): SimpleParts | undefined {
  return (response as unknown as Slots)[kParts];
}

/** The real Response behind a lightweight one that has already been built, else the argument itself. */
export function nativeResponse(response: Response): Response {
  return (response as unknown as Slots)[kReal] ?? response;
}

/** Make `globalThis.Response` the lightweight twin (idempotent), so `new Response(json)` skips the stream. */
export function installBridgeResponse(): void {
  if (globalThis.Response !== (BridgeResponse as unknown as typeof Response)) {
    globalThis.Response = BridgeResponse as unknown as typeof Response;
  }
}
