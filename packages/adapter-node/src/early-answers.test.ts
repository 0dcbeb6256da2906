// What the Node server answers on its own, over real HTTP: node's parser refusals (431, 400) in the
// service's error shape with `X-Content-Type-Options: nosniff`.
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
