/** The `benchdata` command: serve, demo, migrate, accounts, keys, import, webhooks, audit. */
import { checkWebhookSecrets, describeUnopened, jsonLogger, redact, resealWebhookSecrets, SCOPES, TIERS } from "@benchdata/core";
import type { ServiceConfig } from "@benchdata/core";
import { installShutdown } from "../serve.ts";
import { accountFlag, dbUrl, intFlag, oneOf, parse, UsageError } from "./args.ts";
import { ConfigError, loadConfig } from "./config-file.ts";
import { openDb, startService } from "./runtime.ts";
import { AdminCallError, adminCall } from "./admin-call.ts";
import { accountsDelete, accountsExport, accountsList } from "./accounts-lifecycle.ts";
import { runImport } from "./import-command.ts";
import { runDemo } from "./demo.ts";
import { auditExport, auditVerify } from "./audit-command.ts";
import { ensureSecretKeys, findSecretKeys } from "./secret-keys.ts";

const USAGE: Record<string, string> = {
  main: `benchdata — the Benchmark Data Service

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
  audit verify       walk the audit log's hash chain; exit 1 at the first break, naming it
  audit export       write audit entries as JSON lines (--since ISO), oldest first

Every command takes --db URL (sqlite:PATH, postgres://…, memory:; env BENCHDATA_DB;
default sqlite:./benchdata.db) and --help.`,
  serve: `Usage: benchdata serve [--port N] [--host H] [--db URL] [--config FILE]

  --port N       port to listen on (env PORT; default 8787)
  --host H       address to listen on (default 0.0.0.0; behind a proxy use 127.0.0.1)
  --admin-port N serve the admin API on its own listener on port N, and not on the main one
  --admin-host H address of that listener (default 127.0.0.1)
  --db URL       sqlite:PATH (default sqlite:./benchdata.db), postgres://…, or memory:
  --config FILE  JSON config (env BENCHDATA_CONFIG); unknown keys or wrong types stop the start
The admin API is on only when BENCHDATA_ADMIN_TOKEN is set (at least 32 characters, or serve refuses
to start with exit 2); a warning is logged when it is reachable on a non-loopback address. SIGTERM drains: /readyz answers 503 at once, serving goes on for
shutdown.drainDelaySeconds (env BENCHDATA_SHUTDOWN_DRAIN_DELAY_SECONDS; default 0, 10 behind a load
balancer), then the requests already accepted are answered and the process exits 0.
Every answer carries X-Request-Id. log.access (env BENCHDATA_LOG_ACCESS=true) writes one JSON line
per request (request id, method, route template, status, duration, key prefix; no query, no secrets).
server.requestTimeoutSeconds (default 30) bounds the time a request's headers and body take to arrive:
a slower one is answered 408 request.timeout and its connection closed (on Node).`,
  demo: `Usage: benchdata demo [--port N] [--host H] [--db URL]

Starts the service (default --db sqlite:./benchdata-demo.db, port 8787), creates a demo account with a
test key, queries it through the whole pipeline and prints the answer and curl lines to try.`,
  migrate: `Usage: benchdata migrate [--db URL]

Creates or upgrades the schema. Safe to run while other instances start.`,
  accounts: `Usage: benchdata accounts create --name NAME --tier developer|startup|growth|enterprise [--db URL] [--config FILE]
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
              made. Without --yes it only says what it would erase (exit 2). Prints {"account_id", "deleted", "deleted_at"}.`,
  keys: `Usage: benchdata keys create --account ACC_ID --name NAME --environment live|test --scopes S1,S2 [--db URL] [--config FILE]

Prints the key record with "raw_key" (shown once). Scopes must be permitted by the account's tier.`,
  webhooks: `Usage: benchdata webhooks reseal [--check] [--db URL]

Re-seals every stored webhook signing secret (and a rotation's previous one) under the current operator
key: the first entry of BENCHDATA_WEBHOOK_KEYS (or of BENCHDATA_WEBHOOK_KEYS_FILE, or of the key file
beside a SQLite database). To retire an operator key: put a new key first, keep the old one after it on
every instance, run this, then remove the old one. Prints {"resealed", "unchanged", "failed", "key_id"};
exits 1 when any secret could not be opened (its key is missing, or another key has its id).
--check changes nothing: it opens every sealed secret, those under the current key included, prints
{"sealed", "failed", "key_ids", "failures": [{"webhook_id", "field", "key_id", "reason"}]} and exits 1
when any does not open.`,
  audit: `Usage: benchdata audit verify [--db URL]
       benchdata audit export [--since ISO] [--account ACC_ID] [--action ACTION] [--out FILE] [--db URL]

verify  walks the audit log's hash chain from its first entry (docs/audit.md): each entry's hash must cover its
        fields and the previous entry's hash, and the last must be the recorded head. Prints a JSON summary and
        exits 0, or names the first broken entry (its id and position) and exits 1. Progress on stderr.
export  writes entries recorded at or after --since (every entry without it), oldest first, one JSON object per
        line, to --out FILE (created readable by its owner only) or stdout; progress on stderr. Each line carries
        its salt, so an exported file can be verified on its own. Entries are never pruned.`,
  import: `Usage: benchdata import FILE [--db URL] [--format csv|ndjson]

Loads rows of business_id, category, segment, period, metric, value (CSV with a header row, or
NDJSON). All or nothing: a bad row fails the import with its line number and changes nothing.
Each (category, period) in the file replaces what was stored for it.`,
};

