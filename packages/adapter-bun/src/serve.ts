// The few parts of Bun's API used here, declared locally so the package needs no @types/bun.
interface BunSocketAddress {
  address: string;
  family: string;
  port: number;
}

interface BunServer {
  readonly port: number;
  readonly url: URL;
  readonly pendingRequests: number;
  requestIP(request: Request): BunSocketAddress | null;
  stop(closeActiveConnections?: boolean): Promise<void>;
}

interface BunServeOptions {
  fetch(request: Request, server: BunServer): Response | Promise<Response>;
  error?(error: Error): Response | Promise<Response>;
  port?: number;
  hostname?: string;
}

interface BunRuntime {
  serve(options: BunServeOptions): BunServer;
}

/** What the adapter tells a handler about the connection besides the Request. */
export interface RequestContext {
  /** The peer's IP address (IPv4-mapped IPv6 addresses are given as plain IPv4), or "" if unknown. */
  clientAddress: string;
}

/** A Web-standard request handler, such as `createApp(…).fetch`. */
export type FetchHandler = (request: Request, context: RequestContext) => Response | Promise<Response>;

/** Options of `serve`. */
export interface ServeOptions {
  /** The handler every request goes to, e.g. `createApp(…).fetch`. */
  fetch: FetchHandler;
  /** Port to listen on; 0 picks a free one. Defaults to 3000. */
  port?: number;
  /** Address to listen on; Bun's default (all interfaces) when omitted. */
  hostname?: string;
  /** Runs once after the server has drained and stopped, e.g. to close storage. */
  onClose?: () => Promise<void>;
  /** Longest wait for in-flight requests on stop, in milliseconds, before connections are cut; 10 000. */
  drainTimeout?: number;
  /** Called with every error thrown by the handler; defaults to console.error. Clients only see a 500. */
  onError?: (error: unknown) => void;
  /**
   * An answer ready before its request's body was read (a 413) waits until the rest of the body has been read
   * and discarded, for at most `ms` and `bytes`: Bun closes such a connection at once, and the client, still
   * sending, then reports a reset instead of the answer. Defaults to 5 000 ms and 64 MiB.
   */
  linger?: { readonly ms: number; readonly bytes: number };
}

/** A running server. */
export interface ServeHandle {
  /** The port actually bound. */
  port: number;
  /** Base URL to reach the server, e.g. `http://localhost:3000`. */
  url: string;
  /** Stop accepting, let in-flight requests finish (within the drain timeout), then run onClose. */
  stop(): Promise<void>;
}

const INTERNAL_ERROR = '{"detail":"internal error","code":"internal","status":500}';

/** 5 s and 64 MiB, as the Node adapter's lingering close. */
const DEFAULT_LINGER = { ms: 5_000, bytes: 64 * 1024 * 1024 } as const;

/** Whether the request declares a body (a length other than 0, or chunked). */
function declaresBody(request: Request): boolean {
  const length = request.headers.get("content-length");
  return length !== null ? length.trim() !== "0" : request.headers.has("transfer-encoding");
}

/** Reads and discards what is left of an unread body, for at most `limits`. */
async function drainBody(body: ReadableStream<Uint8Array>, limits: { readonly ms: number; readonly bytes: number }): Promise<void> {
  const reader = body.getReader();
  let read = 0;
  const timer = setTimeout(() => void reader.cancel().catch(() => {}), limits.ms);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
      if (read >= limits.bytes) {
        await reader.cancel();
        return;
      }
    }
  } catch {
    // The client went away, or the time bound cancelled the read: answer now.
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The handler's answer, once the request's body is in: an answer given without reading the body (a 413 for a
 * Content-Length over the limit) waits while the rest is read and discarded (bounded), because Bun would close
 * the connection under a client still sending it, which the client then reports instead of the answer.
 */
async function afterBody(answer: Response | Promise<Response>, request: Request, limits: { readonly ms: number; readonly bytes: number }): Promise<Response> {
  const response = await answer;
  // Unlocked: never read, or read in part and let go (a body over the limit); a body read whole drains at once.
  const body = request.body;
  if (body !== null && !body.locked) await drainBody(body, limits);
  return response;
}

function plainAddress(address: string | undefined): string {
  if (address === undefined) return "";
  // A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d; allow-lists are written in plain IPv4.
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

/** Serve a fetch handler with `Bun.serve`; throws when not running on Bun. */
export function serve(options: ServeOptions): ServeHandle {
  const bun = (globalThis as { Bun?: BunRuntime }).Bun;
  if (bun === undefined) throw new Error("@benchdata/adapter-bun needs the Bun runtime");
  const { fetch } = options;
  const onError = options.onError ?? ((error: unknown): void => console.error(error));
  const linger = options.linger ?? DEFAULT_LINGER;

  const server = bun.serve({
    // A plain function, never a router object: Bun would try to read routes off it.
    fetch: (request, server) => {
      const answer = fetch(request, { clientAddress: plainAddress(server.requestIP(request)?.address) });
      return declaresBody(request) ? afterBody(answer, request, linger) : answer;
    },
    // Bun calls this for a throw or a rejection; without it, development mode answers with a stack trace.
    error(error) {
      onError(error);
      return new Response(INTERNAL_ERROR, { status: 500, headers: { "content-type": "application/json", "x-content-type-options": "nosniff" } });
    },
    port: options.port ?? 3000,
    ...(options.hostname === undefined ? {} : { hostname: options.hostname }),
  });

  const drainTimeout = options.drainTimeout ?? 10_000;
  let stopping: Promise<void> | undefined;
  const shutdown = async (): Promise<void> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        // Bounded drain: whatever is still running now gets its connection closed.
        server.stop(true).then(resolve, resolve);
      }, drainTimeout);
    });
    try {
      await Promise.race([server.stop(false), deadline]);
    } finally {
      clearTimeout(timer);
    }
    await options.onClose?.();
  };

  return {
    port: server.port,
    url: server.url.origin,
    stop: () => (stopping ??= shutdown()),
  };
}
