// adapter-deno on the real Deno runtime (the `deno` npm package's binary), driven over HTTP.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { serve } from "./serve.ts";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const denoBinary = join(root, "node_modules/.bin/deno");
const fixture = resolve(here, "../test/serve-fixture.ts");

/** Starts the fixture on Deno and resolves once it listens, with its base URL and the lines it printed. */
async function startFixture(env: Record<string, string> = {}): Promise<{ child: ChildProcessWithoutNullStreams; base: string; url: string; output: () => string }> {
  // deno is a devDependency: a missing binary is a broken install, so fail rather than skip.
  expect(existsSync(denoBinary), `expected the deno binary at ${denoBinary}`).toBe(true);
  const child = spawn(denoBinary, ["run", "--allow-net", "--allow-env", fixture], {
    cwd: resolve(here, ".."),
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const [port, url] = await new Promise<[string, string]>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`deno did not listen: ${stderr}`)), 60_000);
    const check = (): void => {
      const m = /^listening (\d+) (\S+)$/m.exec(stdout);
      if (m) {
        clearTimeout(timer);
        done([m[1]!, m[2]!]);
      }
    };
    child.stdout.on("data", check);
    child.on("exit", (code) => fail(new Error(`deno exited (${code}): ${stderr}`)));
  });
  return { child, base: `http://127.0.0.1:${port}`, url, output: () => stdout };
}

function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((done) => child.once("exit", (code) => done(code)));
}

describe("adapter-deno on the real Deno runtime", () => {
  it("serves the handler with the client address, hides a thrown error's detail, and drains in-flight requests on stop", async () => {
    const { child, base, url, output } = await startFixture();
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const hello = await fetch(`${base}/hello`);
      expect(hello.status).toBe(200);
      expect(hello.headers.get("x-runtime")).toBe("deno");
      expect(await hello.json()).toEqual({ clientAddress: "127.0.0.1", method: "GET", path: "/hello" });
      expect(await (await fetch(`${base}/echo`, { method: "POST", body: JSON.stringify({ n: 42 }) })).json()).toEqual({ n: 42 });

      const thrown = await fetch(`${base}/throw`);
      expect(thrown.status).toBe(500);
      expect(thrown.headers.get("x-content-type-options")).toBe("nosniff");
      const text = await thrown.text();
      expect(JSON.parse(text)).toEqual({ detail: "internal error", code: "internal", status: 500 });
      expect(text).not.toContain("secret");

      const slow = fetch(`${base}/slow`);
      await new Promise((r) => setTimeout(r, 100));
      child.kill("SIGTERM");
      const answer = await slow;
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ path: "/slow" });
      expect(await exited(child)).toBe(0);
      expect(output()).toMatch(/closed\nstopped\n/);
      await expect(fetch(`${base}/hello`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 90_000);

  it("stop() cuts a request that never finishes after the drain timeout", async () => {
    const { child, base, output } = await startFixture({ DRAIN_TIMEOUT: "300" });
    try {
      const hung = fetch(`${base}/hang`).then(
        () => "answered",
        () => "cut",
      );
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      child.kill("SIGTERM");
      expect(await exited(child)).toBe(0);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(output()).toMatch(/stopped\n/);
      expect(await hung).toBe("cut");
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 90_000);

  it("refuses to start outside Deno", () => {
    expect(() => serve({ fetch: () => new Response("") })).toThrow("@benchdata/adapter-deno needs the Deno runtime");
  });
});
