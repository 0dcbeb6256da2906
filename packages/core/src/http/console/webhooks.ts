/** Console webhook operations: create, list, show, delete, deliveries, their retry and bounded recovery, and a test event. */
import * as v from "valibot";
import { ServiceError } from "../../errors/service-error.ts";
import { EVENT_TYPES } from "../../events/events.ts";
import type { EventType } from "../../events/events.ts";
import { isoTime } from "../../clock/clock.ts";
import { newId } from "../../ids/new-id.ts";
import { generateSigningSecret } from "../../signing/signature.ts";
import type { OutboxStore, WebhookRecord, WebhookStore } from "../../storage/types.ts";
import { plaintextSecretBox } from "../../webhooks/secret-box.ts";
import type { RecoverPolicy } from "../../webhooks/recover-budget.ts";
import { retentionCutoffs } from "../../retention/retention-cutoffs.ts";
import { integerParam } from "../data/query-params.ts";
import { ok } from "../reply.ts";
import { defineConsoleRoute, INVALID_SESSION, notFound } from "./define-console-route.ts";
import { checkUrlSyntax } from "./webhook-url.ts";
import { DeliverySchema, listOf, WebhookSchema, WebhookWithSecretSchema, webhookView, deliveryView } from "./views.ts";
import type { AppContext } from "../app-options.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): WebhookStore & OutboxStore => app.storage;

const WEBHOOK_ID = { webhook_id: "The webhook's identifier (`wh_…`)." };

/** The body of POST /webhooks. */
export const CreateWebhookBody = v.strictObject({
  url: v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(2048, "must be at most 2048 characters"), v.description("HTTPS endpoint receiving the events.")),
  events: v.pipe(
    v.array(v.picklist(EVENT_TYPES, (issue) => `unknown event type ${String(issue.received)}; known types: ${EVENT_TYPES.join(", ")}`)),
    v.minLength(1, "must name at least one event type"),
    v.description("Event types to receive (duplicates are ignored)."),
  ),
});

/** POST /webhooks. */
export const createWebhook = defineConsoleRoute({
  method: "POST",
  path: "/webhooks",
  operationId: "createWebhook",
  summary: "Create a webhook",
  description:
    "The URL must be https (unless the operator allows http) and must not point at loopback, private, link-local or unique-local addresses (422 `validation.invalid_url`). At most `webhooks.maxPerAccount` webhooks per account (409 `console.limit_reached`). The signing secret is returned only here.",
  body: CreateWebhookBody,
  success: { status: 201, description: "The webhook with its signing secret.", schema: WebhookWithSecretSchema },
  errors: [409],
  async handle({ app, accountId, body, now, audit }) {
    const syntax = checkUrlSyntax(body.url, app.config.webhooks.allowHttp);
    if (syntax) throw syntax;
    if (app.webhooks.checkUrl) {
      const refused = await app.webhooks.checkUrl(body.url);
      if (refused) throw refused;
    }
    const id = newId("wh", app.clock, app.idRandom);
    const secret = generateSigningSecret(app.random);
    const record: WebhookRecord = {
      id,
      accountId,
      url: body.url,
      events: [...new Set(body.events)] as EventType[],
      // Stored sealed under the operator's key: the database alone cannot sign.
      secret: await (app.webhooks.secretBox ?? plaintextSecretBox).seal(id, secret),
      createdAt: now,
    };
    // The URL may name a person's host (erased with the account); never the signing secret.
    const draft = audit.draft("webhook.create", accountId, id, { changes: { events: [...record.events] }, personal: { url: record.url } });
    const outcome = await store(app).createWebhook(record, app.config.webhooks.maxPerAccount, draft);
    // Erased while this request was on its way: the account no longer exists, nor does this session.
    if (outcome === "deleted") throw INVALID_SESSION;
    if (outcome === "limit") {
      throw new ServiceError(409, "console.limit_reached", `This account already has ${app.config.webhooks.maxPerAccount} webhooks (the maximum). Delete one first.`);
    }
    return { status: 201, body: { ...webhookView(record), signing_secret: secret } };
  },
});

