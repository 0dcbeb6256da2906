/**
 * The webhook delivery worker: claims due deliveries from storage under a lease, attempts each one, and
 * records the attempt with the next state from the retry schedule. Any number of workers may run against
 * one storage; the lease keeps each delivery with one of them at a time.
 */
import type { Clock, RandomSource } from "../clock/clock.ts";
import type { ServiceConfig } from "../config/config.ts";
import type { Logger } from "../log/logger.ts";
import { silentLogger } from "../log/logger.ts";
import { faultLog } from "../log/fault-log.ts";
import type { MetricsRegistry } from "../metrics/metrics-registry.ts";
import { serviceMetrics } from "../metrics/service-metrics.ts";
import type { ClaimedDelivery, OutboxStore } from "../storage/types.ts";
import type { AttemptContext } from "./attempt-webhook.ts";
import { attemptWebhook } from "./attempt-webhook.ts";
import type { ResolveHost } from "./check-webhook-url.ts";
import type { DeliveryNext } from "./delivery-next-state.ts";
import { deliveryNextState, deliveryNextStateAfterWait, parseRetryAfter } from "./delivery-next-state.ts";
import { cryptoRandom } from "../clock/clock.ts";
import { newId } from "../ids/new-id.ts";
import type { WebhookTransport } from "./webhook-transport.ts";
import type { WorkerLoop } from "./worker-loop.ts";
import type { SecretBox } from "./secret-box.ts";
import { plaintextSecretBox, previousSecretAt, sealedKeyId } from "./secret-box.ts";
import { workerLoop } from "./worker-loop.ts";

/** The capabilities and settings of a delivery worker. */
export interface DeliveryWorkerOptions {
  /** The outbox: the worker claims deliveries and records their attempts, nothing else. */
  readonly storage: OutboxStore;
  readonly clock: Clock;
  /** For the ids of `webhook.disabled` events (default Web Crypto); the schedule has no jitter. */
  readonly random?: RandomSource;
  readonly transport: WebhookTransport;
  readonly resolve: ResolveHost;
  readonly config: ServiceConfig;
  readonly logger?: Logger;
  /** Sends in flight at once across every webhook (default 32). Each webhook holds at most `concurrencyPerWebhook` of them. */
  readonly concurrency?: number;
  /** How often the loop looks for due deliveries when not nudged (default 1000 ms). */
  readonly pollIntervalMs?: number;
  /** A monotonic millisecond counter for latencies (default `performance.now`). */
  readonly elapsed?: () => number;
  /** Opens the stored signing secrets (the app's box; default `plaintextSecretBox`). */
  readonly secretBox?: SecretBox;
  /** Where to count attempts by outcome and their latency (e.g. `app.metrics`, so `/metrics` shows them). */
  readonly metrics?: MetricsRegistry;
}

/** A delivery worker: `tick()` attempts what is due now; `start()`/`nudge()`/`stop()` run it as a loop. */
export type DeliveryWorker = WorkerLoop;

const DAY_MS = 86_400_000;

/** Lease beyond the time-out: room for recording the attempt and for clocks of several instances to differ. */
export const DELIVERY_LEASE_MARGIN_MS = 15_000;

