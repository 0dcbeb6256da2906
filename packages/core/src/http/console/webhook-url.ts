/** The syntactic webhook URL check, used when no full (DNS-aware) check is injected and before it. */
import { ServiceError } from "../../errors/service-error.ts";
import { checkWebhookUrlShape, webhookUrlDetail } from "../../webhooks/check-webhook-url.ts";

/**
 * 422 `validation.invalid_url` unless `url` is an absolute https URL (or http with `allowHttp`) without credentials
 * or fragment. The same reasons, in the same words, as the full check (`checkWebhookUrl`).
 */
export function checkUrlSyntax(url: string, allowHttp: boolean): ServiceError | null {
  const shape = checkWebhookUrlShape(url, allowHttp);
  return shape.ok ? null : new ServiceError(422, "validation.invalid_url", webhookUrlDetail(shape.reason));
}
