/** Console billing: the account's invoices, and retrying the payment of an exhausted quota. */
import { ServiceError } from "../../errors/service-error.ts";
import { effectiveLimits } from "../../config/config.ts";
import { newId } from "../../ids/new-id.ts";
import { ok } from "../reply.ts";
import { accountOf, defineConsoleRoute } from "./define-console-route.ts";
import { InvoiceSchema, invoiceView, listOf } from "./views.ts";
import type { BillingStore } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): BillingStore => app.storage;

/** GET /invoices. */
export const listInvoices = defineConsoleRoute({
  method: "GET",
  path: "/invoices",
  operationId: "listInvoices",
  summary: "List invoices",
  description: "Newest first. Amounts are integers in the currency's minor unit (cents).",
  success: { status: 200, description: "The invoices.", schema: listOf(InvoiceSchema) },
  errors: [],
  async handle({ app, accountId }) {
    return ok({ data: (await store(app).listInvoices(accountId)).map(invoiceView) });
  },
});

const NOTHING_TO_CHARGE = new ServiceError(
  409,
  "billing.nothing_to_charge",
  "Nothing to charge: the quota is not exhausted, a charge is already pending, or the plan's next block would add no call.",
);

/** POST /billing/retry. */
export const retryBilling = defineConsoleRoute({
  method: "POST",
  path: "/billing/retry",
  operationId: "retryBilling",
  summary: "Retry the payment of an exhausted quota",
  description: "Starts a new charge for the next quota block now, for an exhausted account with no charge outstanding (e.g. after a failed charge and a card update). No body.",
  success: { status: 202, description: "The pending invoice.", schema: InvoiceSchema },
  errors: [409],
  async handle(call) {
    const { app, now, audit } = call;
    const account = await accountOf(call);
    const limits = effectiveLimits(app.config, account.tier, account.limits);
    const invoiceId = newId("inv", app.clock, app.idRandom);
    const invoice = await store(app).requestCharge({
      accountId: account.id,
      now,
      anchorDay: app.config.billing.anchorDay,
      invoiceId,
      baseQuota: limits.monthlyQuota,
      blockSize: limits.blockSize,
      blockPrice: limits.blockPrice,
      currency: app.config.currency,
      audit: audit.draft("billing.retry", account.id, invoiceId, { changes: { amount: limits.blockPrice, currency: app.config.currency } }),
    });
    if (invoice === null) throw NOTHING_TO_CHARGE;
    app.hooks.chargeRequested(invoice.id);
    return { status: 202, body: invoiceView(invoice) };
  },
});
