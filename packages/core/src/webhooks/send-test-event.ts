/** POST /webhooks/test: one synchronous attempt of a synthetic `quota.warning` to each of an account's webhooks. */
import type { Clock, RandomSource } from "../clock/clock.ts";
import type { ServiceConfig } from "../config/config.ts";
import { effectiveLimits } from "../config/config.ts";
import { quotaWarningEvent } from "../events/builders.ts";
import { serializeEvent } from "../events/events.ts";
import { newId } from "../ids/new-id.ts";
import type { Logger } from "../log/logger.ts";
import { silentLogger } from "../log/logger.ts";
import type { AccountStore, UsageStore, WebhookStore } from "../storage/types.ts";
import { attemptWebhook } from "./attempt-webhook.ts";
import type { ResolveHost } from "./check-webhook-url.ts";
import type { WebhookTransport } from "./webhook-transport.ts";
import type { SecretBox } from "./secret-box.ts";
import { plaintextSecretBox, previousSecretAt, sealedKeyId } from "./secret-box.ts";

/** What sending a test event needs. */
export interface TestEventDeps {
  /** Reads the account, its webhooks and its usage (for the sample event's figures); writes nothing. */
  readonly storage: AccountStore & WebhookStore & UsageStore;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly transport: WebhookTransport;
  readonly resolve: ResolveHost;
  readonly config: ServiceConfig;
  readonly logger?: Logger;
  /** A monotonic millisecond counter for durations (default `performance.now`). */
  readonly elapsed?: () => number;
  /** Opens the stored signing secrets (default `plaintextSecretBox`). */
  readonly secretBox?: SecretBox;
}

/** The outcome for one webhook, as the console endpoint answers it. */
export interface TestEventResult {
  readonly webhook_id: string;
  readonly url: string;
  readonly ok: boolean;
  readonly response_status: number | null;
  readonly duration_ms: number;
  /**
   * Null on a 2xx; else `http_status`, `timeout`, `refused`, `network`, `tls`, `dns` or `blocked`, or
   * `secret_unopenable` when the webhook's signing secret opens under no operator key this instance has (nothing sent).
   */
  readonly error: string | null;
}

/** The body of `POST /api/v1/console/webhooks/test`. */
export interface TestEventResponse {
  readonly event_id: string;
  readonly results: TestEventResult[];
}

/** The usage level the last `quota.warning` of an allowance would report (80% of the base, or of the latest block). */
function warningLevel(allowance: number, baseQuota: number, blockSize: number): number {
  if (allowance <= baseQuota || blockSize <= 0) return Math.ceil(baseQuota * 0.8);
  return allowance - blockSize + Math.ceil(blockSize * 0.8);
}

/**
 * Sends one synthetic `quota.warning` (numbers from the account's current period) to every webhook of the
 * account, whatever types they subscribe to, all at once; one attempt each, never retried, not stored as a
 * delivery. The same body (one event id) goes to every webhook, each signed with its own secret.
 */
export async function sendTestEvent(deps: TestEventDeps, accountId: string): Promise<TestEventResponse> {
  const { storage, clock, config } = deps;
  const now = clock.now();
  const eventId = newId("evt", clock, deps.random);
  const [account, webhooks] = await Promise.all([storage.getAccount(accountId), storage.listWebhooks(accountId)]);
  const limits = effectiveLimits(config, account?.tier ?? "developer", account?.limits ?? {});
  const usage = await storage.usage(accountId, now, config.billing.anchorDay, limits.monthlyQuota, limits.blockSize);
  const level = warningLevel(usage.allowance, limits.monthlyQuota, limits.blockSize);
  const event = quotaWarningEvent(eventId, accountId, now, {
    used: level,
    allowance: usage.allowance,
    threshold: level,
    periodStart: usage.periodStart,
    periodEnd: usage.periodEnd,
  });
  const body = serializeEvent(event);
  const ctx = {
    transport: deps.transport,
    resolve: deps.resolve,
    urlOptions: { allowHttp: config.webhooks.allowHttp, allowPrivateNetworks: config.webhooks.allowPrivateNetworks },
    timeoutMs: Math.round(config.webhooks.timeoutSeconds * 1000),
    elapsed: deps.elapsed ?? (() => performance.now()),
  };
  const results = await Promise.all(
    webhooks.map(async (wh): Promise<TestEventResult> => {
      const box = deps.secretBox ?? plaintextSecretBox;
      let secret: string;
      try {
        secret = await box.open(wh.id, wh.secret);
      } catch (error) {
        // This instance lacks the operator key the secret was sealed under (keys differ between instances, say
        // mid-rotation): the operator's to fix, so an answer naming it, never a 500.
        (deps.logger ?? silentLogger).error("webhook signing secret opens under no configured operator key", { webhook_id: wh.id, key_id: sealedKeyId(wh.secret), error: error instanceof Error ? error.message : String(error) });
        return { webhook_id: wh.id, url: wh.url, ok: false, response_status: null, duration_ms: 0, error: "secret_unopenable" };
      }
      // During a rotation's overlap the test event is signed like a delivery: with both secrets.
      const previousSecret = await previousSecretAt(box, wh.id, wh.previousSecret, wh.previousSecretUntil, now);
      const out = await attemptWebhook(ctx, { url: wh.url, secret, previousSecret, eventId, eventType: event.type, body, at: now });
      (deps.logger ?? silentLogger).info("webhook test event sent", { webhook_id: wh.id, event_id: eventId, status_code: out.statusCode, error: out.error });
      return { webhook_id: wh.id, url: wh.url, ok: out.error === null, response_status: out.statusCode, duration_ms: out.latencyMs, error: out.error };
    }),
  );
  return { event_id: eventId, results };
}
