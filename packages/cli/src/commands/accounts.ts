/** `benchdata accounts …`: the operator creates, changes, lists, exports, suspends and erases accounts through the admin API. */
import { TIERS } from "@benchdata/core";
import { accountFlag, dbUrl, oneOf, parse, UsageError } from "../args.ts";
import type { Command } from "../command.ts";
import { out, printUsage } from "../command.ts";
import { loadConfig } from "../config-file.ts";
import { adminCall } from "../admin-call.ts";
import { accountsDelete, accountsExport, accountsList } from "./accounts-lifecycle.ts";

const USAGE = `Usage: benchdata accounts create --name NAME --tier developer|startup|growth|enterprise [--db URL] [--config FILE]
       benchdata accounts update --account ACC_ID [--tier T] [--per-minute N] [--per-day N]
                                 [--monthly-quota N] [--block-size N] [--block-price N]
                                 [--allowed-cidrs CIDR,CIDR] [--console-ip-exempt true|false] [--db URL] [--config FILE]
       benchdata accounts release-hold --account ACC_ID [--db URL] [--config FILE]
       benchdata accounts sign-in-link --account ACC_ID [--base-url URL] [--db URL] [--config FILE]
       benchdata accounts end-sessions --account ACC_ID [--db URL] [--config FILE]
       benchdata accounts suspend ACC_ID [--reason TEXT] [--db URL] [--config FILE]
       benchdata accounts resume ACC_ID [--db URL] [--config FILE]
       benchdata accounts list [--status active|suspended|deleted] [--tier T] [--created-after ISO] [--created-before ISO]
                               [--search TEXT] [--limit N] [--cursor C | --all] [--json] [--db URL] [--config FILE]
       benchdata accounts export ACC_ID [--out FILE] [--db URL] [--config FILE]
       benchdata accounts delete ACC_ID --yes [--db URL] [--config FILE]

create        prints {"account_id", "tier", "session_token"}; the session token is shown once.
sign-in-link  prints {"sign_in_url", "expires_at", …}: a link to hand the customer. Opening it signs the
              browser console in; it works once and expires after sessions.signInLinkMinutes (default 15).
              --base-url is the server's public origin (default http://localhost:8787).
end-sessions  ends every console session of the account at once and voids its unused sign-in links.
update        prints the account; limits keep the admin API's bounds (a block size is at least 1).
              --allowed-cidrs replaces the IP allow-list of data requests and console sessions ("" clears it);
              --console-ip-exempt true lets the account's console sessions in from any address.
release-hold  lifts the hold on automatic charges for the current billing period (docs/billing.md).
suspend       stops the account at once, on every instance, deleting nothing: its keys' requests, its console
              and sign-in get 403 account.suspended; its webhook deliveries and charges wait. --reason is the
              operator's note (never shown to the customer). Prints the account. (ACC_ID or --account ACC_ID.)
resume        undoes it: keys and sessions work again, waiting deliveries and charges go out. Prints the account.
list          prints a table of accounts, oldest first, 50 a page (--limit 1-100; --cursor C for the next page, --all for
              every page), or the admin API's page with --json. Deleted accounts only with --status deleted. --search
              matches names case-insensitively; --created-after (inclusive) and --created-before (exclusive) take ISO times.
export        writes the account's export document (format benchdata.account-export/1: keys, sessions, webhooks,
              deliveries, events, invoices, usage, snapshots; never a secret) to --out FILE (created readable by its
              owner only, complete or not at all) or to stdout.
delete        erases the account, at once on every instance: its keys, sessions, links, webhooks, deliveries, events,
              snapshots and usage are deleted; its invoices are kept without its name; a charge not yet made is never
              made. Without --yes it only says what it would erase (exit 2). Prints {"account_id", "deleted", "deleted_at"}.`;

// The limit flags of `accounts update` and the admin API's fields they set.
const LIMIT_FLAGS = {
  "per-minute": "per_minute",
  "per-day": "per_day",
  "monthly-quota": "monthly_quota",
  "block-size": "block_size",
  "block-price": "block_price",
} as const;

async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) return printUsage(USAGE);
  if (sub === "update") return accountsUpdate(rest);
  if (sub === "release-hold") return accountsReleaseHold(rest);
  if (sub === "sign-in-link" || sub === "end-sessions") return accountSessionsCommand(sub, rest);
  if (sub === "suspend" || sub === "resume") return accountStatusCommand(sub, rest);
  if (sub === "list") return accountsList(rest, () => printUsage(USAGE));
  if (sub === "export") return accountsExport(rest, () => printUsage(USAGE));
  if (sub === "delete") return accountsDelete(rest, () => printUsage(USAGE));
  if (sub !== "create") throw new UsageError(`unknown accounts command "${sub}"`);
  const { values } = parse(rest, { name: { type: "string" }, tier: { type: "string" }, db: { type: "string" }, config: { type: "string" } });
  if (values.help) return printUsage(USAGE);
  if (!values.name) throw new UsageError("--name is required");
  if (!values.tier) throw new UsageError("--tier is required");
  const tier = oneOf("tier", values.tier, TIERS);
  const db = dbUrl(values.db);
  const config = await loadConfig(values.config ?? process.env.BENCHDATA_CONFIG);
  const body = await adminCall({ db, config }, async (call) => call("POST", "/api/v1/admin/accounts", { name: values.name, tier }));
  out(body);
  return 0;
}

