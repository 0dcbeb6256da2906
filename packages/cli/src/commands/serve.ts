/** `benchdata serve`: the HTTP service with its workers, configured from flags, a file and the environment. */
import { jsonLogger } from "@benchdata/core";
import type { ServiceConfig } from "@benchdata/core";
import { installShutdown } from "@benchdata/adapter-node";
import { dbUrl, intFlag, parse, redactDb, UsageError } from "../args.ts";
import type { Command } from "../command.ts";
import { printUsage } from "../command.ts";
import { ConfigError, loadConfig } from "../config-file.ts";
import { startService } from "../runtime.ts";

const USAGE = `Usage: benchdata serve [--port N] [--host H] [--db URL] [--config FILE]

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
a slower one is answered 408 request.timeout and its connection closed (on Node).`;

async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    port: { type: "string" },
    host: { type: "string" },
    "admin-port": { type: "string" },
    "admin-host": { type: "string" },
    db: { type: "string" },
    config: { type: "string" },
  });
  if (values.help) return printUsage(USAGE);
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

/** `benchdata serve`. */
export const serveCommand: Command = { usage: USAGE, run };
