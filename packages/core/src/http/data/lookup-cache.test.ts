import { describe, expect, it } from "vitest";
import type { KeyLookup } from "../../storage/types.ts";
import { lookupCache } from "./lookup-cache.ts";

const lookup = (id: string): KeyLookup => ({ key: { id } as KeyLookup["key"], account: {} as KeyLookup["account"], retired: false, version: 0 });

describe("lookupCache", () => {
  it("keeps at most `capacity` entries, dropping the oldest first", () => {
    const c = lookupCache(2, 60_000);
    c.set("a", lookup("a"), 0);
    c.set("b", lookup("b"), 0);
    c.set("c", lookup("c"), 0);
    expect([c.get("a", 1), c.get("b", 1)?.key.id, c.get("c", 1)?.key.id]).toEqual([undefined, "b", "c"]);
  });

  it("forgets an entry once it is `maxAgeMs` old, and when the clock stepped back before it", () => {
    const c = lookupCache(10, 60_000);
    c.set("a", lookup("a"), 1_000);
    expect(c.get("a", 60_999)?.key.id).toBe("a");
    expect(c.get("a", 61_000)).toBeUndefined();
    c.set("b", lookup("b"), 5_000);
    expect(c.get("b", 4_999)).toBeUndefined();
  });

  it("capacity 0 remembers nothing; delete forgets", () => {
    const off = lookupCache(0, 60_000);
    off.set("a", lookup("a"), 0);
    expect(off.get("a", 0)).toBeUndefined();
    const c = lookupCache(5, 60_000);
    c.set("a", lookup("a"), 0);
    c.delete("a");
    expect(c.get("a", 0)).toBeUndefined();
  });
});
