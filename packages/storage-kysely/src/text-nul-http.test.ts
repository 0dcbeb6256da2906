/**
 * A body whose text holds U+0000 is refused 422 `validation.invalid_body`, naming the field, on every store: on
 * PostgreSQL (whose text cannot hold the character) it used to reach the database and be answered 503 as if the
 * database were down. Nothing of the refused request is stored, and the store keeps answering.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Storage } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { jsonCall } from "./test-support/json-call.ts";
import { twoHandleStores } from "./test-support/two-handle-stores.ts";
import { SANDBOX, twoApps } from "./test-support/two-apps.ts";

const ADMIN = "admin-token-for-nul-tests-0123456789abcdef";
const stores = await twoHandleStores("text-nul-http");
type App = ReturnType<typeof createApp>;

for (const [name, open] of Object.entries(stores)) {
  describe(`U+0000 in a body: ${name}`, () => {
    let a: App;
    let close: () => Promise<void>;
    let handles: [Storage, Storage];
    beforeAll(async () => {
      ({ a, close, handles } = await twoApps(open, { adminToken: ADMIN }));
    });
    afterAll(() => close());
    const admin = (method: string, path: string, body?: unknown) => jsonCall(a, method, `${SANDBOX}/api/v1/admin${path}`, ADMIN, body);
    const console_ = (session: string, method: string, path: string, body?: unknown) => jsonCall(a, method, `${SANDBOX}/api/v1/console${path}`, session, body);
    const refused = (field: string) => ({ status: 422, code: "validation.invalid_body", detail: expect.stringContaining(`\`${field}\``) });

    it("refuses it in an account's name, a key's name, a webhook's url and a field name; stores nothing of it", async () => {
      const bad = await admin("POST", "/accounts", { name: "Acme\u0000Ltd", tier: "growth" });
      expect({ status: bad.status, ...bad.body }).toMatchObject(refused("name"));

      const acc = await admin("POST", "/accounts", { name: "Nul Co", tier: "growth" });
      expect(acc.status).toBe(201);
      const session = acc.body.session_token as string;
      const patched = await admin("PATCH", `/accounts/${acc.body.account_id}`, { name: "x\u0000" });
      expect({ status: patched.status, ...patched.body }).toMatchObject(refused("name"));

      const key = await console_(session, "POST", "/keys", { name: "k\u0000", environment: "test", scopes: ["benchmarks:read"] });
      expect({ status: key.status, ...key.body }).toMatchObject(refused("name"));
      const scope = await console_(session, "POST", "/keys", { name: "k", environment: "test", scopes: ["benchmarks:read", "bench\u0000"] });
      expect({ status: scope.status, ...scope.body }).toMatchObject(refused("scopes[1]"));
      const hook = await console_(session, "POST", "/webhooks", { url: "https://x.example.com/\u0000", events: ["quota.warning"] });
      expect({ status: hook.status, ...hook.body }).toMatchObject(refused("url"));
      const field = await console_(session, "POST", "/keys", { name: "k", "env\u0000": "test" });
      expect(field.status).toBe(422);
      expect(field.body.code).toBe("validation.invalid_body");

      // Nothing was stored, and the store still answers (no 503, no broken connection).
      const account = await admin("GET", `/accounts/${acc.body.account_id}`);
      expect([account.status, account.body.name]).toEqual([200, "Nul Co"]);
      const keys = await console_(session, "GET", "/keys");
      expect(keys.status).toBe(200);
      expect(keys.body.data).toEqual([]);
      expect(await handles[0].getAccount(acc.body.account_id as string)).toMatchObject({ name: "Nul Co" });
    });
  });
}
