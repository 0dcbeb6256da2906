/** The webhook URL check as the HTTP app uses it: the config's switches bound in, a ServiceError out. */
import type { ServiceConfig } from "../config/config.ts";
import { ServiceError } from "../errors/service-error.ts";
import type { ResolveHost } from "./check-webhook-url.ts";
import { checkWebhookUrl, webhookUrlDetail } from "./check-webhook-url.ts";

/** Checks a URL given at webhook creation: null when acceptable, else 422 `validation.invalid_url` naming the reason. */
export type WebhookUrlChecker = (url: string) => Promise<ServiceError | null>;

/** Binds `checkWebhookUrl` to the config's `allowHttp`/`allowPrivateNetworks` and a resolver. */
export function makeWebhookUrlChecker(config: ServiceConfig, resolve: ResolveHost): WebhookUrlChecker {
  const options = { allowHttp: config.webhooks.allowHttp, allowPrivateNetworks: config.webhooks.allowPrivateNetworks };
  return async (url) => {
    const check = await checkWebhookUrl(url, options, resolve);
    return check.ok ? null : new ServiceError(422, "validation.invalid_url", webhookUrlDetail(check.reason));
  };
}
