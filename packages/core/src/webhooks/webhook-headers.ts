/** The headers of a webhook request: both signature schemes, the event's identity, and the content type. */
import { signatureHeader, standardWebhookSignature } from "../signing/signature.ts";

/** The User-Agent of every webhook request. */
export const WEBHOOK_USER_AGENT = "benchdata-webhooks/0.1";

/** What the headers are computed from. */
export interface WebhookHeaderInput {
  readonly secret: string;
  /**
   * The secret a rotation replaced, while its overlap lasts: `webhook-signature` then carries a second `v1,`
   * entry under it (after the new one), so receivers still holding the old secret keep verifying.
   */
  readonly previousSecret?: string | null | undefined;
  readonly eventId: string;
  readonly eventType: string;
  /** The exact body sent (both signatures cover these bytes). */
  readonly body: string;
  /** Unix seconds of this attempt (`webhook-timestamp`, signed by the Standard Webhooks scheme). */
  readonly timestampSeconds: number;
}

/**
 * Headers of one attempt: `X-Service-Signature: sha256=<hex>` (HMAC of the body), `X-Service-Event-Id`,
 * `X-Service-Event-Type`, and the Standard Webhooks trio `webhook-id`, `webhook-timestamp`, `webhook-signature`.
 * During a rotation's overlap `webhook-signature` holds two space-separated entries (new secret first, then the
 * previous one) and `X-Service-Signature` the new secret's only.
 */
export function webhookHeaders(input: WebhookHeaderInput): Record<string, string> {
  return {
    "Content-Type": "application/json",
    "User-Agent": WEBHOOK_USER_AGENT,
    "X-Service-Signature": signatureHeader(input.secret, input.body),
    "X-Service-Event-Id": input.eventId,
    "X-Service-Event-Type": input.eventType,
    "webhook-id": input.eventId,
    "webhook-timestamp": String(input.timestampSeconds),
    "webhook-signature": signatures(input),
  };
}

function signatures(input: WebhookHeaderInput): string {
  const current = standardWebhookSignature(input.secret, input.eventId, input.timestampSeconds, input.body);
  if (input.previousSecret == null || input.previousSecret === input.secret) return current;
  return `${current} ${standardWebhookSignature(input.previousSecret, input.eventId, input.timestampSeconds, input.body)}`;
}
