// The browser console in a real browser (Debian's chromium driven by playwright-core) against a real
// `benchdata serve` on SQLite: sign in with a one-time link, create a key and use it, rotate it, create a
// webhook and send a test event that arrives signed, exhaust a tiny quota and see the page show it. Every
// flow saves a screenshot under test-output/console/, and any browser console error fails the test.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPES, verifySignature } from "@benchdata/core";
import { cli, http, startServe } from "../../cli/test/helpers.ts";
import type { Instance } from "../../cli/test/helpers.ts";

const CHROMIUM = "/usr/bin/chromium";
const ADMIN = "console-admin-token-0123456789abcdefghij";
const SHOTS = fileURLToPath(new URL("../../../test-output/console/", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "benchdata-console-"));
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI_REQUIRE_BROWSER === "1") throw new Error(`${CHROMIUM} is missing (apt-get install -y chromium)`);
if (!haveChromium) console.warn(`[console-browser] SKIPPED: no ${CHROMIUM} (apt-get install -y chromium); .ci/run installs it`);

/** Debian's chromium, headless, reaching nothing outside (TOOLCHAIN.md's flags). */
function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * Runs a command the quick start printed, as a user pasting it into a shell would, and reads the status it got
 * (and the error code, if any). The command is curl's, so the status is added with `-w`.
 */
function runPrinted(command: string): { status: number; code: string | null } {
  expect(command).toMatch(/^curl -s /);
  const r = spawnSync("sh", ["-c", `${command} -w '\n%{http_code}'`], { encoding: "utf8", timeout: 20_000 });
  expect(r.status, r.stderr).toBe(0);
  const lines = r.stdout.trimEnd().split("\n");
  const status = Number(lines.pop());
  let code: string | null = null;
  try {
    code = (JSON.parse(lines.join("\n")) as { code?: string }).code ?? null;
  } catch {
    code = null;
  }
  return { status, code };
}

