/** Console key operations: create, list, show, rotate, revoke. Storage writes each change's event in the same transaction. */
import * as v from "valibot";
import { ServiceError } from "../../errors/service-error.ts";
import { fromTo } from "../audit/audit-recorder.ts";
import { newId } from "../../ids/new-id.ts";
import { generateApiKey } from "../../keys/api-key.ts";
import type { Scope } from "../../scopes/scopes.ts";
import { SCOPE_MIN_TIER, SCOPES, scopesBeyondTier, tierPermits } from "../../scopes/scopes.ts";
import type { ApiKeyRecord, KeyAnalyticsStore, KeyStore } from "../../storage/types.ts";
import { ok } from "../reply.ts";
import { accountOf, defineConsoleRoute, INVALID_SESSION, notFound } from "./define-console-route.ts";
import { KeySchema, KeyWithSecretSchema, keyView, listOf } from "./views.ts";
import type { AppContext } from "../app-options.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): KeyStore & KeyAnalyticsStore => app.storage;

const KEY_ID = { key_id: "The key's identifier (`key_…`)." };

/** The body of POST /keys. */
export const CreateKeyBody = v.strictObject({
  name: v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(100, "must be at most 100 characters"), v.description("A label for the key.")),
  environment: v.pipe(v.picklist(["live", "test"], "must be `live` or `test`"), v.description("`live` keys read real data and count toward quota; `test` keys read synthetic data.")),
  scopes: v.pipe(
    v.array(v.picklist(SCOPES, (issue) => `unknown scope ${String(issue.received)}; known scopes: ${SCOPES.join(", ")}`)),
    v.minLength(1, "must name at least one scope"),
    v.description("Scopes the account's tier permits."),
  ),
});

/** POST /keys: a new key, its raw text shown once. */
export const createKey = defineConsoleRoute({
  method: "POST",
  path: "/keys",
  operationId: "createKey",
  summary: "Create an API key",
  description: "Scopes beyond the account's tier are refused (403 `console.scope_not_permitted`); an account holds at most `keys.maxPerAccount` unrevoked keys (409 `console.limit_reached`). Emits `key.created`.",
  body: CreateKeyBody,
  success: { status: 201, description: "The key, with `raw_key` shown only here.", schema: KeyWithSecretSchema },
  errors: [403, 409],
  async handle(call) {
    const { app, body, now, audit } = call;
    const account = await accountOf(call);
    const scopes = [...new Set(body.scopes)] as Scope[];
    const beyond = scopesBeyondTier(account.tier, scopes);
    if (beyond.length > 0) {
      const first = beyond[0] as Scope;
      throw new ServiceError(403, "console.scope_not_permitted", `Scope \`${first}\` needs the ${SCOPE_MIN_TIER[first]} tier or above; this account is on ${account.tier}.`);
    }
    const generated = generateApiKey(body.environment, app.random);
    const key: ApiKeyRecord = {
      id: newId("key", app.clock, app.idRandom),
      accountId: account.id,
      name: body.name,
      environment: body.environment,
      scopes,
      prefix: generated.prefix,
      isActive: true,
      createdAt: now,
      rotatedAt: null,
      revokedAt: null,
    };
    // The key's name may name a person (erased with the account); never its secret, hash or prefix.
    const draft = audit.draft("key.create", account.id, key.id, { changes: { environment: key.environment, scopes }, personal: { name: key.name } });
    const outcome = await store(app).createKey({ key, hash: generated.hash, maxKeys: app.config.keys.maxPerAccount, eventId: newId("evt", app.clock, app.idRandom), audit: draft });
    // Erased while this request was on its way: the account no longer exists, nor does this session.
    if (outcome === "deleted") throw INVALID_SESSION;
    if (outcome === "limit") {
      throw new ServiceError(409, "console.limit_reached", `This account already has ${app.config.keys.maxPerAccount} keys that are not revoked (the maximum). Revoke one first.`);
    }
    app.hooks.eventsWritten();
    return { status: 201, body: { ...keyView(key, now, null), raw_key: generated.raw } };
  },
});

