/**
 * Node's webhook capabilities: DNS resolution for the URL check, and a node:http(s) transport that connects
 * to the address the check approved (no second lookup, so no DNS rebinding in between) while keeping the
 * hostname for Host and TLS (SNI and certificate verification).
 */
import { lookup } from "node:dns/promises";
import http from "node:http";
import type { IncomingMessage } from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { LookupFunction } from "node:net";
import { decodeBodyPrefix, RESPONSE_BODY_LIMIT, TransportError } from "@benchdata/core";
import type { TransportErrorKind, WebhookRequest, WebhookResponse, WebhookTransport } from "@benchdata/core";

/** Resolves a hostname with the system resolver (every address, IPv4 first); an IP literal is returned as is. */
export async function nodeResolve(host: string): Promise<string[]> {
  const h = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (isIP(h) !== 0) return [h];
  const found = await lookup(h, { all: true, verbatim: true });
  // IPv4 first: the transport connects to the first address, and IPv6 often has no route on servers.
  return [...found.filter((a) => a.family === 4), ...found.filter((a) => a.family !== 4)].map((a) => a.address);
}

/** Settings of the Node transport. */
export interface NodeTransportOptions {
  /** Extra trusted CA certificates (PEM), e.g. a test's self-signed one. */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /** Verify receivers' certificates (default true). Turning it off is for tests only. */
  readonly rejectUnauthorized?: boolean;
  /** Open connections per origin and address (default 8). */
  readonly maxSocketsPerOrigin?: number;
  /** Origins whose idle connections are kept (least recently used beyond that are closed; default 256). */
  readonly maxOrigins?: number;
}

/** The Node transport, with `close()` to drop its kept-alive connections. */
export interface NodeTransport extends WebhookTransport {
  close(): void;
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH|EPROTO)/;

function classify(e: unknown): TransportError {
  const code = String((e as { code?: unknown })?.code ?? "");
  const message = e instanceof Error ? e.message : String(e);
  let kind: TransportErrorKind = "network";
  if (code === "ECONNREFUSED") kind = "refused";
  else if (code === "ETIMEDOUT" || code === "ESOCKETTIMEDOUT") kind = "timeout";
  else if (code === "ENOTFOUND" || code === "EAI_AGAIN") kind = "dns";
  else if (TLS_CODE.test(code) || /certificate|ssl|tls/i.test(message)) kind = "tls";
  return new TransportError(kind, code ? `${code}: ${message}` : message, { cause: e });
}

/** A `lookup` that answers every query with the one address the URL check approved. */
function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/**
 * A webhook transport on node:http and node:https: connects to `request.address` only, sends Host and SNI
 * for the URL's hostname, never follows redirects, enforces `timeoutMs` over connect + response, reads at
 * most 2 KB of the body (then drops the connection), and keeps connections alive per origin and address.
 */
export function nodeTransport(options: NodeTransportOptions = {}): NodeTransport {
  const agents = new Map<string, http.Agent>();
  const maxOrigins = options.maxOrigins ?? 256;

  function agentFor(url: URL, address: string): http.Agent {
    const key = `${url.protocol}//${url.host}@${address}`;
    const found = agents.get(key);
    if (found) {
      agents.delete(key);
      agents.set(key, found); // most recently used last
      return found;
    }
    // Idle sockets close after 4 s, before the 5 s keep-alive time-out common on servers, to avoid reuse races.
    const common = { keepAlive: true, maxSockets: options.maxSocketsPerOrigin ?? 8, timeout: 4000, scheduling: "lifo" as const };
    const agent =
      url.protocol === "https:"
        ? new https.Agent({
            ...common,
            rejectUnauthorized: options.rejectUnauthorized ?? true,
            ...(options.ca !== undefined ? { ca: options.ca as string | Buffer | Array<string | Buffer> } : {}),
          })
        : new http.Agent(common);
    agents.set(key, agent);
    if (agents.size > maxOrigins) {
      const [oldKey, oldest] = agents.entries().next().value as [string, http.Agent];
      agents.delete(oldKey);
      oldest.destroy();
    }
    return agent;
  }

  function send(req: WebhookRequest): Promise<WebhookResponse> {
    return new Promise<WebhookResponse>((resolve, reject) => {
      const isHttps = req.url.protocol === "https:";
      if (!isHttps && req.url.protocol !== "http:") return reject(new TransportError("network", `unsupported protocol ${req.url.protocol}`));
      if (isIP(req.address) === 0) return reject(new TransportError("network", "the address to connect to is not an IP address"));
      const hostname = req.url.hostname.startsWith("[") ? req.url.hostname.slice(1, -1) : req.url.hostname;
      let settled = false;
      let response: IncomingMessage | null = null;
      const chunks: Buffer[] = [];
      let size = 0;

      const fail = (e: TransportError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(e);
      };
      const answer = (): void => {
        if (settled || !response) return;
        settled = true;
        clearTimeout(timer);
        const retryAfter = response.headers["retry-after"];
        resolve({ status: response.statusCode ?? 0, body: decodeBodyPrefix(Buffer.concat(chunks)), ...(typeof retryAfter === "string" ? { retryAfter } : {}) });
      };

      const request = (isHttps ? https : http).request(
        {
          protocol: req.url.protocol,
          hostname,
          port: req.url.port === "" ? (isHttps ? 443 : 80) : Number(req.url.port),
          path: `${req.url.pathname}${req.url.search}`,
          method: "POST",
          headers: { ...req.headers, "Content-Length": String(Buffer.byteLength(req.body)) },
          agent: agentFor(req.url, req.address),
          lookup: pinnedLookup(req.address),
          // SNI must be a hostname; for an IP-literal URL there is none.
          ...(isHttps && isIP(hostname) === 0 ? { servername: hostname } : {}),
        },
        (res) => {
          response = res;
          res.on("data", (chunk: Buffer) => {
            if (settled) return;
            chunks.push(chunk);
            size += chunk.length;
            if (size >= RESPONSE_BODY_LIMIT) {
              answer();
              res.destroy(); // the rest is never read: a receiver cannot make us download a large body
            }
          });
          res.on("end", answer);
          // The status arrived; a body cut short is still an answer.
          res.on("error", answer);
          res.on("close", answer);
        },
      );
      // One budget for connect, TLS, the status and the body: a receiver that sent its status but stalls the body still answered.
      const timer = setTimeout(() => {
        if (response) {
          answer();
          response.destroy();
        } else {
          fail(new TransportError("timeout", `no response within ${req.timeoutMs} ms`));
        }
        request.destroy();
      }, req.timeoutMs);
      request.on("error", (e) => {
        if (response) answer();
        else fail(classify(e));
      });
      request.end(req.body);
    });
  }

  return {
    send,
    close() {
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  };
}
