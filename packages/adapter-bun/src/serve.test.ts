import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { request } from "node:http";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const bunBinary = join(root, "node_modules/.bin/bun");
const fixture = resolve(here, "../test/serve-fixture.ts");

/** Resolves with the first stdout line matching `pattern`; rejects on exit or timeout. */
function waitForLine(child: ChildProcessWithoutNullStreams, pattern: RegExp, ms = 20_000): Promise<RegExpMatchArray> {
  return new Promise((resolvePromise, reject) => {
    let buffer = "";
    const onData = (chunk: Buffer): void => {
      buffer += chunk.toString("utf8");
      for (const line of buffer.split("\n")) {
        const match = line.match(pattern);
        if (match) {
          cleanup();
          resolvePromise(match);
          return;
        }
      }
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`bun exited (${code}) before printing ${pattern}: ${buffer}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out waiting for ${pattern}: ${buffer}`));
    }, ms);
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout.off("data", onData);
      child.off("exit", onExit);
    };
    child.stdout.on("data", onData);
    child.on("exit", onExit);
  });
}

function startFixture(env: Record<string, string> = {}): ChildProcessWithoutNullStreams {
  // bun is a devDependency: a missing binary is a broken install, so fail rather than skip.
  expect(existsSync(bunBinary), `expected the bun binary at ${bunBinary}`).toBe(true);
  return spawn(bunBinary, [fixture], { cwd: root, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } });
}

describe("adapter-bun on the real Bun runtime", () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  let base = "";
  let stderr = "";
  let stdout = "";

  beforeAll(async () => {
    child = startFixture();
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const [, port] = await waitForLine(child, /^listening (\d+)$/);
    base = `http://127.0.0.1:${port}`;
  }, 30_000);

  afterAll(() => {
    if (child !== undefined && child.exitCode === null) child.kill("SIGKILL");
  });

  it("serves the handler's JSON with the client address, status and headers", async () => {
    const response = await fetch(`${base}/hello`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("x-runtime")).toBe("bun");
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await response.json()).toEqual({ clientAddress: "127.0.0.1", method: "GET", path: "/hello" });
  });

  it("passes request bodies through", async () => {
    const response = await fetch(`${base}/echo`, { method: "POST", body: JSON.stringify({ n: 42 }) });
    expect(await response.json()).toEqual({ n: 42 });
  });

  it("node's http client sending a large body reads the 413 given before the body was in (Connection: close, or chunked past the limit)", async () => {
    const { port } = new URL(base);
    const post = (path: string, size: number, chunked: boolean): Promise<{ status: number | null; error: string | null }> =>
      new Promise((done) => {
        let status: number | null = null;
        let error: string | null = null;
        // agent: false sends Connection: close, where Bun closed the connection under the client's writes (EPIPE).
        const req = request({ port, host: "127.0.0.1", method: "POST", path, agent: false, headers: { "content-type": "application/json", ...(chunked ? {} : { "content-length": String(size) }) } }, (res) => {
          res.resume();
          res.on("end", () => (status = res.statusCode ?? 0));
        });
        req.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
        req.on("close", () => setImmediate(() => done({ status, error })));
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const pump = (): void => {
          while (sent < size && !req.destroyed) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once("drain", pump);
          }
          req.end();
        };
        pump();
      });
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await post("/refuse", 8 * 1024 * 1024, false));
    for (let i = 0; i < 4; i++) seen.push(await post("/json", 8 * 1024 * 1024, true));
    expect(seen).toEqual(Array(8).fill({ status: 413, error: null }));
  });

  it("answers a thrown error with the 500 JSON body and no stack trace", async () => {
    const response = await fetch(`${base}/throw`);
    expect(response.status).toBe(500);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ detail: "internal error", code: "internal", status: 500 });
    expect(text).not.toContain("secret");
  });

  it("stop() lets an in-flight request finish, then runs onClose", async () => {
    const running = child as ChildProcessWithoutNullStreams;
    const slow = fetch(`${base}/slow`);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 100));
    const stopped = waitForLine(running, /^stopped$/);
    running.stdin.write("stop\n");
    const response = await slow;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ path: "/slow" });
    await stopped;
    expect(stdout).toMatch(/closed\nstopped\n/);
    await new Promise((resolvePromise) => running.once("exit", resolvePromise));
    expect(running.exitCode, stderr).toBe(0);
    await expect(fetch(`${base}/hello`)).rejects.toThrow();
  }, 20_000);
});

describe("adapter-bun stop() with a request that never finishes", () => {
  it("cuts it after the drain timeout instead of waiting forever", async () => {
    const child = startFixture({ DRAIN_TIMEOUT: "300" });
    try {
      const [, port] = await waitForLine(child, /^listening (\d+)$/);
      const hung = fetch(`http://127.0.0.1:${port}/hang`).then(
        () => "answered",
        () => "cut",
      );
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 100));
      const started = Date.now();
      const stopped = waitForLine(child, /^stopped$/);
      child.stdin.write("stop\n");
      await stopped;
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(await hung).toBe("cut");
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 20_000);
});
