/**
 * `benchdata audit verify | export`: the operator checks the audit log's hash chain, and copies entries out as JSON
 * lines. Both read the store directly (read-only) in `seq` order, a page at a time, with progress on stderr.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import type { AuditEntry, Storage } from "@benchdata/core";
import { auditEntryJson, isAuditAction, verifyAuditChain } from "@benchdata/core";
import { accountFlag, dbUrl, isoFlag, parse, UsageError } from "../args.ts";
import type { Command } from "../command.ts";
import { printUsage } from "../command.ts";
import { openDb } from "../runtime.ts";

const USAGE = `Usage: benchdata audit verify [--db URL]
       benchdata audit export [--since ISO] [--account ACC_ID] [--action ACTION] [--out FILE] [--db URL]

verify  walks the audit log's hash chain from its first entry (docs/audit.md): each entry's hash must cover its
        fields and the previous entry's hash, and the last must be the recorded head. Prints a JSON summary and
        exits 0, or names the first broken entry (its id and position) and exits 1. Progress on stderr.
export  writes entries recorded at or after --since (every entry without it), oldest first, one JSON object per
        line, to --out FILE (created readable by its owner only) or stdout; progress on stderr. Each line carries
        its salt, so an exported file can be verified on its own. Entries are never pruned.`;

/** Entries read per page. */
const PAGE = 1000;

/** A line on stderr every `everyMs` at most (a terminal redraws it in place), and a last one. */
function countProgress(label: string, stream: NodeJS.WriteStream = process.stderr): { update(n: number): void; finish(text: string): void } {
  const tty = Boolean(stream.isTTY);
  let last = Date.now();
  return {
    update(n) {
      const now = Date.now();
      if (now - last < (tty ? 100 : 2000)) return;
      last = now;
      stream.write(tty ? `\r\x1b[2K${label}: ${n} entries` : `${label}: ${n} entries\n`);
    },
    finish(text) {
      stream.write(tty ? `\r\x1b[2K${text}\n` : `${text}\n`);
    },
  };
}

async function withStorage<T>(db: string, fn: (s: Storage) => Promise<T>): Promise<T> {
  const storage = await openDb(db);
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
}

/** `audit verify`: exit 0 when the chain holds, 1 at the first break (named on stderr and in the JSON printed). */
export async function auditVerify(argv: string[], help: () => number): Promise<number> {
  const { values } = parse(argv, { db: { type: "string" } });
  if (values.help) return help();
  const progress = countProgress("verifying the audit chain");
  return withStorage(dbUrl(values.db), async (s) => {
    const head = await s.auditHead();
    const r = await verifyAuditChain((after) => s.listAudit({ order: "asc", afterSeq: after, limit: PAGE }), head, (n) => progress.update(n));
    const summary = { ok: r.break === null, entries: r.entries, erased: r.erased, head_seq: head.seq, head_hash: head.hash };
    if (r.break === null) {
      progress.finish(`audit chain verified: ${r.entries} entries (${r.erased} erased), head at position ${head.seq}`);
      process.stdout.write(`${JSON.stringify(summary)}\n`);
      return 0;
    }
    const b = r.break;
    progress.finish(`audit chain BROKEN at ${b.id === null ? "the end" : `entry ${b.id}`} (position ${b.seq}): ${b.detail}; ${r.entries} entries before it verified`);
    process.stdout.write(`${JSON.stringify({ ...summary, break: { id: b.id, seq: b.seq, reason: b.reason, detail: b.detail } })}\n`);
    return 1;
  });
}

/** `audit export`: entries recorded at or after `--since` (all without it), oldest first, one JSON object a line. */
export async function auditExport(argv: string[], help: () => number): Promise<number> {
  const { values } = parse(argv, { db: { type: "string" }, since: { type: "string" }, account: { type: "string" }, action: { type: "string" }, out: { type: "string" } });
  if (values.help) return help();
  const from = values.since === undefined ? undefined : Date.parse(isoFlag("since", values.since));
  const accountId = values.account === undefined ? undefined : accountFlag(values.account);
  if (values.action !== undefined && !isAuditAction(values.action)) throw new UsageError(`--action must be an audited action such as key.revoke, got "${values.action}"`);
  const fd = values.out === undefined ? 1 : openSync(values.out, "w", 0o600);
  const progress = countProgress("exporting audit entries");
  try {
    return await withStorage(dbUrl(values.db), async (s) => {
      let after = 0;
      let n = 0;
      for (;;) {
        const page: AuditEntry[] = await s.listAudit({
          order: "asc",
          afterSeq: after,
          limit: PAGE,
          ...(from !== undefined ? { from } : {}),
          ...(accountId !== undefined ? { accountId } : {}),
          ...(values.action !== undefined && isAuditAction(values.action) ? { action: values.action } : {}),
        });
        if (page.length === 0) break;
        writeSync(fd, page.map((e) => `${JSON.stringify(auditEntryJson(e, { withSalt: true }))}\n`).join(""));
        n += page.length;
        after = page[page.length - 1]!.seq;
        progress.update(n);
      }
      progress.finish(`exported ${n} audit entries${values.out !== undefined ? ` to ${values.out}` : ""}`);
      return 0;
    });
  } finally {
    if (fd !== 1) closeSync(fd);
  }
}

async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const help = (): number => printUsage(USAGE);
  if (sub === "--help" || sub === "-h" || sub === undefined) return help();
  if (sub === "verify") return auditVerify(rest, help);
  if (sub === "export") return auditExport(rest, help);
  throw new UsageError(`unknown audit command "${sub}"`);
}

/** `benchdata audit`. */
export const auditCommand: Command = { usage: USAGE, run };
