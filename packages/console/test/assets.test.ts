// The console's built files: current with their sources, within budget, self-contained, and served by core's
// createApp when handed to it.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createMemoryStorage } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { describe, expect, it } from "vitest";
import { CONSOLE_ASSETS } from "../src/index.ts";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

describe("the browser console's build", () => {
  it("is what packages/console/app builds to (scripts/build-console.mjs --check)", () => {
    const r = spawnSync(process.execPath, ["scripts/build-console.mjs", "--check"], { cwd: REPO, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    // The budget: the page's script stays under about 60 KB gzipped.
    const kb = Number(/\(([\d.]+) KB gzipped\)/.exec(r.stdout)?.[1]);
    expect(kb).toBeLessThan(60);
  });

  it("loads only its own files: no CDN, nothing from another origin, no inline script", () => {
    expect(Object.keys(CONSOLE_ASSETS).sort()).toEqual(["/console/", "/console/console.css", "/console/console.js"]);
    const html = CONSOLE_ASSETS["/console/"]!.body;
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>[^<]/);
    // The script's only absolute URLs are the SVG namespace and the URL field's example placeholder.
    const urls = CONSOLE_ASSETS["/console/console.js"]!.body.match(/https?:\/\/[^"'`\s]*/g) ?? [];
    expect(new Set(urls)).toEqual(new Set(["http://www.w3.org/2000/svg", "https://example.com/benchdata"]));
  });

  it("is served by createApp({ consoleUi }) with its types and a strict CSP", async () => {
    const app = createApp({ storage: createMemoryStorage(), consoleUi: CONSOLE_ASSETS });
    for (const [path, asset] of Object.entries(CONSOLE_ASSETS)) {
      const r = await app.fetch(new Request(`http://localhost${path}`));
      expect(r.status, path).toBe(200);
      expect(await r.text()).toBe(asset.body);
      expect(r.headers.get("content-type")).toBe(asset.type);
      expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
    }
  });
});
