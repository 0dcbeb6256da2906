import type { IncomingMessage, ServerResponse } from "node:http";
import { bridgeHeaders, nativeHeaders } from "./bridge-headers.ts";
import { delegateToReal } from "./bridge-delegate.ts";

// A real `Request` costs about 10 µs on Node 20 (URL parsing, Headers, AbortSignal, body stream).
// Most handlers read only method, url and a header or two, so the bridge hands them this stand-in:
// those three are plain getters over node's own data (the headers read node's raw list until something
// needs a real Headers, see bridge-headers.ts), and any other member builds the real Request once and
// delegates to it. Its prototype chain ends in Request.prototype, so `instanceof Request` holds.

const NativeRequest: typeof Request = globalThis.Request;

const kIncoming = Symbol("bridge.incoming");
const kOutgoing = Symbol("bridge.outgoing");
const kUrl = Symbol("bridge.url");
const kHeaders = Symbol("bridge.headers");
const kReal = Symbol("bridge.real");
const kBody = Symbol("bridge.body");

interface Slots {
  [kIncoming]: IncomingMessage;
  [kOutgoing]: ServerResponse;
  [kUrl]: string;
  [kHeaders]: Headers | undefined;
  [kReal]: Request | undefined;
  [kBody]: BodySource | undefined;
}

/** Thrown by bridgeRequest when the request line or Host cannot make a valid URL (answer 400). */
export class BadRequestError extends Error {
  override name = "BadRequestError";
}

// Targets made only of these characters, with no segment starting with a dot (which could be "." or
// ".."), come out of the URL parser unchanged, so they skip it.
const PLAIN_TARGET =
  /^(?:\/(?!\.|%2[eE])[A-Za-z0-9\-._~!$&()*+,;=:@%]*)+(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@%/?]*)?$/;
const BAD_HOST = /[/?#@\\\s]/;

// Clients send the same few Host values over and over; remember how each one normalises.
const origins = new Map<string, string>();

function originOf(host: string, secure: boolean): string {
  const key = secure ? `s${host}` : host;
  let origin = origins.get(key);
  if (origin === undefined) {
    if (host === "" || BAD_HOST.test(host)) throw new BadRequestError("invalid Host header");
    let parsed: URL;
    try {
      parsed = new URL(`${secure ? "https" : "http"}://${host}`);
    } catch {
      throw new BadRequestError("invalid Host header");
    }
    origin = parsed.origin;
    if (origins.size >= 256) origins.clear();
    origins.set(key, origin);
  }
  return origin;
}

function requestUrl(incoming: IncomingMessage): string {
  const target = incoming.url ?? "/";
  const raw = incoming.rawHeaders;
  let host = "";
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 4 && (name === "host" || name === "Host" || name.toLowerCase() === "host")) {
      host = raw[i + 1] as string;
      break;
    }
  }
  const secure = (incoming.socket as { encrypted?: boolean } | null)?.encrypted === true;
  if (target.charCodeAt(0) !== 47 /* "/" */) {
    // absolute-form (a proxy-style request line) or "*": let the URL parser decide.
    try {
      const url = new URL(target === "*" ? `${originOf(host || "localhost", secure)}/` : target);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(url.protocol);
      return url.href;
    } catch (error) {
      if (error instanceof BadRequestError) throw error;
      throw new BadRequestError("invalid request target");
    }
  }
  // HTTP/1.0 clients may omit Host; fall back to the name everyone can resolve.
  const origin = originOf(host || "localhost", secure);
  if (PLAIN_TARGET.test(target)) return origin + target;
  try {
    return new URL(origin + target).href;
  } catch {
    throw new BadRequestError("invalid request target");
  }
}

/** The request body as a web stream with backpressure, detachable once the response is out. */
interface BodySource {
  stream: ReadableStream<Uint8Array>;
  discard(): void;
}

function bodyOf(incoming: IncomingMessage): BodySource {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let attached = true;
  const onData = (chunk: Buffer): void => {
    controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
  };
  const onEnd = (): void => {
    detach();
    controller.close();
  };
  const onError = (error: Error): void => {
    detach();
    controller.error(error);
  };
  const onClose = (): void => {
    // "close" without "end" means the client went away mid-body.
    if (!incoming.complete) onError(new Error("request body aborted by the client"));
  };
  const detach = (): void => {
    if (!attached) return;
    attached = false;
    incoming.off("data", onData);
    incoming.off("end", onEnd);
    incoming.off("error", onError);
    incoming.off("close", onClose);
  };
  // Draining what nobody wants keeps the keep-alive connection usable.
  const discard = (): void => {
    if (!attached) return;
    detach();
    incoming.resume();
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(c): void {
        controller = c;
        incoming.pause();
        incoming.on("data", onData);
        incoming.on("end", onEnd);
        incoming.on("error", onError);
        incoming.on("close", onClose);
      },
      pull(): void {
        incoming.resume();
      },
      cancel(): void {
        discard();
      },
    },
    { highWaterMark: 65536, size: (chunk) => chunk.byteLength },
  );
  return {
    stream,
    discard(): void {
      if (!attached) return;
      discard();
      try {
        controller.error(new TypeError("request body discarded: the response was already sent"));
      } catch {
        // already closed or errored
      }
    },
  };
}

