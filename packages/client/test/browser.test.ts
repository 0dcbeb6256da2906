// The built bundle (packages/client/dist/index.js) in a real browser: Chromium (Debian's, driven by playwright-core)
// loads it from a page on another origin and calls a real `benchdata serve` across CORS with a test key.
// Without /usr/bin/chromium (`apt-get install -y chromium`) this file is skipped with a message, unless
// BENCHDATA_REQUIRE_BROWSER=1 makes that a failure.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe } from "../../cli/test/helpers.ts";
import type { Instance } from "../../cli/test/helpers.ts";
import { Benchdata } from "../src/index.ts";
import { webhookHeaders } from "../../core/src/webhooks/webhook-headers.ts";

const CHROMIUM = "/usr/bin/chromium";
const BUNDLE = fileURLToPath(new URL("../dist/index.js", import.meta.url));
const ADMIN = "client-browser-admin-token-0123456789abcdef";
const available = existsSync(CHROMIUM);
if (!available) {
  if (process.env.BENCHDATA_REQUIRE_BROWSER === "1") throw new Error(`BENCHDATA_REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (apt-get install -y chromium)`);
  console.warn(`${CHROMIUM} missing: skipping the browser test of @benchdata/client (apt-get install -y chromium)`);
}

describe.skipIf(!available)("@benchdata/client bundle in Chromium", () => {
  let api: Instance;
  let page: Server;
  let pageUrl = "";
  let browser: Browser;
  let dir = "";

  beforeAll(async () => {
    // Test keys on 127.0.0.1 need the deployment's target to be "test".
    dir = mkdtempSync(join(tmpdir(), "benchdata-browser-"));
    writeFileSync(join(dir, "config.json"), JSON.stringify({ target: "test" }));
    api = await startServe(["--db", "memory:", "--config", join(dir, "config.json")], { BENCHDATA_ADMIN_TOKEN: ADMIN });
    const html = "<!doctype html><title>client</title><p>benchdata client</p>";
    page = createServer((req, res) => {
      if (req.url === "/client.js") res.writeHead(200, { "content-type": "text/javascript" }).end(readFileSync(BUNDLE));
      else res.writeHead(200, { "content-type": "text/html" }).end(html);
    });
    await new Promise<void>((r) => page.listen(0, "127.0.0.1", r));
    // "localhost" here and 127.0.0.1 for the API: two origins, so every data call is a CORS request.
    pageUrl = `http://localhost:${(page.address() as AddressInfo).port}/`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => page?.close(r));
    await api?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("data calls with a test key across CORS, typed errors, request ids, rate-limit info, and verifyWebhook on the browser's WebCrypto", async () => {
    expect(existsSync(BUNDLE), "run npm run build first").toBe(true);
    const admin = new Benchdata({ baseUrl: api.url, adminToken: ADMIN });
    const acc = await admin.adminCreateAccount({ name: "browser", tier: "developer" });
    const key = await new Benchdata({ baseUrl: api.url, sessionToken: acc.data.session_token }).createKey({ name: "web", environment: "test", scopes: ["benchmarks:read"] });
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const body = JSON.stringify({ id: "evt_1", type: "key.revoked", account_id: "acc_1", created_at: "2026-11-16T12:00:00.000Z", data: { key_id: "key_1", key_name: "k", revoked_at: "2026-11-16T12:00:00.000Z" } });
    const now = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders({ secret, eventId: "evt_1", eventType: "key.revoked", body, timestampSeconds: now });

    const tab = await browser.newPage();
    const sent: string[] = [];
    tab.on("request", (r) => {
      if (r.url().startsWith(api.url)) sent.push(`${r.method()} ${r.headers()["user-agent"]?.includes("benchdata-client") ? "ua" : "-"}`);
    });
    await tab.goto(pageUrl);
    // Page code as text: this file's own transform must not rewrite the page's dynamic import.
    const pageCode = `(async ({ baseUrl, apiKey, body, headers, secret }) => {
      const m = await import("/client.js");
      const bd = new m.Benchdata({ baseUrl, apiKey });
      const bench = await bd.getBenchmarks({ category: "saas" });
      let code = "";
      let errorRequestId = null;
      try {
        await bd.getBenchmarks({ category: "toys" });
      } catch (e) {
        code = e instanceof m.BenchdataError ? e.status + " " + e.code : String(e);
        errorRequestId = e.requestId;
      }
      const verified = await m.verifyWebhook(body, new Headers(headers), secret);
      const tampered = await m.verifyWebhook(body.replace("key_1", "key_2"), headers, secret);
      return { category: bench.data.category, rateLimit: bench.rateLimit, requestId: bench.requestId, errorRequestId, code, verified: verified.ok && verified.event.type, tampered };
    })(${JSON.stringify({ baseUrl: api.url, apiKey: key.data.raw_key, body, headers, secret })})`;
    const result = (await tab.evaluate(pageCode)) as { category: string; rateLimit: unknown; requestId: string | null; errorRequestId: string | null; code: string; verified: string; tampered: unknown };
    expect(result.category).toBe("saas");
    expect(result.rateLimit).toMatchObject({ limit: 60, remaining: 59 });
    expect(result.code).toBe("422 validation.invalid_category");
    // Across CORS too (the server exposes X-Request-Id): the result's and the error's own ids.
    expect(result.requestId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(result.errorRequestId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(result.errorRequestId).not.toBe(result.requestId);
    expect(result.verified).toBe("key.revoked");
    expect(result.tampered).toEqual({ ok: false, reason: "invalid_signature" });
    // The browser sets its own User-Agent: the client adds none there.
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((s) => s.endsWith(" -"))).toBe(true);
  }, 90_000);
});
