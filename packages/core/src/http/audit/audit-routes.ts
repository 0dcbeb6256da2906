/**
 * Reading the audit log: the operator's `GET /api/v1/admin/audit` (every entry, filtered) and the console's
 * `GET /api/v1/console/audit` (the signed-in account's own entries). Both newest first, a cursor page at a time.
 */
import * as v from "valibot";
import type { AuditEntry } from "../../audit/audit-entry.ts";
import { AUDIT_ACTIONS, auditEntryJson } from "../../audit/audit-entry.ts";
import type { Json } from "../../audit/canonical-json.ts";
import { ServiceError } from "../../errors/service-error.ts";
import type { AuditQuery } from "../../storage/types.ts";
import type { AppContext } from "../app-options.ts";
import { op } from "../admin/admin-op.ts";
import { defineConsoleRoute } from "../console/define-console-route.ts";
import { integerParam } from "../data/query-params.ts";
import { param, quote } from "../query.ts";
import { ok } from "../reply.ts";

const Timestamp = v.pipe(v.string(), v.isoTimestamp());
const Fields = v.record(v.string(), v.unknown());

/** An entry as the operator reads it: everything but the salt. */
export const AuditEntrySchema = v.object({
  id: v.pipe(v.string(), v.description("`aud_<ULID>`.")),
  seq: v.pipe(v.number(), v.integer(), v.description("Its position in the hash chain, from 1.")),
  at: Timestamp,
  actor: v.pipe(v.string(), v.description("Who: a console session's id (`ses_…`), `admin` (the admin token), `cli`, or `console` (an embedder's own console authentication).")),
  action: v.picklist(AUDIT_ACTIONS),
  account_id: v.nullable(v.string()),
  target_id: v.pipe(v.nullable(v.string()), v.description("What was acted on: a key, webhook, delivery, invoice, session or account id.")),
  request_id: v.pipe(v.nullable(v.string()), v.description("The request's `X-Request-Id`.")),
  client_address: v.pipe(v.nullable(v.string()), v.description("The client's address; null once the account was erased.")),
  changes: v.pipe(Fields, v.description("The fields that changed and identify no one (`{from, to}` where both are known). Never a secret.")),
  personal: v.pipe(v.nullable(Fields), v.description("The fields that changed and may identify a person (names, URLs, IP ranges, notes); null once the account was erased.")),
  erased_at: v.pipe(v.nullable(Timestamp), v.description("When the account's erasure removed the identifying fields, or null.")),
  personal_digest: v.pipe(v.string(), v.description("SHA-256 of the salted identifying fields: what the hash covers of them.")),
  prev_hash: v.string(),
  hash: v.pipe(v.string(), v.description("SHA-256 over this entry's canonical JSON and `prev_hash` (docs/audit.md).")),
});

/** An entry as the account holder reads it: what the operator did shows no operator address or note. */
const ConsoleAuditEntrySchema = v.object({
  id: v.string(),
  at: Timestamp,
  actor: v.pipe(v.string(), v.description("A console session's id (`ses_…`), or `operator` for what the service's operator did.")),
  action: v.picklist(AUDIT_ACTIONS),
  target_id: v.nullable(v.string()),
  request_id: v.nullable(v.string()),
  client_address: v.pipe(v.nullable(v.string()), v.description("The address of the account's own requests; null for the operator's.")),
  changes: Fields,
  personal: v.pipe(v.nullable(Fields), v.description("Names and URLs the account gave; null for the operator's actions.")),
});

/** `next_cursor`: the position of a page's last entry (clients treat it as opaque). */
const CURSOR = /^[1-9]\d{0,15}$/;

const isoParam = (description: string) =>
  param(v.pipe(v.string(), v.isoTimestamp(), v.description(description)), { expect: "must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-01T00:00:00Z" });

const pageParams = {
  limit: v.optional(integerParam(1, 100, "How many entries per page, newest first (default 50)."), "50"),
  cursor: v.optional(
    param(v.pipe(v.string(), v.regex(CURSOR), v.description("Where the page starts: the previous page's `next_cursor` (opaque).")), { expect: "must be a `next_cursor` this API gave" }),
  ),
  action: v.optional(param(v.pipe(v.picklist(AUDIT_ACTIONS), v.description("Only entries of this action.")), { expect: `must be one of ${AUDIT_ACTIONS.join(", ")}` })),
  from: v.optional(isoParam("Only entries recorded at or after this time (ISO 8601).")),
  to: v.optional(isoParam("Only entries recorded strictly before this time (ISO 8601).")),
};

