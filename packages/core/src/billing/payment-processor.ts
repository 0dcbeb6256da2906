/** The payment processor as a capability: one idempotent off-session charge per call. */

/** A charge to make: one invoice, identified at the processor by its idempotency key. */
export interface PaymentRequest {
  readonly invoiceId: string;
  readonly accountId: string;
  /** In the currency's minor unit (cents). */
  readonly amount: number;
  readonly currency: string;
  /** The same key for every try of one invoice: the processor charges at most once per key. */
  readonly idempotencyKey: string;
  /** The processor's customer (e.g. Stripe `cus_…`), when the operator set one. */
  readonly customerRef?: string;
  /** The saved payment method to charge (e.g. Stripe `pm_…`), when the operator set one. */
  readonly paymentMethodRef?: string;
  readonly description: string;
}

/** A definite outcome. A processor that cannot tell (network failure, 5xx, time-out) throws instead. */
export type PaymentResult =
  | { readonly status: "succeeded"; readonly processorRef: string }
  | { readonly status: "failed"; readonly processorRef: string; readonly reason: string };

/**
 * Charges a saved payment method. Resolves with a definite outcome; throws when the outcome is unknown, and
 * the charge is then tried again later with the same idempotency key, so it is never made twice.
 */
export interface PaymentProcessor {
  charge(request: PaymentRequest): Promise<PaymentResult>;
}
