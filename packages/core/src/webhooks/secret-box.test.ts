import { describe, expect, it } from "vitest";
import { cryptoRandom, systemClock } from "../clock/clock.ts";
import { checkWebhookSecrets, createSecretBox, describeUnopened, newSecretKeyId, parseSecretKeys, plaintextSecretBox, resealWebhookSecrets } from "./secret-box.ts";

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

  it("generated key ids are unique and valid key ids, never the date", () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newSecretKeyId(systemClock, cryptoRandom)));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(id).toMatch(/^k[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(parseSecretKeys(`${[...ids][0]}:${K1.split(":")[1]}`)[0]!.id).toBe([...ids][0]);
  });

  it("check and reseal open rows under the current key id too: another key under the same id fails", async () => {
    const original = await createSecretBox(parseSecretKeys(K1), cryptoRandom);
    const rows = [
      { webhookId: "wh_a", accountId: "acc_a", field: "current" as const, secret: await original.seal("wh_a", "whsec_a") },
      { webhookId: "wh_b", accountId: "acc_b", field: "previous" as const, secret: await original.seal("wh_b", "whsec_b") },
      { webhookId: "wh_c", accountId: "acc_a", field: "current" as const, secret: "whsec_plain" },
    ];
    const storage = { listWebhookSecrets: async () => rows, replaceWebhookSecret: async () => true };
    expect(await checkWebhookSecrets(storage, original)).toEqual({ sealed: 2, failed: [] });
    // The same id, another key: what a key file written over a lost one holds.
    const impostor = await createSecretBox(parseSecretKeys(`k1:${btoa(String.fromCharCode(...new Uint8Array(32).fill(9)))}`), cryptoRandom);
    const check = await checkWebhookSecrets(storage, impostor);
    expect(check.failed).toEqual([
      { webhookId: "wh_a", accountId: "acc_a", field: "current", stored: rows[0]!.secret, keyId: "k1", reason: "mismatch" },
      { webhookId: "wh_b", accountId: "acc_b", field: "previous", stored: rows[1]!.secret, keyId: "k1", reason: "mismatch" },
    ]);
    expect(describeUnopened(check.failed)).toBe("2 need key id k1 (a key with that id is configured, but it is a different key)");
    expect((await checkWebhookSecrets(storage, null)).failed.map((f) => f.reason)).toEqual(["missing", "missing"]);
    expect(await resealWebhookSecrets(storage, impostor)).toEqual({ resealed: 1, unchanged: 0, failed: 2 });
    expect(await resealWebhookSecrets(storage, original)).toEqual({ resealed: 1, unchanged: 2, failed: 0 });
  });
});
