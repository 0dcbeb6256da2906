// Webhook URL refusals over HTTP: fragments refused, one message style whichever check refuses, and
// articles that fit the address class ("an unspecified address").
import { describe, expect, it } from "vitest";
import { defineConfig } from "../config/config.ts";
import { makeWebhookUrlChecker } from "../webhooks/make-webhook-url-checker.ts";
import { kit } from "./test-kit.ts";

const DNS: Record<string, string[]> = { "hooks.example.com": ["93.184.216.34"], "evil.test": ["127.0.0.1"] };
const resolve = async (host: string): Promise<string[]> => DNS[host] ?? [];

/** An app with the full (DNS-aware) check, as `benchdata serve` wires it, and one with only the syntactic check. */
function apps() {
  const full = kit({ webhooks: { checkUrl: makeWebhookUrlChecker(defineConfig(), resolve) } });
  const bare = kit();
  return { full, bare };
}

async function create(k: ReturnType<typeof kit>, url: string) {
  const { session } = await k.account();
  return k.console(session, "POST", "/webhooks", { url, events: ["key.created"] });
}

describe("webhook URL refusals (POST /api/v1/console/webhooks)", () => {
  it.each(["https://8.8.8.8#@127.0.0.1/", "https://hooks.example.com/in#frag", "https://hooks.example.com/in#"])("refuses a URL with a fragment: %s", async (url) => {
    const { full, bare } = apps();
    for (const k of [full, bare]) {
      const r = await create(k, url);
      expect(r.body).toEqual({ status: 422, code: "validation.invalid_url", detail: "The webhook URL must not contain a fragment (#)." });
      const { session } = await k.account();
      expect((await k.console(session, "GET", "/webhooks")).body.data).toEqual([]);
    }
  });

  it.each([
    ["http://hooks.example.com/in", "The webhook URL must use https."],
    ["not a url", "The webhook URL is not a valid absolute URL."],
    ["https://user:pw@hooks.example.com/", "The webhook URL must not contain credentials."],
  ])("gives the same sentence whichever check refuses %s", async (url, detail) => {
    const { full, bare } = apps();
    expect((await create(full, url)).body).toEqual({ status: 422, code: "validation.invalid_url", detail });
    expect((await create(bare, url)).body).toEqual({ status: 422, code: "validation.invalid_url", detail });
  });

  it.each([
    ["https://0.0.0.0/", "The webhook host 0.0.0.0 is an unspecified address, which is not allowed."],
    ["https://[::]/", "The webhook host [::] is an unspecified address, which is not allowed."],
    ["https://10.0.0.1/", "The webhook host 10.0.0.1 is a private address, which is not allowed."],
    ["https://127.0.0.1/", "The webhook host 127.0.0.1 is a loopback address, which is not allowed."],
    ["https://evil.test/", "The webhook host evil.test resolves to a loopback address, which is not allowed."],
    ["https://nowhere.test/", "The webhook host nowhere.test does not resolve."],
  ])("refuses %s with a sentence whose article fits", async (url, detail) => {
    expect((await create(apps().full, url)).body).toEqual({ status: 422, code: "validation.invalid_url", detail });
  });

  it("still accepts a public https URL with a query string", async () => {
    expect((await create(apps().full, "https://hooks.example.com/in?x=1")).status).toBe(201);
  });
});
