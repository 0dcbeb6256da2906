import { describe, expect, it } from "vitest";
import { defineConfig } from "../config/config.ts";
import { checkWebhookUrl } from "./check-webhook-url.ts";
import { makeWebhookUrlChecker } from "./make-webhook-url-checker.ts";

const DNS: Record<string, string[]> = {
  "hooks.example.com": ["93.184.216.34"],
  "dual.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "evil.test": ["127.0.0.1"],
  "localhost": ["127.0.0.1", "::1"],
  "mixed.example.com": ["93.184.216.34", "10.1.2.3"],
  "mapped.example.com": ["::ffff:7f00:1"],
  "metadata.example.com": ["169.254.169.254"],
  "v6private.example.com": ["fd12::1"],
};
const resolve = async (host: string): Promise<string[]> => {
  const found = DNS[host];
  if (!found) throw new Error(`ENOTFOUND ${host}`);
  return found;
};
const strict = { allowHttp: false, allowPrivateNetworks: false };
const dev = { allowHttp: true, allowPrivateNetworks: true };

describe("checkWebhookUrl", () => {
  it("accepts a public https URL and returns the addresses to connect to", async () => {
    const r = await checkWebhookUrl("https://hooks.example.com/in?x=1", strict, resolve);
    expect(r).toMatchObject({ ok: true, addresses: ["93.184.216.34"] });
    expect(r.ok && r.url.href).toBe("https://hooks.example.com/in?x=1");
    expect(await checkWebhookUrl("https://dual.example.com/", strict, resolve)).toMatchObject({ ok: true, addresses: DNS["dual.example.com"] });
    expect(await checkWebhookUrl("https://8.8.8.8/hook", strict, resolve)).toMatchObject({ ok: true, addresses: ["8.8.8.8"] });
    expect(await checkWebhookUrl("https://[2606:4700:4700::1111]/hook", strict, resolve)).toMatchObject({ ok: true, addresses: ["2606:4700:4700::1111"] });
  });

  it.each([
    ["not a url", "invalid"],
    ["/relative", "invalid"],
    ["http://hooks.example.com/in", "scheme"],
    ["ftp://hooks.example.com/in", "scheme"],
    ["javascript:alert(1)", "scheme"],
    ["https://user:pass@hooks.example.com/in", "credentials"],
    ["https://user@hooks.example.com/in", "credentials"],
    ["https://nowhere.example.com/", "unresolvable"],
    ["https://evil.test/", "blocked"],
    ["https://localhost:8443/", "blocked"],
    ["https://mixed.example.com/", "blocked"],
    ["https://mapped.example.com/", "blocked"],
    ["https://127.0.0.1/", "blocked"],
    ["https://2130706433/", "blocked"], // the URL parser normalises it to 127.0.0.1
    ["https://0x7f.1/", "blocked"],
    ["https://[::1]/", "blocked"],
    ["https://[::ffff:127.0.0.1]/", "blocked"],
    ["https://[::ffff:7f00:1]/", "blocked"],
    ["https://169.254.169.254/latest/meta-data", "blocked"],
    ["https://[fd00:ec2::254]/", "blocked"],
    ["https://10.0.0.1/", "blocked"],
    ["https://100.64.1.1/", "blocked"],
    ["https://0.0.0.0/", "blocked"],
    ["https://v6private.example.com/", "blocked"],
    [`https://hooks.example.com/${"a".repeat(2100)}`, "invalid"],
  ])("refuses %s (%s)", async (url, problem) => {
    const r = await checkWebhookUrl(url, strict, resolve);
    expect(r).toMatchObject({ ok: false, problem });
    expect(r.ok ? "" : r.reason).toMatch(/webhook/);
  });

  it("does not reveal a resolved internal address in the reason", async () => {
    const r = await checkWebhookUrl("https://mixed.example.com/", strict, resolve);
    expect(r.ok ? "" : r.reason).not.toContain("10.1.2.3");
    expect(r.ok ? "" : r.reason).toContain("private");
  });

  it("the development switches allow http and private networks, but never cloud metadata", async () => {
    expect(await checkWebhookUrl("http://localhost:3000/hook", dev, resolve)).toMatchObject({ ok: true, addresses: ["127.0.0.1", "::1"] });
    expect(await checkWebhookUrl("http://evil.test/", { allowHttp: true, allowPrivateNetworks: false }, resolve)).toMatchObject({ ok: false, problem: "blocked" });
    expect(await checkWebhookUrl("https://evil.test/", { allowHttp: false, allowPrivateNetworks: true }, resolve)).toMatchObject({ ok: true });
    expect(await checkWebhookUrl("http://evil.test/", { allowHttp: false, allowPrivateNetworks: true }, resolve)).toMatchObject({ ok: false, problem: "scheme" });
    expect(await checkWebhookUrl("https://169.254.169.254/", dev, resolve)).toMatchObject({ ok: false, problem: "blocked" });
    expect(await checkWebhookUrl("https://metadata.example.com/", dev, resolve)).toMatchObject({ ok: false, problem: "blocked" });
  });
});

describe("makeWebhookUrlChecker", () => {
  it("answers null for a good URL and a 422 validation.invalid_url otherwise", async () => {
    const check = makeWebhookUrlChecker(defineConfig(), resolve);
    expect(await check("https://hooks.example.com/in")).toBeNull();
    const err = await check("https://evil.test/in");
    expect(err?.toBody()).toEqual({ status: 422, code: "validation.invalid_url", detail: expect.stringContaining("loopback") });
    expect((await check("http://hooks.example.com/in"))?.code).toBe("validation.invalid_url");
  });

  it("follows the config's switches", async () => {
    const check = makeWebhookUrlChecker(defineConfig({ webhooks: { allowHttp: true, allowPrivateNetworks: true } }), resolve);
    expect(await check("http://localhost:8080/in")).toBeNull();
  });
});
