/**
 * `benchdata webhooks reseal`: every stored signing secret sealed again under the current operator key.
 * `benchdata webhooks drop-unopened`: the offline way out when an operator key is truly lost.
 */
import type { UnopenedDropReport, UnopenedSecret } from "@benchdata/core";
import { checkWebhookSecrets, cryptoRandom, describeUnopened, dropUnopenedWebhooks, resealWebhookSecrets, systemClock } from "@benchdata/core";
import { dbUrl, parse, UsageError } from "../args.ts";
import type { Command } from "../command.ts";
import { out, printUsage } from "../command.ts";
import { openDb } from "../runtime.ts";
import { ensureSecretKeys, findSecretKeys } from "../secret-keys.ts";

const USAGE = `Usage: benchdata webhooks reseal [--check] [--db URL]
       benchdata webhooks drop-unopened [--yes] [--db URL]

reseal         Re-seals every stored webhook signing secret (and a rotation's previous one) under the current
               operator key: the first entry of BENCHDATA_WEBHOOK_KEYS (or of BENCHDATA_WEBHOOK_KEYS_FILE, or of the
               key file beside a SQLite database). To retire an operator key: put a new key first, keep the old one
               after it on every instance, run this, then remove the old one. Prints {"resealed", "unchanged",
               "failed", "key_id"}; exits 1 when any secret could not be opened (its key is missing, or another key
               has its id). --check changes nothing: it opens every sealed secret, those under the current key
               included, prints {"sealed", "failed", "key_ids", "failures": [{"webhook_id", "field", "key_id",
               "reason"}]} and exits 1 when any does not open.
drop-unopened  For an operator key that is truly lost (serve refuses to start, naming the key id its secrets
               need): deletes every webhook whose signing secret opens under no configured key (its pending
               deliveries die; its owner sees why in the console's audit log and creates a new one), and ends the
               overlap of a rotated webhook whose previous secret does not open (the current one keeps signing).
               Finds the keys as reseal --check does and never writes a key file. Each change is recorded in the
               audit log (actor cli) and made only if the row still holds what was read, so it is safe beside
               running servers. Without --yes it changes nothing, prints what it would do and exits 2 (0 when
               there is nothing to do). Prints {"deleted": [{"webhook_id", "account_id", "url", "key_id"}],
               "overlaps_ended": [{"webhook_id", "account_id", "key_id"}], "key_ids"}; exits 1 when a row changed
               while it ran and a secret still does not open (run it again). When a configured key has the id a
               secret needs but does not open it (likely a wrong copy of the key), --yes changes nothing and exits
               2 unless --include-mismatched is given too.`;

/** Why a secret does not open, in words. */
function why(f: { keyId: string | null; reason: UnopenedSecret["reason"] }): string {
  const id = f.keyId ?? "(malformed)";
  return f.reason === "missing" ? `key id ${id}, not configured` : `key id ${id}, configured but a different key`;
}

