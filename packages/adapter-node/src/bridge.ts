import type { IncomingMessage, ServerResponse } from "node:http";
import { BadRequestError, bridgeRequest, releaseRequestBody } from "./bridge-request.ts";
import type { RequestKind } from "./bridge-request.ts";
import { NativeResponse, nativeResponse, simpleResponseParts } from "./bridge-response.ts";
import { bridgeWrite } from "./bridge-write.ts";
import type { LingerLimits } from "./linger-after-early-answer.ts";
import { DEFAULT_LINGER, earlyAnswerCloses, lingerAfterEarlyAnswer } from "./linger-after-early-answer.ts";

/** What the adapter tells a handler about the connection besides the Request. */
export interface RequestContext {
  /** The peer's IP address (IPv4-mapped IPv6 addresses are given as plain IPv4), or "" if unknown. */
  clientAddress: string;
}

/** A Web-standard request handler, such as `createApp(…).fetch`. */
export type FetchHandler = (request: Request, context: RequestContext) => Response | Promise<Response>;

/** How the bridge reports failures and learns that the server is shutting down. */
export interface BridgeOptions {
  /** Called with every error thrown by the handler or while writing; defaults to console.error. */
  onError?: (error: unknown) => void;
  /** Read on every response: once `closing` is true, responses carry `Connection: close`. */
  state?: { closing: boolean };
  /** After an answer that goes out before its request's body has arrived, how long and how much to keep reading it (see linger-after-early-answer.ts). */
  linger?: LingerLimits;
  /** Which Request the handler gets: "auto" (default) or "stand-in" (see RequestKind in bridge-request.ts). */
  requests?: RequestKind;
}

const INTERNAL_ERROR = '{"detail":"internal error","code":"internal","status":500}';
const BAD_REQUEST = '{"detail":"malformed request line or Host header","code":"request.invalid","status":400}';

function writeJson(outgoing: ServerResponse, status: number, body: string): void {
  if (outgoing.headersSent) {
    // Half a response is already on the wire: cutting the connection is the only honest signal.
    outgoing.destroy();
    return;
  }
  if (outgoing.destroyed) return;
  outgoing.writeHead(status, {
    "content-type": "application/json",
    "x-content-type-options": "nosniff",
    "content-length": Buffer.byteLength(body),
  });
  outgoing.end(body);
}

function clientAddress(incoming: IncomingMessage): string {
  const address = incoming.socket?.remoteAddress;
  if (address === undefined) return "";
  // A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d; allow-lists are written in plain IPv4.
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

interface Server {
  onError: (error: unknown) => void;
  state: { closing: boolean };
}

// Module-level functions rather than per-request closures: the static route allocates nothing here.
function fail(server: Server, outgoing: ServerResponse, request: Request, error: unknown): void {
  server.onError(error);
  writeJson(outgoing, 500, INTERNAL_ERROR);
  releaseRequestBody(request);
}

function respond(server: Server, incoming: IncomingMessage, outgoing: ServerResponse, request: Request, response: unknown): void {
  if (!(response instanceof NativeResponse)) {
    fail(server, outgoing, request, new TypeError(`the fetch handler returned ${typeof response}, not a Response`));
    return;
  }
  if (outgoing.destroyed) {
    // The client is gone; let go of a streamed body so its producer stops (a simple one holds nothing).
    if (simpleResponseParts(response) === undefined) {
      const native = nativeResponse(response);
      if (!native.bodyUsed) native.body?.cancel().catch(() => {});
    }
    releaseRequestBody(request);
    return;
  }
  if (server.state.closing || earlyAnswerCloses(incoming)) outgoing.shouldKeepAlive = false;
  let writing: Promise<void> | undefined;
  try {
    writing = bridgeWrite(response, outgoing, incoming.method === "HEAD");
  } catch (error) {
    fail(server, outgoing, request, error);
    return;
  }
  if (writing === undefined) releaseRequestBody(request);
  else
    writing.then(
      () => releaseRequestBody(request),
      (error: unknown) => fail(server, outgoing, request, error),
    );
}

// Answers that a handler resolves during one turn of the event loop go out together, in the turn's check phase
// (setImmediate), instead of one by one as each promise settles. Every write to a peer on this machine (a
// proxy, a sidecar, a load generator) wakes it; written in a burst, the first write wakes it and the rest find
// it awake. Measured on the memory store, where each answer used to be written the moment it was decided:
// 29.7-34.3 -> 22.8-26.3 µs of server CPU per request, 31-35k -> 40-46k req/s (docs/benchmarks.md). The
// answers wait for nothing but the rest of the turn: no timer, no added latency beyond it.
const burst: { server: Server; incoming: IncomingMessage; outgoing: ServerResponse; request: Request; response: unknown }[] = [];

function answerInBurst(server: Server, incoming: IncomingMessage, outgoing: ServerResponse, request: Request, response: unknown): void {
  burst.push({ server, incoming, outgoing, request, response });
  if (burst.length === 1) setImmediate(flushBurst);
}

function flushBurst(): void {
  const answers = burst.splice(0);
  for (const a of answers) respond(a.server, a.incoming, a.outgoing, a.request, a.response);
}

/** A node:http request listener that runs a fetch handler through the lean Request/Response bridge. */
export function bridge(
  fetch: FetchHandler,
  options: BridgeOptions = {},
): (incoming: IncomingMessage, outgoing: ServerResponse) => void {
  const server: Server = {
    onError: options.onError ?? ((error: unknown): void => console.error(error)),
    state: options.state ?? { closing: false },
  };
  const linger = options.linger ?? DEFAULT_LINGER;
  const requests = options.requests ?? "auto";

  return (incoming, outgoing) => {
    // Whatever answers this request (the handler, or an error below), it may go out before the body is in.
    lingerAfterEarlyAnswer(incoming, outgoing, linger);
    let request: Request;
    try {
      request = bridgeRequest(incoming, outgoing, requests);
    } catch (error) {
      outgoing.shouldKeepAlive = false;
      if (error instanceof BadRequestError) {
        writeJson(outgoing, 400, BAD_REQUEST);
      } else {
        server.onError(error);
        writeJson(outgoing, 500, INTERNAL_ERROR);
      }
      return;
    }

    let result: Response | Promise<Response>;
    try {
      result = fetch(request, { clientAddress: clientAddress(incoming) });
    } catch (error) {
      fail(server, outgoing, request, error);
      return;
    }
    // A Response straight back (a static route) is written in this same tick, no promise in between.
    if (result instanceof NativeResponse) {
      respond(server, incoming, outgoing, request, result);
    } else {
      Promise.resolve(result).then(
        (response) => answerInBurst(server, incoming, outgoing, request, response),
        (error: unknown) => fail(server, outgoing, request, error),
      );
    }
  };
}
