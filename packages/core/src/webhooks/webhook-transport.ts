/** The outgoing HTTP client of webhook delivery, as a capability: each runtime's adapter supplies one. */

/** One webhook POST, aimed at an address that was checked just before. */
export interface WebhookRequest {
  readonly url: URL;
  /** The checked IP address to connect to; the URL's hostname still goes in Host and TLS SNI. */
  readonly address: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Hard limit on connect + request + response, in milliseconds. */
  readonly timeoutMs: number;
}

/** What the receiver answered: any status (redirects are never followed) and the first 2 KB of the body. */
export interface WebhookResponse {
  readonly status: number;
  readonly body: string;
  /** The `Retry-After` header, when the receiver sent one (read on 429 and 503). */
  readonly retryAfter?: string | undefined;
}

/** Why a request got no response. */
export type TransportErrorKind = "timeout" | "refused" | "network" | "tls" | "dns";

/** A failed send, classified. Transports throw it; anything else thrown counts as `network`. */
export class TransportError extends Error {
  readonly kind: TransportErrorKind;

  constructor(kind: TransportErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TransportError";
    this.kind = kind;
  }
}

/** The kind of a send failure: a TransportError's own (across module copies), otherwise `network`. */
export function transportErrorKind(e: unknown): TransportErrorKind {
  if (typeof e === "object" && e !== null && (e as { name?: unknown }).name === "TransportError") {
    const kind = (e as { kind?: unknown }).kind;
    if (kind === "timeout" || kind === "refused" || kind === "network" || kind === "tls" || kind === "dns") return kind;
  }
  return "network";
}

/** A client that POSTs a webhook request and reports the response, never following redirects. */
export interface WebhookTransport {
  send(request: WebhookRequest): Promise<WebhookResponse>;
}

/** How much of a response body is kept (and read at all). */
export const RESPONSE_BODY_LIMIT = 2048;

/** Decodes at most RESPONSE_BODY_LIMIT bytes of `bytes` as UTF-8 (a cut character becomes U+FFFD). */
export function decodeBodyPrefix(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes.subarray(0, RESPONSE_BODY_LIMIT));
}

function classifyFetchError(e: unknown, timedOut: boolean): TransportError {
  if (timedOut) return new TransportError("timeout", "the receiver did not answer in time", { cause: e });
  const code = String((e as { cause?: { code?: unknown } })?.cause?.code ?? (e as { code?: unknown })?.code ?? "");
  if (code === "ECONNREFUSED") return new TransportError("refused", "connection refused", { cause: e });
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return new TransportError("dns", "the host does not resolve", { cause: e });
  if (/CERT|TLS|SSL/.test(code)) return new TransportError("tls", `TLS failure (${code})`, { cause: e });
  return new TransportError("network", code ? `network failure (${code})` : "network failure", { cause: e });
}

/**
 * A transport over the Web `fetch`, for runtimes without a lower-level client. It cannot pin the checked
 * address (fetch resolves the name again), so a DNS rebinding between the check and the connection is
 * possible: prefer the Node adapter's `nodeTransport` where available.
 */
export function fetchTransport(fetchFn: typeof fetch = fetch): WebhookTransport {
  return {
    async send(req) {
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, req.timeoutMs);
      try {
        const res = await fetchFn(req.url, { method: "POST", headers: req.headers, body: req.body, redirect: "manual", signal: controller.signal });
        const chunks: Uint8Array[] = [];
        let size = 0;
        const reader = res.body?.getReader();
        while (reader && size < RESPONSE_BODY_LIMIT) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
          size += value.length;
        }
        await reader?.cancel().catch(() => undefined);
        const all = new Uint8Array(size);
        let at = 0;
        for (const c of chunks) {
          all.set(c, at);
          at += c.length;
        }
        const retryAfter = res.headers.get("retry-after");
        return { status: res.status, body: decodeBodyPrefix(all), ...(retryAfter !== null ? { retryAfter } : {}) };
      } catch (e) {
        throw classifyFetchError(e, timedOut);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
