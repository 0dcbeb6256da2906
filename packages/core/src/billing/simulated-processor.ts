/** A payment processor that charges no one: deterministic, idempotent, for development, demos and tests. */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import type { PaymentProcessor, PaymentRequest, PaymentResult } from "./payment-processor.ts";

/**
 * What a simulated charge does: `succeed`, `fail` (a card decline), `error` (no charge, the call throws:
 * a network failure before the processor saw it) or `lost` (the charge is made but the call throws: the
 * response was lost, so only the idempotency key prevents a second charge).
 */
export type SimulatedOutcome = "succeed" | "fail" | "error" | "lost";

/** Settings of the simulated processor. */
export interface SimulatedProcessorOptions {
  /** A fixed outcome, or one chosen per call (`call` counts every call from 1, replays included). */
  readonly outcome: SimulatedOutcome | ((request: PaymentRequest, call: number) => SimulatedOutcome);
  /** Delay of each new charge, in ms (default 0). */
  readonly latencyMs?: number;
  /** The decline reason of `fail` (default `card_declined`). */
  readonly failureReason?: string;
}

/** A charge recorded at the simulated processor: one per idempotency key. */
export interface SimulatedCharge {
  readonly request: PaymentRequest;
  readonly result: PaymentResult;
}

/** The simulated processor, with what it recorded for tests to inspect. */
export interface SimulatedProcessor extends PaymentProcessor {
  /** Every charge made (succeeded or declined), one per idempotency key, in order. */
  readonly charges: readonly SimulatedCharge[];
  /** Every call, replays and errors included. */
  readonly calls: readonly PaymentRequest[];
}

/** The deterministic reference of a simulated charge: `sim_` and 24 hex digits of SHA-256 of the idempotency key. */
export function simulatedRef(idempotencyKey: string): string {
  return `sim_${bytesToHex(sha256(utf8ToBytes(idempotencyKey))).slice(0, 24)}`;
}

function sameCharge(a: PaymentRequest, b: PaymentRequest): boolean {
  return a.amount === b.amount && a.currency === b.currency && a.accountId === b.accountId && a.invoiceId === b.invoiceId;
}

/**
 * Creates a simulated processor. Like a real one, it is idempotent: a second call with a key already charged
 * replays the first result (and records nothing), and a key reused with other parameters is an error.
 */
export function simulatedProcessor(options: SimulatedProcessorOptions): SimulatedProcessor {
  const charges: SimulatedCharge[] = [];
  const calls: PaymentRequest[] = [];
  const byKey = new Map<string, { request: PaymentRequest; result: Promise<PaymentResult> }>();
  const pick = typeof options.outcome === "function" ? options.outcome : () => options.outcome as SimulatedOutcome;

  async function charge(request: PaymentRequest): Promise<PaymentResult> {
    calls.push(request);
    const seen = byKey.get(request.idempotencyKey);
    if (seen) {
      if (!sameCharge(seen.request, request)) throw new Error("simulated processor: idempotency key reused with different parameters");
      return seen.result;
    }
    const outcome = pick(request, calls.length);
    if (outcome === "error") {
      if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
      throw new Error("simulated processor: network failure (no charge made)");
    }
    const processorRef = simulatedRef(request.idempotencyKey);
    const result: PaymentResult =
      outcome === "fail" ? { status: "failed", processorRef, reason: options.failureReason ?? "card_declined" } : { status: "succeeded", processorRef };
    // Recorded before the latency, so a concurrent call with the same key waits for this one's result.
    const settled = (async () => {
      if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
      return result;
    })();
    byKey.set(request.idempotencyKey, { request, result: settled });
    charges.push({ request, result });
    const out = await settled;
    if (outcome === "lost") throw new Error("simulated processor: response lost (the charge was made)");
    return out;
  }

  return { charge, charges, calls };
}
