// What the Node server answers on its own, over real HTTP: node's parser refusals (431, 400) in the
// service's error shape with `X-Content-Type-Options: nosniff`; and answers that go out before the request's
// body has arrived (a 413), which the client must be able to read (lingering close).
import { Agent, request } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { serve } from "./serve.ts";

/** Sends raw bytes and collects everything the server answers until it closes the connection. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", fail);
    socket.on("close", () => done(text));
    socket.write(bytes);
  });
}

function headerOf(response: string, name: string): string | undefined {
  const head = response.split("\r\n\r\n")[0] ?? "";
  const line = head.split("\r\n").find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

describe("node:http's own refusals", () => {
  it("oversized headers → 431 request.headers_too_large, JSON body, nosniff", async () => {
    const handle = await serve({ port: 0, host: "127.0.0.1", fetch: () => new Response("unused") });
    try {
      const response = await raw(handle.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(70_000)}\r\n\r\n`);
      expect(response.startsWith("HTTP/1.1 431 ")).toBe(true);
      expect(headerOf(response, "x-content-type-options")).toBe("nosniff");
      expect(JSON.parse(response.split("\r\n\r\n")[1] as string)).toEqual({ detail: expect.any(String), code: "request.headers_too_large", status: 431 });
    } finally {
      await handle.close();
    }
  });

  it("a malformed request → 400 request.invalid, JSON body, nosniff", async () => {
    const handle = await serve({ port: 0, host: "127.0.0.1", fetch: () => new Response("unused") });
    try {
      const response = await raw(handle.port, "NOT HTTP AT ALL\r\n\r\n");
      expect(response.startsWith("HTTP/1.1 400 ")).toBe(true);
      expect(headerOf(response, "x-content-type-options")).toBe("nosniff");
      expect(JSON.parse(response.split("\r\n\r\n")[1] as string)).toMatchObject({ code: "request.invalid", status: 400 });
    } finally {
      await handle.close();
    }
  });

  it("the bridge's own 400 (a Host that is not a host) and 500 carry nosniff", async () => {
    const handle = await serve({
      port: 0,
      host: "127.0.0.1",
      onError: () => {},
      fetch: () => {
        throw new Error("boom");
      },
    });
    try {
      const bad = await raw(handle.port, "GET / HTTP/1.1\r\nHost: a/b\r\nConnection: close\r\n\r\n");
      expect(bad.startsWith("HTTP/1.1 400 ")).toBe(true);
      expect(headerOf(bad, "x-content-type-options")).toBe("nosniff");
      const failed = await raw(handle.port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      expect(failed.startsWith("HTTP/1.1 500 ")).toBe(true);
      expect(headerOf(failed, "x-content-type-options")).toBe("nosniff");
    } finally {
      await handle.close();
    }
  });
});

const TOO_LARGE = JSON.stringify({ detail: "Request body too large: at most 1048576 bytes.", code: "request.too_large", status: 413 });

/** Answers 413 at once, without reading the body (as the service does for a Content-Length over its limit). */
const refuseBody = (): Response => new Response(TOO_LARGE, { status: 413, headers: { "content-type": "application/json" } });

/** POSTs `size` bytes with node's own client; resolves to the status it read and the error it reported, if any. */
function post(port: number, size: number, options: { agent: Agent | false; chunked?: boolean }): Promise<{ status: number | null; error: string | null }> {
  return new Promise((done) => {
    let status: number | null = null;
    let error: string | null = null;
    const req = request(
      { port, host: "127.0.0.1", method: "POST", path: "/", agent: options.agent, headers: { "content-type": "application/json", ...(options.chunked ? {} : { "content-length": String(size) }) } },
      (res) => {
        res.resume();
        res.on("end", () => (status = res.statusCode ?? 0));
      },
    );
    // node reports a reset under its writes as an error of the request, whether or not the answer was read.
    req.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    req.on("close", () => setImmediate(() => done({ status, error })));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < size && !req.destroyed) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once("drain", pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

describe("an answer before the body is in (lingering close)", () => {
  it("node's http client sending a large body reads the 413, with Connection: close, kept alive and chunked", async () => {
    const handle = await serve({ port: 0, host: "127.0.0.1", fetch: refuseBody });
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const seen: { status: number | null; error: string | null }[] = [];
      // agent: false sends Connection: close, where node closed the socket under the client's writes (EPIPE).
      for (let i = 0; i < 6; i++) seen.push(await post(handle.port, 8_000_000, { agent: false }));
      for (let i = 0; i < 3; i++) seen.push(await post(handle.port, 8_000_000, { agent: false, chunked: true }));
      for (let i = 0; i < 3; i++) seen.push(await post(handle.port, 8_000_000, { agent: keepAlive }));
      expect(seen).toEqual(Array(12).fill({ status: 413, error: null }));
    } finally {
      keepAlive.destroy();
      await handle.close();
    }
  });

  it("an early answer to a large body closes the connection; to a small one, the connection serves the next request once the body is in", async () => {
    const handle = await serve({ port: 0, host: "127.0.0.1", fetch: (r) => (r.method === "POST" ? refuseBody() : new Response("ok")) });
    const exchange = async (bodyLength: number): Promise<string> => {
      // Half-open allowed: like curl, the client goes on sending after the server's FIN.
      const socket = connect({ port: handle.port, host: "127.0.0.1", allowHalfOpen: true });
      let text = "";
      socket.setEncoding("latin1");
      socket.on("data", (c: string) => (text += c));
      socket.on("error", () => {});
      const body = "x".repeat(bodyLength);
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 1000)}`);
      await new Promise<void>((r) => {
        const wait = (): void => void (text.includes(TOO_LARGE) ? r() : setTimeout(wait, 5));
        wait();
      });
      socket.end(`${body.slice(1000)}GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      await new Promise((r) => socket.on("close", r));
      return text;
    };
    const large = await exchange(2_000_000);
    expect(headerOf(large, "connection")).toBe("close");
    expect(large.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 413"]);
    const small = await exchange(1_000_000);
    expect(headerOf(small, "connection")).toBe("keep-alive");
    expect(small.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 413", "HTTP/1.1 200"]);
    expect(small.endsWith("ok")).toBe(true);
    await handle.close();
  });

  for (const [what, linger, pace] of [
    ["a slow sender is cut at the time bound", { ms: 200, bytes: 1 << 30 }, 20],
    ["a fast sender is cut at the byte bound", { ms: 60_000, bytes: 1 << 20 }, 0],
  ] as const) {
    it(`${what}: it cannot hold the socket with a body nobody will read`, async () => {
      const handle = await serve({ port: 0, host: "127.0.0.1", fetch: refuseBody, linger });
      try {
        // Half-open allowed: the server's FIN after its answer does not stop this client sending.
        const socket = connect({ port: handle.port, host: "127.0.0.1", allowHalfOpen: true });
        let text = "";
        socket.setEncoding("latin1");
        socket.on("data", (c: string) => (text += c));
        socket.on("error", () => {});
        socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n`);
        // Keep sending, for ever unless the server ends it.
        const chunk = "y".repeat(pace === 0 ? 64 * 1024 : 1024);
        let open = true;
        const send = (): void => {
          if (!open) return;
          if (socket.write(chunk) && pace === 0) setImmediate(send);
          else if (pace === 0) socket.once("drain", send);
          else setTimeout(send, pace);
        };
        send();
        await new Promise((r) => socket.on("close", r));
        open = false;
        expect(text.startsWith("HTTP/1.1 413")).toBe(true);
      } finally {
        await handle.close();
      }
    });
  }
});
