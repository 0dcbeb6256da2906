/**
 * Wires a running benchdata: storage from a URL, the HTTP app, the webhook delivery, billing and pruning
 * workers, and the runtime's own HTTP server (node:http, Bun.serve or Deno.serve), with one shutdown path (drain
 * requests, stop workers, close storage).
 */
import type { Clock, Logger, SecretBox, ServiceConfig, Storage } from "@benchdata/core";
import {
  createBillingWorker,
  createDeliveryWorker,
  createMemoryStorage,
  createMetricsRegistry,
  createPruneWorker,
  cryptoRandom,
  makeWebhookUrlChecker,
  resealWebhookSecrets,
  sendTestEvent,
  simulatedProcessor,
  stripeProcessor,
  systemClock,
} from "@benchdata/core";
import type { PaymentProcessor } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { openStorage } from "@benchdata/storage-kysely";
import { hashSecretNode, nodeResolve, nodeTransport } from "@benchdata/adapter-node";
import { CONSOLE_ASSETS } from "@benchdata/console";
import { serveOnRuntime } from "./runtime-serve.ts";
import type { RuntimeServeHandle } from "./runtime-serve.ts";
import { ensureSecretKeys, findSecretKeys, requireSecretsOpen } from "./secret-keys.ts";

/** Opens the storage a `--db` URL names (`memory:`, `sqlite:PATH`, `postgres://…`) and migrates it. */
export async function openDb(url: string, logger?: Logger): Promise<Storage> {
  const storage: Storage = url === "memory:" || url === "memory" ? createMemoryStorage() : await openStorage(url, logger ? { logger } : {});
  await storage.migrate();
  return storage;
}

/** The payment processor the config chooses. */
export function processorFor(config: ServiceConfig): PaymentProcessor {
  if (config.billing.processor === "stripe") {
    const secretKey = process.env[config.billing.stripe.secretKeyEnv];
    if (!secretKey) throw new Error(`billing.processor is "stripe" but ${config.billing.stripe.secretKeyEnv} is not set`);
    return stripeProcessor({ apiBase: config.billing.stripe.apiBase, secretKey });
  }
  return simulatedProcessor({ outcome: config.billing.simulatedOutcome });
}

/** A running service. */
export interface Running {
  readonly url: string;
  readonly port: number;
  readonly storage: Storage;
  readonly handle: RuntimeServeHandle;
  /** The admin API's own listener, when `adminListener` was given (the main one then refuses admin paths). */
  readonly admin?: RuntimeServeHandle;
  /**
   * Drains and stops: `/readyz` answers 503 at once, serving goes on for `shutdown.drainDelaySeconds`, then the
   * listener closes, in-flight requests are answered (within `shutdown.drainTimeoutSeconds`), the workers
   * finish their current step, and storage closes. Idempotent.
   */
  stop(): Promise<void>;
}

