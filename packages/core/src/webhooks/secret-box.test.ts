import { describe, expect, it } from "vitest";
import { cryptoRandom } from "../clock/clock.ts";
import { createSecretBox, parseSecretKeys, plaintextSecretBox } from "./secret-box.ts";

const K1 = `k1:${btoa(String.fromCharCode(...new Uint8Array(32).fill(1)))}`;

describe("secret box (webhook signing secrets at rest)", () => {
  it("seals with a fresh IV each time, opens only for the same webhook, and refuses an altered value", async () => {
    const box = await createSecretBox(parseSecretKeys(K1), cryptoRandom);
    const a = await box.seal("wh_a", "whsec_abc");
    const b = await box.seal("wh_a", "whsec_abc");
    expect(a).not.toBe(b);
    expect(a).not.toContain("abc");
    expect(await box.open("wh_a", a)).toBe("whsec_abc");
    await expect(box.open("wh_b", a)).rejects.toThrow(/does not open/);
    const parts = a.split(":");
    const ct = parts[3]!;
    const flipped = [...parts.slice(0, 3), (ct[0] === "A" ? "B" : "A") + ct.slice(1)].join(":");
    await expect(box.open("wh_a", flipped)).rejects.toThrow(/does not open/);
    expect(box.isCurrent(a)).toBe(true);
    expect(box.isCurrent("whsec_plain")).toBe(false);
    expect(await box.open("wh_a", "whsec_plain")).toBe("whsec_plain");
    await expect(plaintextSecretBox.open("wh_a", a)).rejects.toThrow(/no operator key/);
  });

  it("parses key lists and names what is wrong", () => {
    expect(parseSecretKeys(`# comment line\n${K1}\n`).map((k) => k.id)).toEqual(["k1"]);
    expect(() => parseSecretKeys("")).toThrow(/no operator key/);
    expect(() => parseSecretKeys("k1:AAAA")).toThrow(/32 bytes/);
    expect(() => parseSecretKeys(`${K1},${K1}`)).toThrow(/twice/);
    expect(() => parseSecretKeys("bad id:AAAA")).toThrow(/id:base64/);
  });
});
