/**
 * The billing worker: claims pending charges (invoices) under a lease, asks the payment processor to make
 * them, and settles the outcome in storage, which writes `quota.exhausted` and `invoice.paid`/`invoice.failed`.
 * An unknown outcome (the processor threw or timed out) settles nothing: when the lease runs out the charge
 * is claimed again and retried with the same idempotency key, so it is made at most once.
 */
import type { Clock, RandomSource } from "../clock/clock.ts";
import type { ServiceConfig } from "../config/config.ts";
import { newId } from "../ids/new-id.ts";
import type { Logger } from "../log/logger.ts";
import { silentLogger } from "../log/logger.ts";
import { faultLog } from "../log/fault-log.ts";
import type { MetricsRegistry } from "../metrics/metrics-registry.ts";
import { serviceMetrics } from "../metrics/service-metrics.ts";
import type { BillingStore, ChargeOutcome, ClaimedCharge } from "../storage/types.ts";
import type { WorkerLoop } from "../webhooks/worker-loop.ts";
import { workerLoop } from "../webhooks/worker-loop.ts";
import type { PaymentProcessor, PaymentRequest, PaymentResult } from "./payment-processor.ts";

/** The capabilities and settings of a billing worker. */
export interface BillingWorkerOptions {
  /** Charges: the worker claims and settles them, nothing else. */
  readonly storage: BillingStore;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly processor: PaymentProcessor;
  readonly config: ServiceConfig;
  readonly logger?: Logger;
  /** How long a processor call may take before its outcome counts as unknown (default 30 000 ms). */
  readonly processorTimeoutMs?: number;
  /** Charges in flight at once (default 8). */
  readonly concurrency?: number;
  /** How often the loop looks for pending charges when not nudged (default 1000 ms). */
  readonly pollIntervalMs?: number;
  /** Called after a settlement wrote events, e.g. to nudge the delivery worker. */
  readonly onEvents?: () => void;
  /** Where to count charge attempts by outcome (e.g. `app.metrics`, so `/metrics` shows them). */
  readonly metrics?: MetricsRegistry;
}

/** A billing worker: `tick()` charges what is pending now; `start()`/`nudge()`/`stop()` run it as a loop. */
export type BillingWorker = WorkerLoop;

/**
 * Lease beyond the processor time-out. It is also the delay before an unknown outcome is tried again
 * (storage has no early release: the claim simply runs out).
 */
export const BILLING_LEASE_MARGIN_MS = 60_000;

const UNKNOWN = Symbol("unknown outcome");

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The processor request for a claimed charge. */
export function paymentRequestOf(claim: ClaimedCharge): PaymentRequest {
  const { invoice, account } = claim;
  return {
    invoiceId: invoice.id,
    accountId: invoice.accountId,
    amount: invoice.amount,
    currency: invoice.currency,
    idempotencyKey: invoice.idempotencyKey,
    customerRef: account.billing.customerRef,
    paymentMethodRef: account.billing.paymentMethodRef,
    description: `benchdata quota block ${invoice.block} for the period from ${invoice.periodStart.slice(0, 10)} (invoice ${invoice.id})`,
  };
}

/** Creates a billing worker over `storage`; nothing runs until `tick()` or `start()`. */
export function createBillingWorker(options: BillingWorkerOptions): BillingWorker {
  const { storage, clock, random, processor } = options;
  const logger = options.logger ?? silentLogger;
  const metrics = options.metrics ? serviceMetrics(options.metrics) : null;
  // A storage outage fails every poll: logged with its cause, rate-limited, and the recovery too.
  const faults = faultLog(logger, clock, { message: "billing: storage failed", onFault: (cause) => metrics?.storageError(cause) });
  const timeoutMs = options.processorTimeoutMs ?? 30_000;
  const leaseMs = timeoutMs + BILLING_LEASE_MARGIN_MS;

  async function callProcessor(request: PaymentRequest): Promise<PaymentResult | typeof UNKNOWN> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<typeof UNKNOWN>((resolve) => {
      timer = setTimeout(() => resolve(UNKNOWN), timeoutMs);
    });
    try {
      return await Promise.race([processor.charge(request), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function charge(claim: ClaimedCharge): Promise<void> {
    const request = paymentRequestOf(claim);
    const fields = { invoice_id: claim.invoice.id, account_id: claim.invoice.accountId, block: claim.invoice.block, attempt: claim.invoice.attempt, amount: claim.invoice.amount };
    let result: PaymentResult | typeof UNKNOWN;
    try {
      result = await callProcessor(request);
    } catch (e) {
      metrics?.charges.unknown.inc();
      logger.warn("charge outcome unknown; it will be retried with the same idempotency key", { ...fields, error: errorMessage(e) });
      return;
    }
    if (result === UNKNOWN) {
      metrics?.charges.unknown.inc();
      logger.warn("charge timed out; it will be retried with the same idempotency key", fields);
      return;
    }
    const at = clock.now();
    const outcome: ChargeOutcome =
      result.status === "succeeded"
        ? { status: "paid", processorRef: result.processorRef, at }
        : { status: "failed", processorRef: result.processorRef, reason: result.reason, at };
    const settled = await storage.settleCharge({
      invoiceId: claim.invoice.id,
      leaseToken: claim.leaseToken,
      outcome,
      eventIds: { exhausted: newId("evt", clock, random), result: newId("evt", clock, random) },
    });
    if (!settled) {
      metrics?.charges.lease_lost.inc();
      logger.warn("charge outcome not recorded: the lease was lost", { ...fields, processor_ref: result.processorRef });
      return;
    }
    metrics?.charges[outcome.status].inc();
    if (outcome.status === "paid") logger.info("charge paid", { ...fields, processor_ref: outcome.processorRef });
    else logger.warn("charge failed", { ...fields, processor_ref: outcome.processorRef, reason: outcome.reason });
    options.onEvents?.();
  }

  return workerLoop<ClaimedCharge>({
    claim: async (limit) => {
      const claimed = await storage.claimCharges({ now: clock.now(), leaseMs, limit });
      if (faults.failing) faults.ok();
      return claimed;
    },
    handle: charge,
    concurrency: options.concurrency ?? 8,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    onError: (stage, e) => faults.fault(stage === "claim" ? "claimCharges" : "settleCharge", e),
  });
}