describe.skipIf(!haveChromium)("the browser console, in chromium", () => {
  let server: Instance;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let accountId = "";
  const errors: string[] = [];
  const received: { body: string; headers: Record<string, string | string[] | undefined> }[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers });
      res.writeHead(200).end("ok");
    });
  });

  const admin = (method: string, path: string, body?: unknown) => http(`${server.url}/api/v1/admin${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` }, ...(body !== undefined ? { body } : {}) });
  const data = (key: string, host = "test.localhost") => http(`${server.url}/data/v1/benchmarks/percentile?metric=gross_margin&value=0.7&category=saas`, { headers: { authorization: `Bearer ${key}`, host } });
  const shot = async (name: string, on: Page = page): Promise<void> => {
    await on.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  };
  const signInLink = async (): Promise<string> => {
    const link = await admin("POST", `/accounts/${accountId}/sign-in-links`);
    expect(link.status, link.text).toBe(201);
    return server.url + link.json.sign_in_path;
  };
  const secretShown = async (): Promise<string> => (await page.locator("[data-secret]").first().textContent())!.trim();

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const config = join(dir, "config.json");
    // Usage analytics written every 0.2 s, so a key's "Last used" shows without waiting the default 5 s.
    writeFileSync(config, JSON.stringify({ webhooks: { allowHttp: true, allowPrivateNetworks: true }, billing: { simulatedOutcome: "fail" }, analytics: { flushSeconds: 0.2 } }));
    server = await startServe(["--db", `sqlite:${join(dir, "console.db")}`, "--config", config], { BENCHDATA_ADMIN_TOKEN: ADMIN });
    const acc = await admin("POST", "/accounts", { name: "Console Co", tier: "growth" });
    expect(acc.status).toBe(201);
    accountId = acc.json.account_id;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    page = await context.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("pageerror", (e) => errors.push(String(e)));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves the page with a strict Content-Security-Policy and no framing", async () => {
    const r = await http(`${server.url}/console/`);
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toContain("text/html");
    expect(r.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(r.headers["content-security-policy"]).not.toContain("unsafe-inline");
    expect(r.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(r.headers["x-frame-options"]).toBe("DENY");
    expect(r.text).not.toMatch(/<script>(?!<\/script>)/);
  });

  it("an invalid session brings the sign-in page with a message; a one-time link signs in, and works only once", async () => {
    await page.goto(`${server.url}/console/`);
    await expect.poll(() => page.getByRole("heading", { name: "Sign in" }).isVisible()).toBe(true);
    await page.getByLabel("Session token or sign-in token").fill("bds_sess_not-a-real-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("console.invalid_sign_in");

    const link = await signInLink();
    await page.goto(link);
    await expect.poll(() => page.locator("#who").textContent()).toContain("Console Co");
    // The token left the address bar, and the session is an HttpOnly cookie the page cannot read.
    expect(page.url()).not.toContain("sign-in=");
    expect(await page.evaluate(() => document.cookie)).toBe("");
    expect(await page.evaluate(() => JSON.stringify(localStorage))).toBe("{}");
    await shot("1-signed-in");

    // No calls yet: the daily chart says so in words, not as an empty box (at desktop width and at 375 px).
    await page.getByRole("link", { name: "Usage & billing" }).click();
    await expect.poll(() => page.getByText("No calls in the last 30 days.").isVisible()).toBe(true);
    expect(await page.locator("svg.chart").count()).toBe(0);
    await shot("1b-usage-no-calls");
    await page.setViewportSize({ width: 375, height: 800 });
    await shot("1c-usage-no-calls-narrow");
    await page.setViewportSize({ width: 1100, height: 800 });

    const again = await browser.newContext();
    const p2 = await again.newPage();
    await p2.goto(link);
    await expect.poll(() => p2.getByText("already used").isVisible()).toBe(true);
    await again.close();
  }, 60_000);

  it("creates a key shown once; the raw key from the page answers 200; rotating it refuses the old key", async () => {
    await page.goto(`${server.url}/console/#keys`);
    await page.getByLabel("Name").fill("browser key");
    await page.getByLabel("Environment").selectOption("test");
    await page.getByRole("button", { name: "Create key" }).click();
    await expect.poll(() => page.getByText("you will not see this again").isVisible()).toBe(true);
    const raw = await secretShown();
    expect(raw).toMatch(/^svc_test_/);
    await shot("2-key-created");
    expect((await data(raw)).status).toBe(200);

    await page.getByRole("button", { name: "I have saved it" }).click();
    await page.getByRole("button", { name: "Rotate" }).click();
    await page.getByRole("button", { name: "Yes, rotate" }).click();
    await expect.poll(() => page.getByText("New key for browser key").isVisible()).toBe(true);
    const rotated = await secretShown();
    expect(rotated).not.toBe(raw);
    await shot("3-key-rotated");
    expect((await data(raw)).status).toBe(401);
    expect((await data(rotated)).status).toBe(200);

    // The quick start fills in the test key created in this page, and its command, run as printed, answers
    // 200: under the default target (host) it names the sandbox host, not the live host the page is on.
    await page.getByRole("link", { name: "Quick start" }).click();
    await expect.poll(() => page.locator("#curl").textContent()).toContain(rotated);
    const printed = (await page.locator("#curl").textContent())!;
    expect(printed).toContain(`http://sandbox.localhost:${new URL(server.url).port}/data/v1/`);
    expect(runPrinted(printed)).toEqual({ status: 200, code: null });
    await shot("3b-quick-start");
    // The command wraps rather than scrolling out of sight, at desktop width and at 375 px.
    for (const width of [1100, 375]) {
      await page.setViewportSize({ width, height: 800 });
      expect(await page.locator("pre").evaluate((e) => e.scrollWidth - e.clientWidth)).toBeLessThanOrEqual(0);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    }
    await shot("3c-quick-start-narrow");
    await page.setViewportSize({ width: 1100, height: 800 });
  }, 60_000);

  it("creates a webhook (secret shown once) and sends a test event that arrives signed", async () => {
    await page.getByRole("link", { name: "Webhooks" }).click();
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await page.getByLabel("URL (https, a public address)").fill(url);
    await page.getByRole("button", { name: "Create webhook" }).click();
    await expect.poll(() => page.getByText("signing secret").first().isVisible()).toBe(true);
    const secret = await secretShown();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole("button", { name: "Send a test event" }).click();
    await expect.poll(() => page.getByText("delivered").first().isVisible()).toBe(true);
    expect(received.length).toBeGreaterThanOrEqual(1);
    const got = received.at(-1)!;
    expect(verifySignature(secret, got.body, got.headers["x-service-signature"] as string)).toBe(true);
    await page.getByRole("button", { name: "Deliveries" }).click();
    await expect.poll(() => page.getByRole("heading", { name: /Deliveries to/ }).isVisible()).toBe(true);
    await shot("4-webhook-tested");
  }, 60_000);

  it("shows an exhausted quota and the failed charge with a retry", async () => {
    const patch = await admin("PATCH", `/accounts/${accountId}`, { limits: { monthly_quota: 2, block_size: 10 } });
    expect(patch.status, patch.text).toBe(200);
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByLabel("Name").fill("live key");
    await page.getByLabel("Environment").selectOption("live");
    await page.getByRole("button", { name: "Create key" }).click();
    await expect.poll(() => page.getByText('Your new live key "live key"').isVisible()).toBe(true);
    const live = await secretShown();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await data(live, "api.localhost")).status);
    expect(statuses).toContain(402);
    await page.getByRole("link", { name: "Usage & billing" }).click();
    await expect.poll(() => page.getByText("The quota is exhausted").isVisible()).toBe(true);
    // With calls, the chart is drawn (and the sentence is gone).
    expect(await page.getByRole("img", { name: /^Daily calls over the last 30 days/ }).isVisible()).toBe(true);
    expect(await page.getByText("No calls in the last 30 days.").count()).toBe(0);
    await expect
      .poll(async () => {
        await page.reload();
        return page.getByRole("button", { name: "Retry the charge" }).isVisible();
      }, { timeout: 20_000 })
      .toBe(true);
    await shot("5-quota-exhausted");
  }, 60_000);

  it("is readable at 375 px and signs out", async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.getByRole("link", { name: "API keys" }).click();
    await expect.poll(() => page.getByRole("heading", { name: "API keys" }).isVisible()).toBe(true);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await shot("6-narrow");
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect.poll(() => page.getByText("You are signed out.").isVisible()).toBe(true);
    await page.reload();
    await expect.poll(() => page.getByRole("heading", { name: "Sign in" }).isVisible()).toBe(true);
  }, 60_000);

  it("at 375 px each key, webhook, delivery and invoice is a stacked block: nothing scrolls sideways, every action is on screen, the tables stay tables", async () => {
    // An account of its own, seeded through the console API with its session token: webhooks first (so the
    // keys' key.created events become deliveries), keys with long names and every scope, a failed invoice.
    const acc = await admin("POST", "/accounts", { name: "Narrow Co", tier: "enterprise" });
    expect(acc.status, acc.text).toBe(201);
    const narrowId: string = acc.json.account_id;
    const con = (method: string, path: string, body?: unknown) => http(`${server.url}/api/v1/console${path}`, { method, headers: { authorization: `Bearer ${acc.json.session_token}` }, ...(body !== undefined ? { body } : {}) });
    const port = (receiver.address() as AddressInfo).port;
    for (const path of ["/hooks/narrow/a-rather-long-path-segment-that-does-not-break/receiver?tenant=narrow-co-production", "/hook2"]) {
      expect((await con("POST", "/webhooks", { url: `http://127.0.0.1:${port}${path}`, events: [...EVENT_TYPES] })).status).toBe(201);
    }
    const scopes: string[] = (await con("GET", "/account")).json.permitted_scopes;
    expect(scopes.length).toBeGreaterThan(5);
    const names = ["production-ingest-pipeline-for-the-eu-west-warehouse-nightly-batch", "Marketing site widget, used by the growth team on every landing page", "ci"];
    for (const name of names) expect((await con("POST", "/keys", { name, environment: "test", scopes })).status).toBe(201);
    const live = await con("POST", "/keys", { name: "live billing key", environment: "live", scopes: ["benchmarks:read"] });
    expect(live.status).toBe(201);
    expect((await admin("PATCH", `/accounts/${narrowId}`, { limits: { monthly_quota: 2, block_size: 10 } })).status).toBe(200);
    for (let i = 0; i < 4; i++) await data(live.json.raw_key, "api.localhost");
    await expect.poll(async () => (await con("GET", "/invoices")).json.data.length, { timeout: 20_000 }).toBeGreaterThan(0);

    const narrow = await browser.newContext({ viewport: { width: 375, height: 812 } });
    const p = await narrow.newPage();
    p.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    p.on("pageerror", (e) => errors.push(String(e)));
    const link = await admin("POST", `/accounts/${narrowId}/sign-in-links`);
    await p.goto(server.url + link.json.sign_in_path);
    await expect.poll(() => p.locator("#who").textContent()).toContain("Narrow Co");

    // Nothing wider than the screen: not the page, and not a table's own scrolling box (which is how the
    // key table used to "fit": the page did not overflow, the table scrolled sideways inside it).
    const fits = async (): Promise<void> => {
      const m = await p.evaluate(() => ({
        inner: window.innerWidth,
        page: document.documentElement.scrollWidth,
        boxes: [...document.querySelectorAll(".scroll")].map((b) => b.scrollWidth - b.clientWidth),
        outside: [...document.querySelectorAll("td, td button")]
          .map((e) => [e.textContent!.slice(0, 40), e.getBoundingClientRect()] as const)
          .filter(([, r]) => r.width > 0 && (r.left < 0 || r.right > window.innerWidth + 0.5))
          .map(([t, r]) => `${t} [${Math.round(r.left)}, ${Math.round(r.right)}]`),
      }));
      expect(m.inner).toBe(375);
      expect(m.page).toBeLessThanOrEqual(m.inner);
      expect(m.boxes.every((d) => d <= 0), `boxes scroll by ${m.boxes.join(", ")}`).toBe(true);
      expect(m.outside).toEqual([]);
    };
    const onScreen = async (button: ReturnType<Page["getByRole"]>): Promise<void> => {
      await expect.poll(() => button.isVisible()).toBe(true);
      const r = await button.evaluate((e) => e.getBoundingClientRect().toJSON() as DOMRect);
      expect(r.left).toBeGreaterThanOrEqual(0);
      expect(r.right).toBeLessThanOrEqual(375);
    };

    await p.goto(`${server.url}/console/#keys`);
    const keys = p.getByRole("table", { name: "API keys" });
    await expect.poll(() => keys.getByRole("row").count()).toBe(names.length + 2);
    await fits();
    for (const name of [...names, "live billing key"]) {
      const row = keys.getByRole("row").filter({ has: p.getByRole("cell", { name, exact: true }) });
      await onScreen(row.getByRole("button", { name: "Rotate" }));
      await onScreen(row.getByRole("button", { name: "Revoke" }));
    }
    // Every field of a key is on screen, labelled: the scopes and the prefix too.
    const first = keys.getByRole("row").filter({ has: p.getByRole("cell", { name: names[0]!, exact: true }) });
    for (const s of scopes) await expect.poll(() => first.getByText(s).isVisible()).toBe(true);
    expect(await first.locator("td").evaluateAll((tds) => tds.map((td) => td.getAttribute("data-label")))).toEqual(["Name", "Env", "Scopes", "Prefix", "Created", "Last used", "State", null]);
    // "Last used": never for a key without requests; the minute of its latest request for the live key used above.
    expect(await first.locator('td[data-label="Last used"]').textContent()).toBe("never");
    const used = keys.getByRole("row").filter({ has: p.getByRole("cell", { name: "live billing key", exact: true }) }).locator('td[data-label="Last used"] time');
    expect((await used.getAttribute("datetime"))?.endsWith(":00.000Z")).toBe(true);
    await shot("7-narrow-keys", p);
    // The confirmation replaces the button in place and still fits; focus lands on "Yes".
    await first.getByRole("button", { name: "Revoke" }).click();
    await onScreen(first.getByRole("button", { name: "Yes, revoke" }));
    expect(await p.evaluate(() => document.activeElement?.textContent)).toBe("Yes, revoke");
    await fits();
    await shot("8-narrow-keys-confirm", p);
    await first.getByRole("button", { name: "Cancel" }).click();
    // Keyboard order is reading order: Tab goes Rotate, Revoke of one key, then the next key's, downwards.
    await keys.getByRole("button", { name: "Rotate" }).first().focus();
    const order: [string, number][] = [];
    for (let i = 0; i < 4; i++) {
      order.push(await p.evaluate(() => [document.activeElement!.textContent!, document.activeElement!.getBoundingClientRect().top + window.scrollY] as [string, number]));
      await p.keyboard.press("Tab");
    }
    expect(order.map(([t]) => t)).toEqual(["Rotate", "Revoke", "Rotate", "Revoke"]);
    expect(order[2]![1]).toBeGreaterThan(order[1]![1]);

    // The stacked rows are still a table to assistive technology: chromium's own accessibility tree has
    // the table, its column headers and its cells, and a cell's name is its value, not "Name" + value.
    const cdp = await narrow.newCDPSession(p);
    const { nodes } = (await cdp.send("Accessibility.getFullAXTree")) as { nodes: { role?: { value: string }; name?: { value: string } }[] };
    const roles = (r: string) => nodes.filter((n) => n.role?.value === r);
    expect(roles("table").length).toBeGreaterThan(0);
    expect(roles("columnheader").map((n) => n.name?.value)).toEqual(expect.arrayContaining(["Name", "Scopes", "Prefix", "Actions"]));
    expect(roles("cell").find((n) => n.name?.value?.includes(names[0]!))?.name?.value).toBe(names[0]);

    await p.getByRole("link", { name: "Webhooks" }).click();
    const hooks = p.getByRole("table", { name: "Webhooks" });
    await expect.poll(() => hooks.getByRole("row").count()).toBe(3);
    await p.getByRole("button", { name: "Send a test event" }).click();
    await expect.poll(() => p.getByRole("table", { name: "Test event results" }).isVisible()).toBe(true);
    await hooks.getByRole("row").nth(2).getByRole("button", { name: "Deliveries" }).click();
    await expect.poll(() => p.getByRole("table", { name: "Deliveries" }).getByRole("row").count()).toBeGreaterThan(1);
    await fits();
    for (let i = 1; i <= 2; i++) {
      await onScreen(hooks.getByRole("row").nth(i).getByRole("button", { name: "Deliveries" }));
      await onScreen(hooks.getByRole("row").nth(i).getByRole("button", { name: "Delete" }));
    }
    await shot("9-narrow-webhooks", p);

    await p.getByRole("link", { name: "Usage & billing" }).click();
    await expect.poll(() => p.getByRole("table", { name: "Invoices" }).isVisible()).toBe(true);
    await fits();
    await shot("10-narrow-usage", p);

    // Wide, the same tables are the same grid as before: a header row and one line per key.
    await p.setViewportSize({ width: 1100, height: 800 });
    await p.getByRole("link", { name: "API keys" }).click();
    await expect.poll(() => keys.getByRole("row").count()).toBe(names.length + 2);
    expect(await keys.evaluate((t) => [getComputedStyle(t.querySelector("thead")!).display, getComputedStyle(t.querySelector("tbody tr")!).display])).toEqual(["table-header-group", "table-row"]);
    await shot("11-wide-keys", p);
    await narrow.close();
  }, 90_000);

  it("the Usage page counts each key's calls, errors and 429s, and charts calls by outcome, at desktop and 375 px", async () => {
    // An account of its own with two test keys, two requests a minute per key: "alpha" makes 5 calls (2 answered
    // 200, 3 answered 429), "beta" one (200). The server writes usage every 0.2 s (the config above).
    const acc = await admin("POST", "/accounts", { name: "Usage Co", tier: "growth" });
    expect(acc.status, acc.text).toBe(201);
    const con = (method: string, path: string, body?: unknown) => http(`${server.url}/api/v1/console${path}`, { method, headers: { authorization: `Bearer ${acc.json.session_token}` }, ...(body !== undefined ? { body } : {}) });
    expect((await admin("PATCH", `/accounts/${acc.json.account_id}`, { limits: { per_minute: 2 } })).status).toBe(200);
    const made: Record<string, number[]> = {};
    for (const [name, n] of [["alpha", 5], ["beta", 1]] as const) {
      const k = await con("POST", "/keys", { name, environment: "test", scopes: ["benchmarks:read"] });
      expect(k.status, k.text).toBe(201);
      made[name] = [];
      for (let i = 0; i < n; i++) made[name]!.push((await data(k.json.raw_key)).status);
    }
    expect(made).toEqual({ alpha: [200, 200, 429, 429, 429], beta: [200] });
    await expect.poll(async () => (await con("GET", "/usage/breakdown?group_by=")).json.data.reduce((n: number, g: { calls: number }) => n + g.calls, 0), { timeout: 10_000 }).toBe(6);

    const ctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const p = await ctx.newPage();
    p.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    p.on("pageerror", (e) => errors.push(String(e)));
    const link = await admin("POST", `/accounts/${acc.json.account_id}/sign-in-links`);
    await p.goto(server.url + link.json.sign_in_path);
    await expect.poll(() => p.locator("#who").textContent()).toContain("Usage Co");
    await p.goto(`${server.url}/console/#usage`);
    const cells = async (period: string): Promise<string[][]> => {
      const t = p.getByRole("table", { name: `Calls per key in the last ${period}` });
      await expect.poll(() => t.getByRole("row").count()).toBe(3);
      return t.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent!)));
    };
    for (const [period, button] of [["24 hours", "Last 24 hours"], ["30 days", "Last 30 days"]] as const) {
      await p.getByRole("button", { name: button }).click();
      const rows = await cells(period);
      expect(rows.map((r) => r.slice(0, 4))).toEqual([["alpha", "5", "0", "3"], ["beta", "1", "0", "0"]]);
      for (const r of rows) expect(r[4]).toMatch(/^≤ [\d.]+ ms$/);
      const chart = p.getByRole("img", { name: new RegExp(`^Calls by outcome in the last ${period}`) });
      expect(await chart.getAttribute("aria-label")).toBe(`Calls by outcome in the last ${period}: 2xx 3, 429 3.`);
      expect(await chart.locator("rect[data-outcome='2xx']").count()).toBeGreaterThan(0);
      expect(await chart.locator("rect[data-outcome='429']").count()).toBeGreaterThan(0);
      expect(await p.getByRole("list", { name: "Outcomes" }).getByRole("listitem").allTextContents()).toEqual([" 2xx: 3", " 429: 3"]);
    }
    await shot("13-usage-per-key", p);
    await p.setViewportSize({ width: 375, height: 812 });
    for (const button of ["Last 24 hours", "Last 30 days"]) {
      await p.getByRole("button", { name: button }).click();
      await expect.poll(() => p.locator("#per-key table").isVisible()).toBe(true);
      const m = await p.evaluate(() => ({
        page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        wide: [...document.querySelectorAll("#per-key td, #per-key svg.chart, #per-key ul.legend li, #per-key button")].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5).length,
      }));
      expect(m).toEqual({ page: 0, wide: 0 });
    }
    await shot("14-usage-per-key-narrow", p);
    await ctx.close();
  }, 90_000);

  it("Activity lists the account's audit entries newest first, loads older ones by cursor, has an empty state and fits at 375 px", async () => {
    // An account of its own, its actions made through the console API with its session token: 26 keys created
    // and revoked (more than one 50-entry page), then a key created, revoked, and a webhook created, last.
    const acc = await admin("POST", "/accounts", { name: "Activity Co", tier: "growth" });
    expect(acc.status, acc.text).toBe(201);
    const con = (method: string, path: string, body?: unknown) => http(`${server.url}/api/v1/console${path}`, { method, headers: { authorization: `Bearer ${acc.json.session_token}` }, ...(body !== undefined ? { body } : {}) });
    for (let i = 0; i < 26; i++) {
      const k = await con("POST", "/keys", { name: `bulk ${i}`, environment: "test", scopes: ["benchmarks:read"] });
      expect(k.status, k.text).toBe(201);
      expect((await con("POST", `/keys/${k.json.key_id}/revoke`)).status).toBe(200);
    }
    const key = await con("POST", "/keys", { name: "audited key", environment: "test", scopes: ["benchmarks:read"] });
    expect(key.status, key.text).toBe(201);
    expect((await con("POST", `/keys/${key.json.key_id}/revoke`)).status).toBe(200);
    const port = (receiver.address() as AddressInfo).port;
    const hook = await con("POST", "/webhooks", { url: `http://127.0.0.1:${port}/activity-hook`, events: ["key.created"] });
    expect(hook.status, hook.text).toBe(201);

    const ctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const p = await ctx.newPage();
    p.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    p.on("pageerror", (e) => errors.push(String(e)));
    const link = await admin("POST", `/accounts/${acc.json.account_id}/sign-in-links`);
    await p.goto(server.url + link.json.sign_in_path);
    await expect.poll(() => p.locator("#who").textContent()).toContain("Activity Co");
    await p.getByRole("link", { name: "Activity" }).click();
    const rows = p.getByRole("table", { name: "Activity" }).locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(50);
    const cell = (i: number, label: string) => rows.nth(i).locator(`td[data-label="${label}"]`).textContent();
    // Newest first: the sign-in, the operator's sign-in link before it, then the three actions above.
    expect(await cell(0, "Action")).toBe("session.sign_in");
    expect([await cell(1, "Action"), await cell(1, "Who")]).toEqual(["sign_in_link.create", "operator"]);
    expect([await cell(2, "Action"), await cell(3, "Action"), await cell(4, "Action")]).toEqual(["webhook.create", "key.revoke", "key.create"]);
    expect([await cell(2, "Target"), await cell(3, "Target"), await cell(4, "Target")]).toEqual([hook.json.webhook_id, key.json.key_id, key.json.key_id]);
    expect(await cell(2, "Who")).toMatch(/^ses_/);
    expect(await cell(4, "Changes")).toContain("name: audited key");
    expect(await cell(4, "Changes")).toContain("scopes: benchmarks:read");
    expect(await cell(2, "Changes")).toContain(`url: http://127.0.0.1:${port}/activity-hook`);
    expect(await cell(2, "Request")).toMatch(/\S/);
    const times = await rows.locator('td[data-label="When"] time').evaluateAll((ts) => ts.map((t) => t.getAttribute("datetime")!));
    expect([...times].sort().reverse()).toEqual(times);
    await shot("15-activity", p);

    // "Load more" appends the older entries; the oldest is the operator creating the account, and then no button.
    await p.getByRole("button", { name: "Load more" }).click();
    await expect.poll(() => rows.count()).toBeGreaterThan(50);
    const n = await rows.count();
    expect(await cell(n - 1, "Action")).toBe("account.create");
    expect(await cell(n - 1, "Who")).toBe("operator");
    expect(await p.getByRole("button", { name: "Load more" }).count()).toBe(0);
    // No entry twice across the two pages (each action on each target happened once).
    const all = await rows.evaluateAll((trs) => trs.map((tr) => `${tr.querySelector('[data-label="Action"]')!.textContent} ${tr.querySelector('[data-label="Target"]')!.textContent}`));
    expect(new Set(all).size).toBe(n);

    await p.setViewportSize({ width: 375, height: 800 });
    expect(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    expect(await p.evaluate(() => [...document.querySelectorAll(".scroll")].map((b) => b.scrollWidth - b.clientWidth).filter((d) => d > 0))).toEqual([]);
    // The top of the page only: the whole log, stacked, is too long a picture to read.
    await p.screenshot({ path: join(SHOTS, "16-activity-narrow.png") });

    // No entries (an account's log always holds its creation, so the server's answer is stood in for here).
    await p.route("**/api/v1/console/audit*", (r) => r.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ data: [], has_more: false, next_cursor: null }) }));
    await p.reload();
    await expect.poll(() => p.locator("#activity-empty").isVisible()).toBe(true);
    expect(await p.getByRole("table", { name: "Activity" }).count()).toBe(0);
    await shot("17-activity-empty", p);
    await ctx.close();
  }, 90_000);

  it("logged no browser console errors", () => {
    // The only errors allowed are chromium's own lines about the 401s the flows provoke on purpose (the page
    // loaded before signing in, a wrong token, a used link); a script error or a CSP violation fails here.
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  });
});

