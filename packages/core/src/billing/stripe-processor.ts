/**
 * The Stripe payment processor: an off-session, confirmed PaymentIntent per charge, keyed by the invoice's
 * idempotency key, over Stripe's form-encoded REST API with `fetch`.
 */
import type { PaymentProcessor, PaymentRequest, PaymentResult } from "./payment-processor.ts";

/** Settings of the Stripe processor. */
export interface StripeProcessorOptions {
  /** The secret API key (`sk_live_…` / `sk_test_…`). Never logged. */
  readonly secretKey: string;
  /** Default `https://api.stripe.com`; a stub's address in tests. */
  readonly apiBase?: string;
  /** The `Stripe-Version` header (default `2024-06-20`), so responses keep the shape this code reads. */
  readonly apiVersion?: string;
  /** Time allowed for one API call before its outcome counts as unknown (default 20 000 ms). */
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

/** The Stripe-Version this processor was written against. */
export const STRIPE_API_VERSION = "2024-06-20";

interface StripeError {
  readonly type?: string;
  readonly code?: string;
  readonly decline_code?: string;
  readonly message?: string;
  readonly payment_intent?: { readonly id?: string };
}

interface PaymentIntent {
  readonly id?: string;
  readonly status?: string;
  readonly last_payment_error?: StripeError | null;
}

/** An outcome Stripe did not settle (network, time-out, 409, 429, 5xx, bad API key): the charge is retried with the same key. */
export class StripeUnknownOutcome extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StripeUnknownOutcome";
  }
}

function form(req: PaymentRequest): string {
  const p = new URLSearchParams();
  p.set("amount", String(req.amount));
  p.set("currency", req.currency);
  p.set("customer", req.customerRef!);
  p.set("payment_method", req.paymentMethodRef!);
  p.set("off_session", "true");
  p.set("confirm", "true");
  p.set("description", req.description);
  p.set("metadata[invoice_id]", req.invoiceId);
  p.set("metadata[account_id]", req.accountId);
  return p.toString();
}

/** A PaymentIntent's state as an outcome; `processing` (and anything unknown) is not definite. */
function fromIntent(pi: PaymentIntent): PaymentResult | null {
  const ref = pi.id ?? "";
  switch (pi.status) {
    case "succeeded":
      return { status: "succeeded", processorRef: ref };
    case "requires_payment_method":
      return { status: "failed", processorRef: ref, reason: pi.last_payment_error?.decline_code ?? pi.last_payment_error?.code ?? "requires_payment_method" };
    case "requires_action":
      return { status: "failed", processorRef: ref, reason: "authentication_required" };
    case "canceled":
      return { status: "failed", processorRef: ref, reason: "canceled" };
    default:
      return null;
  }
}

/**
 * A PaymentProcessor on Stripe. Succeeded → succeeded; a card error (402), an intent needing another payment
 * method or customer authentication, or another request error (400/404) → failed with Stripe's decline code
 * or error code; network failures, time-outs, 401/403, 409, 429 and 5xx → throw (unknown outcome, retried
 * later with the same Idempotency-Key, which Stripe honours for 24 hours). The reference is the PaymentIntent id.
 */
export function stripeProcessor(options: StripeProcessorOptions): PaymentProcessor {
  const apiBase = (options.apiBase ?? "https://api.stripe.com").replace(/\/+$/, "");
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 20_000;

  return {
    async charge(req) {
      // Nothing to charge without a saved payment method: a definite failure, and no call is made.
      if (!req.customerRef || !req.paymentMethodRef) return { status: "failed", processorRef: "", reason: "no_payment_method" };
      let res: Response;
      let text: string;
      try {
        res = await doFetch(`${apiBase}/v1/payment_intents`, {
          method: "POST",
          headers: {
            Authorization: `Bearer ${options.secretKey}`,
            "Content-Type": "application/x-www-form-urlencoded",
            "Idempotency-Key": req.idempotencyKey,
            "Stripe-Version": options.apiVersion ?? STRIPE_API_VERSION,
          },
          body: form(req),
          signal: AbortSignal.timeout(timeoutMs),
        });
        text = await res.text();
      } catch (e) {
        throw new StripeUnknownOutcome(`Stripe request failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
      let json: { error?: StripeError } & PaymentIntent;
      try {
        json = JSON.parse(text);
      } catch {
        throw new StripeUnknownOutcome(`Stripe answered ${res.status} with a body that is not JSON`);
      }
      if (res.ok) {
        const out = fromIntent(json);
        if (out) return out;
        throw new StripeUnknownOutcome(`PaymentIntent ${json.id ?? "?"} is ${json.status ?? "in an unknown state"}`);
      }
      const err = json.error ?? {};
      const ref = err.payment_intent?.id ?? "";
      if (res.status === 402 || err.type === "card_error") {
        return { status: "failed", processorRef: ref, reason: err.decline_code ?? err.code ?? "card_declined" };
      }
      if ((res.status === 400 || res.status === 404) && err.type === "invalid_request_error") {
        return { status: "failed", processorRef: ref, reason: err.code ?? "invalid_request" };
      }
      // 400 idempotency_error (a key reused with other parameters), 401/403 (our key), 409, 429, 5xx.
      throw new StripeUnknownOutcome(`Stripe answered ${res.status}${err.type ? ` (${err.type}${err.code ? `/${err.code}` : ""})` : ""}`);
    },
  };
}