/** `drop-unopened`: with --yes deletes (and ends overlaps), without it says what it would do. */
async function dropUnopened(argv: string[]): Promise<number> {
  const { values } = parse(argv, { db: { type: "string" }, yes: { type: "boolean" }, "include-mismatched": { type: "boolean" } });
  if (values.help) return printUsage(USAGE);
  const db = dbUrl(values.db);
  const apply = values.yes === true;
  // The keys as `reseal --check` finds them: a missing SQLite key file stays missing (every sealed secret fails).
  const found = await findSecretKeys(db);
  const box = "missing" in found ? null : found.box;
  const storage = await openDb(db);
  let report: UnopenedDropReport;
  let left: number;
  try {
    // A configured key with the right id that opens nothing is far more often a wrong copy of the key than a lost
    // one, and deleting is for good: that needs saying twice.
    const checked = await checkWebhookSecrets(storage, box);
    const mismatched = checked.failed.filter((f) => f.reason === "mismatch");
    if (apply && mismatched.length > 0 && values["include-mismatched"] !== true) {
      const ids = [...new Set(mismatched.map((f) => f.keyId))].join(", ");
      process.stderr.write(
        `benchdata webhooks drop-unopened: nothing changed: ${mismatched.length} sealed secret${mismatched.length === 1 ? "" : "s"} need key id ${ids}, ` +
          "and a key with that id is configured but opens none of them: it is likely a wrong copy of that key. Put the right key in place " +
          "and start again; only if that key is truly lost too, run this again with --include-mismatched\n",
      );
      return 2;
    }
    report = await dropUnopenedWebhooks(storage, box, { apply, actor: "cli", clock: systemClock, random: cryptoRandom, checked });
    left = apply ? (await checkWebhookSecrets(storage, box)).failed.length : 0;
  } finally {
    await storage.close();
  }
  const verb = apply ? "deleted" : "would delete";
  for (const d of report.deleted) {
    process.stderr.write(`benchdata webhooks drop-unopened: ${verb} webhook ${d.webhookId} of account ${d.accountId} (${d.url}): its signing secret was sealed under ${why(d)}\n`);
  }
  for (const o of report.overlapsEnded) {
    process.stderr.write(`benchdata webhooks drop-unopened: ${apply ? "ended" : "would end"} the secret overlap of webhook ${o.webhookId} of account ${o.accountId}: its previous secret was sealed under ${why(o)}; the current one keeps signing\n`);
  }
  out({
    deleted: report.deleted.map((d) => ({ webhook_id: d.webhookId, account_id: d.accountId, url: d.url, key_id: d.keyId })),
    overlaps_ended: report.overlapsEnded.map((o) => ({ webhook_id: o.webhookId, account_id: o.accountId, key_id: o.keyId })),
    key_ids: box?.keyIds ?? [],
  });
  const changes = report.deleted.length + report.overlapsEnded.length;
  if (!apply && changes > 0) {
    process.stderr.write(
      `benchdata webhooks drop-unopened: nothing changed (no --yes). With --yes it makes the ${changes} change${changes === 1 ? "" : "s"} above, which cannot be undone: ` +
        "run it only once the key is truly lost; if it can be found, put it back instead\n",
    );
    return 2;
  }
  if (left > 0) {
    process.stderr.write(`benchdata webhooks drop-unopened: ${left} sealed secret${left === 1 ? "" : "s"} changed while this ran and still do not open; run it again\n`);
    return 1;
  }
  return 0;
}

async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) return printUsage(USAGE);
  if (sub === "drop-unopened") return dropUnopened(rest);
  if (sub !== "reseal") throw new UsageError(`unknown webhooks command "${sub}"`);
  const { values } = parse(rest, { db: { type: "string" }, check: { type: "boolean" } });
  if (values.help) return printUsage(USAGE);
  const db = dbUrl(values.db);
  const found = await findSecretKeys(db);
  const storage = await openDb(db);
  try {
    if (values.check) {
      // Opens every sealed row, changes nothing, never writes a key file.
      const check = await checkWebhookSecrets(storage, "missing" in found ? null : found.box);
      out({
        sealed: check.sealed,
        failed: check.failed.length,
        key_ids: "missing" in found ? [] : found.box.keyIds,
        failures: check.failed.map((f) => ({ webhook_id: f.webhookId, field: f.field, key_id: f.keyId, reason: f.reason === "missing" ? "key not configured" : "a different key has that id" })),
      });
      if (check.failed.length === 0) return 0;
      process.stderr.write(`benchdata webhooks reseal --check: ${check.failed.length} of ${check.sealed} sealed secrets do not open: ${describeUnopened(check.failed)}\n`);
      return 1;
    }
    const { box } = await ensureSecretKeys(found, storage);
    const report = await resealWebhookSecrets(storage, box);
    out({ ...report, key_id: box.currentKeyId });
    return report.failed > 0 ? 1 : 0;
  } finally {
    await storage.close();
  }
}

/** `benchdata webhooks`. */
export const webhooksCommand: Command = { usage: USAGE, run };
