/**
 * What to do when an operator key is truly lost: the secrets it sealed can never be opened, so the webhooks they
 * sign cannot sign again. A webhook whose current secret does not open is deleted (its owner creates a new one
 * and gets a new secret); one whose current secret opens but whose previous one (a rotation's overlap) does not
 * keeps signing with the current one alone, so the overlap ends. `benchdata webhooks drop-unopened` runs it.
 */
import type { AuditAction, AuditDraft } from "../audit/audit-entry.ts";
import { auditDraft } from "../audit/audit-entry.ts";
import type { Clock, RandomSource } from "../clock/clock.ts";
import { newId } from "../ids/new-id.ts";
import type { WebhookStore } from "../storage/types.ts";
import type { SecretBox, SecretCheck, UnopenedSecret } from "./secret-box.ts";
import { checkWebhookSecrets } from "./secret-box.ts";

/** Which webhooks to delete and whose overlap to end, so that every stored secret opens. */
export interface UnopenedPlan {
  /** The current secrets that do not open: their webhooks are deleted (one entry per webhook). */
  readonly delete: readonly UnopenedSecret[];
  /** The previous secrets that do not open, of webhooks whose current secret opens: their overlap ends. */
  readonly endOverlap: readonly UnopenedSecret[];
}

/** The plan that clears a check's failures; a webhook deleted needs no overlap ended. */
export function planUnopened(failed: readonly UnopenedSecret[]): UnopenedPlan {
  const current = failed.filter((f) => f.field === "current");
  const deleted = new Set(current.map((f) => f.webhookId));
  return { delete: current, endOverlap: failed.filter((f) => f.field === "previous" && !deleted.has(f.webhookId)) };
}

/** A webhook deleted (or, in a dry run, to be deleted) because its current secret does not open. */
export interface DroppedWebhook {
  readonly webhookId: string;
  readonly accountId: string;
  readonly url: string;
  /** The key id its secret was sealed under (null when the sealed value is malformed). */
  readonly keyId: string | null;
  readonly reason: UnopenedSecret["reason"];
}

/** A webhook whose overlap ended (or, in a dry run, would end) because its previous secret does not open. */
export interface EndedOverlap {
  readonly webhookId: string;
  readonly accountId: string;
  readonly keyId: string | null;
  readonly reason: UnopenedSecret["reason"];
}

/** What `dropUnopenedWebhooks` did, or in a dry run would do. */
export interface UnopenedDropReport {
  readonly deleted: readonly DroppedWebhook[];
  readonly overlapsEnded: readonly EndedOverlap[];
  /** Planned changes left undone because the row changed after the check (rotated or deleted meanwhile). */
  readonly skipped: number;
}

/** The storage `dropUnopenedWebhooks` needs. */
export type DropUnopenedStorage = Pick<WebhookStore, "listWebhookSecrets" | "getWebhook" | "deleteWebhook" | "endWebhookSecretOverlap">;

/** How to run it: `apply` false changes nothing; the audit entries name `actor`. */
export interface DropUnopenedOptions {
  readonly apply: boolean;
  readonly actor: string;
  readonly clock: Clock;
  readonly random: RandomSource;
  /** The check to act on, when the caller has just made it (`checkWebhookSecrets`); otherwise it is made here. */
  readonly checked?: SecretCheck;
}

/**
 * Deletes every webhook whose current secret opens under none of `box`'s keys (null: no key at all) and ends the
 * overlap of every webhook whose previous secret does not, each with its audit entry. Every change is one
 * compare-and-set on the value the check read, so a webhook whose secret was rotated meanwhile (on a live
 * database) is left alone and counted as skipped.
 */
export async function dropUnopenedWebhooks(storage: DropUnopenedStorage, box: SecretBox | null, options: DropUnopenedOptions): Promise<UnopenedDropReport> {
  const plan = planUnopened((options.checked ?? (await checkWebhookSecrets(storage, box))).failed);
  const draft = (action: AuditAction, f: UnopenedSecret, personal: Record<string, string> = {}): AuditDraft =>
    auditDraft(
      {
        id: newId("aud", options.clock, options.random),
        at: options.clock.now(),
        actor: options.actor,
        action,
        accountId: f.accountId,
        targetId: f.webhookId,
        // Why, for the customer reading their audit log: the key id only, never a secret nor its sealed form.
        changes: { reason: "signing_secret_lost", key_id: f.keyId },
        personal,
      },
      options.random,
    );
  const deleted: DroppedWebhook[] = [];
  const overlapsEnded: EndedOverlap[] = [];
  let skipped = 0;
  for (const f of plan.delete) {
    // Read for the URL (the report, the entry); the delete itself is guarded by the secret the check read.
    const webhook = await storage.getWebhook(f.accountId, f.webhookId);
    const still = webhook !== null && webhook.secret === f.stored;
    if (!still || (options.apply && !(await storage.deleteWebhook(f.accountId, f.webhookId, draft("webhook.delete", f, { url: webhook.url }), f.stored)))) {
      skipped++;
      continue;
    }
    deleted.push({ webhookId: f.webhookId, accountId: f.accountId, url: webhook.url, keyId: f.keyId, reason: f.reason });
  }
  for (const f of plan.endOverlap) {
    const ended = options.apply
      ? await storage.endWebhookSecretOverlap({ accountId: f.accountId, webhookId: f.webhookId, previous: f.stored, audit: draft("webhook.end_secret_overlap", f) })
      : (await storage.getWebhook(f.accountId, f.webhookId))?.previousSecret === f.stored;
    if (!ended) {
      skipped++;
      continue;
    }
    overlapsEnded.push({ webhookId: f.webhookId, accountId: f.accountId, keyId: f.keyId, reason: f.reason });
  }
  return { deleted, overlapsEnded, skipped };
}
