/** The `benchdata` command: one module per command under `commands/`, dispatched by name. */
import { redact } from "@benchdata/core";
import { UsageError } from "./args.ts";
import type { Command } from "./command.ts";
import { printUsage } from "./command.ts";
import { ConfigError } from "./config-file.ts";
import { AdminCallError } from "./admin-call.ts";
import { accountsCommand } from "./commands/accounts.ts";
import { auditCommand } from "./commands/audit.ts";
import { backupCommand } from "./commands/backup.ts";
import { demoCommand } from "./commands/demo.ts";
import { importCommand } from "./commands/import.ts";
import { keysCommand } from "./commands/keys.ts";
import { migrateCommand } from "./commands/migrate.ts";
import { serveCommand } from "./commands/serve.ts";
import { webhooksCommand } from "./commands/webhooks.ts";

const USAGE = `benchdata — the Benchmark Data Service

Usage: benchdata <command> [options]

Commands:
  serve              run the HTTP service (migrations run on start)
  demo               start on the embedded default with a seeded demo account, key and query
  migrate            create or upgrade the database schema
  accounts create    create an account and print {account_id, tier, session_token}
  accounts list      list accounts (a table, or --json), filtered by status, tier, creation time or name
  accounts export    write everything held about an account as one JSON document
  accounts delete    erase an account (asks for --yes): its keys and sessions stop at once
  accounts update    change an account's tier, limits or IP allow-list (the admin API's rules)
  accounts release-hold  let automatic charges start again for an account held this period
  accounts sign-in-link   print a one-time link that signs a customer into the browser console
  accounts end-sessions   end every console session of an account
  accounts suspend   refuse an account's keys and console at once; its webhooks and charges wait
  accounts resume    undo a suspension
  keys create        create an API key for an account and print it (the raw key is shown once)
  import FILE        load live observations from CSV or NDJSON, all or nothing
  webhooks reseal    re-seal every webhook signing secret under the current operator key (--check: only open them)
  webhooks drop-unopened  a lost operator key: delete the webhooks whose secret no key opens (asks for --yes)
  audit verify       walk the audit log's hash chain; exit 1 at the first break, naming it
  audit export       write audit entries as JSON lines (--since ISO), oldest first
  backup --to DIR    copy a SQLite database while it serves; its operator key to a separate file

Every command takes --db URL (sqlite:PATH, postgres://…, memory:; env BENCHDATA_DB;
default sqlite:./benchdata.db) and --help.`;

const COMMANDS: Readonly<Record<string, Command>> = {
  serve: serveCommand,
  demo: demoCommand,
  migrate: migrateCommand,
  accounts: accountsCommand,
  keys: keysCommand,
  import: importCommand,
  webhooks: webhooksCommand,
  audit: auditCommand,
  backup: backupCommand,
};

/** Runs the CLI with `argv` (without node and the script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") return printUsage(USAGE);
  if (command === "--version" || command === "-v") {
    process.stdout.write("benchdata 0.1.0\n");
    return 0;
  }
  const found = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  try {
    if (!found) throw new UsageError(`unknown command "${command}"`);
    return await found.run(rest);
  } catch (e) {
    // A flag value the API refuses as invalid (422 validation.*: a name too long, a limit out of its bounds) is a
    // usage error like any other; a well-formed call the API refuses (unknown account, scope above the tier) is not.
    if (e instanceof UsageError || (e instanceof AdminCallError && e.status === 422)) {
      process.stderr.write(`benchdata ${command}: ${e.message}\n\n${found?.usage ?? USAGE}\n`);
      return 2;
    }
    if (e instanceof ConfigError) {
      process.stderr.write(`benchdata ${command}: ${e.message}\n`);
      return 2;
    }
    process.stderr.write(`benchdata ${command}: ${redact(e instanceof Error ? e.message : String(e))}\n`);
    return 1;
  }
}
