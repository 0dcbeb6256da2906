/**
 * The CLI's HTTP server on the runtime it runs on: node:http (this package's lean bridge) on Node,
 * `Bun.serve` on Bun (through @benchdata/adapter-bun), `Deno.serve` on Deno. Each drains in-flight
 * requests on close, within the same timeout, then runs `onClose`.
 */
import { serve as serveBun } from "@benchdata/adapter-bun";
import { serve as serveNode } from "./serve.ts";
import type { FetchHandler } from "./serve.ts";

/** Which server a runtime gets. */
export type HttpServerKind = "node:http" | "Bun.serve" | "Deno.serve";

/** The HTTP server of the runtime this code runs on. */
export function runtimeHttpServer(): HttpServerKind {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  if (g.Deno !== undefined) return "Deno.serve";
  if (g.Bun !== undefined) return "Bun.serve";
  return "node:http";
}

/** Options of `serveOnRuntime` (those of node `serve` that every runtime honours). */
export interface RuntimeServeOptions {
  fetch: FetchHandler;
  port?: number;
  host?: string;
  onClose?: () => Promise<void>;
  drainTimeout?: number;
  onError?: (error: unknown) => void;
  /** node:http only: the longest time a request's headers and body may take to arrive (ms); Bun and Deno keep their servers' own idle timeouts (docs/runtimes.md). */
  requestTimeout?: number;
}

/** A running server on any runtime. */
export interface RuntimeServeHandle {
  readonly kind: HttpServerKind;
  readonly port: number;
  readonly url: string;
  /**
   * Starts draining with the listener still open: on node:http every answer from now on carries
   * `Connection: close`; Bun.serve and Deno.serve keep their connections as they are (nothing to do).
   */
  drain(): void;
  /** Stop accepting, let in-flight requests finish (within the drain timeout), then run onClose. */
  close(): Promise<void>;
}

const INTERNAL_ERROR = '{"detail":"internal error","code":"internal","status":500}';

function urlOf(host: string | undefined, port: number): string {
  const name = host === undefined || host === "" || host === "::" || host === "0.0.0.0" ? "localhost" : host;
  return `http://${name.includes(":") ? `[${name}]` : name}:${port}`;
}

/** Serves `fetch` with the runtime's own HTTP server; resolves once it listens. */
export async function serveOnRuntime(options: RuntimeServeOptions): Promise<RuntimeServeHandle> {
  const kind = runtimeHttpServer();
  if (kind === "Bun.serve") {
    const h = serveBun({
      fetch: options.fetch,
      port: options.port ?? 3000,
      ...(options.host !== undefined ? { hostname: options.host } : {}),
      ...(options.onClose ? { onClose: options.onClose } : {}),
      ...(options.drainTimeout !== undefined ? { drainTimeout: options.drainTimeout } : {}),
      ...(options.onError ? { onError: options.onError } : {}),
    });
    return { kind, port: h.port, url: urlOf(options.host, h.port), drain: () => {}, close: () => h.stop() };
  }
  if (kind === "Deno.serve") return serveDeno(options);
  const h = await serveNode(options);
  return { kind, port: h.port, url: h.url, drain: () => h.drain(), close: () => h.close() };
}

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

function plainAddress(address: string | undefined): string {
  if (address === undefined) return "";
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

function serveDeno(options: RuntimeServeOptions): RuntimeServeHandle {
  const deno = (globalThis as { Deno?: DenoRuntime }).Deno!;
  const onError = options.onError ?? ((error: unknown): void => console.error(error));
  const server = deno.serve(
    {
      port: options.port ?? 3000,
      ...(options.host !== undefined ? { hostname: options.host } : {}),
      onListen: () => {},
      // Deno calls this for a throw or a rejection: log it, and never show the client a stack trace.
      onError(error) {
        onError(error);
        return new Response(INTERNAL_ERROR, { status: 500, headers: { "content-type": "application/json" } });
      },
    },
    (request, info) => options.fetch(request, { clientAddress: plainAddress(info.remoteAddr.hostname) }),
  );
  const drainTimeout = options.drainTimeout ?? 10_000;
  let closing: Promise<void> | undefined;
  const shutdown = async (): Promise<void> => {
    // shutdown() stops accepting and resolves once in-flight requests are answered; past the drain
    // timeout we stop waiting and let the process end cut what is left.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([server.shutdown(), new Promise<void>((resolve) => (timer = setTimeout(resolve, drainTimeout)))]);
    clearTimeout(timer);
    await options.onClose?.();
  };
  return { kind: "Deno.serve", port: server.addr.port, url: urlOf(options.host, server.addr.port), drain: () => {}, close: () => (closing ??= shutdown()) };
}
