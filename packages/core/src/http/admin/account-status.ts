/** An account's status in the admin API: suspend it (everything refused, nothing deleted) and resume it. */
import * as v from "valibot";
import { isoTime } from "../../clock/clock.ts";
import { newId } from "../../ids/new-id.ts";
import { ok } from "../reply.ts";
import { accountNotFound, AccountSchema, accountView } from "./account-view.ts";
import { ACCOUNT_ID, op } from "./admin-op.ts";
import type { AccountStore } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): AccountStore => app.storage;

const SuspendBody = v.strictObject({
  reason: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.minLength(1, "must not be empty"),
      v.maxLength(500, "must be at most 500 characters"),
      v.description("The operator's note on why (shown in the admin API and the operator's log, never to the customer)."),
    ),
  ),
});

/** POST /accounts/{account_id}/suspend: stops the account at once, deleting nothing. */
export const suspendAccount = op({
  method: "POST",
  path: "/accounts/{account_id}/suspend",
  body: SuspendBody,
  bodyOptional: true,
  doc: {
    operationId: "adminSuspendAccount",
    summary: "Suspend an account",
    description:
      "Stops an account without deleting anything, at once on every instance: every data request with any of its keys, every console request " +
      "(so no new key can be made) and every console sign-in is refused with 403 `account.suspended`; its webhook deliveries and pending " +
      "charges wait, neither sent nor dead. Emits `account.suspended` (the operator's log line at once; the " +
      "account's webhooks receive it after a resumption, since theirs are paused). Suspending a suspended account changes nothing and keeps " +
      "the first reason. The body (`reason`) may be left out. Undo with the resume operation.",
    pathParams: ACCOUNT_ID,
    success: { status: 200, description: "The account, suspended.", schema: AccountSchema },
    errors: [404],
  },
  async handle(app, params, body, now, _request, _query, audit) {
    const id = params.account_id as string;
    const eventId = newId("evt", app.clock, app.idRandom);
    // The operator's note may name a person: it is erased with the account.
    const draft = audit.draft("account.suspend", id, id, { changes: { status: { from: "active", to: "suspended" } }, personal: { reason: body.reason ?? null } });
    const r = await store(app).setAccountStatus({ accountId: id, status: "suspended", reason: body.reason ?? null, now, eventId, audit: draft });
    if (r === null) throw accountNotFound(id);
    if (r.changed) {
      // The operator's copy of account.suspended (the account's own webhooks get it once it is resumed).
      app.logger.warn("account suspended by the operator: its keys and console are refused, its webhooks and charges wait", {
        account_id: id,
        reason: r.account.suspendedReason ?? null,
        event_id: eventId,
      });
      app.hooks.eventsWritten();
    }
    return ok(accountView(app, r.account));
  },
});

/** POST /accounts/{account_id}/resume: undoes a suspension. */
export const resumeAccount = op({
  method: "POST",
  path: "/accounts/{account_id}/resume",
  doc: {
    operationId: "adminResumeAccount",
    summary: "Resume a suspended account",
    description:
      "Undoes a suspension, at once on every instance: the account's keys (those active before, and only those) and console sessions work " +
      "again, its waiting webhook deliveries go out (`account.suspended` first, then `account.resumed`) and its pending charges are " +
      "attempted. The time suspended does not count toward disabling a failing webhook. Resuming an active account changes nothing. No body.",
    pathParams: ACCOUNT_ID,
    success: { status: 200, description: "The account, active.", schema: AccountSchema },
    errors: [404],
  },
  async handle(app, params, _body, now, _request, _query, audit) {
    const id = params.account_id as string;
    const eventId = newId("evt", app.clock, app.idRandom);
    const before = await store(app).getAccount(id);
    const draft = audit.draft("account.resume", id, id, { changes: { status: { from: "suspended", to: "active" } } });
    const r = await store(app).setAccountStatus({ accountId: id, status: "active", now, eventId, audit: draft });
    if (r === null) throw accountNotFound(id);
    if (r.changed) {
      app.logger.info("account resumed by the operator", { account_id: id, suspended_at: before?.suspendedAt != null ? isoTime(before.suspendedAt) : null, event_id: eventId });
      app.hooks.eventsWritten();
    }
    return ok(accountView(app, r.account));
  },
});
