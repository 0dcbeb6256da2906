// The few parts of Deno's API used here, declared locally so the package needs no Deno types.
interface DenoServeInfo {
  remoteAddr: { hostname: string };
}

interface DenoServer {
  readonly addr: { port: number; hostname: string };
  readonly finished: Promise<void>;
  shutdown(): Promise<void>;
}

interface DenoRuntime {
  serve(
    options: { port: number; hostname?: string; onListen?: (addr: { port: number }) => void; onError?: (error: unknown) => Response },
    handler: (request: Request, info: DenoServeInfo) => Response | Promise<Response>,
  ): DenoServer;
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
  /** Address to listen on; Deno's default (all interfaces) when omitted. */
  hostname?: string;
  /** Runs once after the server has drained and stopped, e.g. to close storage. */
  onClose?: () => Promise<void>;
  /** Longest wait for in-flight requests on stop, in milliseconds; 10 000. Past it the process end cuts what is left. */
  drainTimeout?: number;
  /** Called with every error thrown by the handler; defaults to console.error. Clients only see a 500. */
  onError?: (error: unknown) => void;
}

/** A running server. */
export interface ServeHandle {
  /** The port actually bound. */
  port: number;
  /** Base URL to reach the server, e.g. `http://localhost:3000`. */
  url: string;
  /** Stop accepting, let in-flight requests finish (within the drain timeout), then run onClose. Idempotent. */
  stop(): Promise<void>;
}

const INTERNAL_ERROR = '{"detail":"internal error","code":"internal","status":500}';

function plainAddress(address: string | undefined): string {
  if (address === undefined) return "";
  // A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d; allow-lists are written in plain IPv4.
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

function urlOf(hostname: string | undefined, port: number): string {
  const name = hostname === undefined || hostname === "" || hostname === "::" || hostname === "0.0.0.0" ? "localhost" : hostname;
  return `http://${name.includes(":") ? `[${name}]` : name}:${port}`;
}

/** Serve a fetch handler with `Deno.serve`; throws when not running on Deno. */
export function serve(options: ServeOptions): ServeHandle {
  const deno = (globalThis as { Deno?: DenoRuntime }).Deno;
  if (deno === undefined) throw new Error("@benchdata/adapter-deno needs the Deno runtime");
  const onError = options.onError ?? ((error: unknown): void => console.error(error));
  const server = deno.serve(
    {
      port: options.port ?? 3000,
      ...(options.hostname !== undefined ? { hostname: options.hostname } : {}),
      onListen: () => {},
      // Deno calls this for a throw or a rejection: log it, and never show the client a stack trace.
      onError(error) {
        onError(error);
        return new Response(INTERNAL_ERROR, { status: 500, headers: { "content-type": "application/json", "x-content-type-options": "nosniff" } });
      },
    },
    (request, info) => options.fetch(request, { clientAddress: plainAddress(info.remoteAddr.hostname) }),
  );
  const drainTimeout = options.drainTimeout ?? 10_000;
  let stopping: Promise<void> | undefined;
  const shutdown = async (): Promise<void> => {
    // shutdown() stops accepting and resolves once in-flight requests are answered; past the drain
    // timeout we stop waiting and let the process end cut what is left.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([server.shutdown(), new Promise<void>((resolve) => (timer = setTimeout(resolve, drainTimeout)))]);
    clearTimeout(timer);
    await options.onClose?.();
  };
  return { port: server.addr.port, url: urlOf(options.hostname, server.addr.port), stop: () => (stopping ??= shutdown()) };
}