function out(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

async function serveCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    port: { type: "string" },
    host: { type: "string" },
    "admin-port": { type: "string" },
    "admin-host": { type: "string" },
    db: { type: "string" },
    config: { type: "string" },
  });
  if (values.help) return help("serve");
  const adminPortFlag = values["admin-port"];
  const adminListener = adminPortFlag === undefined ? undefined : { port: intFlag("admin-port", adminPortFlag, 0, 0, 65535), host: values["admin-host"] ?? "127.0.0.1" };
  if (adminListener === undefined && values["admin-host"] !== undefined) throw new UsageError("--admin-host needs --admin-port");
  const logger = jsonLogger((line) => process.stdout.write(`${line}\n`));
  const config = withLogEnv(withShutdownEnv(withMetricsToken(await loadConfig(values.config ?? process.env.BENCHDATA_CONFIG), process.env.BENCHDATA_METRICS_TOKEN), process.env), process.env);
  const port = intFlag("port", values.port ?? process.env.PORT, 8787, 0, 65535);
  const db = dbUrl(values.db);
  const adminToken = adminTokenFromEnv(process.env.BENCHDATA_ADMIN_TOKEN);
  if (adminListener !== undefined && adminToken === null) throw new UsageError("--admin-port serves the admin API, which is off: set BENCHDATA_ADMIN_TOKEN");
  if (adminListener !== undefined && port !== 0 && adminListener.port === port) throw new UsageError(`--admin-port must differ from --port (${port})`);
  const host = values.host ?? "0.0.0.0";
  const running = await startService({ db, config, port, host, adminToken,
    ...(adminListener !== undefined ? { adminListener } : {}),
    logger,
    clockOffsetMs: Number(process.env.BENCHDATA_CLOCK_OFFSET_MS ?? 0) || 0,
  });
  const driver = (running.storage as { driver?: string }).driver ?? "memory";
  const adminHost = adminListener?.host ?? host;
  if (adminToken !== null && !isLoopbackHost(adminHost)) {
    logger.warn("the admin API is reachable on a non-loopback address", {
      admin_host: adminHost,
      admin_port: running.admin?.port ?? running.port,
      advice: "listen with --host 127.0.0.1 behind a proxy, or move the admin API to its own loopback listener with --admin-port (docs/operations.md)",
    });
  }
  // Installed before "listening" is logged: a supervisor may send SIGTERM the moment it reads that line.
  installShutdown({ close: () => running.stop() }, (m) => logger.info(m));
  logger.info("listening", {
    url: running.url,
    port: running.port,
    db: redactDb(db),
    storage_driver: driver,
    http_server: running.handle.kind,
    admin_api: adminToken !== null,
    ...(running.admin ? { admin_url: running.admin.url, admin_port: running.admin.port } : {}),
    metrics: config.metrics.token !== null,
  });
  return new Promise<number>(() => {});
}

