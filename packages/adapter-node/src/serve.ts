import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { bridge, type FetchHandler } from "./bridge.ts";
import { installBridgeResponse } from "./bridge-response.ts";
import type { LingerLimits } from "./linger-after-early-answer.ts";

export type { FetchHandler, RequestContext } from "./bridge.ts";

/** Options of `serve`. */
export interface ServeOptions {
  /** The handler every request goes to, e.g. `createApp(…).fetch`. */
  fetch: FetchHandler;
  /** Port to listen on; 0 picks a free one. Defaults to 3000. */
  port?: number;
  /** Address to listen on; defaults to all interfaces. */
  host?: string;
  /** Runs once after the server has drained and closed, e.g. to close storage. */
  onClose?: () => Promise<void>;
  /** Longest wait for in-flight requests on close, in milliseconds, before connections are cut; 10 000. */
  drainTimeout?: number;
  /** Called with every error thrown by the handler; defaults to console.error. Clients only see a 500. */
  onError?: (error: unknown) => void;
  /**
   * Replace `globalThis.Response` with a twin that skips building a body stream for string and byte
   * bodies (it behaves as a Response in every other way, `instanceof` included). Defaults to true.
   */
  lightResponse?: boolean;
  /**
   * After an answer that goes out before its request's body has arrived (a 413), keep reading and discarding
   * the body for at most `ms` and `bytes` before closing, so the client reads the answer instead of a reset.
   * Defaults to 5 000 ms and 64 MiB.
   */
  linger?: LingerLimits;
  /**
   * The longest time a request's headers and body may take to arrive, in milliseconds, from its first byte; then
   * it is answered 408 `request.timeout` (closed instead when an answer has begun). Defaults to 30 000.
   */
  requestTimeout?: number;
  /**
   * "stand-in" hands the handler a lazy Request on every Node, for a handler that never passes the request itself
   * to `new Request()` or `fetch()` (`createApp` never does); on Node 24 that skips building undici's Request for
   * each request. "auto" (the default) does so only where Node's own Request and fetch accept the stand-in (Node
   * 18-23). See docs/runtimes.md.
   */
  requests?: "auto" | "stand-in";
}

/** The default of `ServeOptions.requestTimeout` (ms). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** A running server. */
export interface ServeHandle {
  /** The port actually bound. */
  port: number;
  /** Base URL to reach the server, e.g. `http://localhost:3000`. */
  url: string;
  /** The underlying node:http server. */
  server: Server;
  /**
   * Starts draining without closing the listener: every answer from now on carries `Connection: close`, so
   * keep-alive clients reconnect (through the load balancer, to another instance) instead of staying here.
   */
  drain(): void;
  /** Stop accepting, let in-flight requests finish (within the drain timeout), then run onClose. */
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

function urlHost(address: AddressInfo, host: string | undefined): string {
  const name = host ?? address.address;
  if (name === "" || name === "::" || name === "0.0.0.0") return "localhost";
  return name.includes(":") ? `[${name}]` : name;
}

// What node:http's parser refuses before any handler runs (oversized headers, a malformed request, a
// request that took too long): node's default answer is a bare status line. This one has the service's
// `{detail, code, status}` body and `X-Content-Type-Options: nosniff`, like every other answer.
const CLIENT_ERRORS: Record<string, { status: number; reason: string; code: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, reason: "Request Header Fields Too Large", code: "request.headers_too_large", detail: "Request headers too large." },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: "Request Timeout", code: "request.timeout", detail: "The request took too long to arrive." },
};
const MALFORMED = { status: 400, reason: "Bad Request", code: "request.invalid", detail: "Malformed HTTP request." };

function onClientError(error: Error & { code?: string }, socket: Socket): void {
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const e = CLIENT_ERRORS[error.code ?? ""] ?? MALFORMED;
  const body = JSON.stringify({ detail: e.detail, code: e.code, status: e.status });
  socket.end(
    `HTTP/1.1 ${e.status} ${e.reason}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** Serve a fetch handler on node:http; resolves once the server is listening. */
export async function serve(options: ServeOptions): Promise<ServeHandle> {
  if (options.lightResponse !== false) installBridgeResponse();
  const state = { closing: false };
  const requestTimeout = options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // One bound for headers and body (node's defaults: 60 s for headers, 300 s for the whole request). node checks
  // the bound every `connectionsCheckingInterval` (30 s by default, which would let a 30 s bound run to 60 s): a
  // quarter of the bound, at most a second, keeps the overrun small for a scan of the open connections.
  const server = createServer(
    { requestTimeout, headersTimeout: requestTimeout, connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(requestTimeout / 4))) },
    bridge(options.fetch, { onError: options.onError, state, requests: options.requests ?? "auto", ...(options.linger ? { linger: options.linger } : {}) }),
  );
  server.on("clientError", onClientError);
  await listen(server, options.port ?? 3000, options.host);
  const address = server.address() as AddressInfo;
  const drainTimeout = options.drainTimeout ?? 10_000;

  let closing: Promise<void> | undefined;
  const shutdown = async (): Promise<void> => {
    state.closing = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Responses written from now on say Connection: close; connections that sit between requests
    // are closed as soon as they become idle, which server.close alone only does once.
    server.closeIdleConnections();
    const sweep = setInterval(() => server.closeIdleConnections(), 25);
    const deadline = setTimeout(() => server.closeAllConnections(), drainTimeout);
    try {
      await closed;
    } finally {
      clearInterval(sweep);
      clearTimeout(deadline);
    }
    await options.onClose?.();
  };

  return {
    port: address.port,
    url: `http://${urlHost(address, options.host)}:${address.port}`,
    server,
    drain: () => {
      state.closing = true;
    },
    close: () => (closing ??= shutdown()),
  };
}

/** On SIGTERM or SIGINT, close the handle (draining requests) and exit 0; returns an uninstaller. */
export function installShutdown(handle: Pick<ServeHandle, "close">, log?: (message: string) => void): () => void {
  const uninstall = (): void => {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  };
  function onSignal(signal: NodeJS.Signals): void {
    // A second signal finds no listener and ends the process the default way: a forced stop.
    uninstall();
    log?.(`${signal} received: draining in-flight requests`);
    handle.close().then(
      () => {
        log?.("shut down cleanly");
        process.exit(0);
      },
      (error: unknown) => {
        log?.(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  }
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return uninstall;
}
