/**
 * The operator's view of whole accounts: list them (cursor pages, filters), export everything held about one as
 * a single JSON document, and erase one (docs/operations.md, "Erasing an account").
 */
import * as v from "valibot";
import { isCalendarTime, isoTime } from "../../clock/clock.ts";
import { ServiceError } from "../../errors/service-error.ts";
import { EVENT_TYPES } from "../../events/events.ts";
import { PURGE_BATCH } from "../../retention/purge-batch.ts";
import { TIERS } from "../../scopes/scopes.ts";
import type { AccountLifecycleStore, AuditStore, AccountListQuery, AccountRecord, AccountStore, BillingStore, KeyAnalyticsStore, KeyStore, RecordPage, RecordPosition, WebhookStore } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";
import { integerParam } from "../data/query-params.ts";
import { SnapshotSchema, snapshotView } from "../data/merchant-views.ts";
import { DeliverySchema, deliveryView, InvoiceSchema, invoiceView, KeySchema, keyView, WebhookSchema, webhookView } from "../console/views.ts";
import { param, quote } from "../query.ts";
import { ok } from "../reply.ts";
import { accountNotFound, AccountSchema, accountView } from "./account-view.ts";
import { ACCOUNT_ID, op } from "./admin-op.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): AccountStore & KeyStore & WebhookStore & BillingStore & AccountLifecycleStore & KeyAnalyticsStore & AuditStore => app.storage;

const Timestamp = v.pipe(v.string(), v.isoTimestamp());
const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const STATES = ["active", "suspended", "deleted"] as const;

/** A page's end as `next_cursor`: the last account's creation time and id. Clients treat it as opaque. */
function encodeCursor(p: RecordPosition): string {
  return `${p.createdAt}.${p.id}`;
}

const CURSOR = /^(\d{1,16})\.(acc_[0-9A-Za-z]{1,64})$/;

/** The position a cursor names, or null when it is not one this API gave. */
function decodeCursor(text: string): RecordPosition | null {
  const m = CURSOR.exec(text);
  return m === null ? null : { createdAt: Number(m[1]), id: m[2]! };
}

const isoParam = (description: string) =>
  param(v.pipe(v.string(), v.isoTimestamp(), v.check(isCalendarTime), v.description(description)), {
    expect: "must be an ISO 8601 timestamp with a time zone that names a real time, e.g. 2026-11-01T00:00:00Z",
  });

/** Control characters (C0, DEL, C1): never in a name worth searching for, and PostgreSQL refuses NUL in text. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const ListQuery = v.object({
  limit: v.optional(integerParam(1, 100, "How many accounts per page (default 50)."), "50"),
  cursor: v.optional(
    param(v.pipe(v.string(), v.check((c) => decodeCursor(c) !== null), v.description("Where the page starts: the previous page's `next_cursor` (opaque).")), {
      expect: "must be a `next_cursor` this API gave",
    }),
  ),
  status: v.optional(
    param(v.pipe(v.picklist(STATES), v.description("Only accounts in this state; by default active and suspended ones (a deleted account's tombstone is listed only with `status=deleted`).")), {
      expect: `must be one of ${STATES.join(", ")}`,
    }),
  ),
  tier: v.optional(param(v.pipe(v.picklist(TIERS), v.description("Only accounts of this tier.")), { expect: `must be one of ${TIERS.join(", ")}` })),
  created_after: v.optional(isoParam("Only accounts created at or after this time (ISO 8601).")),
  created_before: v.optional(isoParam("Only accounts created strictly before this time (ISO 8601).")),
  q: v.optional(
    param(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.maxLength(200),
        v.check((q) => !CONTROL.test(q)),
        v.description("Only accounts whose name contains this text, case-insensitively (no control characters)."),
      ),
      { expect: "must be 1 to 200 characters, without control characters" },
    ),
  ),
});

/** GET /accounts: a page of accounts, oldest first. */
export const listAccounts = op({
  method: "GET",
  path: "/accounts",
  query: ListQuery,
  doc: {
    operationId: "adminListAccounts",
    summary: "List accounts",
    description:
      "Accounts in ascending order of creation (then id), a page at a time: pass the answer's `next_cursor` as `cursor` for the next page, until `has_more` is false. " +
      "Filters combine: `status`, `tier`, a creation range [`created_after`, `created_before`) and a case-insensitive name search `q`. " +
      "Deleted accounts are left out unless `status=deleted` asks for their tombstones.",
    success: {
      status: 200,
      description: "One page of accounts.",
      schema: v.object({
        data: v.array(AccountSchema),
        has_more: v.pipe(v.boolean(), v.description("Whether more accounts match after this page.")),
        next_cursor: v.pipe(v.nullable(v.string()), v.description("The `cursor` of the next page; null on the last one.")),
      }),
    },
    errors: [],
  },
  async handle(app, _params, _body, _now, _request, query) {
    const from = query.created_after === undefined ? undefined : Date.parse(query.created_after);
    const before = query.created_before === undefined ? undefined : Date.parse(query.created_before);
    if (from !== undefined && before !== undefined && from >= before) {
      throw new ServiceError(422, "validation.invalid_parameter", `\`created_after\` must be earlier than \`created_before\`; got ${quote(query.created_after!)} and ${quote(query.created_before!)}.`);
    }
    const filter: AccountListQuery = {
      limit: query.limit + 1,
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.tier !== undefined ? { tier: query.tier } : {}),
      ...(from !== undefined ? { createdFrom: from } : {}),
      ...(before !== undefined ? { createdBefore: before } : {}),
      ...(query.q !== undefined ? { nameContains: query.q } : {}),
      ...(query.cursor !== undefined ? { after: decodeCursor(query.cursor)! } : {}),
    };
    // One more than the page: whether it exists is `has_more`.
    const rows = await store(app).listAccounts(filter);
    const page = rows.slice(0, query.limit);
    const hasMore = rows.length > query.limit;
    return ok({ data: page.map((a) => accountView(app, a)), has_more: hasMore, next_cursor: hasMore ? encodeCursor(page[page.length - 1]!) : null });
  },
});

