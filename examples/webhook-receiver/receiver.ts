/**
 * A benchdata webhook receiver as a Web-standard fetch handler (runs on Node, Bun, Deno, Workers):
 * verify the signature over the raw body, acknowledge at once, process after answering, skip duplicates.
 */
import { verifyWebhook } from "@benchdata/client";
import type { VerifyWebhookOptions, WebhookEvent } from "@benchdata/client";

/** A verified event, as the service sent it: a union over the event types, `data` typed by `type`. */
export type ReceivedEvent = WebhookEvent;

/** Settings of the receiver. */
export interface ReceiverOptions {
  /** The webhook's `signing_secret` (`whsec_…`), exactly as the service returned it. */
  readonly secret: string;
  /** Called once per event id, after the response went out. `raw` is the exact body that was signed. */
  readonly onEvent?: (event: ReceivedEvent, raw: string) => void | Promise<void>;
  /** Event ids remembered for de-duplication (default 10 000; the oldest are forgotten first). */
  readonly remember?: number;
  /** Options of `verifyWebhook` (timestamp tolerance, a clock, `requireTimestamp` for replay protection). */
  readonly verify?: VerifyWebhookOptions;
}

/** The receiver: a fetch handler. */
export interface Receiver {
  fetch(request: Request): Promise<Response>;
}

const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

/** Creates a receiver for one webhook secret. */
export function createReceiver(options: ReceiverOptions): Receiver {
  const seen = new Map<string, true>();
  const remember = options.remember ?? 10_000;

  return {
    async fetch(request) {
      if (request.method !== "POST") return json(405, { ok: false, error: "method_not_allowed" });
      // Verify the bytes as received: parsing and re-serialising JSON would change them.
      const raw = new Uint8Array(await request.arrayBuffer());
      // Either signature scheme; a stale Standard Webhooks timestamp is refused. Never throws.
      const verified = await verifyWebhook(raw, request.headers, options.secret, options.verify);
      if (!verified.ok) return json(400, { ok: false, error: verified.reason });
      const event = verified.event;
      const text = new TextDecoder().decode(raw);
      // X-Service-Event-Id is not signed; the body is. They must agree, so a replayed body cannot dodge de-duplication.
      const id = request.headers.get("X-Service-Event-Id") ?? request.headers.get("webhook-id");
      if (id === null || id !== event.id) return json(400, { ok: false, error: "event_id_mismatch" });

      // Deliveries are at least once: a retry after a lost acknowledgement brings the same id again.
      if (seen.has(id)) return json(200, { ok: true });
      seen.set(id, true);
      if (seen.size > remember) seen.delete(seen.keys().next().value as string);

      // Answer first, work after: the service waits at most 30 s and retries what it considers failed.
      // (A production receiver would enqueue durably here and record the id with the work's own result.)
      if (options.onEvent) {
        const handler = options.onEvent;
        setTimeout(() => {
          Promise.resolve(handler(event, text)).catch((e: unknown) => console.error("webhook handler failed", id, e));
        }, 0);
      }
      return json(200, { ok: true });
    },
  };
}