/** Creates a delivery worker over `storage`; nothing runs until `tick()` or `start()`. */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { storage, clock, config } = options;
  const logger = options.logger ?? silentLogger;
  const metrics = options.metrics ? serviceMetrics(options.metrics) : null;
  // A storage outage fails every poll: logged with its cause, rate-limited, and the recovery too.
  const faults = faultLog(logger, clock, { message: "webhook deliveries: storage failed", onFault: (cause) => metrics?.storageError(cause) });
  const timeoutMs = Math.round(config.webhooks.timeoutSeconds * 1000);
  // The attempt (resolution + send) is bounded by the time-out plus a one-second grace, so the lease outlives it.
  const leaseMs = timeoutMs + DELIVERY_LEASE_MARGIN_MS;
  const ctx: AttemptContext = {
    transport: options.transport,
    resolve: options.resolve,
    urlOptions: { allowHttp: config.webhooks.allowHttp, allowPrivateNetworks: config.webhooks.allowPrivateNetworks },
    timeoutMs,
    elapsed: options.elapsed ?? (() => performance.now()),
  };

  const box = options.secretBox ?? plaintextSecretBox;
  const random = options.random ?? cryptoRandom;

  async function deliver(claim: ClaimedDelivery): Promise<void> {
    // A secret that does not open (its operator key is not configured) is not an attempt: the delivery
    // stays pending and is claimed again once its lease runs out, after the operator fixes the keys.
    let secret: string;
    try {
      secret = await box.open(claim.webhookId, claim.secret);
    } catch (error) {
      // Named as what it is (a missing operator key), not as a storage fault.
      logger.error("webhook delivery waits: its signing secret opens under no configured operator key", { webhook_id: claim.webhookId, delivery_id: claim.deliveryId, key_id: sealedKeyId(claim.secret), error: error instanceof Error ? error.message : String(error) });
      return;
    }
    const at = clock.now();
    const previousSecret = await previousSecretAt(box, claim.webhookId, claim.previousSecret, claim.previousSecretUntil, at);
    const outcome = await attemptWebhook(ctx, { url: claim.url, secret, previousSecret, eventId: claim.eventId, eventType: claim.eventType, body: claim.body, at });
    const ended = clock.now();
    // The receiver steers: 410 Gone ends the delivery and disables the webhook; 429/503 with Retry-After
    // moves the next attempt (docs/webhooks.md, "Answering").
    const gone = outcome.statusCode === 410;
    const wait = outcome.statusCode === 429 || outcome.statusCode === 503 ? parseRetryAfter(outcome.retryAfter, ended) : null;
    const next: DeliveryNext = gone
      ? { status: "dead" }
      : wait !== null
        ? deliveryNextStateAfterWait(claim.attempt, ended, config.webhooks.retryDelaysSeconds, wait)
        : deliveryNextState(claim.attempt, outcome.error === null, ended, config.webhooks.retryDelaysSeconds);
    const fields = {
      delivery_id: claim.deliveryId,
      webhook_id: claim.webhookId,
      event_id: claim.eventId,
      event_type: claim.eventType,
      attempt: claim.attempt,
      status_code: outcome.statusCode,
      error: outcome.error,
      latency_ms: outcome.latencyMs,
      next: next.status,
    };
    const recorded = await storage.completeDelivery({
      deliveryId: claim.deliveryId,
      leaseToken: claim.leaseToken,
      attempt: { attempt: claim.attempt, at, statusCode: outcome.statusCode, latencyMs: outcome.latencyMs, error: outcome.error, responseBody: outcome.responseBody },
      next,
      gone,
      health: { disableAfterMs: Math.round(config.webhooks.disableAfterDays * DAY_MS), disableAfterDead: config.webhooks.disableAfterDeadDeliveries, eventId: newId("evt", clock, random) },
    });
    if (metrics) {
      metrics.deliveryLatency.observe(outcome.latencyMs / 1000);
      const d = metrics.deliveries;
      (!recorded ? d.lease_lost : outcome.error === null ? d.succeeded : next.status === "dead" ? d.dead : d.retrying).inc();
    }
    if (!recorded) logger.warn("webhook attempt not recorded: the lease was lost", fields);
    else if (outcome.error === null) logger.info("webhook delivered", fields);
    else if (next.status === "dead") logger.warn("webhook delivery dead after its last attempt", fields);
    else logger.info("webhook attempt failed, will retry", fields);
  }

  return workerLoop<ClaimedDelivery>({
    claim: async (limit) => {
      const claimed = await storage.claimDeliveries({ now: clock.now(), leaseMs, limit, perWebhook: config.webhooks.concurrencyPerWebhook, ordered: config.webhooks.ordered });
      if (faults.failing) faults.ok();
      return claimed;
    },
    handle: deliver,
    concurrency: options.concurrency ?? 32,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    // An unrecorded attempt (storage failed) is made again once its lease runs out.
    onError: (stage, e) => faults.fault(stage === "claim" ? "claimDeliveries" : "completeDelivery", e),
  });
}
