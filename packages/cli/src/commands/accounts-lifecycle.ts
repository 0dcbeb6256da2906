/** `benchdata accounts list | export | delete`: the operator finds, exports and erases accounts through the admin API. */
import { randomBytes } from "node:crypto";
import type { Stats } from "node:fs";
import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { jsonLogger, TIERS } from "@benchdata/core";
import { accountFlag, dbUrl, intFlag, isoFlag, oneOf, parse, UsageError } from "../args.ts";
import { loadConfig } from "../config-file.ts";
import { adminCall } from "../admin-call.ts";
import { byteProgress } from "../progress.ts";

/** An account as the admin API lists it (the fields the table shows). */
interface ListedAccount {
  readonly account_id: string;
  readonly name: string;
  readonly tier: string;
  readonly status: string;
  readonly created_at: string;
}

interface AccountPage {
  readonly data: ListedAccount[];
  readonly has_more: boolean;
  readonly next_cursor: string | null;
}

const STATES = ["active", "suspended", "deleted"] as const;

/** The account of `export` and `delete`: ACC_ID, or --account ACC_ID, once. */
function accountOf(positional: string | undefined, flag: string | undefined, command: string): string {
  if (positional !== undefined && flag !== undefined) throw new UsageError("give the account once: ACC_ID or --account ACC_ID");
  const given = positional ?? flag;
  if (!given) throw new UsageError(`the account is required: benchdata accounts ${command} ACC_ID`);
  return accountFlag(given, positional !== undefined ? "ACC_ID" : "--account");
}

/** Text safe to print in a table cell: no control characters, at most `width` characters. */
function cell(text: string, width: number): string {
  const plain = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
  return plain.length > width ? `${plain.slice(0, width - 1)}…` : plain;
}

/** Accounts as an aligned text table, one per line, under a header. */
export function accountTable(accounts: readonly ListedAccount[]): string {
  const rows = [["ACCOUNT", "NAME", "TIER", "STATUS", "CREATED"], ...accounts.map((a) => [a.account_id, cell(a.name, 40), a.tier, a.status, a.created_at])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]!))).join("  ")).join("\n");
}

/** `accounts list`: a page (or with --all every page) of accounts, as a table or --json. */
export async function accountsList(argv: string[], help: () => number): Promise<number> {
  const { values } = parse(argv, {
    status: { type: "string" },
    tier: { type: "string" },
    "created-after": { type: "string" },
    "created-before": { type: "string" },
    search: { type: "string" },
    limit: { type: "string" },
    cursor: { type: "string" },
    all: { type: "boolean" },
    json: { type: "boolean" },
    db: { type: "string" },
    config: { type: "string" },
  });
  if (values.help) return help();
  const query = new URLSearchParams();
  if (values.status !== undefined) query.set("status", oneOf("status", values.status, STATES));
  if (values.tier !== undefined) query.set("tier", oneOf("tier", values.tier, TIERS));
  if (values["created-after"] !== undefined) query.set("created_after", isoFlag("created-after", values["created-after"]));
  if (values["created-before"] !== undefined) query.set("created_before", isoFlag("created-before", values["created-before"]));
  if (values.search !== undefined) {
    if (values.search === "" || values.search.length > 200 || /[\u0000-\u001f\u007f-\u009f]/.test(values.search)) {
      throw new UsageError("--search must be 1 to 200 characters, without control characters");
    }
    query.set("q", values.search);
  }
  query.set("limit", String(intFlag("limit", values.limit, 50, 1, 100)));
  if (values.cursor !== undefined) query.set("cursor", values.cursor);
  if (values.all === true && values.cursor !== undefined) throw new UsageError("--all starts at the first page: leave out --cursor");
  const db = dbUrl(values.db);
  const config = await loadConfig(values.config ?? process.env.BENCHDATA_CONFIG);
  const page = await adminCall({ db, config }, async (call) => {
    const first = (await call("GET", `/api/v1/admin/accounts?${query}`, undefined)) as AccountPage;
    if (values.all !== true) return first;
    const data = [...first.data];
    for (let next = first.next_cursor; next !== null; ) {
      query.set("cursor", next);
      const more = (await call("GET", `/api/v1/admin/accounts?${query}`, undefined)) as AccountPage;
      data.push(...more.data);
      next = more.next_cursor;
    }
    return { data, has_more: false, next_cursor: null };
  });
  if (values.json === true) {
    process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(`${accountTable(page.data)}\n`);
  const count = `${page.data.length} account${page.data.length === 1 ? "" : "s"}`;
  process.stderr.write(page.next_cursor === null ? `${count}.\n` : `${count}; more after this page: add --cursor ${page.next_cursor} (or --all)\n`);
  return 0;
}

/** `accounts export`: the account's export document, to --out FILE (readable by its owner only) or stdout. */
export async function accountsExport(argv: string[], help: () => number): Promise<number> {
  const { values, positionals } = parse(argv, { account: { type: "string" }, out: { type: "string" }, db: { type: "string" }, config: { type: "string" } }, 1);
  if (values.help) return help();
  const account = accountOf(positionals[0], values.account, "export");
  if (values.out === "") throw new UsageError("--out needs a file name");
  const db = dbUrl(values.db);
  const config = await loadConfig(values.config ?? process.env.BENCHDATA_CONFIG);
  const target = values.out;
  const progress = byteProgress(`exporting ${account}`);
  let bytes = 0;
  const run = (write: (chunk: Uint8Array) => Promise<void> | void): Promise<void> =>
    adminCall({ db, config }, async (_call, stream) => {
      const reader = (await stream(`/api/v1/admin/accounts/${encodeURIComponent(account)}/export`)).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        await write(value);
        bytes += value.byteLength;
        progress.update(bytes, null);
      }
    });
  if (target === undefined) await run((chunk) => new Promise<void>((resolve, reject) => process.stdout.write(chunk, (e) => (e ? reject(e) : resolve()))));
  else await writeAtomically(target, run);
  progress.finish(`exported ${account}: ${bytes} bytes${target === undefined ? "" : ` to ${target}`}`);
  return 0;
}

