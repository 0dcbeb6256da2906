/** `benchdata accounts list | export | delete`: the operator finds, exports and erases accounts through the admin API. */
import { chmodSync, closeSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { TIERS } from "@benchdata/core";
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
  // Written beside the target and renamed once whole: a failed export never leaves a file that looks complete.
  const target = values.out;
  const partial = target === undefined ? null : `${target}.partial`;
  const fd = partial === null ? null : openSync(partial, "w", 0o600);
  if (partial !== null) chmodSync(partial, 0o600);
  const write = (chunk: Uint8Array): Promise<void> => {
    if (fd === null) return new Promise((resolve, reject) => process.stdout.write(chunk, (e) => (e ? reject(e) : resolve())));
    for (let at = 0; at < chunk.byteLength; ) at += writeSync(fd, chunk, at);
    return Promise.resolve();
  };
  const progress = byteProgress(`exporting ${account}`);
  let bytes = 0;
  try {
    await adminCall({ db, config }, async (_call, stream) => {
      const reader = (await stream(`/api/v1/admin/accounts/${encodeURIComponent(account)}/export`)).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        await write(value);
        bytes += value.byteLength;
        progress.update(bytes, null);
      }
    });
    if (fd !== null) {
      closeSync(fd);
      renameSync(partial!, target!);
    }
  } catch (e) {
    if (fd !== null) {
      closeSync(fd);
      rmSync(partial!, { force: true });
    }
    throw e;
  }
  progress.finish(`exported ${account}: ${bytes} bytes${target === undefined ? "" : ` to ${target}`}`);
  return 0;
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
  const result = (await adminCall({ db, config }, (call) => call("DELETE", `/api/v1/admin/accounts/${encodeURIComponent(account)}`, undefined))) as { deleted_at: string };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  process.stderr.write(`erased ${account} (at ${result.deleted_at}): its keys and sessions no longer work anywhere; its invoices are kept\n`);
  return 0;
}