const AdminQuery = v.object({
  ...pageParams,
  account_id: v.optional(param(v.pipe(v.string(), v.regex(/^acc_[0-9A-Za-z]{1,64}$/), v.description("Only entries of this account.")), { expect: "must be an account id (`acc_…`)" })),
  actor: v.optional(
    param(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,64}$/), v.description("Only entries by this actor (`admin`, `cli`, `ses_…`).")), { expect: "must be an actor such as admin, cli or ses_…" }),
  ),
});

const ConsoleQuery = v.object(pageParams);

type PageQuery = v.InferOutput<typeof ConsoleQuery>;

/** One page (one more entry read: whether it exists is `has_more`), newest first. */
async function auditPage(app: AppContext, query: PageQuery, filter: Pick<AuditQuery, "accountId" | "actor">): Promise<{ page: AuditEntry[]; hasMore: boolean }> {
  const from = query.from === undefined ? undefined : Date.parse(query.from);
  const to = query.to === undefined ? undefined : Date.parse(query.to);
  if (from !== undefined && to !== undefined && from >= to) {
    throw new ServiceError(422, "validation.invalid_parameter", `\`from\` must be earlier than \`to\`; got ${quote(query.from!)} and ${quote(query.to!)}.`);
  }
  const rows = await app.storage.listAudit({
    order: "desc",
    limit: query.limit + 1,
    ...filter,
    ...(query.cursor !== undefined ? { beforeSeq: Number(query.cursor) } : {}),
    ...(query.action !== undefined ? { action: query.action } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
  });
  return { page: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}

const pageOf = <T>(entries: readonly AuditEntry[], hasMore: boolean, view: (e: AuditEntry) => T) => ({
  data: entries.map(view),
  has_more: hasMore,
  next_cursor: hasMore ? String(entries[entries.length - 1]!.seq) : null,
});

const pageSchema = <S extends v.GenericSchema>(entry: S) =>
  v.object({
    data: v.array(entry),
    has_more: v.pipe(v.boolean(), v.description("Whether more entries match after this page.")),
    next_cursor: v.pipe(v.nullable(v.string()), v.description("The `cursor` of the next page; null on the last one.")),
  });

const PAGING = "Newest first, a page at a time: pass the answer's `next_cursor` as `cursor` for the next page, until `has_more` is false.";

/** GET /api/v1/admin/audit: every entry, filtered. */
export const adminListAudit = op({
  method: "GET",
  path: "/audit",
  query: AdminQuery,
  doc: {
    operationId: "adminListAudit",
    summary: "Read the audit log",
    description:
      `Every recorded change of state (keys, webhooks, sessions, account changes, suspensions, billing, exports, erasures): who, what, on what, when, from where, with the request id and the fields that changed (never a secret). ${PAGING} ` +
      "Filters combine: `account_id`, `actor`, `action` and a time range [`from`, `to`). Each entry carries its place in the hash chain; `benchdata audit verify` checks the chain (docs/audit.md).",
    success: { status: 200, description: "One page of entries.", schema: pageSchema(AuditEntrySchema) },
    errors: [],
  },
  async handle(app, _params, _body, _now, _request, query) {
    const { page, hasMore } = await auditPage(app, query, { ...(query.account_id !== undefined ? { accountId: query.account_id } : {}), ...(query.actor !== undefined ? { actor: query.actor } : {}) });
    return ok(pageOf(page, hasMore, (e) => auditEntryJson(e)));
  },
});

/** Whether the account's own console (a session) did it, rather than the service's operator. */
const byAccount = (actor: string): boolean => actor.startsWith("ses_") || actor === "console";

/** The account holder's view of an entry. */
function consoleEntry(e: AuditEntry): Record<string, Json> {
  const own = byAccount(e.actor);
  return {
    id: e.id,
    at: new Date(e.at).toISOString(),
    actor: own ? e.actor : "operator",
    action: e.action,
    target_id: e.targetId,
    request_id: e.requestId,
    client_address: own ? e.clientAddress : null,
    changes: e.changes,
    personal: own ? e.personal : null,
  };
}

/** GET /api/v1/console/audit: the signed-in account's own entries. */
export const consoleListAudit = defineConsoleRoute({
  method: "GET",
  path: "/audit",
  operationId: "listAudit",
  summary: "The account's activity",
  description: `What was changed in this account, by whom (a console session, or the operator), when and from where. ${PAGING} Filters: \`action\` and a time range [\`from\`, \`to\`).`,
  query: ConsoleQuery,
  success: { status: 200, description: "One page of the account's entries.", schema: pageSchema(ConsoleAuditEntrySchema) },
  errors: [],
  async handle({ app, accountId, query }) {
    const { page, hasMore } = await auditPage(app, query, { accountId });
    return ok(pageOf(page, hasMore, consoleEntry));
  },
});