function materialize(lazy: Slots): Request {
  let request = lazy[kReal];
  if (request !== undefined) return request;
  const incoming = lazy[kIncoming];
  const outgoing = lazy[kOutgoing];
  const controller = new AbortController();
  const method = incoming.method ?? "GET";
  const init: RequestInit & { duplex?: "half" } = {
    method,
    // The headers as the handler left them (it may have changed them); the Request takes a copy.
    headers: nativeHeaders(lazy[kHeaders] ?? bridgeHeaders(incoming.rawHeaders)),
    signal: controller.signal,
  };
  if (method !== "GET" && method !== "HEAD") {
    const body = bodyOf(incoming);
    lazy[kBody] = body;
    init.body = body.stream;
    init.duplex = "half";
  }
  request = new NativeRequest(lazy[kUrl], init);
  lazy[kReal] = request;
  lazy[kHeaders] = undefined;
  const abort = (): void => {
    controller.abort(new DOMException("the client closed the connection", "AbortError"));
  };
  if (outgoing.destroyed || incoming.socket?.destroyed === true) {
    if (!outgoing.writableFinished) abort();
  } else {
    outgoing.once("close", () => {
      if (!outgoing.writableFinished) abort();
    });
  }
  return request;
}

class LazyRequest {
  declare [kIncoming]: IncomingMessage;
  declare [kOutgoing]: ServerResponse;
  declare [kUrl]: string;
  declare [kHeaders]: Headers | undefined;
  declare [kReal]: Request | undefined;
  declare [kBody]: BodySource | undefined;

  constructor(incoming: IncomingMessage, outgoing: ServerResponse, url: string) {
    this[kIncoming] = incoming;
    this[kOutgoing] = outgoing;
    this[kUrl] = url;
    this[kHeaders] = undefined;
    this[kReal] = undefined;
    this[kBody] = undefined;
  }

  get method(): string {
    return this[kReal]?.method ?? this[kIncoming].method ?? "GET";
  }

  get url(): string {
    return this[kUrl];
  }

  get headers(): Headers {
    const request = this[kReal];
    if (request !== undefined) return request.headers;
    return (this[kHeaders] ??= bridgeHeaders(this[kIncoming].rawHeaders));
  }
}

const proto = LazyRequest.prototype as unknown as Record<string, unknown>;
delegateToReal(proto, NativeRequest.prototype, Object.getOwnPropertyNames(NativeRequest.prototype), new Set(["constructor", "method", "url", "headers"]), materialize);
// The runtime reads its own Requests through internal symbols (`new Request(request)`, `fetch(request)`
// read the state, signal and headers that way). Answer those from the real Request too.
for (const key of Object.getOwnPropertySymbols(new NativeRequest("http://localhost/"))) {
  Object.defineProperty(proto, key, {
    configurable: true,
    get(this: Slots): unknown {
      return (materialize(this) as unknown as Record<symbol, unknown>)[key];
    },
  });
}
Object.setPrototypeOf(LazyRequest.prototype, NativeRequest.prototype);

/**
 * Whether this runtime's own APIs accept a lazy Request (`new Request(lazy, init)`, `fetch(lazy)`): Node 18-23's
 * undici reads its Requests through the symbols answered above; Node 24's reads private fields, which an
 * object it did not construct cannot have. Probed once with a lazy Request whose real one already exists.
 */
const lazyAccepted = ((): boolean => {
  try {
    const probe = Object.create(LazyRequest.prototype) as Slots;
    probe[kReal] = new NativeRequest("http://localhost/probe", { headers: { "x-probe": "1" } });
    const copy = new NativeRequest(probe as unknown as Request, { headers: { "x-copy": "1" } });
    return copy.url === "http://localhost/probe" && copy.headers.get("x-copy") === "1";
  } catch {
    return false;
  }
})();

/**
 * Which Request a handler gets. "auto": the lazy stand-in where this runtime's own `new Request(r)` and
 * `fetch(r)` accept it (Node 18-23), else the real Request built at once. "stand-in": the lazy stand-in on
 * every runtime, for a handler that reads a request's members (method, url, headers, body, signal...) but never
 * hands the request itself to `new Request()` or `fetch()`, which on Node 24 would throw. `createApp` is such a
 * handler.
 */
export type RequestKind = "auto" | "stand-in";

/** A Request for a node:http request that builds the real Request (body, signal) only when used. */
export function bridgeRequest(incoming: IncomingMessage, outgoing: ServerResponse, kind: RequestKind = "auto"): Request {
  const lazy = new LazyRequest(incoming, outgoing, requestUrl(incoming));
  if (lazyAccepted || kind === "stand-in") return lazy as unknown as Request;
  // A runtime whose Request reads private fields (Node 24's undici) cannot take a lazy one: build the real
  // Request at once (slower, always right), keeping the body's release where releaseRequestBody looks.
  const real = materialize(lazy as unknown as Slots);
  (real as unknown as Partial<Slots>)[kBody] = (lazy as unknown as Slots)[kBody];
  return real;
}

/** Stop feeding an unread request body once the response is out, draining the rest from the socket. */
export function releaseRequestBody(request: Request): void {
  (request as unknown as Partial<Slots>)[kBody]?.discard();
}
