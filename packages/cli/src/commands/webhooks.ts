/** `benchdata webhooks reseal`: every stored signing secret sealed again under the current operator key. */
import { checkWebhookSecrets, describeUnopened, resealWebhookSecrets } from "@benchdata/core";
import { dbUrl, parse, UsageError } from "../args.ts";
import type { Command } from "../command.ts";
import { out, printUsage } from "../command.ts";
import { openDb } from "../runtime.ts";
import { ensureSecretKeys, findSecretKeys } from "../secret-keys.ts";

const USAGE = `Usage: benchdata webhooks reseal [--check] [--db URL]

Re-seals every stored webhook signing secret (and a rotation's previous one) under the current operator
key: the first entry of BENCHDATA_WEBHOOK_KEYS (or of BENCHDATA_WEBHOOK_KEYS_FILE, or of the key file
beside a SQLite database). To retire an operator key: put a new key first, keep the old one after it on
every instance, run this, then remove the old one. Prints {"resealed", "unchanged", "failed", "key_id"};
exits 1 when any secret could not be opened (its key is missing, or another key has its id).
--check changes nothing: it opens every sealed secret, those under the current key included, prints
{"sealed", "failed", "key_ids", "failures": [{"webhook_id", "field", "key_id", "reason"}]} and exits 1
when any does not open.`;

async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) return printUsage(USAGE);
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
