import { describe, expect, it } from "vitest";
import { kit } from "../test-kit.ts";
import type { ConsoleAssets } from "./console-ui.ts";

const get = (path: string, init: RequestInit = {}) => new Request(`http://localhost${path}`, init);

// A stand-in for @benchdata/console's build: core serves whatever files it is handed (the real ones are
// checked in packages/console/test).
const ASSETS: ConsoleAssets = {
  "/console/": { type: "text/html; charset=utf-8", etag: '"page"', body: "<!doctype html><title>console</title>" },
  "/console/console.js": { type: "text/javascript; charset=utf-8", etag: '"script"', body: "export {};" },
};

describe("the browser console's files, as handed to createApp", () => {
  it("serves each handed file with its type and ETag, a strict CSP and no framing", async () => {
    const k = kit({ consoleUi: ASSETS });
    for (const path of Object.keys(ASSETS)) {
      const r = await k.call(get(path));
      expect(r.status, path).toBe(200);
      expect(r.body).toBe(ASSETS[path]!.body);
      expect(r.headers.get("content-type")).toBe(ASSETS[path]!.type);
      expect(r.headers.get("etag")).toBe(ASSETS[path]!.etag);
      const csp = r.headers.get("content-security-policy")!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe");
      expect(r.headers.get("x-frame-options")).toBe("DENY");
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  it("answers 304 to a matching ETag, 308 from /console to /console/, 404 for an unknown file, 405 for POST", async () => {
    const k = kit({ consoleUi: ASSETS });
    expect((await k.call(get("/console/console.js", { headers: { "if-none-match": '"script"' } }))).status).toBe(304);
    const moved = await k.call(get("/console"));
    expect(moved.status).toBe(308);
    expect(moved.headers.get("location")).toBe("/console/");
    expect((await k.call(get("/console/nope.js"))).body).toMatchObject({ code: "not_found", status: 404 });
    // A name every object has is not a file.
    expect((await k.call(get("/console/constructor"))).body).toMatchObject({ code: "not_found", status: 404 });
    expect((await k.call(get("/console/", { method: "POST" }))).body).toMatchObject({ code: "method_not_allowed", status: 405 });
  });

  it("serves no console when none is handed, or when it is turned off", async () => {
    for (const k of [kit(), kit({ consoleUi: false })]) {
      expect((await k.call(get("/console/"))).status).toBe(404);
      expect((await k.call(get("/console/console.js"))).status).toBe(404);
    }
  });
});
