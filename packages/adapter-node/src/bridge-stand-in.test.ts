// `requests: "stand-in"` hands the handler the lazy Request on every Node, Node 24 included, where "auto" builds
// undici's real Request at once. Such a handler must still read everything a Request offers: these run on the
// machine's Node and, in CI, on Node 24 (.ci/node24).
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type ServeHandle } from "./serve.ts";

let handler: (request: Request) => Response | Promise<Response> = () => new Response("unset");
let handle: ServeHandle;

beforeAll(async () => {
  handle = await serve({ port: 0, host: "127.0.0.1", requests: "stand-in", fetch: (request) => handler(request) });
});
afterAll(() => handle.close());

const url = (path: string): string => `http://127.0.0.1:${handle.port}${path}`;

describe('bridge with requests: "stand-in"', () => {
  it("gives a Request whose real one is not built for method, url and headers", async () => {
    let seen: { real: boolean; isRequest: boolean; method: string; url: string; auth: string | null } | undefined;
    handler = (request) => {
      seen = {
        // The stand-in's own prototype sits in front of Request.prototype; a real Request's is Request.prototype.
        real: Object.getPrototypeOf(request) === Request.prototype,
        isRequest: request instanceof Request,
        method: request.method,
        url: request.url,
        auth: request.headers.get("authorization"),
      };
      return new Response("ok");
    };
    const response = await fetch(url("/v1/x?y=1"), { headers: { authorization: "Bearer k" } });
    expect(await response.text()).toBe("ok");
    expect(seen).toEqual({ real: false, isRequest: true, method: "GET", url: url("/v1/x?y=1"), auth: "Bearer k" });
  });

  it("reads a POST body as JSON and its content type", async () => {
    handler = async (request) => Response.json({ type: request.headers.get("content-type"), body: await request.json() });
    const response = await fetch(url("/p"), { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":[1,2]}' });
    expect(await response.json()).toEqual({ type: "application/json", body: { a: [1, 2] } });
  });

  it("aborts request.signal when the client goes away while the handler works", async () => {
    let aborted!: Promise<string>;
    handler = (request) => {
      aborted = new Promise((resolve) => request.signal.addEventListener("abort", () => resolve(String((request.signal.reason as Error).name))));
      return new Promise(() => {});
    };
    const socket = connect(handle.port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await expect.poll(() => aborted !== undefined).toBe(true);
    socket.destroy();
    await expect(aborted).resolves.toBe("AbortError");
  });
});
