import { describe, expect, it } from "vitest";
import { verifiedKeys } from "./verified-keys.ts";

describe("verifiedKeys", () => {
  it("a key check holds only at the epoch it was made at, for the key and account it found", () => {
    const keys = verifiedKeys(10);
    expect(keys.epoch).toBeNull();
    keys.heard(5);
    keys.verified("h", "key_a", "acc_a", 5);
    expect(keys.holds("h", "key_a", "acc_a")).toBe(true);
    expect(keys.holds("h", "key_b", "acc_a")).toBe(false);
    expect(keys.holds("h", "key_a", "acc_b")).toBe(false);
    expect(keys.holds("other", "key_a", "acc_a")).toBe(false);
    // A batch that read no epoch (NULL) changes nothing.
    keys.heard(null);
    expect(keys.holds("h", "key_a", "acc_a")).toBe(true);
    // The epoch moved: checked afresh until verified at the new one.
    keys.heard(7);
    expect(keys.epoch).toBe(7);
    expect(keys.holds("h", "key_a", "acc_a")).toBe(false);
    keys.verified("h", "key_a", "acc_a", 7);
    expect(keys.holds("h", "key_a", "acc_a")).toBe(true);
    keys.forget("h");
    expect(keys.holds("h", "key_a", "acc_a")).toBe(false);
  });

  it("an epoch lower than the last one heard (a restored database) forgets every check, even one made at that epoch before", () => {
    const keys = verifiedKeys(10);
    keys.heard(3);
    keys.verified("h3", "key_a", "acc_a", 3);
    keys.heard(9);
    keys.verified("h9", "key_a", "acc_a", 9);
    keys.heard(3);
    expect(keys.holds("h3", "key_a", "acc_a")).toBe(false);
    keys.heard(9);
    expect(keys.holds("h9", "key_a", "acc_a")).toBe(false);
  });

  it("an epoch reached again after moving on (a restore or failover replaying history) trusts no check from before", () => {
    const keys = verifiedKeys(10);
    keys.heard(5);
    keys.verified("h", "key_a", "acc_a", 5);
    keys.heard(6);
    keys.heard(5);
    expect(keys.holds("h", "key_a", "acc_a")).toBe(false);
  });
});
