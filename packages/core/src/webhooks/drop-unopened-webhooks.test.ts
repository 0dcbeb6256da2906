import { describe, expect, it } from "vitest";
import { cryptoRandom, systemClock } from "../clock/clock.ts";
import { createMemoryStorage } from "../storage/memory-storage.ts";
import type { Storage, WebhookRecord } from "../storage/types.ts";
import { dropUnopenedWebhooks, planUnopened } from "./drop-unopened-webhooks.ts";
import type { SecretBox } from "./secret-box.ts";
import { checkWebhookSecrets, createSecretBox, parseSecretKeys } from "./secret-box.ts";

const KEY = (id: string, fill: number): string => `${id}:${btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)))}`;
const T0 = Date.UTC(2026, 10, 1);
const OPTIONS = { actor: "cli", clock: systemClock, random: cryptoRandom };

/** A store holding, for one account: `lost` and `both` sealed under kA only, `rotated` (previous kA, current kB), `fine` under kB, `plain` unsealed. */
async function lostKeyStore(): Promise<{ s: Storage; kB: SecretBox; ids: Record<"lost" | "both" | "rotated" | "fine" | "plain", string>; accountId: string }> {
  const kA = await createSecretBox(parseSecretKeys(KEY("kA", 1)), cryptoRandom);
  const kB = await createSecretBox(parseSecretKeys(KEY("kB", 2)), cryptoRandom);
  const s = createMemoryStorage();
  const accountId = "acc_01JD0000000000000000000001";
  await s.createAccount({ id: accountId, name: "Acme", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
  const ids = { lost: "wh_01JD000000000000000000000A", both: "wh_01JD000000000000000000000B", rotated: "wh_01JD000000000000000000000C", fine: "wh_01JD000000000000000000000D", plain: "wh_01JD000000000000000000000E" };
  const hook = (id: string, secret: string): WebhookRecord => ({ id, accountId, url: `https://hooks.example.com/${id}`, events: ["key.created"], secret, createdAt: T0 });
  await s.createWebhook(hook(ids.lost, await kA.seal(ids.lost, "whsec_lost")), 10);
  await s.createWebhook(hook(ids.both, await kA.seal(ids.both, "whsec_both1")), 10);
  await s.rotateWebhookSecret({ accountId, webhookId: ids.both, secret: await kA.seal(ids.both, "whsec_both2"), previousUntil: T0 + 1000 });
  await s.createWebhook(hook(ids.rotated, await kA.seal(ids.rotated, "whsec_rot1")), 10);
  await s.rotateWebhookSecret({ accountId, webhookId: ids.rotated, secret: await kB.seal(ids.rotated, "whsec_rot2"), previousUntil: T0 + 1000 });
  await s.createWebhook(hook(ids.fine, await kB.seal(ids.fine, "whsec_fine")), 10);
  await s.createWebhook(hook(ids.plain, "whsec_plain"), 10);
  return { s, kB, ids, accountId };
}

describe("dropping what a lost operator key sealed", () => {
  it("the plan deletes each webhook whose current secret does not open once, and ends the overlap of one whose previous alone does not", async () => {
    const { s, kB, ids } = await lostKeyStore();
    const plan = planUnopened((await checkWebhookSecrets(s, kB)).failed);
    expect(plan.delete.map((f) => f.webhookId)).toEqual([ids.lost, ids.both].sort());
    expect(plan.endOverlap.map((f) => [f.webhookId, f.field, f.keyId])).toEqual([[ids.rotated, "previous", "kA"]]);
  });

  it("a dry run reports exactly what the real run does and changes nothing; afterwards every secret opens, and each change has one audit entry naming why, never a secret", async () => {
    const { s, kB, ids, accountId } = await lostKeyStore();
    const before = await s.listWebhookSecrets();
    const dry = await dropUnopenedWebhooks(s, kB, { ...OPTIONS, apply: false });
    expect(await s.listWebhookSecrets()).toEqual(before);
    expect((await s.listAudit({ order: "asc", limit: 10 })).length).toBe(0);

    const real = await dropUnopenedWebhooks(s, kB, { ...OPTIONS, apply: true });
    expect(real).toEqual(dry);
    expect(real).toEqual({
      deleted: [ids.both, ids.lost].sort().map((id) => ({ webhookId: id, accountId, url: `https://hooks.example.com/${id}`, keyId: "kA", reason: "missing" })),
      overlapsEnded: [{ webhookId: ids.rotated, accountId, keyId: "kA", reason: "missing" }],
      skipped: 0,
    });
    expect((await s.listWebhooks(accountId)).map((w) => w.id)).toEqual([ids.rotated, ids.fine, ids.plain]);
    expect(await s.getWebhook(accountId, ids.rotated)).toMatchObject({ previousSecret: null, previousSecretUntil: null });
    expect(await kB.open(ids.rotated, (await s.getWebhook(accountId, ids.rotated))!.secret)).toBe("whsec_rot2");
    expect((await checkWebhookSecrets(s, kB)).failed).toEqual([]);

    const entries = await s.listAudit({ order: "asc", limit: 10 });
    expect(entries.map((e) => [e.action, e.actor, e.accountId, e.targetId, e.changes])).toEqual([
      ...[ids.both, ids.lost].sort().map((id) => ["webhook.delete", "cli", accountId, id, { reason: "signing_secret_lost", key_id: "kA" }]),
      ["webhook.end_secret_overlap", "cli", accountId, ids.rotated, { reason: "signing_secret_lost", key_id: "kA" }],
    ]);
    expect(entries[0]!.personal).toEqual({ url: `https://hooks.example.com/${entries[0]!.targetId}` });
    const text = JSON.stringify(entries);
    expect(text).not.toContain("aesgcm1:");
    expect(text).not.toContain("whsec_");

    // Nothing left to do: a second run changes nothing and records nothing.
    expect(await dropUnopenedWebhooks(s, kB, { ...OPTIONS, apply: true })).toEqual({ deleted: [], overlapsEnded: [], skipped: 0 });
    expect((await s.listAudit({ order: "asc", limit: 10 })).length).toBe(3);
  });

  it("live database: a webhook rotated between the check and the change keeps its new secret and is skipped, not deleted", async () => {
    const { s, kB, ids, accountId } = await lostKeyStore();
    // Another instance rotates `lost` under kB just as the delete comes: the delete is guarded by the value read.
    const racing: Storage = {
      ...s,
      async deleteWebhook(acc, id, audit, ifSecret) {
        if (id === ids.lost) await s.rotateWebhookSecret({ accountId: acc, webhookId: id, secret: await kB.seal(id, "whsec_new"), previousUntil: T0 + 1000 });
        return s.deleteWebhook(acc, id, audit, ifSecret);
      },
    };
    const report = await dropUnopenedWebhooks(racing, kB, { ...OPTIONS, apply: true });
    expect(report.deleted.map((d) => d.webhookId)).toEqual([ids.both]);
    expect(report.skipped).toBe(1);
    expect(await kB.open(ids.lost, (await s.getWebhook(accountId, ids.lost))!.secret)).toBe("whsec_new");
    expect((await s.listAudit({ order: "asc", limit: 10 })).map((e) => [e.action, e.targetId])).toEqual([
      ["webhook.delete", ids.both],
      ["webhook.end_secret_overlap", ids.rotated],
    ]);
    // What the rotation left (its previous secret, under kA) is ended by a second run.
    const again = await dropUnopenedWebhooks(s, kB, { ...OPTIONS, apply: true });
    expect(again).toEqual({ deleted: [], overlapsEnded: [{ webhookId: ids.lost, accountId, keyId: "kA", reason: "missing" }], skipped: 0 });
    expect((await checkWebhookSecrets(s, kB)).failed).toEqual([]);
  });

  it("without any key (a SQLite key file gone), every webhook with a sealed current secret goes; plain-text ones stay", async () => {
    const { s, ids, accountId } = await lostKeyStore();
    const report = await dropUnopenedWebhooks(s, null, { ...OPTIONS, apply: true });
    expect(report.deleted.map((d) => d.webhookId)).toEqual([ids.lost, ids.both, ids.rotated, ids.fine].sort());
    expect((await s.listWebhooks(accountId)).map((w) => w.id)).toEqual([ids.plain]);
  });
});
