import { inspect } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bridgeHeaders, nativeHeaders } from "./bridge-headers.ts";

/** What the bridge built before: a real Headers with every raw header appended in order. */
function real(raw: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i < raw.length; i += 2) if (!(raw[i] as string).startsWith(":")) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}

const NAMES = ["Host", "host", "HOST", "Authorization", "authorization", "Cookie", "cookie", "Set-Cookie", "set-cookie", "X-Multi", "x-multi", "Accept", "x-empty"];
const raw = [
  "Host", "127.0.0.1:3000",
  "Authorization", "Bearer abc",
  "X-Multi", "a",
  "cookie", "a=1",
  "x-multi", "b",
  "Cookie", "b=2",
  "Set-Cookie", "s=1",
  "set-cookie", "t=2",
  "x-empty", "",
];

describe("bridgeHeaders, the lazy Headers over node's raw list", () => {
  it("answers get and has exactly as a Headers built from the same list, for any list (repeats, case, whitespace)", () => {
    const name = fc.constantFrom(...NAMES, ":path");
    const value = fc.stringMatching(/^[ \t]?[a-z0-9=;, ]{0,6}[ \t]?$/);
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value), { maxLength: 12 }), fc.array(fc.constantFrom(...NAMES, "Nope"), { maxLength: 6 }), (pairs, asked) => {
        const list = pairs.flat();
        const lazy = bridgeHeaders(list);
        const expected = real(list);
        for (const n of [...asked, ...NAMES]) {
          expect(lazy.get(n), n).toBe(expected.get(n));
          expect(lazy.has(n), n).toBe(expected.has(n));
        }
        expect([...lazy]).toEqual([...expected]);
      }),
      { numRuns: 500 },
    );
  });

  it("joins a repeated name with ', ' and Cookie with '; ', matches names case-insensitively, and keeps each Set-Cookie", () => {
    const headers = bridgeHeaders(raw);
    expect(headers.get("x-multi")).toBe("a, b");
    expect(headers.get("X-MULTI")).toBe("a, b");
    expect(headers.get("cookie")).toBe("a=1; b=2");
    expect(headers.get("set-cookie")).toBe("s=1, t=2");
    expect(headers.get("x-empty")).toBe("");
    expect(headers.has("X-Empty")).toBe(true);
    expect(headers.get("origin")).toBeNull();
    expect(headers.has("origin")).toBe(false);
    expect(headers.getSetCookie()).toEqual(["s=1", "t=2"]);
  });

  it("is a Headers to instanceof, toString, its constructor and util.inspect", () => {
    const headers = bridgeHeaders(raw);
    expect(headers instanceof Headers).toBe(true);
    expect(Object.prototype.toString.call(headers)).toBe("[object Headers]");
    expect(headers.constructor).toBe(Headers);
    expect(inspect(headers)).toBe(inspect(real(raw)));
    // No own properties, as on a real one: nothing to spread, enumerate or compare.
    expect(Reflect.ownKeys(headers)).toEqual([]);
  });

  it("iterates like a Headers after get (sorted, lower-case, Set-Cookie apart), with every iterator and forEach", () => {
    const headers = bridgeHeaders(raw);
    expect(headers.get("authorization")).toBe("Bearer abc");
    const expected = real(raw);
    expect([...headers]).toEqual([...expected]);
    expect([...headers.entries()]).toEqual([...expected.entries()]);
    expect([...headers.keys()]).toEqual([...expected.keys()]);
    expect([...headers.values()]).toEqual([...expected.values()]);
    const seen: string[] = [];
    headers.forEach((value, name, self) => {
      expect(self).not.toBeUndefined();
      seen.push(`${name}=${value}`);
    });
    expect(seen).toEqual([...expected].map(([n, v]) => `${n}=${v}`));
  });

  it("answers from the real Headers once changed: set, append and delete are seen by get and has", () => {
    const headers = bridgeHeaders(raw);
    expect(headers.get("x-multi")).toBe("a, b");
    headers.set("X-Multi", "z");
    headers.append("x-new", "1");
    headers.append("x-new", "2");
    headers.delete("authorization");
    expect(headers.get("x-multi")).toBe("z");
    expect(headers.get("x-new")).toBe("1, 2");
    expect(headers.has("authorization")).toBe(false);
    expect(headers.get("authorization")).toBeNull();
    expect(nativeHeaders(headers).get("x-new")).toBe("1, 2");
    expect([...headers].map(([n]) => n)).toEqual(["cookie", "host", "set-cookie", "set-cookie", "x-empty", "x-multi", "x-new"]);
  });

  it("is copied whole by new Headers, new Request and new Response", async () => {
    const headers = bridgeHeaders(raw);
    const expected = [...real(raw)];
    expect([...new Headers(headers)]).toEqual(expected);
    expect([...new Request("http://localhost/", { headers }).headers]).toEqual(expected);
    expect([...new Response(null, { headers }).headers]).toEqual(expected);
    expect(new Response(null, { headers }).headers.getSetCookie()).toEqual(["s=1", "t=2"]);
  });

  it("throws Headers' own errors for a bad name, a missing argument and a value Headers refuses", () => {
    const headers = bridgeHeaders(raw);
    const plain = real(raw);
    for (const call of [(h: Headers) => h.get("bad name"), (h: Headers) => h.has("é"), (h: Headers) => h.get("\u0100"), (h: Headers) => (h.get as () => string | null)()]) {
      let expected: unknown;
      try {
        call(plain);
      } catch (error) {
        expected = error;
      }
      expect(expected).toBeInstanceOf(TypeError);
      expect(() => call(headers)).toThrow((expected as Error).message);
    }
    // Conversions go through Headers too: a non-string name is stringified as Headers does it.
    expect(headers.get({ toString: () => "X-Multi" } as unknown as string)).toBe("a, b");
    // node's parser refuses such values unless run with insecureHTTPParser; the real Headers always threw.
    expect(() => bridgeHeaders(["X-Bad", "a\0b"])).toThrow(TypeError);
    expect(() => bridgeHeaders(["X-Bad", "a\nb"])).toThrow(TypeError);
    expect(bridgeHeaders(["X-Trimmed", "\ta b\r\n"]).get("x-trimmed")).toBe("a b");
  });
});
