/** One attempt to POST an event to a webhook: re-check the URL, sign, send, and classify the outcome. */
import type { ResolveHost, WebhookUrlCheck, WebhookUrlOptions } from "./check-webhook-url.ts";
import { checkWebhookUrl } from "./check-webhook-url.ts";
import { webhookHeaders } from "./webhook-headers.ts";
import type { WebhookTransport } from "./webhook-transport.ts";
import { RESPONSE_BODY_LIMIT, transportErrorKind } from "./webhook-transport.ts";

/** The capabilities and settings an attempt needs. */
export interface AttemptContext {
  readonly transport: WebhookTransport;
  readonly resolve: ResolveHost;
  readonly urlOptions: WebhookUrlOptions;
  readonly timeoutMs: number;
  /** A monotonic millisecond counter for latencies (performance.now by default). */
  readonly elapsed: () => number;
}

/** What to send. */
export interface AttemptTarget {
  readonly url: string;
  readonly secret: string;
  /** The replaced secret while a rotation's overlap lasts (a second Standard Webhooks signature); null otherwise. */
  readonly previousSecret?: string | null;
  readonly eventId: string;
  readonly eventType: string;
  readonly body: string;
  /** Unix ms of the attempt (its `webhook-timestamp`). */
  readonly at: number;
}

/** How an attempt went: `error` is null on a 2xx, else `http_status`, `timeout`, `refused`, `network`, `tls`, `dns` or `blocked`. */
export interface AttemptOutcome {
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly responseBody: string;
  readonly latencyMs: number;
  /** The receiver's `Retry-After`, if it sent one. */
  readonly retryAfter?: string | undefined;
}

// Allowed on top of the transport's own time-out before the attempt gives up on a transport that ignores it.
const GRACE_MS = 1000;

const TIMED_OUT = Symbol("timed out");

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Makes one attempt. The URL is checked again (DNS may have changed since creation): a refused address is
 * recorded as `blocked` and nothing is sent. Resolution and sending share the time-out. Never throws.
 */
export async function attemptWebhook(ctx: AttemptContext, target: AttemptTarget): Promise<AttemptOutcome> {
  const started = ctx.elapsed();
  const done = (statusCode: number | null, error: string | null, responseBody = ""): AttemptOutcome => ({
    statusCode,
    error,
    responseBody: responseBody.slice(0, RESPONSE_BODY_LIMIT),
    latencyMs: Math.max(0, Math.round(ctx.elapsed() - started)),
  });
  let check: WebhookUrlCheck | typeof TIMED_OUT;
  try {
    check = await withTimeout(checkWebhookUrl(target.url, ctx.urlOptions, ctx.resolve), ctx.timeoutMs);
  } catch {
    return done(null, "dns");
  }
  if (check === TIMED_OUT) return done(null, "dns");
  if (!check.ok) return done(null, check.problem === "unresolvable" ? "dns" : "blocked");

  const headers = webhookHeaders({ secret: target.secret, previousSecret: target.previousSecret, eventId: target.eventId, eventType: target.eventType, body: target.body, timestampSeconds: Math.floor(target.at / 1000) });
  const remaining = Math.max(1, Math.round(ctx.timeoutMs - (ctx.elapsed() - started)));
  try {
    const res = await withTimeout(ctx.transport.send({ url: check.url, address: check.addresses[0]!, headers, body: target.body, timeoutMs: remaining }), remaining + GRACE_MS);
    if (res === TIMED_OUT) return done(null, "timeout");
    const ok = res.status >= 200 && res.status < 300;
    const out = done(res.status, ok ? null : "http_status", res.body);
    return res.retryAfter === undefined ? out : { ...out, retryAfter: res.retryAfter };
  } catch (e) {
    return done(null, transportErrorKind(e));
  }
}