/**
 * Writes what `produce` hands over to `target`, whole or not at all: into a new temporary file beside it (created
 * with O_EXCL, readable by its owner only, so no existing file or link is ever written through), synced, then
 * renamed over the target. On any failure the temporary file is removed and the target is left as it was. A
 * target that is not a regular file (a pipe, /dev/stdout) cannot be replaced by a rename and is written directly.
 */
async function writeAtomically(target: string, produce: (write: (chunk: Uint8Array) => void) => Promise<void>): Promise<void> {
  const existing = statOrNull(target);
  if (existing?.isDirectory() === true) throw new UsageError(`--out ${JSON.stringify(target)} is a directory: name a file`);
  const direct = existing !== null && !existing.isFile();
  const path = direct ? target : join(dirname(resolve(target)), `.${basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.partial`);
  let fd: number | null = null;
  try {
    fd = openSync(path, direct ? "w" : "wx", 0o600);
    const open = fd;
    await produce((chunk) => {
      for (let at = 0; at < chunk.byteLength; ) at += writeSync(open, chunk, at);
    });
    if (!direct) fsyncSync(open);
    fd = null;
    closeSync(open);
    if (!direct) renameSync(path, target);
  } catch (e) {
    // Closed once (a second close would throw EBADF over the real error), then the partial file goes.
    if (fd !== null) closeSync(fd);
    if (!direct) rmSync(path, { force: true });
    throw e;
  }
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** What `accounts delete` erases, said before it is done (without --yes). */
function erasureWarning(account: string): string {
  return (
    `refusing to erase ${account} without --yes. Erasing it stops its keys and console sessions at once, on every instance, and deletes ` +
    "its keys, sessions, sign-in links, webhooks (with their signing secrets), deliveries, events, merchant snapshots and usage. Its invoices " +
    "are kept for the legal record, without its name; a charge not yet made is never made. It cannot be undone: keep a copy first with " +
    `\`benchdata accounts export ${account} --out FILE\`, then run \`benchdata accounts delete ${account} --yes\``
  );
}

/** `accounts delete`: erasure, only with --yes. */
export async function accountsDelete(argv: string[], help: () => number): Promise<number> {
  const { values, positionals } = parse(argv, { account: { type: "string" }, yes: { type: "boolean" }, db: { type: "string" }, config: { type: "string" } }, 1);
  if (values.help) return help();
  const account = accountOf(positionals[0], values.account, "delete");
  if (values.yes !== true) throw new UsageError(erasureWarning(account));
  const db = dbUrl(values.db);
  const config = await loadConfig(values.config ?? process.env.BENCHDATA_CONFIG);
  process.stderr.write(`erasing ${account}…\n`);
  // The erasure's own log lines (the server's, as a running server would write them) go to stderr, one JSON object each.
  const logger = jsonLogger((line) => void process.stderr.write(`${line}\n`));
  const result = (await adminCall({ db, config, logger }, (call) => call("DELETE", `/api/v1/admin/accounts/${encodeURIComponent(account)}`, undefined))) as {
    deleted_at: string;
    erasure: { erased_now: boolean; purged: number };
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  const what = result.erasure.erased_now
    ? `erased ${account} at ${result.deleted_at}: its keys, sessions, sign-in links, webhooks, usage and ${result.erasure.purged} history records (deliveries, attempts, events, snapshots) are deleted; its keys and sessions no longer work anywhere; its invoices are kept`
    : `${account} was already erased at ${result.deleted_at}; ${result.erasure.purged === 0 ? "nothing was left to delete" : `${result.erasure.purged} history records left by an interrupted erasure are deleted now`}`;
  process.stderr.write(`${what}\n`);
  return 0;
}