/** Whether a listen address reaches this machine only: `localhost`, 127.0.0.0/8, `::1` (also IPv4-mapped). `0.0.0.0` and `::` are every interface. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const v4 = h.startsWith("::ffff:") ? h.slice(7) : h;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** `metrics.token` from BENCHDATA_METRICS_TOKEN when set (it wins over the file; at least 16 characters, like the file's). */
export function withMetricsToken(config: ServiceConfig, value: string | undefined): ServiceConfig {
  if (value === undefined || value === "") return config;
  if (value.length < 16 || !/^[\x21-\x7e]+$/.test(value)) throw new ConfigError("BENCHDATA_METRICS_TOKEN must be at least 16 printable characters without spaces (generate one with `openssl rand -hex 24`)");
  return { ...config, metrics: { token: value } };
}

// The environment variables of the `shutdown` keys, named after them (BENCHDATA_ + section + key), within the file's bounds.
const SHUTDOWN_ENV = {
  BENCHDATA_SHUTDOWN_DRAIN_DELAY_SECONDS: { key: "drainDelaySeconds", max: 600 },
  BENCHDATA_SHUTDOWN_DRAIN_TIMEOUT_SECONDS: { key: "drainTimeoutSeconds", max: 3600 },
} as const;

/** `shutdown.drainDelaySeconds` / `drainTimeoutSeconds` from their environment variables when set (they win over the file). */
export function withShutdownEnv(config: ServiceConfig, env: Readonly<Record<string, string | undefined>>): ServiceConfig {
  let shutdown = config.shutdown;
  for (const [name, { key, max }] of Object.entries(SHUTDOWN_ENV)) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") continue;
    const value = Number(raw);
    if (!/^\s*\d+(\.\d+)?\s*$/.test(raw) || value > max) throw new ConfigError(`${name} must be a number of seconds from 0 to ${max}, got ${JSON.stringify(raw)}`);
    shutdown = { ...shutdown, [key]: value };
  }
  return shutdown === config.shutdown ? config : { ...config, shutdown };
}

/** `log.access` from BENCHDATA_LOG_ACCESS when set (`true`/`1` or `false`/`0`; it wins over the file). */
export function withLogEnv(config: ServiceConfig, env: Readonly<Record<string, string | undefined>>): ServiceConfig {
  const raw = env.BENCHDATA_LOG_ACCESS?.trim().toLowerCase();
  if (raw === undefined || raw === "") return config;
  if (raw !== "true" && raw !== "1" && raw !== "false" && raw !== "0") throw new ConfigError(`BENCHDATA_LOG_ACCESS must be true, false, 1 or 0, got ${JSON.stringify(env.BENCHDATA_LOG_ACCESS)}`);
  return { ...config, log: { ...config.log, access: raw === "true" || raw === "1" } };
}

/** The shortest admin token `serve` accepts: a guessable token would hand out every account. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

/** The admin token from the environment: null when unset or empty (admin API off); a usage error when too short. */
export function adminTokenFromEnv(value: string | undefined): string | null {
  if (value === undefined || value === "") return null;
  if (value.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(
      `BENCHDATA_ADMIN_TOKEN is ${value.length} characters long; it must be at least ${MIN_ADMIN_TOKEN_LENGTH} (generate one with \`openssl rand -base64 32\`), or unset it to turn the admin API off`,
    );
  }
  return value;
}

/** A database URL without its password, for logs. */
export function redactDb(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@");
}

function help(command: string): number {
  process.stdout.write(`${USAGE[command] ?? USAGE.main}\n`);
  return 0;
}

async function migrateCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, { db: { type: "string" } });
  if (values.help) return help("migrate");
  const db = dbUrl(values.db);
  const started = Date.now();
  process.stderr.write(`migrating ${redactDb(db)}…\n`);
  const storage = await openDb(db);
  await storage.close();
  process.stderr.write(`schema is up to date (${Date.now() - started} ms)\n`);
  return 0;
}

// The limit flags of `accounts update` and the admin API's fields they set.
const LIMIT_FLAGS = {
  "per-minute": "per_minute",
  "per-day": "per_day",
  "monthly-quota": "monthly_quota",
  "block-size": "block_size",
  "block-price": "block_price",
} as const;

