/**
 * The CLI's HTTP server on the runtime it runs on: node:http (@benchdata/adapter-node's lean bridge) on Node,
 * `Bun.serve` on Bun (@benchdata/adapter-bun), `Deno.serve` on Deno (@benchdata/adapter-deno). Each drains
 * in-flight requests on close, within the same timeout, then runs `onClose`.
 */
import { serve as serveBun } from "@benchdata/adapter-bun";
import { serve as serveDenoAdapter } from "@benchdata/adapter-deno";
import { serve as serveNode } from "@benchdata/adapter-node";
import type { FetchHandler } from "@benchdata/adapter-node";

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
  // The CLI's handler is always createApp's, which never hands its request to `new Request()` or `fetch()`: it
  // can take the lazy stand-in on every Node (on Node 24 that saves building undici's Request per request).
  const h = await serveNode({ ...options, requests: "stand-in" });
  return { kind, port: h.port, url: h.url, drain: () => h.drain(), close: () => h.close() };
}

function serveDeno(options: RuntimeServeOptions): RuntimeServeHandle {
  const h = serveDenoAdapter({
    fetch: options.fetch,
    port: options.port ?? 3000,
    ...(options.host !== undefined ? { hostname: options.host } : {}),
    ...(options.onClose ? { onClose: options.onClose } : {}),
    ...(options.drainTimeout !== undefined ? { drainTimeout: options.drainTimeout } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
  });
  return { kind: "Deno.serve", port: h.port, url: urlOf(options.host, h.port), drain: () => {}, close: () => h.stop() };
}
