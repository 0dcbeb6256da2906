import { describe, expect, it, vi } from "vitest";
import { BridgeResponse, headerValueCached, NativeResponse, nativeResponse, simpleResponseParts } from "./bridge-response.ts";

const Lite = BridgeResponse as unknown as typeof Response;

describe("BridgeResponse, the lightweight Response", () => {
  it("is a Response to instanceof and Object.prototype.toString", () => {
    const response = new Lite("hi");
    expect(response instanceof NativeResponse).toBe(true);
    expect(response instanceof Lite).toBe(true);
    expect(new NativeResponse("x") instanceof Lite).toBe(true);
    expect(Object.prototype.toString.call(response)).toBe("[object Response]");
  });

  it("keeps a string body simple, with the default text/plain type, until something looks inside", () => {
    const response = new Lite("hello", { status: 201, headers: { "X-Thing": "1" } });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(simpleResponseParts(response)).toEqual({
      status: 201,
      headers: { "x-thing": "1", "content-type": "text/plain;charset=UTF-8" },
      body: "hello",
    });
    expect(response.headers.get("x-thing")).toBe("1");
    // Reading the headers built the real Response: the bridge must now write that one.
    expect(simpleResponseParts(response)).toBeUndefined();
    expect(nativeResponse(response)).toBeInstanceOf(NativeResponse);
  });

  it("reads its body like the real one, once", async () => {
    const response = new Lite(new TextEncoder().encode("bytes"));
    expect(response.headers.get("content-type")).toBeNull();
    expect(await response.text()).toBe("bytes");
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it("copies byte bodies, as the real constructor does", async () => {
    const bytes = new TextEncoder().encode("abc");
    const response = new Lite(bytes);
    bytes[0] = 0x7a;
    expect(await response.text()).toBe("abc");
  });

  it("throws the real constructor's errors for bad status and null-body statuses", () => {
    expect(() => new Lite("x", { status: 99 })).toThrow(RangeError);
    expect(() => new Lite("x", { status: 204 })).toThrow(TypeError);
    expect(() => new Lite("x", { headers: { "bad name": "v" } })).toThrow(TypeError);
    expect(new Lite(null, { status: 204 }).status).toBe(204);
  });

  it("hands anything it cannot keep simple to the real Response (Headers, statusText, streams)", async () => {
    const headers = new Headers();
    headers.append("set-cookie", "a=1");
    headers.append("set-cookie", "b=2");
    const withHeaders = new Lite("x", { headers });
    expect(simpleResponseParts(withHeaders)).toBeUndefined();
    expect(withHeaders.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(simpleResponseParts(new Lite("x", { statusText: "Fine" }))).toBeUndefined();
    expect(new Lite("x", { statusText: "Fine" }).statusText).toBe("Fine");
    const stream = new Lite(new Blob(["blob"]).stream());
    expect(await stream.text()).toBe("blob");
    // Values the real Headers would trim are not kept verbatim.
    expect(simpleResponseParts(new Lite("x", { headers: { a: " padded " } }))).toBeUndefined();
  });

  it("Response.json keeps JSON simple and sets application/json unless the caller set a type", async () => {
    const json = (Lite as unknown as { json: typeof Response.json }).json({ a: 1 }, { status: 202 });
    expect(simpleResponseParts(json)).toEqual({
      status: 202,
      headers: { "content-type": "application/json" },
      body: '{"a":1}',
    });
    const typed = (Lite as unknown as { json: typeof Response.json }).json([], {
      headers: { "Content-Type": "application/problem+json" },
    });
    expect(typed.headers.get("content-type")).toBe("application/problem+json");
    expect(await typed.json()).toEqual([]);
  });

  it("clones like a Response", async () => {
    const response = new Lite("twice");
    const copy = response.clone();
    expect(await copy.text()).toBe("twice");
    expect(await response.text()).toBe("twice");
  });

  it("header-value cache: keeps the app's constant values, never a Set-Cookie or other per-caller value", () => {
    const cookie = `session=${crypto.randomUUID()}`;
    const etag = `"${crypto.randomUUID()}"`;
    const type = `application/x-${crypto.randomUUID()}`;
    const response = new Lite("x", { headers: { "Set-Cookie": cookie, etag, "x-user": "user-42-secret", "content-type": type } });
    expect(simpleResponseParts(response)?.headers).toEqual({ "set-cookie": cookie, etag, "x-user": "user-42-secret", "content-type": type });
    expect(headerValueCached(cookie)).toBe(false);
    expect(headerValueCached(etag)).toBe(false);
    expect(headerValueCached("user-42-secret")).toBe(false);
    expect(headerValueCached(type)).toBe(true);
    // Checked every time all the same: a bad value under an uncached name still takes the real path.
    expect(() => new Lite("x", { headers: { "set-cookie": "a\nb" } })).toThrow(TypeError);
    expect(simpleResponseParts(new Lite("x", { headers: { "set-cookie": cookie } }))?.headers["set-cookie"]).toBe(cookie);
  });

  it("subclasses still work", async () => {
    class Custom extends Lite {}
    const response = new Custom("sub");
    expect(response instanceof Custom).toBe(true);
    expect(new Lite("other") instanceof Custom).toBe(false);
    expect(await response.text()).toBe("sub");
  });
});

describe("BridgeResponse with a second copy of the module loaded", () => {
  it("finds the runtime's Response behind the installed one and reads the other copy's slots", async () => {
    const previous = globalThis.Response;
    globalThis.Response = Lite;
    try {
      vi.resetModules();
      const copy = await import("./bridge-response.ts");
      expect(copy.BridgeResponse).not.toBe(BridgeResponse);
      expect(copy.NativeResponse).toBe(NativeResponse);
      expect(copy.simpleResponseParts(new Lite("shared"))?.body).toBe("shared");
    } finally {
      globalThis.Response = previous;
    }
  });
});
