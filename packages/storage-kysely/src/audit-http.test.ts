/**
 * The audit log through the real HTTP API (issue 27), on memory, SQLite and PostgreSQL, with two app instances over
 * one store (two connections to one file or database): every audited action leaves exactly one entry, naming who,
 * what, which, from where and with which request id, and never a secret; a refused or no-op action leaves none; the
 * chain verifies across both instances' appends; an erasure blanks what identifies a person and the chain still
 * verifies; the console and admin API read it by cursor pages, and refuse bad filters in the contract's shape.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditEntry, Storage } from "@benchdata/core";
import { createBillingWorker, cryptoRandom, defineConfig, hashSecret, simulatedProcessor, systemClock, verifyAuditChain } from "@benchdata/core";
import type { createApp } from "@benchdata/core/http";
import { twoHandleStores } from "./test-support/two-handle-stores.ts";
import { LIVE, PERCENTILE, SANDBOX, twoApps } from "./test-support/two-apps.ts";

const ADMIN = "admin-token-for-audit-tests-0123456789abcdef";
const stores = await twoHandleStores("audit-http");
type App = ReturnType<typeof createApp>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Reply = { status: number; body: any };

for (const [name, open] of Object.entries(stores)) {
  describe(`audit log through HTTP: ${name}`, () => {
    let handles: [Storage, Storage];
    let a: App;
    let b: App;
    let close: () => Promise<void>;
    const config = defineConfig({ target: "host" });
    beforeAll(async () => {
      ({ handles, a, b, close } = await twoApps(open, { config, adminToken: ADMIN }));
    });
    afterAll(() => close());

    let n = 0;
    /** A request from 198.51.100.N with its own request id, on instance `app`. */
    const call = async (app: App, method: string, path: string, auth: string | null, body?: unknown, extra: Record<string, string> = {}): Promise<Reply & { requestId: string }> => {
      const requestId = `audit-test-${++n}`;
      const headers: Record<string, string> = { "x-request-id": requestId, ...(auth === null ? {} : { authorization: `Bearer ${auth}` }), ...extra };
      if (body !== undefined) headers["content-type"] = "application/json";
      const host = path.startsWith("/data/") ? LIVE : SANDBOX;
      const r = await app.fetch(new Request(`${host}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }), { clientAddress: `198.51.100.${n % 250}` });
      const text = await r.text();
      return { status: r.status, body: text === "" ? null : JSON.parse(text), requestId };
    };
    const admin = (app: App, method: string, path: string, body?: unknown) => call(app, method, `/api/v1/admin${path}`, ADMIN, body);
    const all = async (): Promise<AuditEntry[]> => handles[0].listAudit({ order: "asc", limit: 10_000 });
    const verify = async () => verifyAuditChain((after) => handles[1].listAudit({ order: "asc", afterSeq: after, limit: 7 }), await handles[1].auditHead());

    /** Runs one request and checks it left exactly one entry (`expected` fields), or none when `expected` is null. */
    const once = async (
      label: string,
      send: () => Promise<Reply & { requestId: string }>,
      status: number,
      expected: Partial<AuditEntry> | null,
    ): Promise<{ reply: Reply; entry: AuditEntry | null }> => {
      const before = await all();
      const reply = await send();
      expect(reply.status, `${label}: ${JSON.stringify(reply.body)}`).toBe(status);
      const after = await all();
      if (expected === null) {
        expect(after.length, `${label} leaves no entry`).toBe(before.length);
        return { reply, entry: null };
      }
      expect(after.length, `${label} leaves exactly one entry`).toBe(before.length + 1);
      const entry = after[after.length - 1]!;
      expect(entry, label).toMatchObject({ requestId: reply.requestId, clientAddress: `198.51.100.${n % 250}`, erasedAt: null, ...expected });
      return { reply, entry };
    };

    it("every audited action leaves exactly one entry (who, what, which, where, request id, what changed), a refused or no-op one none, never a secret; the chain verifies", async () => {
      const secrets: string[] = [];
      const created = await once("account create", () => admin(a, "POST", "/accounts", { name: "Audit Ltd", tier: "startup" }), 201, { action: "account.create", actor: "admin" });
      const id = created.reply.body.account_id as string;
      const firstSession = created.reply.body.session_token as string;
      secrets.push(firstSession, hashSecret(firstSession));
      expect(created.entry).toMatchObject({ accountId: id, targetId: id, changes: { tier: "startup" }, personal: { name: "Audit Ltd" } });

      await once("tier change", () => admin(b, "PATCH", `/accounts/${id}`, { tier: "growth", limits: { monthly_quota: 2 } }), 200, {
        action: "account.update",
        accountId: id,
        changes: { tier: { from: "startup", to: "growth" }, limits: { from: {}, to: { monthlyQuota: 2 } } },
      });
      await once("unknown account", () => admin(a, "PATCH", "/accounts/acc_01JZZZZZZZZZZZZZZZZZZZZZZZ", { tier: "growth" }), 404, null);
      await once("bad body", () => admin(a, "PATCH", `/accounts/${id}`, { tier: "platinum" }), 422, null);

      const issued = await once("session create", () => admin(a, "POST", `/accounts/${id}/sessions`), 201, { action: "session.create", accountId: id });
      const session = issued.reply.body.session_token as string;
      secrets.push(session, hashSecret(session));
      const link = await once("sign-in link", () => admin(b, "POST", `/accounts/${id}/sign-in-links`), 201, { action: "sign_in_link.create", accountId: id });
      const linkToken = String(link.reply.body.sign_in_path).split("#sign-in=")[1]!;
      secrets.push(linkToken, hashSecret(linkToken));
      const signedIn = await once("sign-in", () => call(a, "POST", "/api/v1/console/sign-in", null, { token: linkToken }, { "x-benchdata-console": "1" }), 200, {
        action: "session.sign_in",
        accountId: id,
      });
      expect(signedIn.entry!.actor).toMatch(/^ses_[0-9a-f]{24}$/);
      expect(signedIn.entry!.targetId).toBe(signedIn.entry!.actor);
      await once("used link", () => call(a, "POST", "/api/v1/console/sign-in", null, { token: linkToken }, { "x-benchdata-console": "1" }), 401, null);

      const key = await once("key create", () => call(b, "POST", "/api/v1/console/keys", session, { name: "Jane's laptop", environment: "live", scopes: ["benchmarks:read"] }), 201, {
        action: "key.create",
        accountId: id,
        changes: { environment: "live", scopes: ["benchmarks:read"] },
        personal: { name: "Jane's laptop" },
      });
      const keyId = key.reply.body.key_id as string;
      const sessionActor = key.entry!.actor;
      expect(sessionActor).toMatch(/^ses_/);
      expect(sessionActor).not.toBe(signedIn.entry!.actor);
      expect(key.entry!.targetId).toBe(keyId);
      secrets.push(key.reply.body.raw_key, hashSecret(key.reply.body.raw_key));
      const rotated = await once("key rotate", () => call(a, "POST", `/api/v1/console/keys/${keyId}/rotate`, session), 200, { action: "key.rotate", targetId: keyId, actor: sessionActor });
      const raw = rotated.reply.body.raw_key as string;
      secrets.push(raw, hashSecret(raw));

      // The quota of 2 runs out; a failed charge makes "retry payment" possible.
      for (let i = 0; i < 3; i++) await call(a, "GET", PERCENTILE, raw);
      await createBillingWorker({ storage: handles[0], clock: systemClock, random: cryptoRandom, processor: simulatedProcessor({ outcome: "fail" }), config }).tick();
      const retry = await once("billing retry", () => call(b, "POST", "/api/v1/console/billing/retry", session), 202, { action: "billing.retry", accountId: id });
      expect(retry.entry!.targetId).toBe(retry.reply.body.invoice_id);
      await once("billing retry with a charge outstanding", () => call(b, "POST", "/api/v1/console/billing/retry", session), 409, null);
      await once("billing release", () => admin(a, "POST", `/accounts/${id}/billing/release`), 200, { action: "billing.release", accountId: id, actor: "admin" });

      await once("key revoke", () => call(a, "POST", `/api/v1/console/keys/${keyId}/revoke`, session), 200, { action: "key.revoke", targetId: keyId });
      await once("key revoke again (no change)", () => call(b, "POST", `/api/v1/console/keys/${keyId}/revoke`, session), 200, null);

      const hook = await once("webhook create", () => call(a, "POST", "/api/v1/console/webhooks", session, { url: "https://hooks.example.com/jane", events: ["key.created"] }), 201, {
        action: "webhook.create",
        changes: { events: ["key.created"] },
        personal: { url: "https://hooks.example.com/jane" },
      });
      const hookId = hook.reply.body.webhook_id as string;
      secrets.push(hook.reply.body.signing_secret);
      const rotatedSecret = await once("webhook rotate-secret", () => call(b, "POST", `/api/v1/console/webhooks/${hookId}/rotate-secret`, session), 200, { action: "webhook.rotate_secret", targetId: hookId });
      secrets.push(rotatedSecret.reply.body.signing_secret);
      await once("webhook recover", () => call(a, "POST", `/api/v1/console/webhooks/${hookId}/recover`, session, { since: new Date(Date.now() - 3_600_000).toISOString() }), 202, { action: "webhook.recover", targetId: hookId });
      await once("webhook recover before the retention horizon", () => call(a, "POST", `/api/v1/console/webhooks/${hookId}/recover`, session, { since: "2020-01-01T00:00:00Z" }), 422, null);
      await once("webhook enable", () => call(b, "POST", `/api/v1/console/webhooks/${hookId}/enable`, session), 200, { action: "webhook.enable", targetId: hookId });
      await once("webhook delete", () => call(a, "DELETE", `/api/v1/console/webhooks/${hookId}`, session), 204, { action: "webhook.delete", targetId: hookId });
      await once("webhook delete again", () => call(a, "DELETE", `/api/v1/console/webhooks/${hookId}`, session), 404, null);

      await once("suspend", () => admin(b, "POST", `/accounts/${id}/suspend`, { reason: "chargeback from Jane" }), 200, {
        action: "account.suspend",
        changes: { status: { from: "active", to: "suspended" } },
        personal: { reason: "chargeback from Jane" },
      });
      await once("suspend again (no change)", () => admin(a, "POST", `/accounts/${id}/suspend`), 200, null);
      await once("resume", () => admin(a, "POST", `/accounts/${id}/resume`), 200, { action: "account.resume" });
      await once("sign-out", () => call(b, "POST", "/api/v1/console/sign-out", session), 200, { action: "session.sign_out", accountId: id, actor: sessionActor, targetId: sessionActor });
      await once("sign-out again", () => call(b, "POST", "/api/v1/console/sign-out", session), 200, null);
      await once("end sessions", () => admin(b, "DELETE", `/accounts/${id}/sessions`), 200, { action: "session.end_all", accountId: id });
      const exported = await once("export", () => admin(a, "GET", `/accounts/${id}/export`), 200, { action: "account.export", accountId: id });
      expect(exported.reply.body.account.account_id).toBe(id);

      // Never a secret, a token or a hash of one, in any entry.
      const text = JSON.stringify(await all());
      for (const s of secrets) expect(text).not.toContain(s);
      expect(await verify()).toMatchObject({ break: null });

      // The erasure: one entry of its own; the account's earlier entries keep what happened, not who or where.
      await once("delete", () => admin(b, "DELETE", `/accounts/${id}`), 200, { action: "account.delete", accountId: id, targetId: id });
      const mine = (await all()).filter((e) => e.accountId === id);
      for (const e of mine.slice(0, -1)) {
        expect(e, e.action).toMatchObject({ clientAddress: null, personal: null, salt: null });
        expect(e.erasedAt, e.action).not.toBeNull();
      }
      expect(mine.find((e) => e.action === "account.update")!.changes).toEqual({ tier: { from: "startup", to: "growth" }, limits: { from: {}, to: { monthlyQuota: 2 } } });
      expect(JSON.stringify(mine)).not.toContain("Jane");
      expect(await verify()).toMatchObject({ break: null, erased: mine.length - 1 });
    });

    it("reads: the console lists its own account's entries newest first by cursor, the operator's without address or note; the admin API filters", async () => {
      const mk = async (label: string) => {
        const r = await admin(a, "POST", "/accounts", { name: label, tier: "growth" });
        return { id: r.body.account_id as string, session: r.body.session_token as string };
      };
      const x = await mk("Reader X");
      const y = await mk("Reader Y");
      for (let i = 0; i < 3; i++) expect((await call(b, "POST", "/api/v1/console/keys", x.session, { name: `k${i}`, environment: "test", scopes: ["benchmarks:read"] })).status).toBe(201);
      await call(a, "POST", `/accounts/${x.id}/suspend`.replace(/^/, "/api/v1/admin"), ADMIN, { reason: "operator's note" });
      await admin(a, "POST", `/accounts/${x.id}/resume`);
      await call(b, "POST", "/api/v1/console/keys", y.session, { name: "other", environment: "test", scopes: ["benchmarks:read"] });

      const page1 = await call(a, "GET", "/api/v1/console/audit?limit=2", x.session);
      expect(page1.status).toBe(200);
      expect(page1.body.data.map((e: { action: string }) => e.action)).toEqual(["account.resume", "account.suspend"]);
      expect(page1.body.data[1]).toMatchObject({ actor: "operator", client_address: null, personal: null, changes: { status: { from: "active", to: "suspended" } } });
      expect(page1.body).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
      const rest = await call(b, "GET", `/api/v1/console/audit?limit=100&cursor=${page1.body.next_cursor}`, x.session);
      expect(rest.body.data.map((e: { action: string }) => e.action)).toEqual(["key.create", "key.create", "key.create", "account.create"]);
      expect(rest.body.data[0]).toMatchObject({ actor: expect.stringMatching(/^ses_/), client_address: expect.stringMatching(/^198\.51\.100\./), personal: { name: "k2" } });
      expect(rest.body).toMatchObject({ has_more: false, next_cursor: null });
      const keysOnly = await call(a, "GET", "/api/v1/console/audit?action=key.create&limit=1", x.session);
      expect(keysOnly.body.data).toHaveLength(1);

      const byAccount = await admin(b, "GET", `/audit?account_id=${y.id}`);
      expect(byAccount.body.data.map((e: { action: string }) => e.action)).toEqual(["key.create", "account.create"]);
      expect(byAccount.body.data[1]).toMatchObject({ actor: "admin", account_id: y.id, personal: { name: "Reader Y" }, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(byAccount.body.data[1]).not.toHaveProperty("salt");
      const suspensions = await admin(a, "GET", `/audit?action=account.suspend&actor=admin&account_id=${x.id}`);
      expect(suspensions.body.data).toHaveLength(1);
      expect(suspensions.body.data[0].personal).toEqual({ reason: "operator's note" });
      const future = await admin(a, "GET", "/audit?from=2100-01-01T00:00:00Z");
      expect(future.body).toEqual({ data: [], has_more: false, next_cursor: null });

      for (const [path, parameter] of [
        ["/api/v1/admin/audit?action=key.steal", "action"],
        ["/api/v1/admin/audit?cursor=abc", "cursor"],
        ["/api/v1/admin/audit?limit=0", "limit"],
        ["/api/v1/admin/audit?from=yesterday", "from"],
        ["/api/v1/admin/audit?account_id=nope", "account_id"],
      ] as const) {
        const r = await call(a, "GET", path, ADMIN);
        expect(r.status, path).toBe(422);
        expect(Object.keys(r.body).sort()).toEqual(["code", "detail", "status"]);
        expect(r.body.detail, path).toContain(parameter);
      }
      const backwards = await admin(a, "GET", "/audit?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z");
      expect(backwards.body).toMatchObject({ status: 422, code: "validation.invalid_parameter" });
      expect((await call(a, "GET", "/api/v1/console/audit?cursor=-1", x.session)).body).toMatchObject({ status: 422, code: "validation.invalid_parameter" });
      expect((await call(a, "GET", "/api/v1/console/audit", null)).status).toBe(401);
    });
  });
}