describe.skipIf(!haveChromium)("the console's quick start under a fixed target, in chromium", () => {
  let browser: Browser;
  const errors: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), "benchdata-quick-start-"));
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const target of ["test", "live"] as const) {
    it(`target ${target}: the printed command carries a ${target} key created on the page, at the plain URL, and answers 200`, async () => {
      const db = `sqlite:${join(dir, `quick-${target}.db`)}`;
      if (target === "live") {
        // Live keys read imported data: 40 saas businesses' gross margin, so the printed request has an answer.
        const file = join(dir, "saas.ndjson");
        const rows = Array.from({ length: 40 }, (_, i) => JSON.stringify({ business_id: `b${i}`, category: "saas", segment: "smb", period: "2026-Q3", metric: "gross_margin", value: 0.4 + i / 200 }));
        writeFileSync(file, rows.join("\n") + "\n");
        const imported = cli(["import", file, "--db", db]);
        expect(imported.status, imported.stderr).toBe(0);
      }
      const config = join(dir, `quick-${target}.json`);
      writeFileSync(config, JSON.stringify({ target }));
      const server = await startServe(["--db", db, "--config", config], { BENCHDATA_ADMIN_TOKEN: ADMIN });
      const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
      try {
        const p = await context.newPage();
        p.on("console", (m) => {
          if (m.type() === "error") errors.push(m.text());
        });
        p.on("pageerror", (e) => errors.push(String(e)));
        const admin = (path: string, body?: unknown) => http(`${server.url}/api/v1/admin${path}`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}` }, ...(body !== undefined ? { body } : {}) });
        const acc = await admin("/accounts", { name: `Target ${target}`, tier: "growth" });
        const link = await admin(`/accounts/${acc.json.account_id}/sign-in-links`);
        await p.goto(server.url + link.json.sign_in_path);
        await expect.poll(() => p.locator("#who").textContent()).toContain(`Target ${target}`);
        // Before a key exists, the placeholder names the key kind this server accepts.
        await p.goto(`${server.url}/console/#start`);
        await expect.poll(() => p.locator("#curl").textContent()).toContain(target === "test" ? "YOUR_TEST_KEY" : "YOUR_LIVE_KEY");
        await p.getByRole("link", { name: "API keys" }).click();
        await p.getByLabel("Name").fill(`${target} key`);
        await p.getByLabel("Environment").selectOption(target);
        await p.getByRole("button", { name: "Create key" }).click();
        await expect.poll(() => p.getByText("you will not see this again").isVisible()).toBe(true);
        const raw = (await p.locator("[data-secret]").first().textContent())!.trim();
        await p.getByRole("link", { name: "Quick start" }).click();
        await expect.poll(() => p.locator("#curl").textContent()).toContain(raw);
        const printed = (await p.locator("#curl").textContent())!;
        expect(printed).toContain(`'${server.url}/data/v1/benchmarks/percentile?`);
        expect(printed).not.toContain("Host:");
        expect(runPrinted(printed)).toEqual({ status: 200, code: null });
        await p.screenshot({ path: join(SHOTS, `12-quick-start-${target}.png`), fullPage: true });
      } finally {
        await context.close();
        await server.stop();
      }
    }, 90_000);
  }

  it("logged no browser console errors", () => {
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  });
});
