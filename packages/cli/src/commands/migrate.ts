/** `benchdata migrate`: creates or upgrades the schema of the database `--db` names. */
import { dbUrl, parse, redactDb } from "../args.ts";
import type { Command } from "../command.ts";
import { printUsage } from "../command.ts";
import { openDb } from "../runtime.ts";

const USAGE = `Usage: benchdata migrate [--db URL]

Creates or upgrades the schema. Safe to run while other instances start.`;

async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { db: { type: "string" } });
  if (values.help) return printUsage(USAGE);
  const db = dbUrl(values.db);
  const started = Date.now();
  process.stderr.write(`migrating ${redactDb(db)}…\n`);
  const storage = await openDb(db);
  await storage.close();
  process.stderr.write(`schema is up to date (${Date.now() - started} ms)\n`);
  return 0;
}

/** `benchdata migrate`. */
export const migrateCommand: Command = { usage: USAGE, run };
