/**
 * Drafts of audit entries for one request: who (the request's actor), from where (the client address, as the data
 * API reads it: `trustProxy` decides whether X-Forwarded-For counts), and its request id. Handlers add what they did.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import type { AuditAction, AuditDraft } from "../../audit/audit-entry.ts";
import { auditDraft } from "../../audit/audit-entry.ts";
import type { Json } from "../../audit/canonical-json.ts";
import { newId } from "../../ids/new-id.ts";
import { isSessionToken } from "../../keys/session-token.ts";
import type { AppContext, ClientInfo } from "../app-options.ts";
import { clientAddressOf } from "../data/key-checks.ts";
import { requestIdOf } from "../request-id.ts";
import { presentedSession } from "../console/session-cookie.ts";

/** What changed: `changes` identify no one; `personal` may (names, URLs, IP ranges, notes) and go with an erasure. Never a secret. */
export interface AuditFields {
  readonly changes?: Readonly<Record<string, Json | undefined>>;
  readonly personal?: Readonly<Record<string, Json | undefined>>;
}

/** A record's fields as JSON for an entry (records are plain data: strings, numbers, booleans, arrays, objects). */
export function asJson(value: unknown): Json {
  return value as Json;
}

/** `{from, to}` of a field that changed, or nothing when it did not. */
export function fromTo(from: unknown, to: unknown): Readonly<Record<string, Json>> | undefined {
  return JSON.stringify(from) === JSON.stringify(to) ? undefined : { from: asJson(from ?? null), to: asJson(to ?? null) };
}

/** Makes the audit drafts of one request. */
export interface AuditRecorder {
  /** Who the entries name. */
  readonly actor: string;
  /** A draft of `action` on `targetId` in `accountId` (null: the store fills it in), now. */
  draft(action: AuditAction, accountId: string | null, targetId: string | null, fields?: AuditFields): AuditDraft;
}

/**
 * A console session's id in the audit log: `ses_` and 24 hex characters of a SHA-256 over the token's stored hash.
 * Stable for the session's life, it tells sessions apart without revealing the stored hash (nor, so, the token).
 */
export function sessionActor(tokenHash: string): string {
  return `ses_${bytesToHex(sha256(utf8ToBytes(`benchdata audit session:${tokenHash}`))).slice(0, 24)}`;
}

/** The actor of a console request: its session's id, or (an embedder's own console auth, the CLI) the app's actor. */
export function consoleActor(app: AppContext, request: Request): string {
  const presented = presentedSession(request);
  return presented !== null && isSessionToken(presented.token) ? sessionActor(app.hashSecret(presented.token)) : (app.auditActor ?? "console");
}

/** The recorder of one request, acting as `actor` (a function is asked once, when an entry is first drafted: reads draft none). */
export function auditRecorder(app: AppContext, request: Request, client: ClientInfo, actor: string | (() => string)): AuditRecorder {
  const clientAddress = clientAddressOf(request, client, app.config.trustProxy);
  const requestId = requestIdOf(request) ?? null;
  let who: string | null = typeof actor === "string" ? actor : null;
  const actorOf = (): string => (who ??= (actor as () => string)());
  return {
    get actor() {
      return actorOf();
    },
    draft: (action, accountId, targetId, fields = {}) =>
      auditDraft(
        {
          id: newId("aud", app.clock, app.idRandom),
          at: app.clock.now(),
          actor: actorOf(),
          action,
          accountId,
          targetId,
          requestId,
          clientAddress: clientAddress === "" ? null : clientAddress,
          ...fields,
        },
        app.random,
      ),
  };
}
