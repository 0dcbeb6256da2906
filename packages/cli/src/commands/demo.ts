/**
 * `benchdata demo`: the service on the embedded default with something real in it: a demo account, a test
 * key, and a query made over HTTP through the whole pipeline, printed with curl lines to try next.
 */
import { cryptoRandom, defineConfig, jsonLogger, randomToken } from "@benchdata/core";
import { installShutdown } from "@benchdata/adapter-node";
import { dbUrl, intFlag, parse } from "../args.ts";
import type { Command } from "../command.ts";
import { printUsage } from "../command.ts";
import { startService } from "../runtime.ts";

const USAGE = `Usage: benchdata demo [--port N] [--host H] [--db URL]

Starts the service (default --db sqlite:./benchdata-demo.db, port 8787), creates a demo account with a
test key, queries it through the whole pipeline and prints the answer and curl lines to try.`;

/** Starts the demo and keeps serving until SIGINT/SIGTERM; resolves to the exit code only on failure. */
export async function runDemo(options: { db: string; port: number; host: string }): Promise<number> {
  const adminToken = randomToken(cryptoRandom);
  const logs: string[] = [];
  const logger = jsonLogger((line) => logs.push(line));
  // The demo serves test keys: its deployment target is "test" (a real deployment defaults to "host", where
  // a Host starting with "sandbox." or "test." targets test keys and any other targets live keys).
  const running = await startService({ db: options.db, config: defineConfig({ target: "test" }), port: options.port, host: options.host, adminToken, logger });
  const base = running.url;
  const post = async (path: string, body: unknown, bearer: string): Promise<Record<string, unknown>> => {
    const res = await fetch(`${base}${path}`, { method: "POST", headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${path}: ${String(json.detail)} (${String(json.code)})`);
    return json;
  };
  try {
    const account = await post("/api/v1/admin/accounts", { name: "Demo Co", tier: "growth" }, adminToken);
    const session = String(account.session_token);
    const key = await post("/api/v1/console/keys", { name: "demo test key", environment: "test", scopes: ["benchmarks:read"] }, session);
    const rawKey = String(key.raw_key);
    const link = await post(`/api/v1/admin/accounts/${String(account.account_id)}/sign-in-links`, {}, adminToken);
    const query = `${base}/data/v1/benchmarks/percentile?metric=gross_margin&value=0.78&category=saas`;
    const res = await fetch(query, { headers: { authorization: `Bearer ${rawKey}` } });
    const answer = await res.json();
    const w = (s: string): boolean => process.stdout.write(`${s}\n`);
    w(`benchdata demo is running at ${base} (database ${options.db}, target: test keys)`);
    w("");
    w(`account     ${String(account.account_id)} (tier growth)`);
    w(`session     ${session}   (console bearer token, shown once)`);
    w(`test key    ${rawKey}   (shown once)`);
    w(`console     ${base}${String(link.sign_in_path)}   (open in a browser: a one-time sign-in link)`);
    w("");
    w(`GET ${query.replace(base, "")}  ->  ${res.status}`);
    w(`  X-RateLimit-Limit: ${res.headers.get("x-ratelimit-limit")}  Remaining: ${res.headers.get("x-ratelimit-remaining")}`);
    w(JSON.stringify(answer, null, 2).replace(/^/gm, "  "));
    w("");
    w("Try:");
    w(`  curl -s -H 'Authorization: Bearer ${rawKey}' '${base}/data/v1/benchmarks?category=saas'`);
    w(`  curl -s -H 'Authorization: Bearer ${rawKey}' '${base}/data/v1/benchmarks/distribution?metric=churn_rate&category=saas&buckets=10'`);
    w(`  curl -s -H 'Authorization: Bearer ${session}' '${base}/api/v1/console/usage/summary'`);
    w(`  curl -s '${base}/openapi.json' | head -c 300`);
    w("");
    w("Ctrl-C stops the demo.");
  } catch (e) {
    process.stderr.write(`demo failed: ${e instanceof Error ? e.message : String(e)}\n${logs.join("\n")}\n`);
    await running.stop();
    return 1;
  }
  installShutdown({ close: () => running.stop() });
  return new Promise<number>(() => {});
}

async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { port: { type: "string" }, host: { type: "string" }, db: { type: "string" } });
  if (values.help) return printUsage(USAGE);
  return runDemo({
    db: dbUrl(values.db, "sqlite:./benchdata-demo.db"),
    port: intFlag("port", values.port ?? process.env.PORT, 8787, 0, 65535),
    host: values.host ?? "127.0.0.1",
  });
}

/** `benchdata demo`. */
export const demoCommand: Command = { usage: USAGE, run };