/** GET /webhooks. */
export const listWebhooks = defineConsoleRoute({
  method: "GET",
  path: "/webhooks",
  operationId: "listWebhooks",
  summary: "List webhooks",
  description: "Signing secrets are never listed.",
  success: { status: 200, description: "The webhooks.", schema: listOf(WebhookSchema) },
  errors: [],
  async handle({ app, accountId }) {
    return ok({ data: (await store(app).listWebhooks(accountId)).map(webhookView) });
  },
});

/** GET /webhooks/{webhook_id}. */
export const getWebhook = defineConsoleRoute({
  method: "GET",
  path: "/webhooks/{webhook_id}",
  operationId: "getWebhook",
  summary: "Show a webhook",
  pathParams: WEBHOOK_ID,
  success: { status: 200, description: "The webhook (without its secret).", schema: WebhookSchema },
  errors: [404],
  async handle({ app, accountId, params }) {
    const id = params.webhook_id as string;
    const w = await store(app).getWebhook(accountId, id);
    if (w === null) throw notFound("webhook", id);
    return ok(webhookView(w));
  },
});

/** DELETE /webhooks/{webhook_id}. */
export const deleteWebhook = defineConsoleRoute({
  method: "DELETE",
  path: "/webhooks/{webhook_id}",
  operationId: "deleteWebhook",
  summary: "Delete a webhook",
  description: "Its pending deliveries stop.",
  pathParams: WEBHOOK_ID,
  success: { status: 204, description: "Deleted." },
  errors: [404],
  async handle({ app, accountId, params, audit }) {
    const id = params.webhook_id as string;
    if (!(await store(app).deleteWebhook(accountId, id, audit.draft("webhook.delete", accountId, id)))) throw notFound("webhook", id);
    return { status: 204 };
  },
});

/** POST /webhooks/{webhook_id}/enable. */
export const enableWebhook = defineConsoleRoute({
  method: "POST",
  path: "/webhooks/{webhook_id}/enable",
  operationId: "enableWebhook",
  summary: "Re-enable a webhook",
  description:
    "Makes a disabled webhook active again (its failure history starts afresh): events written from now on are delivered. Deliveries that died while it was disabled stay dead; `POST /webhooks/{webhook_id}/recover` re-queues them. Enabling an active webhook changes nothing. No body.",
  pathParams: WEBHOOK_ID,
  success: { status: 200, description: "The webhook, active.", schema: WebhookSchema },
  errors: [404],
  async handle({ app, accountId, params, audit }) {
    const id = params.webhook_id as string;
    const w = await store(app).enableWebhook(accountId, id, audit.draft("webhook.enable", accountId, id, { changes: { status: "active" } }));
    if (w === null) throw notFound("webhook", id);
    return ok(webhookView(w));
  },
});

/** The answer of POST /webhooks/{webhook_id}/rotate-secret. */
export const RotatedWebhookSchema = v.object({
  ...WebhookWithSecretSchema.entries,
  previous_secret_expires_at: v.pipe(
    v.string(),
    v.isoTimestamp(),
    v.description("Until then every delivery is signed with both secrets (`webhooks.secretOverlapHours` after the rotation); after it with the new one only."),
  ),
});

/** POST /webhooks/{webhook_id}/rotate-secret. */
export const rotateWebhookSecret = defineConsoleRoute({
  method: "POST",
  path: "/webhooks/{webhook_id}/rotate-secret",
  operationId: "rotateWebhookSecret",
  summary: "Rotate a webhook's signing secret",
  description:
    "Issues a new signing secret, returned only in this response. For the overlap (`webhooks.secretOverlapHours`, default 24 h) every delivery carries both signatures: `webhook-signature` holds two space-separated `v1,` entries (the new secret's first, then the previous one's) and `X-Service-Signature` the new secret's. After the overlap only the new secret signs. Rotating again during an overlap drops the oldest secret at once (only the secret just replaced keeps signing). No body.",
  pathParams: WEBHOOK_ID,
  success: { status: 200, description: "The webhook with its new signing secret, shown only here.", schema: RotatedWebhookSchema },
  errors: [404],
  async handle({ app, accountId, params, now, audit }) {
    const id = params.webhook_id as string;
    const secret = generateSigningSecret(app.random);
    const sealed = await (app.webhooks.secretBox ?? plaintextSecretBox).seal(id, secret);
    const previousUntil = now + Math.round(app.config.webhooks.secretOverlapHours * 3_600_000);
    const draft = audit.draft("webhook.rotate_secret", accountId, id, { changes: { previous_secret_until: isoTime(previousUntil) } });
    const w = await store(app).rotateWebhookSecret({ accountId, webhookId: id, secret: sealed, previousUntil, audit: draft });
    if (w === null) throw notFound("webhook", id);
    return ok({ ...webhookView(w), signing_secret: secret, previous_secret_expires_at: isoTime(previousUntil) });
  },
});