/** The export document's format: a reader checks it before reading the rest. */
export const ACCOUNT_EXPORT_FORMAT = "benchdata.account-export/1";

/** Records read per storage call while an export streams. */
const EXPORT_PAGE = 500;

/** A webhook as the console lists it, with what else is held about it (never a secret). */
const ExportWebhookSchema = v.object({
  ...WebhookSchema.entries,
  failing_since: v.pipe(v.nullable(Timestamp), v.description("When its attempts began failing with no success since; null while not failing.")),
  dead_streak: v.pipe(Count, v.description("Its dead deliveries in a row (a success resets it).")),
  previous_secret_expires_at: v.pipe(
    v.nullable(Timestamp),
    v.description("When the previous secret a rotation keeps stops (or stopped) signing beside the current one; null when none is held."),
  ),
});

const ExportSchema = v.object({
  format: v.pipe(v.literal(ACCOUNT_EXPORT_FORMAT), v.description("This document's format and version.")),
  exported_at: Timestamp,
  account: AccountSchema,
  keys: v.pipe(v.array(KeySchema), v.description("Every key, revoked ones included; never a raw key or a hash.")),
  console_sessions: v.pipe(
    v.array(v.object({ kind: v.picklist(["session", "sign_in_link"]), created_at: Timestamp, expires_at: Timestamp })),
    v.description("Console sessions and unused sign-in links as held (expired ones included); never a token or a hash."),
  ),
  webhooks: v.pipe(v.array(ExportWebhookSchema), v.description("Every webhook, with its health and secret overlap; never a signing secret.")),
  deliveries: v.pipe(v.array(DeliverySchema), v.description("Every delivery (of deleted webhooks too), each with its attempts, oldest first.")),
  events: v.pipe(
    v.array(v.object({ id: v.string(), type: v.picklist(EVENT_TYPES), account_id: v.string(), created_at: Timestamp, data: v.record(v.string(), v.unknown()) })),
    v.description("Every event of the account, oldest first: each envelope exactly as its deliveries send it."),
  ),
  invoices: v.pipe(v.array(InvoiceSchema), v.description("Every invoice, newest first.")),
  usage: v.object({
    days: v.pipe(
      v.array(v.object({ date: v.pipe(v.string(), v.isoDate()), environment: v.picklist(["live", "test"]), calls: Count })),
      v.description("Admitted requests per UTC day and key environment (days without any are left out), oldest first."),
    ),
    periods: v.pipe(
      v.array(v.object({ period_start: Timestamp, period_end: Timestamp, calls_used: Count, blocks: Count, exhausted: v.boolean(), held_at: v.nullable(Timestamp) })),
      v.description("Each billing period's quota: calls counted (live keys), blocks bought, whether exhausted or held."),
    ),
  }),
  merchant_snapshots: v.pipe(
    v.array(v.object({ ...SnapshotSchema.entries, environment: v.picklist(["live", "test"]) })),
    v.description("Every merchant snapshot, both environments, oldest first."),
  ),
});