/** GET /keys: every key of the account, revoked ones included. */
export const listKeys = defineConsoleRoute({
  method: "GET",
  path: "/keys",
  operationId: "listKeys",
  summary: "List API keys",
  description: "Every key of the account, revoked ones included, oldest first. Never includes raw keys or hashes.",
  success: { status: 200, description: "The keys.", schema: listOf(KeySchema) },
  errors: [],
  async handle({ app, accountId, now }) {
    const [keys, used] = await Promise.all([store(app).listKeys(accountId), store(app).keysLastUsed(accountId)]);
    return ok({ data: keys.map((k) => keyView(k, now, used[k.id] ?? null)) });
  },
});

/** GET /keys/{key_id}. */
export const getKey = defineConsoleRoute({
  method: "GET",
  path: "/keys/{key_id}",
  operationId: "getKey",
  summary: "Show an API key",
  pathParams: KEY_ID,
  success: { status: 200, description: "The key.", schema: KeySchema },
  errors: [404],
  async handle({ app, accountId, params, now }) {
    const keyId = params.key_id as string;
    const key = await store(app).getKey(accountId, keyId);
    if (key === null) throw notFound("key", keyId);
    return ok(keyView(key, now, (await store(app).keysLastUsed(accountId))[key.id] ?? null));
  },
});

/** POST /keys/{key_id}/rotate: a new secret for the same key; the old one fails at once. */
export const rotateKey = defineConsoleRoute({
  method: "POST",
  path: "/keys/{key_id}/rotate",
  operationId: "rotateKey",
  summary: "Rotate an API key",
  description:
    "Issues a new secret for the key (same id, name, environment and scopes, less any scope the account's tier no longer permits); the previous secret stops working at once (401 `auth.inactive_key`). A revoked key cannot be rotated: 409 `console.key_revoked`. No body. Emits `key.rotated`.",
  pathParams: KEY_ID,
  success: { status: 200, description: "The key with its new `raw_key`, shown only here.", schema: KeyWithSecretSchema },
  errors: [404, 409],
  async handle(call) {
    const { app, accountId, params, now, audit } = call;
    const keyId = params.key_id as string;
    const existing = await store(app).getKey(accountId, keyId);
    if (existing === null) throw notFound("key", keyId);
    if (!existing.isActive) throw revoked(keyId);
    // Scopes the account's tier no longer permits (after a downgrade) are dropped here: a new secret never
    // re-issues what the tier would refuse to a new key. An upgrade restores nothing by itself.
    const account = await accountOf(call);
    const kept = existing.scopes.filter((s) => tierPermits(account.tier, s));
    const generated = generateApiKey(existing.environment, app.random);
    const rotated = await store(app).rotateKey({
      accountId,
      keyId,
      newHash: generated.hash,
      newPrefix: generated.prefix,
      now,
      eventId: newId("evt", app.clock, app.idRandom),
      ...(kept.length < existing.scopes.length ? { scopes: kept } : {}),
      audit: audit.draft("key.rotate", accountId, keyId, { changes: { scopes: fromTo(existing.scopes, kept) } }),
    });
    // Revoked between the read and the rotation.
    if (rotated === null) throw revoked(keyId);
    app.hooks.eventsWritten();
    return ok({ ...keyView(rotated, now, (await store(app).keysLastUsed(accountId))[rotated.id] ?? null), raw_key: generated.raw });
  },
});

function revoked(keyId: string): ServiceError {
  return new ServiceError(409, "console.key_revoked", `Key \`${keyId}\` is revoked and cannot be rotated; create a new key instead.`);
}

/** POST /keys/{key_id}/revoke: permanent; repeating it changes nothing. */
export const revokeKey = defineConsoleRoute({
  method: "POST",
  path: "/keys/{key_id}/revoke",
  operationId: "revokeKey",
  summary: "Revoke an API key",
  description: "Permanently disables the key (401 `auth.inactive_key` from then on). Idempotent: revoking a revoked key returns it unchanged. No body. Emits `key.revoked` once.",
  pathParams: KEY_ID,
  success: { status: 200, description: "The revoked key.", schema: KeySchema },
  errors: [404],
  async handle({ app, accountId, params, now, audit }) {
    const keyId = params.key_id as string;
    const key = await store(app).revokeKey({ accountId, keyId, now, eventId: newId("evt", app.clock, app.idRandom), audit: audit.draft("key.revoke", accountId, keyId) });
    if (key === null) throw notFound("key", keyId);
    app.hooks.eventsWritten();
    return ok(keyView(key, now, (await store(app).keysLastUsed(accountId))[key.id] ?? null));
  },
});
