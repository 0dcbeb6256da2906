/** `benchdata keys create`: an API key for an account, its raw key printed once. */
import { SCOPES } from "@benchdata/core";
import { accountFlag, dbUrl, oneOf, parse, UsageError } from "../args.ts";
import type { Command } from "../command.ts";
import { out, printUsage } from "../command.ts";
import { loadConfig } from "../config-file.ts";
import { adminCall } from "../admin-call.ts";

const USAGE = `Usage: benchdata keys create --account ACC_ID --name NAME --environment live|test --scopes S1,S2 [--db URL] [--config FILE]

Prints the key record with "raw_key" (shown once). Scopes must be permitted by the account's tier.`;

async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) return printUsage(USAGE);
  if (sub !== "create") throw new UsageError(`unknown keys command "${sub}"`);
  const { values } = parse(rest, {
    account: { type: "string" },
    name: { type: "string" },
    environment: { type: "string" },
    env: { type: "string" },
    scopes: { type: "string" },
    db: { type: "string" },
    config: { type: "string" },
  });
  if (values.help) return printUsage(USAGE);
  for (const flag of ["account", "name", "scopes"] as const) if (!values[flag]) throw new UsageError(`--${flag} is required`);
  if (values.environment !== undefined && values.env !== undefined && values.environment !== values.env) throw new UsageError("--environment and --env disagree: give one");
  const given = values.environment ?? values.env;
  if (!given) throw new UsageError("--environment is required (live or test)");
  const environment = oneOf("environment", given, ["live", "test"] as const);
  const account = accountFlag(values.account!);
  const scopes = values.scopes!.split(",").map((s) => s.trim()).filter(Boolean);
  if (scopes.length === 0) throw new UsageError("--scopes needs at least one scope, comma-separated");
  for (const scope of scopes) oneOf("scopes", scope, SCOPES);
  const db = dbUrl(values.db);
  const config = await loadConfig(values.config ?? process.env.BENCHDATA_CONFIG);
  // The operator's command acts as the account in-process, without a console session (see adminCall).
  const body = await adminCall({ db, config, consoleAccount: account }, async (call) => {
    await call("GET", `/api/v1/admin/accounts/${encodeURIComponent(account)}`, undefined);
    return call("POST", "/api/v1/console/keys", { name: values.name, environment, scopes });
  });
  out(body);
  return 0;
}

/** `benchdata keys`. */
export const keysCommand: Command = { usage: USAGE, run };