/** Each page of `read` after the last record of the one before, until a short page. */
async function* pages<R extends RecordPosition>(read: (page: RecordPage) => Promise<R[]>): AsyncGenerator<R[]> {
  let after: RecordPosition | undefined;
  for (;;) {
    const page = await read(after === undefined ? { limit: EXPORT_PAGE } : { after, limit: EXPORT_PAGE });
    if (page.length > 0) yield page;
    if (page.length < EXPORT_PAGE) return;
    const last = page[page.length - 1]!;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

/** `,"name":[…]` written a page at a time: each page's items as JSON text, joined. */
async function* jsonArray<R extends RecordPosition>(name: string, read: (page: RecordPage) => Promise<R[]>, item: (r: R) => string): AsyncGenerator<string> {
  yield `,${JSON.stringify(name)}:[`;
  let first = true;
  for await (const page of pages(read)) {
    yield (first ? "" : ",") + page.map(item).join(",");
    first = false;
  }
  yield "]";
}

/**
 * The export document as JSON text in pieces: the bounded parts (account, keys, sessions, webhooks, invoices,
 * usage) are read before the first piece, so a failing store still answers 503; the unbounded ones (deliveries,
 * events, snapshots) are read a page at a time as the body is consumed, so memory stays bounded.
 */
async function exportPieces(app: AppContext, account: AccountRecord, now: number): Promise<AsyncGenerator<string>> {
  const storage = store(app);
  const id = account.id;
  const [keys, sessions, webhooks, invoices, usage, used] = await Promise.all([
    storage.listKeys(id),
    storage.accountSessions(id),
    storage.listWebhooks(id),
    storage.listInvoices(id),
    storage.accountUsage(id),
    storage.keysLastUsed(id),
  ]);
  const head = {
    format: ACCOUNT_EXPORT_FORMAT,
    exported_at: isoTime(now),
    account: accountView(app, account),
    keys: keys.map((k) => keyView(k, now, used[k.id] ?? null)),
    console_sessions: sessions.map((s) => ({ kind: s.kind, created_at: isoTime(s.createdAt), expires_at: isoTime(s.expiresAt) })),
    webhooks: webhooks.map((w) => ({
      ...webhookView(w),
      failing_since: w.failingSince == null ? null : isoTime(w.failingSince),
      dead_streak: w.deadStreak ?? 0,
      previous_secret_expires_at: w.previousSecret != null && w.previousSecretUntil != null ? isoTime(w.previousSecretUntil) : null,
    })),
  };
  const tail = {
    invoices: invoices.map(invoiceView),
    usage: {
      days: usage.days.map((d) => ({ date: isoTime(d.day * 86_400_000).slice(0, 10), environment: d.environment, calls: d.count })),
      periods: usage.periods.map((p) => ({
        period_start: isoTime(p.periodStart),
        period_end: isoTime(p.periodEnd),
        calls_used: p.used,
        blocks: p.blocks,
        exhausted: p.exhausted,
        held_at: p.heldAt === null ? null : isoTime(p.heldAt),
      })),
    },
  };
  return (async function* () {
    const text = JSON.stringify(head);
    yield text.slice(0, -1);
    yield* jsonArray("deliveries", (page) => storage.accountDeliveries(id, page), (d) => JSON.stringify(deliveryView(d)));
    // An event's body is the envelope every delivery sends, stored as JSON text: spliced in as it is.
    yield* jsonArray("events", (page) => storage.accountEvents(id, page), (e) => e.body);
    const rest = JSON.stringify(tail);
    yield `,${rest.slice(1, -1)}`;
    yield* jsonArray("merchant_snapshots", (page) => storage.accountSnapshots(id, page), (s) => JSON.stringify({ ...snapshotView(s), environment: s.environment }));
    yield "}";
  })();
}

/** A body that pulls `pieces` as it is read; a failure midway ends it early (the document is then incomplete, never wrong). */
function pulled(app: AppContext, accountId: string, pieces: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await pieces.next();
        if (next.done === true) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      } catch (error) {
        app.logger.error("account export failed midway: the body was cut short", { account_id: accountId, error: error instanceof Error ? error.message : String(error) });
        controller.error(error);
      }
    },
    async cancel() {
      await pieces.return(undefined);
    },
  });
}

