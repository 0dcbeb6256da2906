import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest, Server, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { serve } from "./serve.ts";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

function get(url: string, agent?: Agent): Promise<IncomingMessage & { text: string }> {
  return new Promise((done, fail) => {
    const req = httpRequest(url, { agent: agent ?? false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => done(Object.assign(res, { text })));
    });
    req.on("error", fail);
    req.end();
  });
}

describe("serve", () => {
  it("bounds the time a request may take to arrive: 30 s for headers and body by default, or requestTimeout (issue 29)", async () => {
    const byDefault = await serve({ port: 0, host: "127.0.0.1", fetch: () => new Response("hi") });
    const short = await serve({ port: 0, host: "127.0.0.1", fetch: () => new Response("hi"), requestTimeout: 1500 });
    try {
      expect([byDefault.server.requestTimeout, byDefault.server.headersTimeout]).toEqual([30_000, 30_000]);
      expect([short.server.requestTimeout, short.server.headersTimeout]).toEqual([1500, 1500]);
    } finally {
      await byDefault.close();
      await short.close();
    }
  });

  it("listens on a random port when asked for 0 and reports where", async () => {
    const handle = await serve({ port: 0, host: "127.0.0.1", fetch: () => new Response("hi") });
    try {
      expect(handle.port).toBeGreaterThan(0);
      expect(handle.url).toBe(`http://127.0.0.1:${handle.port}`);
      expect(handle.server).toBeInstanceOf(Server);
      expect(await (await fetch(handle.url)).text()).toBe("hi");
    } finally {
      await handle.close();
    }
  });

  it("names the host localhost when listening on every interface", async () => {
    const handle = await serve({ port: 0, fetch: () => new Response("any") });
    try {
      expect(handle.url).toBe(`http://localhost:${handle.port}`);
      expect(await (await fetch(`http://127.0.0.1:${handle.port}`)).text()).toBe("any");
    } finally {
      await handle.close();
    }
  });

  it("rejects when the port is taken", async () => {
    const first = await serve({ port: 0, host: "127.0.0.1", fetch: () => new Response("") });
    try {
      await expect(serve({ port: first.port, host: "127.0.0.1", fetch: () => new Response("") })).rejects.toThrow(
        /EADDRINUSE/,
      );
    } finally {
      await first.close();
    }
  });

  it("close() lets an in-flight request finish with Connection: close, then runs onClose, then refuses", async () => {
    const events: string[] = [];
    const handle = await serve({
      port: 0,
      host: "127.0.0.1",
      fetch: async () => {
        await sleep(300);
        events.push("answered");
        return new Response("finished");
      },
      onClose: async () => {
        events.push("onClose");
      },
    });
    // A keep-alive client: without the shutdown, the server would offer to keep this connection.
    const agent = new Agent({ keepAlive: true });
    const pending = get(handle.url, agent);
    await sleep(50);
    const closed = handle.close().then(() => events.push("closed"));
    const response = await pending;
    agent.destroy();
    expect(response.text).toBe("finished");
    expect(response.headers.connection).toBe("close");
    await closed;
    expect(events).toEqual(["answered", "onClose", "closed"]);
    await expect(fetch(handle.url)).rejects.toThrow();
  });

  it("drain() keeps the listener open and answers with Connection: close, so keep-alive clients reconnect", async () => {
    const handle = await serve({ port: 0, host: "127.0.0.1", fetch: () => new Response("served") });
    const agent = new Agent({ keepAlive: true });
    try {
      expect((await get(handle.url, agent)).headers.connection).toBe("keep-alive");
      handle.drain();
      const during = await get(handle.url, agent);
      expect(during.text).toBe("served");
      expect(during.headers.connection).toBe("close");
      // A new connection is still accepted and served while draining.
      const fresh = await get(handle.url);
      expect(fresh.text).toBe("served");
      expect(fresh.headers.connection).toBe("close");
    } finally {
      agent.destroy();
      await handle.close();
    }
  });

  it("close() does not wait for idle keep-alive connections", async () => {
    const handle = await serve({ port: 0, host: "127.0.0.1", fetch: () => new Response("kept") });
    const agent = new Agent({ keepAlive: true });
    try {
      expect((await get(handle.url, agent)).text).toBe("kept");
      const started = Date.now();
      await handle.close();
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      agent.destroy();
    }
  });

  it("close() gives up on requests that outlive the drain timeout, and still runs onClose", async () => {
    let closedStorage = false;
    const handle = await serve({
      port: 0,
      host: "127.0.0.1",
      drainTimeout: 200,
      fetch: () => new Promise<Response>(() => {}),
      onClose: async () => {
        closedStorage = true;
      },
    });
    const hung = get(handle.url).then(
      () => "answered",
      () => "cut",
    );
    await sleep(50);
    const started = Date.now();
    await handle.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await hung).toBe("cut");
    expect(closedStorage).toBe(true);
  });

  it("close() is idempotent", async () => {
    let calls = 0;
    const handle = await serve({
      port: 0,
      host: "127.0.0.1",
      fetch: () => new Response(""),
      onClose: async () => {
        calls += 1;
      },
    });
    await Promise.all([handle.close(), handle.close()]);
    await handle.close();
    expect(calls).toBe(1);
  });
});

describe("installShutdown", () => {
  it("on SIGTERM drains the in-flight request, runs onClose and exits 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), "benchdata-shutdown-"));
    const script = join(dir, "server.mts");
    writeFileSync(
      script,
      `import { installShutdown, serve } from ${JSON.stringify(pathToFileURL(join(here, "serve.ts")).href)};
const handle = await serve({
  port: 0,
  host: "127.0.0.1",
  fetch: async () => { await new Promise((r) => setTimeout(r, 300)); return new Response("drained"); },
  onClose: async () => { console.log("storage closed"); },
});
installShutdown(handle, (message) => console.log(message));
console.log("listening " + handle.port);
`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    try {
      let stdout = "";
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
      });
      const port = await new Promise<string>((done, fail) => {
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString("utf8");
          const match = /listening (\d+)/.exec(stdout);
          if (match?.[1] !== undefined) done(match[1]);
        });
        child.once("exit", (code) => fail(new Error(`exited ${code}: ${stderr}`)));
      });
      const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
      const pending = get(`http://127.0.0.1:${port}/`);
      await sleep(100);
      child.kill("SIGTERM");
      expect((await pending).text).toBe("drained");
      expect(await exited).toBe(0);
      expect(stdout).toMatch(/SIGTERM received[\s\S]*storage closed[\s\S]*shut down cleanly/);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
