import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BadRequestError, bridgeRequest } from "./bridge-request.ts";

function incoming(url: string, host = "127.0.0.1:8080"): IncomingMessage {
  return { url, method: "GET", rawHeaders: ["Host", host], socket: {} } as unknown as IncomingMessage;
}
// An emitter: where the runtime takes no lazy Request (Node 24) the real one is built at once and listens for close.
const outgoing = new EventEmitter() as unknown as ServerResponse;

describe("bridgeRequest URL building", () => {
  it("matches the WHATWG URL parser for any request target, fast path or not", () => {
    const alphabet = fc.constantFrom(..."/./..%2e%2E?#&=;:@!$'()*+,~_-aZ09 \"<>`{}|\\^[]é%zz%41".split(""));
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 24 }), (chars) => {
        const target = `/${chars.join("")}`;
        let expected: string;
        try {
          expected = new URL(`http://127.0.0.1:8080${target}`).href;
        } catch {
          expect(() => bridgeRequest(incoming(target), outgoing)).toThrow(BadRequestError);
          return;
        }
        expect(bridgeRequest(incoming(target), outgoing).url).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it("normalises the Host like the URL parser (case, default port) and refuses hosts with paths", () => {
    expect(bridgeRequest(incoming("/x", "Example.COM:80"), outgoing).url).toBe("http://example.com/x");
    expect(bridgeRequest(incoming("/x", "[::1]:3000"), outgoing).url).toBe("http://[::1]:3000/x");
    for (const host of ["a.com/b", "a@b", "a b", "a.com?x", "a.com#x", "[::1"]) {
      expect(() => bridgeRequest(incoming("/", host), outgoing)).toThrow(BadRequestError);
    }
  });

  it("takes absolute-form targets as they are and refuses other schemes", () => {
    expect(bridgeRequest(incoming("http://other.example/p?q"), outgoing).url).toBe("http://other.example/p?q");
    expect(() => bridgeRequest(incoming("file:///etc/passwd"), outgoing)).toThrow(BadRequestError);
  });

  it("falls back to localhost when an HTTP/1.0 client sends no Host", () => {
    const request = bridgeRequest(
      { url: "/old", method: "GET", rawHeaders: [], socket: {} } as unknown as IncomingMessage,
      outgoing,
    );
    expect(request.url).toBe("http://localhost/old");
  });
});

describe("bridgeRequest headers", () => {
  const withHeaders = (rawHeaders: string[], method = "GET"): Request =>
    bridgeRequest({ url: "/h", method, rawHeaders, socket: {}, once: () => {} } as unknown as IncomingMessage, { once: () => {} } as unknown as ServerResponse);

  it("reads headers case-insensitively from the raw list, repeats joined as Headers joins them, and is a Headers", () => {
    const request = withHeaders(["Host", "a.example", "X-Multi", "1", "x-multi", "2", "Cookie", "a=1", "cookie", "b=2"]);
    expect(request.headers).toBe(request.headers);
    expect(request.headers instanceof Headers).toBe(true);
    expect(request.headers.get("X-MULTI")).toBe("1, 2");
    expect(request.headers.get("cookie")).toBe("a=1; b=2");
    expect(request.headers.has("HOST")).toBe(true);
    expect([...request.headers]).toEqual([["cookie", "a=1; b=2"], ["host", "a.example"], ["x-multi", "1, 2"]]);
  });

  it("carries headers a handler changed before the real Request was built into it", () => {
    const request = withHeaders(["Host", "a.example", "X-Keep", "1", "X-Drop", "2"]);
    expect(request.headers.get("x-keep")).toBe("1");
    request.headers.set("x-added", "yes");
    request.headers.delete("x-drop");
    const copy = request.clone();
    expect([...copy.headers]).toEqual([["host", "a.example"], ["x-added", "yes"], ["x-keep", "1"]]);
    expect([...request.headers]).toEqual([...copy.headers]);
  });

  it("builds the real Request from the raw list when the headers were only read", () => {
    const request = withHeaders(["Host", "a.example", "Authorization", "Bearer k", "Set-Cookie", "a=1", "Set-Cookie", "b=2"]);
    expect(request.headers.get("authorization")).toBe("Bearer k");
    const copy = request.clone();
    expect(copy.headers.get("authorization")).toBe("Bearer k");
    expect(copy.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
  });
});