/** GET /accounts/{account_id}/export: everything held about an account as one JSON document. */
export const exportAccount = op({
  method: "GET",
  path: "/accounts/{account_id}/export",
  doc: {
    operationId: "adminExportAccount",
    summary: "Export an account",
    description:
      `Everything held about the account, as one JSON document (\`format: "${ACCOUNT_EXPORT_FORMAT}"\`): the account, its keys, console sessions, webhooks, ` +
      "deliveries with their attempts, events, invoices, usage per day and billing period, and merchant snapshots. Never a raw key, a token, a hash " +
      "or a signing secret. The body is streamed as it is read, a page at a time; it is not one snapshot in time (suspend the account first for that). " +
      "A deleted account answers 404, as an unknown one.",
    pathParams: ACCOUNT_ID,
    success: { status: 200, description: "The export document.", schema: ExportSchema },
    errors: [404],
  },
  async handle(app, params, _body, now, _request, _query, audit) {
    const id = params.account_id as string;
    const account = await store(app).getAccount(id);
    if (account === null) throw accountNotFound(id);
    // Reading changes nothing, but an export hands out everything held about a person: it is recorded, before it starts.
    await store(app).appendAudit(audit.draft("account.export", id, id));
    const pieces = await exportPieces(app, account, now);
    return { status: 200, stream: pulled(app, id, pieces), headers: { "content-disposition": `attachment; filename="${id}.json"` } };
  },
});

/** How often a long purge says how far it got (ms). */
const PURGE_PROGRESS_MS = 5000;

/** DELETE /accounts/{account_id}: erasure. */
export const deleteAccount = op({
  method: "DELETE",
  path: "/accounts/{account_id}",
  doc: {
    operationId: "adminDeleteAccount",
    summary: "Erase an account",
    description:
      "Erases the account, at once on every instance, like a revocation: its keys and console sessions stop working at the next request, and its keys, " +
      "sessions, sign-in links, webhooks, deliveries, events, merchant snapshots and usage are deleted. Invoices are kept for the legal record, without " +
      "what identifies a person; a charge not yet made is never made. The account stays as a tombstone (`status: deleted`, name erased) so its id is " +
      "never reused; every other operation on it answers 404. Deleting again answers the same, with `erasure.erased_now` false (and finishes an erasure that was interrupted). The answer comes only once nothing of the history is left, also when two calls run at once. No body.",
    pathParams: ACCOUNT_ID,
    success: {
      status: 200,
      description: "The account is erased.",
      schema: v.object({
        account_id: v.string(),
        deleted: v.literal(true),
        deleted_at: v.pipe(Timestamp, v.description("When it was erased (the first time).")),
        erasure: v.pipe(
          v.object({
            status: v.pipe(v.literal("erased"), v.description("Always `erased`: the answer comes only once nothing of the history is left (an interrupted erasure answers 503; deleting again finishes it).")),
            erased_now: v.pipe(v.boolean(), v.description("Whether this call erased the account (false: it was erased before).")),
            purged: v.pipe(Count, v.description("History records (deliveries, attempts, events, merchant snapshots) this call deleted.")),
          }),
          v.description("What this call did."),
        ),
      }),
    },
    errors: [404],
  },
  async handle(app, params, _body, now, _request, _query, audit) {
    const id = params.account_id as string;
    // Appended after the erasure blanks the account's earlier entries; it names no one (the account's id only).
    const r = await store(app).deleteAccount({ accountId: id, now, audit: audit.draft("account.delete", id, id) });
    if (r === null) throw accountNotFound(id);
    if (r.erased) app.logger.warn("account erased by the operator: its keys and sessions stopped at once", { account_id: id, deleted_at: isoTime(r.account.deletedAt ?? now) });
    else app.logger.info("account erasure asked again: it was erased before; finishing what may be left", { account_id: id });
    // The history left behind, a short transaction at a time (never one long hold of SQLite's write lock).
    let purged = 0;
    let reported = app.clock.now();
    for (;;) {
      const n = await store(app).purgeAccount({ accountId: id, limit: PURGE_BATCH });
      if (n === 0) break;
      purged += n;
      if (app.clock.now() - reported >= PURGE_PROGRESS_MS) {
        reported = app.clock.now();
        app.logger.info("erasing an account: purging its records", { account_id: id, purged });
      }
    }
    app.logger.info("account erasure finished: nothing of its history is left", { account_id: id, purged });
    return ok({ account_id: id, deleted: true, deleted_at: isoTime(r.account.deletedAt ?? now), erasure: { status: "erased" as const, erased_now: r.erased, purged } });
  },
});
