import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { main } from "./main.ts";

describe("example: compute-only", () => {
  it("computes with core alone: keys, scopes, window, quota, stats, signatures", () => {
    const r = main();
    expect(r.environment).toBe("test");
    expect(r.keyPrefix).toMatch(/^svc_test_.{3}$/);
    expect(r.missing).toEqual(["merchant:read", "compare:read"]);
    expect(r.decisions).toEqual([
      { at: 0, allowed: true, remaining: 2, retryAfterMs: 0 },
      { at: 1000, allowed: true, remaining: 1, retryAfterMs: 0 },
      { at: 2000, allowed: true, remaining: 0, retryAfterMs: 0 },
      { at: 3000, allowed: false, remaining: 0, retryAfterMs: 57_000 },
    ]);
    expect(r.warnedAt).toBe(16);
    expect(r.exhaustedAt).toBe(21);
    expect((r.set as { p50: number }).p50).toBeCloseTo(0.72, 10);
    expect(r.rank).toBe(40);
    expect((r.hist as { counts: number[] }).counts.reduce((a, b) => a + b, 0)).toBe(10);
    expect(r.valid).toBe(true);
    expect(r.tampered).toBe(false);
  });

  it("runs as a program against the built @benchdata/core", () => {
    const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));
    const run = spawnSync(tsx, [fileURLToPath(new URL("./main.ts", import.meta.url))], { encoding: "utf8", timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.exhaustedAt).toBe(21);
    expect(out.valid).toBe(true);
  });
});
