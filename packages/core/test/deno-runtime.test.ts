// Core's own tests, run again on the real Deno runtime (the `deno` npm package ships the binary): a
// Node-only API used by core fails here even if Node would have run it.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const core = fileURLToPath(new URL("..", import.meta.url));
const deno = fileURLToPath(new URL("../../../node_modules/.bin/deno", import.meta.url));

describe("runtime: Deno", () => {
  it("core's test files pass under real Deno", () => {
    expect(existsSync(deno), `deno binary missing at ${deno}: run npm ci`).toBe(true);
    // Loopback only: the Stripe processor's tests talk to a local stub server.
    const run = spawnSync(deno, ["test", "--no-check", "--allow-read", "--allow-env", "--allow-net=127.0.0.1", "--config", "deno.json", "src/"], {
      cwd: core,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      timeout: 240_000,
    });
    const out = `${run.stdout}\n${run.stderr}`;
    const summary = /(ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed/.exec(out);
    expect(summary, out.slice(-4000)).not.toBeNull();
    expect(Number(summary![4]), out.slice(-6000)).toBe(0);
    expect(Number(summary![2])).toBeGreaterThan(50);
    expect(run.status, out.slice(-4000)).toBe(0);
  }, 300_000);
});