async function accountsUpdate(argv: string[]): Promise<number> {
  const flags = Object.fromEntries(Object.keys(LIMIT_FLAGS).map((f) => [f, { type: "string" as const }]));
  const { values } = parse(argv, {
    account: { type: "string" },
    tier: { type: "string" },
    "allowed-cidrs": { type: "string" },
    "console-ip-exempt": { type: "string" },
    db: { type: "string" },
    config: { type: "string" },
    ...flags,
  });
  if (values.help) return printUsage(USAGE);
  if (!values.account) throw new UsageError("--account is required");
  const account = accountFlag(values.account);
  const limits: Record<string, number> = {};
  for (const [flag, field] of Object.entries(LIMIT_FLAGS)) {
    const raw = (values as Record<string, string | boolean | undefined>)[flag];
    if (typeof raw !== "string") continue;
    // Any integer goes to the admin API, which refuses one out of its bounds naming the field.
    if (!/^-?\d+$/.test(raw.trim())) throw new UsageError(`--${flag} must be an integer, got "${raw}"`);
    limits[field] = Number(raw);
  }
  const patch: Record<string, unknown> = {};
  if (values.tier !== undefined) patch.tier = oneOf("tier", values.tier, TIERS);
  if (Object.keys(limits).length > 0) patch.limits = limits;
  const cidrs = values["allowed-cidrs"];
  if (cidrs !== undefined) patch.allowed_cidrs = cidrs.split(",").map((c) => c.trim()).filter((c) => c !== "");
  const exempt = values["console-ip-exempt"];
  if (exempt !== undefined) {
    if (exempt !== "true" && exempt !== "false") throw new UsageError(`--console-ip-exempt must be true or false, got "${exempt}"`);
    patch.console_ip_exempt = exempt === "true";
  }
  if (Object.keys(patch).length === 0) throw new UsageError("nothing to change: give --tier, a limit flag, --allowed-cidrs or --console-ip-exempt");
  const db = dbUrl(values.db);
  const config = await loadConfig(values.config ?? process.env.BENCHDATA_CONFIG);
  out(await adminCall({ db, config }, (call) => call("PATCH", `/api/v1/admin/accounts/${encodeURIComponent(account)}`, patch)));
  return 0;
}

async function accountsReleaseHold(argv: string[]): Promise<number> {
  const { values } = parse(argv, { account: { type: "string" }, db: { type: "string" }, config: { type: "string" } });
  if (values.help) return printUsage(USAGE);
  if (!values.account) throw new UsageError("--account is required");
  const account = accountFlag(values.account);
  const db = dbUrl(values.db);
  const config = await loadConfig(values.config ?? process.env.BENCHDATA_CONFIG);
  out(await adminCall({ db, config }, (call) => call("POST", `/api/v1/admin/accounts/${encodeURIComponent(account)}/billing/release`, {})));
  return 0;
}

async function accountStatusCommand(sub: "suspend" | "resume", argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { account: { type: "string" }, reason: { type: "string" }, db: { type: "string" }, config: { type: "string" } }, 1);
  if (values.help) return printUsage(USAGE);
  if (positionals[0] !== undefined && values.account !== undefined) throw new UsageError("give the account once: ACC_ID or --account ACC_ID");
  const given = positionals[0] ?? values.account;
  if (!given) throw new UsageError(`the account is required: benchdata accounts ${sub} ACC_ID`);
  const account = accountFlag(given, positionals[0] !== undefined ? "ACC_ID" : "--account");
  if (sub === "resume" && values.reason !== undefined) throw new UsageError("--reason applies only to suspend");
  if (values.reason !== undefined && values.reason.trim() === "") throw new UsageError("--reason must not be empty");
  const db = dbUrl(values.db);
  const config = await loadConfig(values.config ?? process.env.BENCHDATA_CONFIG);
  const body = values.reason !== undefined ? { reason: values.reason } : undefined;
  out(await adminCall({ db, config }, (call) => call("POST", `/api/v1/admin/accounts/${encodeURIComponent(account)}/${sub}`, body)));
  return 0;
}

async function accountSessionsCommand(sub: "sign-in-link" | "end-sessions", argv: string[]): Promise<number> {
  const { values } = parse(argv, { account: { type: "string" }, "base-url": { type: "string" }, db: { type: "string" }, config: { type: "string" } });
  if (values.help) return printUsage(USAGE);
  if (!values.account) throw new UsageError("--account is required");
  const account = accountFlag(values.account);
  if (sub === "end-sessions" && values["base-url"] !== undefined) throw new UsageError("--base-url applies only to sign-in-link");
  let base = "http://localhost:8787";
  if (values["base-url"] !== undefined) {
    let url: URL;
    try {
      url = new URL(values["base-url"]);
    } catch {
      throw new UsageError(`--base-url ${JSON.stringify(values["base-url"])} is not a URL`);
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new UsageError("--base-url must be an http:// or https:// URL");
    base = url.origin;
  }
  const db = dbUrl(values.db);
  const config = await loadConfig(values.config ?? process.env.BENCHDATA_CONFIG);
  const path = `/api/v1/admin/accounts/${encodeURIComponent(account)}/`;
  const body = await adminCall({ db, config }, async (call) =>
    sub === "end-sessions" ? call("DELETE", `${path}sessions`, undefined) : call("POST", `${path}sign-in-links`, undefined),
  );
  if (sub === "sign-in-link") {
    const link = body as { account_id: string; sign_in_path: string; expires_at: string };
    out({ account_id: link.account_id, sign_in_url: base + link.sign_in_path, sign_in_path: link.sign_in_path, expires_at: link.expires_at });
  } else out(body);
  return 0;
}

/** `benchdata accounts`. */
export const accountsCommand: Command = { usage: USAGE, run };