/** GET /webhooks/{webhook_id}/deliveries. */
export const listDeliveries = defineConsoleRoute({
  method: "GET",
  path: "/webhooks/{webhook_id}/deliveries",
  operationId: "listDeliveries",
  summary: "List a webhook's deliveries",
  description: "Newest first, each with its attempts (time, status code, latency, error class, start of the response body).",
  pathParams: WEBHOOK_ID,
  query: v.object({ limit: v.optional(integerParam(1, 100, "How many deliveries, newest first."), "50") }),
  success: { status: 200, description: "The deliveries.", schema: listOf(DeliverySchema) },
  errors: [404],
  async handle({ app, accountId, params, query }) {
    const id = params.webhook_id as string;
    if ((await store(app).getWebhook(accountId, id)) === null) throw notFound("webhook", id);
    const deliveries = await store(app).listDeliveries(accountId, id, query.limit);
    return ok({ data: deliveries.map(deliveryView) });
  },
});

/** POST /webhooks/{webhook_id}/deliveries/{delivery_id}/retry. */
export const retryDelivery = defineConsoleRoute({
  method: "POST",
  path: "/webhooks/{webhook_id}/deliveries/{delivery_id}/retry",
  operationId: "retryDelivery",
  summary: "Retry a delivery now",
  description: "Makes the delivery (dead ones included) due at once; the worker sends it shortly. No body.",
  pathParams: { ...WEBHOOK_ID, delivery_id: "The delivery's identifier (`dlv_…`)." },
  success: { status: 202, description: "The delivery, due now.", schema: DeliverySchema },
  errors: [404],
  async handle({ app, accountId, params, now, audit }) {
    const webhookId = params.webhook_id as string;
    const deliveryId = params.delivery_id as string;
    const d = await store(app).retryDelivery(accountId, webhookId, deliveryId, now, audit.draft("webhook.retry_delivery", accountId, deliveryId, { changes: { webhook_id: webhookId } }));
    if (d === null) throw notFound("delivery", deliveryId);
    app.hooks.eventsWritten();
    return { status: 202, body: deliveryView(d) };
  },
});

/** The body of POST /webhooks/{webhook_id}/recover. */
export const RecoverDeliveriesBody = v.strictObject({
  since: v.pipe(
    v.string(),
    v.isoTimestamp("must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-20T00:00:00Z"),
    v.description("Re-queue the failed deliveries of events written at or after this time (ISO 8601), no earlier than `retention.deliveriesDays` ago."),
  ),
});

const DAY_MS = 86_400_000;

/** 429 `rate_limit.exceeded` (the contract's rate-limit code, reused): the account's hourly recover budget is spent. */
function recoverBudgetSpent(reason: "calls" | "deliveries", retryAt: number, now: number, policy: RecoverPolicy): ServiceError {
  const seconds = Math.max(1, Math.ceil((retryAt - now) / 1000));
  const spent =
    reason === "calls"
      ? `This account made its ${policy.callsPerHour} recover calls of the hour`
      : `This account's recover calls re-queued their ${policy.deliveriesPerHour} deliveries of the hour`;
  return new ServiceError(429, "rate_limit.exceeded", `${spent} (window: hour); retry in ${seconds} s. Deliveries still due keep going out meanwhile.`, { "retry-after": String(seconds) });
}

