// The time a request may take to arrive, on a real `benchdata serve` over real sockets (issue 29): a client that
// sends its headers or its body slowly is answered 408 `request.timeout` in the contract's error shape once
// `server.requestTimeoutSeconds` has passed since its first byte, and its connection is closed; a request that
// arrives in time, and a keep-alive connection idle between requests, are untouched. Memory and SQLite.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ADMIN, logLines } from "./fault-fixture.ts";
import type { Instance } from "./helpers.ts";
import { startServe } from "./helpers.ts";

const TIMEOUT_S = 0.5;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A raw connection: what was sent so far, everything answered, and whether the server closed it. */
interface Conn {
  readonly socket: Socket;
  readonly closed: Promise<string>;
  answered(): string;
}

function open(port: number): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (text += chunk));
    const closed = new Promise<string>((done) => socket.on("close", () => done(text)));
    socket.on("error", () => {});
    socket.once("connect", () => resolve({ socket, closed, answered: () => text }));
    socket.once("error", reject);
  });
}

/**
 * The status and JSON body of the one answer in `text`. The body may come with a Content-Length or, as Node 24's
 * server sends a streamed Response, in chunked transfer coding; both are HTTP/1.1, so both are decoded.
 */
function answer(text: string): { status: number; headers: string; body: unknown } {
  const end = text.indexOf("\r\n\r\n");
  const head = end < 0 ? text : text.slice(0, end);
  let body = end < 0 ? "" : text.slice(end + 4);
  if (/^transfer-encoding: chunked$/im.test(head)) body = unchunk(body);
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]), headers: head.toLowerCase(), body: body === "" ? null : JSON.parse(body) };
}

/** The payload of a chunked body: each chunk is its size in hex, CRLF, the bytes, CRLF; a size of 0 ends it. */
function unchunk(coded: string): string {
  let payload = "";
  for (let at = 0; ; ) {
    const line = coded.indexOf("\r\n", at);
    const size = Number.parseInt(coded.slice(at, line), 16);
    if (line < 0 || !(size > 0)) return payload;
    payload += coded.slice(line + 2, line + 2 + size);
    at = line + 2 + size + 2;
  }
}

const TIMED_OUT = { detail: expect.any(String), code: "request.timeout", status: 408 };
const accountPost = (length: number): string =>
  `POST /api/v1/admin/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
const BODY = JSON.stringify({ name: "Slow Co", tier: "growth" });

const dir = mkdtempSync(join(tmpdir(), "benchdata-request-timeout-"));
const config = join(dir, "config.json");
writeFileSync(config, JSON.stringify({ server: { requestTimeoutSeconds: TIMEOUT_S } }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const store of ["memory", "sqlite"] as const) {
  describe(`request timeout (server.requestTimeoutSeconds ${TIMEOUT_S}) on benchdata serve, ${store}`, () => {
    let node: Instance;
    const start = async (): Promise<Instance> => (node ??= await startServe(["--db", store === "memory" ? "memory:" : `sqlite:${join(dir, "timeout.db")}`, "--config", config], { BENCHDATA_ADMIN_TOKEN: ADMIN }));
    afterAll(async () => {
      await node?.stop();
    });

    it("headers that never finish: 408 request.timeout with the contract's body, then the connection is closed", async () => {
      const { port } = await start();
      const c = await open(port);
      c.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      const a = answer(await c.closed);
      expect(a.status).toBe(408);
      expect(a.body).toEqual(TIMED_OUT);
      expect(a.headers).toContain("connection: close");
      expect(a.headers).toContain("content-type: application/json");
      expect(a.headers).toContain("x-content-type-options: nosniff");
    });

    it("a body that stops halfway: 408 request.timeout; the handler's failed read is not logged as an internal error", async () => {
      const { port } = await start();
      const c = await open(port);
      c.socket.write(accountPost(BODY.length) + BODY.slice(0, 10));
      const a = answer(await c.closed);
      expect([a.status, a.body]).toEqual([408, TIMED_OUT]);
      await sleep(100);
      expect(logLines(node).filter((l) => l.level === "error")).toEqual([]);
    });

    it("a body trickling in a byte at a time, never idle but never done in time: 408 (the bound is the whole request, not the gaps)", async () => {
      const { port } = await start();
      const c = await open(port);
      c.socket.write(accountPost(BODY.length));
      let sent = 0;
      const trickle = setInterval(() => {
        if (sent < BODY.length && !c.socket.destroyed) c.socket.write(BODY[sent++]!);
      }, 50);
      try {
        const a = answer(await c.closed);
        expect([a.status, a.body]).toEqual([408, TIMED_OUT]);
        // It was still sending when it was cut: bytes arrived every 50 ms, yet the request could not finish.
        expect(sent).toBeLessThan(BODY.length);
        expect(sent).toBeGreaterThan(3);
      } finally {
        clearInterval(trickle);
      }
    });

    it("a body sent slowly but whole within the bound is served; a keep-alive connection idle between requests for longer than the bound is not cut by it", async () => {
      const { port } = await start();
      const c = await open(port);
      c.socket.write(accountPost(BODY.length) + BODY.slice(0, 10));
      await sleep(TIMEOUT_S * 1000 * 0.4);
      c.socket.write(BODY.slice(10));
      // Whole when its body parses: the head and the body may arrive in separate reads.
      const status = (): number => {
        try {
          return answer(c.answered()).status;
        } catch {
          return 0;
        }
      };
      await expect.poll(status).toBe(201);
      // Idle for twice the bound (node's keep-alive timeout is longer), then a second request on the same connection.
      await sleep(TIMEOUT_S * 2000);
      expect(c.socket.destroyed).toBe(false);
      const before = c.answered().length;
      c.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
      const second = answer((await c.closed).slice(before));
      expect([second.status, second.body]).toEqual([200, { ok: true }]);
    });
  });
}
