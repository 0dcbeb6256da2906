import { describe, expect, it } from "vitest";
import { kit } from "../test-kit.ts";
import { CONSOLE_ASSETS } from "./assets.generated.ts";

const get = (path: string, init: RequestInit = {}) => new Request(`http://localhost${path}`, init);

describe("the browser console's files", () => {
  it("serves the page, its script and stylesheet from the app, with a strict CSP and no framing", async () => {
    const k = kit();
    for (const path of ["/console/", "/console/console.js", "/console/console.css"]) {
      const r = await k.call(get(path));
      expect(r.status, path).toBe(200);
      expect(r.body).toBe(CONSOLE_ASSETS[path]!.body);
      expect(r.headers.get("content-type")).toBe(CONSOLE_ASSETS[path]!.type);
      const csp = r.headers.get("content-security-policy")!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe");
      expect(r.headers.get("x-frame-options")).toBe("DENY");
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    }
    // The page loads only its own files: no CDN, nothing from another origin, no inline script.
    const html = CONSOLE_ASSETS["/console/"]!.body;
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>[^<]/);
    // The script's only absolute URLs are the SVG namespace and the URL field's example placeholder.
    const urls = CONSOLE_ASSETS["/console/console.js"]!.body.match(/https?:\/\/[^"'`\s]*/g) ?? [];
    expect(new Set(urls)).toEqual(new Set(["http://www.w3.org/2000/svg", "https://example.com/benchdata"]));
  });

  it("answers 304 to a matching ETag, 308 from /console to /console/, 404 for an unknown file, 405 for POST", async () => {
    const k = kit();
    const etag = CONSOLE_ASSETS["/console/console.js"]!.etag;
    expect((await k.call(get("/console/console.js", { headers: { "if-none-match": etag } }))).status).toBe(304);
    const moved = await k.call(get("/console"));
    expect(moved.status).toBe(308);
    expect(moved.headers.get("location")).toBe("/console/");
    expect((await k.call(get("/console/nope.js"))).body).toMatchObject({ code: "not_found", status: 404 });
    expect((await k.call(get("/console/", { method: "POST" }))).body).toMatchObject({ code: "method_not_allowed", status: 405 });
  });

  it("an embedder can turn it off", async () => {
    const k = kit({ consoleUi: false });
    expect((await k.call(get("/console/"))).status).toBe(404);
    expect((await k.call(get("/console/console.js"))).status).toBe(404);
  });
});
