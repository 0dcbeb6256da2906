/** Audit rows → entries, for the SQLite and PostgreSQL stores (both keep `changes` and `personal` as JSON text). */
import type { AuditAction, AuditEntry, AuditHead, Json } from "@benchdata/core";
import type { Row } from "./rows.ts";
import { json, num, numOrNull, strOrNull } from "./rows.ts";

/** An `audit_log` row. */
export function auditEntryFromRow(r: Row): AuditEntry {
  return {
    seq: num(r.seq),
    id: String(r.id),
    at: num(r.at),
    actor: String(r.actor),
    action: r.action as AuditAction,
    accountId: strOrNull(r.account_id),
    targetId: strOrNull(r.target_id),
    requestId: strOrNull(r.request_id),
    clientAddress: strOrNull(r.client_address),
    changes: json<Record<string, Json>>(r.changes),
    personal: r.personal === null || r.personal === undefined ? null : json<Record<string, Json> | null>(r.personal),
    salt: strOrNull(r.salt),
    personalDigest: String(r.personal_digest),
    prevHash: String(r.prev_hash),
    hash: String(r.hash),
    erasedAt: numOrNull(r.erased_at),
  };
}

/** The `audit_head` row. */
export function auditHeadFromRow(r: Row): AuditHead {
  return { seq: num(r.seq), hash: String(r.hash) };
}

/** The columns of an `audit_log` row, in insert order. */
export const AUDIT_COLUMNS = "seq, id, at, actor, action, account_id, target_id, request_id, client_address, changes, personal, salt, personal_digest, prev_hash, hash";

/** An entry's values in `AUDIT_COLUMNS` order. */
export function auditRowValues(e: AuditEntry): unknown[] {
  return [e.seq, e.id, e.at, e.actor, e.action, e.accountId, e.targetId, e.requestId, e.clientAddress, JSON.stringify(e.changes), JSON.stringify(e.personal), e.salt, e.personalDigest, e.prevHash, e.hash];
}
