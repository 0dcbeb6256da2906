import { describe, expect, it } from "vitest";
import { decodeTime } from "ulid";
import { cryptoRandom, manualClock } from "../clock/clock.ts";
import { isId, newId } from "./new-id.ts";

describe("ids", () => {
  it("are <prefix>_<ULID> with the time of the injected clock", () => {
    const clock = manualClock(Date.UTC(2026, 10, 22, 1, 2, 3, 4));
    const id = newId("evt", clock, cryptoRandom);
    expect(isId("evt", id)).toBe(true);
    expect(isId("acc", id)).toBe(false);
    expect(decodeTime(id.slice(4))).toBe(clock.now());
  });

  it("sort by creation time and do not collide", () => {
    const clock = manualClock(1_000_000);
    const ids = new Set<string>();
    let prev = "";
    for (let i = 0; i < 1000; i++) {
      clock.advance(1);
      const id = newId("key", clock, cryptoRandom);
      expect(id > prev).toBe(true);
      prev = id;
      ids.add(id);
    }
    expect(ids.size).toBe(1000);
  });
});