/** POST /webhooks/{webhook_id}/recover. */
export const recoverWebhook = defineConsoleRoute({
  method: "POST",
  path: "/webhooks/{webhook_id}/recover",
  operationId: "recoverWebhook",
  summary: "Recover failed deliveries",
  description:
    "Re-queues the dead deliveries of the webhook, and those waiting after a failed attempt, whose event was written at or after `since`, oldest first: each is due at once and is attempted once more, in event order (a delivery already due or in flight is left as it is, so recovering twice queues nothing twice). " +
    "Bounded, so recover cannot flood a receiver: an account may make `webhooks.recoverCallsPerHour` calls (default 10) and re-queue `webhooks.recoverDeliveriesPerHour` deliveries (default 1,000) per hour, all webhooks together; one call takes what is left of the hour's deliveries and says with `has_more` whether more remain to recover (call again, with the same `since`, once they went out). " +
    "A spent budget answers 429 `rate_limit.exceeded` with `Retry-After`; a `since` older than the retention horizon (`retention.deliveriesDays`) 422 `validation.out_of_range`. A disabled webhook must be enabled first (409 `console.webhook_disabled`).",
  pathParams: WEBHOOK_ID,
  body: RecoverDeliveriesBody,
  success: {
    status: 202,
    description: "How many deliveries were re-queued, and whether more remain.",
    schema: v.object({
      webhook_id: v.string(),
      since: v.pipe(v.string(), v.isoTimestamp()),
      recovered: v.pipe(v.number(), v.integer(), v.description("Deliveries re-queued by this call.")),
      has_more: v.pipe(v.boolean(), v.description("Whether recoverable deliveries since `since` remain (this call stopped at the hour's budget).")),
    }),
  },
  errors: [404, 409, 429],
  async handle({ app, accountId, params, body, now, audit }) {
    const id = params.webhook_id as string;
    const since = Date.parse(body.since);
    // Deliveries older than the retention horizon are pruned; a `since` before it would promise what is gone.
    const horizon = retentionCutoffs(now, app.config.retention).deliveries;
    if (since < horizon) {
      const days = Math.round((now - horizon) / DAY_MS);
      throw new ServiceError(422, "validation.out_of_range", `since: must be at most ${days} days ago (retention.deliveriesDays), at or after ${isoTime(horizon)}; got ${body.since}.`);
    }
    const policy: RecoverPolicy = { callsPerHour: app.config.webhooks.recoverCallsPerHour, deliveriesPerHour: app.config.webhooks.recoverDeliveriesPerHour };
    const draft = audit.draft("webhook.recover", accountId, id, { changes: { since: isoTime(since) } });
    const r = await store(app).recoverDeliveries({ accountId, webhookId: id, since, now, policy, audit: draft });
    if (r === null) throw notFound("webhook", id);
    if (r === "disabled") throw new ServiceError(409, "console.webhook_disabled", `Webhook \`${id}\` is disabled; enable it first (POST /webhooks/${id}/enable), then recover its deliveries.`);
    if (r.kind === "refused") throw recoverBudgetSpent(r.reason, r.retryAt, now, policy);
    if (r.recovered > 0) app.hooks.eventsWritten();
    return { status: 202, body: { webhook_id: id, since: isoTime(since), recovered: r.recovered, has_more: r.hasMore } };
  },
});

const NO_SENDER = new ServiceError(501, "not_implemented", "Test deliveries are not available in this deployment (no webhook sender is configured).");

/** POST /webhooks/test. */
export const testWebhooks = defineConsoleRoute({
  method: "POST",
  path: "/webhooks/test",
  operationId: "testWebhooks",
  summary: "Send a test event",
  description: "Makes one synchronous attempt of a synthetic `quota.warning` to each of the account's webhooks. No body.",
  success: {
    status: 200,
    description: "The test event's id and each webhook's outcome.",
    schema: v.object({
      event_id: v.string(),
      results: v.array(
        v.object({ webhook_id: v.string(), url: v.string(), ok: v.boolean(), response_status: v.nullable(v.pipe(v.number(), v.integer())), duration_ms: v.number(), error: v.nullable(v.string()) }),
      ),
    }),
  },
  errors: [501],
  async handle({ app, accountId }) {
    if (!app.webhooks.sendTest) throw NO_SENDER;
    return ok(await app.webhooks.sendTest(accountId));
  },
});