/** Starts the whole service on node:http. */
export async function startService(options: {
  db: string;
  config: ServiceConfig;
  port: number;
  host?: string;
  adminToken?: string | null;
  /** Serve the admin API on this listener only (not on the main one). */
  adminListener?: { port: number; host: string };
  logger: Logger;
  workers?: boolean;
  /** Shifts this instance's clock (tests of clock skew between instances; env BENCHDATA_CLOCK_OFFSET_MS). */
  clockOffsetMs?: number;
  /** Seals webhook signing secrets; default: the operator keys `findSecretKeys` finds for `db` (PostgreSQL without one refuses to start). */
  secretBox?: SecretBox;
}): Promise<Running> {
  const { config, logger } = options;
  // The keys are found first (PostgreSQL without one is refused before connecting), then checked against
  // what the database holds: every sealed secret must open, or the start is refused (exit 2).
  const found = options.secretBox ? null : await findSecretKeys(options.db);
  const storage = await openDb(options.db, logger);
  let secretBox: SecretBox;
  try {
    if (found === null) secretBox = options.secretBox!;
    else {
      const keys = await ensureSecretKeys(found, storage);
      const sealed = await requireSecretsOpen(keys, storage);
      secretBox = keys.box;
      logger.info("webhook signing secrets sealed at rest", { key_id: secretBox.currentKeyId, key_source: keys.source, sealed_secrets: sealed, ...(keys.file ? { key_file: keys.file } : {}) });
      if (keys.warnings.length > 0) logger.warn("the operator key file is not private to this user", { key_file: keys.file, problems: keys.warnings.join("; ") });
    }
    // Secrets stored in plain text before encryption at rest are sealed now; rows under an older operator
    // key are left to `benchdata webhooks reseal` (instances still running with the old key list open them).
    const resealed = await resealWebhookSecrets(storage, secretBox, { onlyPlaintext: true });
    if (resealed.resealed > 0 || resealed.failed > 0) logger.info("plain-text webhook signing secrets sealed", { resealed: resealed.resealed, failed: resealed.failed });
  } catch (e) {
    await storage.close();
    throw e;
  }
  const offset = options.clockOffsetMs ?? 0;
  const clock: Clock = offset === 0 ? systemClock : { now: () => Date.now() + offset };
  const random = cryptoRandom;
  const resolve = nodeResolve;
  const transport = nodeTransport();
  // One registry for the app and the workers: GET /metrics shows them all.
  const metrics = createMetricsRegistry();
  const deliveries = createDeliveryWorker({ storage, clock, random, transport, resolve, config, logger, secretBox, metrics });
  const billing = createBillingWorker({ storage, clock, random, processor: processorFor(config), config, logger, metrics, onEvents: () => deliveries.nudge() });
  const pruning = createPruneWorker({ storage, clock, config, logger, metrics });
  const app = createApp({
    storage,
    clock,
    random,
    hashSecret: hashSecretNode,
    config,
    logger,
    metrics,
    adminToken: options.adminToken ?? null,
    adminSeparate: options.adminListener !== undefined,
    // The CLI is what carries the browser console: core serves the files it is handed.
    consoleUi: CONSOLE_ASSETS,
    hooks: {
      chargeRequested: () => billing.nudge(),
      eventsWritten: () => deliveries.nudge(),
    },
    webhooks: {
      checkUrl: makeWebhookUrlChecker(config, resolve),
      sendTest: (accountId: string) => sendTestEvent({ storage, clock, random, transport, resolve, config, secretBox }, accountId),
      secretBox,
    },
  });
  const handle = await serveOnRuntime({
    fetch: app.fetch,
    port: options.port,
    ...(options.host !== undefined ? { host: options.host } : {}),
    drainTimeout: Math.round(config.shutdown.drainTimeoutSeconds * 1000),
    requestTimeout: Math.round(config.server.requestTimeoutSeconds * 1000),
    onError: (error) => logger.error("unhandled error in a request", { error: error instanceof Error ? error.message : String(error) }),
  });

  const onError = (error: unknown): void => logger.error("unhandled error in a request", { error: error instanceof Error ? error.message : String(error) });
  let admin: RuntimeServeHandle | undefined;
  if (options.adminListener !== undefined) {
    try {
      admin = await serveOnRuntime({ fetch: app.adminFetch, port: options.adminListener.port, host: options.adminListener.host, drainTimeout: Math.round(config.shutdown.drainTimeoutSeconds * 1000), requestTimeout: Math.round(config.server.requestTimeoutSeconds * 1000), onError });
    } catch (error) {
      await handle.close();
      await app.analytics?.close();
      await storage.close();
      throw error;
    }
  }
  const workers = options.workers !== false;
  if (workers) {
    deliveries.start();
    billing.start();
    pruning.start();
  }
  const delayMs = Math.round(config.shutdown.drainDelaySeconds * 1000);
  let stopping: Promise<void> | undefined;
  // The drain, in order: /readyz turns 503 and answers say Connection: close at once; the server keeps
  // serving for the drain delay (a load balancer notices and stops sending); then the listener closes, the
  // requests already accepted are answered, the workers finish their current step, and storage closes.
  const stop = async (): Promise<void> => {
    app.drain();
    handle.drain();
    admin?.drain();
    if (delayMs > 0) {
      logger.info("draining: still serving until the drain delay ends", { drain_delay_seconds: config.shutdown.drainDelaySeconds });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    logger.info("drain: no longer accepting connections; answering the requests already accepted", { drain_timeout_seconds: config.shutdown.drainTimeoutSeconds });
    // The workers stop claiming now and finish what they hold while the last requests are answered.
    const workersStopped = workers ? Promise.all([deliveries.stop(), billing.stop(), pruning.stop()]) : Promise.resolve();
    await Promise.all([handle.close(), admin?.close()]);
    await workersStopped;
    // The requests are answered: what usage analytics counted since their last write is written now.
    const written = await app.analytics?.close();
    if (written === true) logger.info("drain: usage analytics written");
    logger.info("drain: requests answered, workers stopped; closing storage");
    transport.close();
    await storage.close();
  };
  return { url: handle.url, port: handle.port, storage, handle, ...(admin ? { admin } : {}), stop: () => (stopping ??= stop()) };
}
