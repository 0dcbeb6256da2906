// Building undici's Headers from node's raw header list costs an `append` per header (validation,
// normalisation, a map entry) on every request that reads one header, and handlers mostly read two or
// three (Authorization, Origin, Host). This stand-in answers `get` and `has` by scanning node's list,
// combining repeats as Headers does, and builds the real Headers the first time anything else is asked
// (iteration, mutation, getSetCookie, inspection), delegating to it from then on. Its prototype chain
// ends in Headers.prototype and its `constructor` is Headers, so `instanceof Headers` holds.

import { delegateToReal } from "./bridge-delegate.ts";

const NativeHeaders: typeof Headers = globalThis.Headers;
const nativeGet = NativeHeaders.prototype.get;
const nativeHas = NativeHeaders.prototype.has;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// What Headers refuses in a value once its ends are trimmed (NUL, CR, LF), or cannot hold (not a ByteString).
// node's parser refuses these itself unless it runs with `insecureHTTPParser`. Names need no such check: the
// parser refuses any name that is not a token in either mode.
const BAD_VALUE = /[\0\r\n]|[^\0-\xff]/;

// Handlers ask for the same few names over and over: remember each valid one's lower case (bounded).
// Names only, never values.
const lowerNames = new Map<string, string>();

function lowerName(name: string): string | undefined {
  let lower = lowerNames.get(name);
  if (lower === undefined) {
    if (!TOKEN.test(name)) return undefined;
    lower = name.toLowerCase();
    if (lowerNames.size >= 256) lowerNames.clear();
    lowerNames.set(name, lower);
  }
  return lower;
}

function isHttpWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

// Headers drops HTTP whitespace at both ends of a value; node's parser has already trimmed spaces and tabs,
// so this almost never has anything to do.
function normalize(value: string): string {
  let end = value.length;
  if (end === 0 || (!isHttpWhitespace(value.charCodeAt(0)) && !isHttpWhitespace(value.charCodeAt(end - 1)))) return value;
  let start = 0;
  while (start < end && isHttpWhitespace(value.charCodeAt(start))) start++;
  while (end > start && isHttpWhitespace(value.charCodeAt(end - 1))) end--;
  return value.slice(start, end);
}

function build(raw: readonly string[]): Headers {
  const headers = new NativeHeaders();
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    // HTTP/2 pseudo-headers (":path") are not headers.
    if (name.charCodeAt(0) !== 58) headers.append(name, raw[i + 1] as string);
  }
  return headers;
}

// What `get` on a Headers built from `raw` answers: every value of the name in order, joined with ", "
// (with "; " for Cookie, as undici does; Set-Cookie is joined like any other name here).
function lookup(raw: readonly string[], lower: string): string | null {
  let found: string | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length !== lower.length || (name !== lower && name.toLowerCase() !== lower)) continue;
    const value = normalize(raw[i + 1] as string);
    found = found === null ? value : found + (lower === "cookie" ? "; " : ", ") + value;
  }
  return found;
}

// The real Headers behind a BridgeHeaders (built on first call), and whether a value is one: set by the
// class, which alone can read its private fields.
let realOf: (headers: BridgeHeaders) => Headers;
let isBridgeHeaders: (value: object) => value is BridgeHeaders;

// Private fields, not symbol-keyed slots: like a real Headers, it has no own properties to spread or compare.
class BridgeHeaders {
  readonly #raw: readonly string[];
  #real: Headers | undefined = undefined;

  static {
    realOf = (headers) => (headers.#real ??= build(headers.#raw));
    isBridgeHeaders = (value): value is BridgeHeaders => #raw in value;
  }

  constructor(raw: readonly string[]) {
    this.#raw = raw;
  }

  get(name: string): string | null {
    // Anything but a valid name as a string (and any read after the real one exists) takes the real path,
    // so conversions and errors are exactly Headers' own.
    const lower = this.#real === undefined && typeof name === "string" ? lowerName(name) : undefined;
    if (lower === undefined) return nativeGet.apply(realOf(this), arguments as unknown as [string]);
    return lookup(this.#raw, lower);
  }

  has(name: string): boolean {
    const lower = this.#real === undefined && typeof name === "string" ? lowerName(name) : undefined;
    if (lower === undefined) return nativeHas.apply(realOf(this), arguments as unknown as [string]);
    return lookup(this.#raw, lower) !== null;
  }
}

const proto = BridgeHeaders.prototype as unknown as Record<PropertyKey, unknown>;
// Every other member (the iterators and Symbol.iterator, inspection, the runtime's own symbol-keyed
// accessors) runs on the real Headers. A Symbol.iterator of our own also steers `new Headers(h)`,
// `new Request(url, { headers: h })` and fetch away from reading internals this object does not have.
delegateToReal(proto, NativeHeaders.prototype, Reflect.ownKeys(NativeHeaders.prototype), new Set(["constructor", "get", "has"]), realOf);
// `headers.constructor` is Headers, as on a real one (so `new headers.constructor(init)` builds a Headers).
Object.defineProperty(proto, "constructor", { configurable: true, writable: true, value: NativeHeaders });
Object.setPrototypeOf(BridgeHeaders.prototype, NativeHeaders.prototype);

/** Headers over node's raw header list (name, value, …) that answer `get`/`has` from it and build the real ones only when used otherwise. */
export function bridgeHeaders(raw: readonly string[]): Headers {
  for (let i = 1; i < raw.length; i += 2) {
    const value = raw[i] as string;
    // A value Headers would refuse: build the real one now, which throws what a Headers built here always threw.
    if ((raw[i - 1] as string).charCodeAt(0) !== 58 && BAD_VALUE.test(value) && BAD_VALUE.test(normalize(value))) return build(raw);
  }
  return new BridgeHeaders(raw) as unknown as Headers;
}

/** The real Headers behind bridge headers (built now if need be), or the argument itself when it is already real. */
export function nativeHeaders(headers: Headers): Headers {
  return isBridgeHeaders(headers) ? realOf(headers) : headers;
}