async function accountsCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) return help("accounts");
  if (sub === "update") return accountsUpdate(rest);
  if (sub === "release-hold") return accountsReleaseHold(rest);
  if (sub === "sign-in-link" || sub === "end-sessions") return accountSessionsCommand(sub, rest);
  if (sub === "suspend" || sub === "resume") return accountStatusCommand(sub, rest);
  if (sub === "list") return accountsList(rest, () => help("accounts"));
  if (sub === "export") return accountsExport(rest, () => help("accounts"));
  if (sub === "delete") return accountsDelete(rest, () => help("accounts"));
  if (sub !== "create") throw new UsageError(`unknown accounts command "${sub}"`);
  const { values } = parse(rest, { name: { type: "string" }, tier: { type: "string" }, db: { type: "string" }, config: { type: "string" } });
  if (values.help) return help("accounts");
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
  if (values.help) return help("accounts");
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
  if (values.help) return help("accounts");
  if (!values.account) throw new UsageError("--account is required");
  const account = accountFlag(values.account);
  const db = dbUrl(values.db);
  const config = await loadConfig(values.config ?? process.env.BENCHDATA_CONFIG);
  out(await adminCall({ db, config }, (call) => call("POST", `/api/v1/admin/accounts/${encodeURIComponent(account)}/billing/release`, {})));
  return 0;
}

async function accountStatusCommand(sub: "suspend" | "resume", argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { account: { type: "string" }, reason: { type: "string" }, db: { type: "string" }, config: { type: "string" } }, 1);
  if (values.help) return help("accounts");
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
  if (values.help) return help("accounts");
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

async function keysCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) return help("keys");
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
  if (values.help) return help("keys");
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

async function webhooksCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) return help("webhooks");
  if (sub !== "reseal") throw new UsageError(`unknown webhooks command "${sub}"`);
  const { values } = parse(rest, { db: { type: "string" }, check: { type: "boolean" } });
  if (values.help) return help("webhooks");
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

async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { db: { type: "string" }, format: { type: "string" } }, 1);
  if (values.help) return help("import");
  const file = positionals[0];
  if (!file) throw new UsageError("the FILE to import is required");
  if (values.format !== undefined && values.format !== "csv" && values.format !== "ndjson") throw new UsageError(`--format must be csv or ndjson, got "${values.format}"`);
  return runImport({ file, db: dbUrl(values.db), format: values.format as "csv" | "ndjson" | undefined });
}

async function demoCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, { port: { type: "string" }, host: { type: "string" }, db: { type: "string" } });
  if (values.help) return help("demo");
  return runDemo({
    db: dbUrl(values.db, "sqlite:./benchdata-demo.db"),
    port: intFlag("port", values.port ?? process.env.PORT, 8787, 0, 65535),
    host: values.host ?? "127.0.0.1",
  });
}

async function auditCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) return help("audit");
  if (sub === "verify") return auditVerify(rest, () => help("audit"));
  if (sub === "export") return auditExport(rest, () => help("audit"));
  throw new UsageError(`unknown audit command "${sub}"`);
}

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  serve: serveCommand,
  demo: demoCommand,
  migrate: migrateCommand,
  accounts: accountsCommand,
  keys: keysCommand,
  import: importCommand,
  webhooks: webhooksCommand,
  audit: auditCommand,
};

/** Runs the CLI with `argv` (without node and the script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") return help("main");
  if (command === "--version" || command === "-v") {
    process.stdout.write("benchdata 0.1.0\n");
    return 0;
  }
  const run = COMMANDS[command];
  try {
    if (!run) throw new UsageError(`unknown command "${command}"`);
    return await run(rest);
  } catch (e) {
    // A flag value the API refuses as invalid (422 validation.*: a name too long, a limit out of its bounds) is a
    // usage error like any other; a well-formed call the API refuses (unknown account, scope above the tier) is not.
    if (e instanceof UsageError || (e instanceof AdminCallError && e.status === 422)) {
      process.stderr.write(`benchdata ${command}: ${e.message}\n\n${USAGE[command] ?? USAGE.main}\n`);
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
