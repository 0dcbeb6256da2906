// Every mistake in how a command is called exits 2 (docs/operations.md), before any database is opened; a
// well-formed call that fails exits 1. Runs `main` in-process (the exit code is its result) to keep the table cheap.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "./main.ts";

/** Runs the CLI in-process; resolves to its exit code and what it wrote to stdout and stderr. */
async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    return { code: await main(argv), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

const ACC = "acc_01JAAAAAAAAAAAAAAAAAAAAAAA";

describe("usage errors exit 2, for every command", () => {
  let dir: string;
  let never: string;
  let db: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "benchdata-usage-"));
    never = join(dir, "never.db");
    db = `sqlite:${join(dir, "cli.db")}`;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // [argv, what stderr must say]; each with --db pointing at a file that must never be created.
  const table: [string[], string][] = [
    [["frobnicate"], 'unknown command "frobnicate"'],
    [["serve", "--prot", "1"], "--prot"],
    [["serve", "--port", "eighty"], "--port must be an integer"],
    [["serve", "--port", "70000"], "--port must be an integer from 0 to 65535"],
    [["serve", "extra"], 'unexpected argument "extra"'],
    [["serve", "--db", "mysql://u:hunter2pw@h/db"], "--db must be sqlite:PATH, postgres://… or memory:"],
    [["demo", "--port", "99999"], "--port must be an integer from 0 to 65535"],
    [["migrate", "--db", "sqlite:"], '--db "sqlite:" needs a path'],
    [["migrate", "--db", "benchdata.db"], "--db must be sqlite:PATH"],
    [["accounts", "frob"], 'unknown accounts command "frob"'],
    [["accounts", "create", "--name", "x"], "--tier is required"],
    [["accounts", "create", "--tier", "growth"], "--name is required"],
    [["accounts", "create", "--name", "x", "--tier", "gold"], '--tier must be one of developer, startup, growth, enterprise, got "gold"'],
    [["accounts", "create", "--name"], "--name"],
    [["accounts", "update", "--tier", "growth"], "--account is required"],
    [["accounts", "update", "--account", ACC], "nothing to change"],
    [["accounts", "update", "--account", ACC, "--tier", "platinum"], "--tier must be one of"],
    [["accounts", "update", "--account", ACC, "--per-minute", "many"], "--per-minute must be an integer"],
    [["accounts", "update", "--account", "bob", "--tier", "growth"], "--account must be an account id"],
    [["accounts", "release-hold"], "--account is required"],
    [["accounts", "release-hold", "--account", "acc_1"], "--account must be an account id"],
    [["accounts", "sign-in-link", "--account", ACC, "--base-url", "ftp://x"], "--base-url must be an http:// or https:// URL"],
    [["accounts", "sign-in-link", "--account", ACC, "--base-url", "not a url"], "is not a URL"],
    [["accounts", "end-sessions", "--account", ACC, "--base-url", "https://x"], "--base-url applies only to sign-in-link"],
    [["accounts", "end-sessions"], "--account is required"],
    [["accounts", "suspend"], "the account is required"],
    [["accounts", "suspend", ACC, "--account", ACC], "give the account once"],
    [["accounts", "suspend", "bob"], 'ACC_ID must be an account id (acc_ and 26 characters, as accounts create printed it), got "bob"'],
    [["accounts", "suspend", ACC, "--reason", "  "], "--reason must not be empty"],
    [["accounts", "suspend", ACC, "extra"], 'unexpected argument "extra"'],
    [["accounts", "resume", "--account", "acc_1"], "--account must be an account id"],
    [["accounts", "resume", ACC, "--reason", "why"], "--reason applies only to suspend"],
    [["accounts", "list", "--status", "gone"], '--status must be one of active, suspended, deleted, got "gone"'],
    [["accounts", "list", "--tier", "gold"], "--tier must be one of"],
    [["accounts", "list", "--created-after", "yesterday"], "--created-after must be an ISO 8601 time with a time zone"],
    [["accounts", "list", "--created-before", "2026-11-01"], "--created-before must be an ISO 8601 time"],
    [["accounts", "list", "--limit", "0"], "--limit must be an integer from 1 to 100"],
    [["accounts", "list", "--search", ""], "--search must be 1 to 200 characters"],
    [["accounts", "list", "--search", "a\u0000b"], "without control characters"],
    [["accounts", "list", "--created-before", "2026-02-30T00:00:00Z"], "--created-before must be an ISO 8601 time with a time zone that exists"],
    [["accounts", "list", "--all", "--cursor", "x"], "--all starts at the first page"],
    [["accounts", "list", "extra"], 'unexpected argument "extra"'],
    [["accounts", "export"], "the account is required: benchdata accounts export ACC_ID"],
    [["accounts", "export", "bob"], "ACC_ID must be an account id"],
    [["accounts", "export", ACC, "--account", ACC], "give the account once"],
    [["accounts", "export", ACC, "--out", ""], "--out needs a file name"],
    [["accounts", "delete"], "the account is required: benchdata accounts delete ACC_ID"],
    [["accounts", "delete", "--account", "acc_1", "--yes"], "--account must be an account id"],
    [["accounts", "delete", ACC], `refusing to erase ${ACC} without --yes`],
    [["accounts", "delete", ACC, "--yes", "extra"], 'unexpected argument "extra"'],
    [["keys", "rotate"], 'unknown keys command "rotate"'],
    [["keys", "create", "--account", ACC, "--name", "k", "--environment", "test"], "--scopes is required"],
    [["keys", "create", "--account", ACC, "--name", "k", "--scopes", "benchmarks:read"], "--environment is required"],
    [["keys", "create", "--account", ACC, "--name", "k", "--environment", "prod", "--scopes", "benchmarks:read"], '--environment must be one of live, test, got "prod"'],
    [["keys", "create", "--account", ACC, "--name", "k", "--environment", "live", "--env", "test", "--scopes", "benchmarks:read"], "--environment and --env disagree"],
    [["keys", "create", "--account", ACC, "--name", "k", "--environment", "test", "--scopes", "benchmarks:read,nope:read"], '--scopes must be one of benchmarks:read'],
    [["keys", "create", "--account", ACC, "--name", "k", "--environment", "test", "--scopes", " , "], "--scopes needs at least one scope"],
    [["keys", "create", "--account", "key_01JAAAAAAAAAAAAAAAAAAAAAAA", "--name", "k", "--environment", "test", "--scopes", "benchmarks:read"], "--account must be an account id"],
    [["import"], "the FILE to import is required"],
    [["import", "a.csv", "b.csv"], 'unexpected argument "b.csv"'],
    [["import", "/nonexistent/rows.csv"], "cannot read /nonexistent/rows.csv"],
    [["import", "package.json", "--format", "xml"], "--format must be csv or ndjson"],
    [["webhooks", "rotate"], 'unknown webhooks command "rotate"'],
    [["webhooks", "reseal", "--db", "redis://x"], "--db must be sqlite:PATH"],
    [["webhooks", "reseal", "--check", "--db", "redis://x"], "--db must be sqlite:PATH"],
    [["webhooks", "reseal", "--check=yes"], "--check"],
    [["webhooks", "drop-unopened", "--db", "redis://x"], "--db must be sqlite:PATH"],
    [["webhooks", "drop-unopened", "--yes=no"], "--yes"],
    [["webhooks", "drop-unopened", "wh_01JAAAAAAAAAAAAAAAAAAAAAAA"], 'unexpected argument "wh_01JAAAAAAAAAAAAAAAAAAAAAAA"'],
    [["backup"], "--to DIR is required"],
    [["backup", "--to", "/nonexistent-dir-never"], "--key-out FILE is required"],
    [["backup", "--to", "/nonexistent-dir-never", "--key-out", "/nonexistent-dir-never/sub/key"], "lies inside --to"],
    [["backup", "--to", "/nonexistent-dir-never", "--key-out", "/nonexistent-key-never", "--db", "postgres://u:hunter2pw@h/db"], "back up PostgreSQL with pg_dump"],
    [["backup", "--to", "/nonexistent-dir-never", "--key-out", "/nonexistent-key-never", "--db", "memory:"], "--db must name a SQLite database file"],
  ];

  it.each(table)("%j → exit 2", async (argv, says) => {
    const withDb = argv.includes("--db") || argv[0] === "frobnicate" ? argv : [...argv, "--db", `sqlite:${never}`];
    const r = await run(withDb);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(says);
    // The usage follows the message, and a password in a URL is never echoed.
    expect(r.stderr).toContain("Usage: benchdata");
    expect(r.stderr).not.toContain("hunter2pw");
    expect(existsSync(never), "no database is created for a usage error").toBe(false);
  });

  it("a value the API refuses as invalid is a usage error (2); a well-formed call it refuses is a failure (1)", async () => {
    const created = await run(["accounts", "create", "--name", "Usage Co", "--tier", "developer", "--db", db]);
    expect(created.code, created.stderr).toBe(0);
    const account = JSON.parse(created.stdout).account_id as string;

    const zero = await run(["accounts", "update", "--account", account, "--block-size", "0", "--db", db]);
    expect([zero.code, zero.stderr.includes("block_size"), zero.stderr.includes("validation.invalid_body")]).toEqual([2, true, true]);
    const long = await run(["accounts", "create", "--name", "x".repeat(1000), "--tier", "growth", "--db", db]);
    expect([long.code, long.stderr.includes("validation.invalid_body")]).toEqual([2, true]);

    // Well-formed, refused: the scope is above the account's tier; the account does not exist.
    const above = await run(["keys", "create", "--account", account, "--name", "k", "--environment", "test", "--scopes", "score:read", "--db", db]);
    expect([above.code, above.stderr.includes("console.scope_not_permitted")]).toEqual([1, true]);
    const missing = await run(["accounts", "release-hold", "--account", ACC, "--db", db]);
    expect([missing.code, missing.stderr.includes(ACC)]).toEqual([1, true]);
    // A reason over 500 characters is invalid (2); suspending an account that does not exist is refused (1).
    const longReason = await run(["accounts", "suspend", account, "--reason", "x".repeat(501), "--db", db]);
    expect([longReason.code, longReason.stderr.includes("validation.invalid_body")]).toEqual([2, true]);
    const noSuch = await run(["accounts", "suspend", ACC, "--db", db]);
    expect([noSuch.code, noSuch.stderr.includes(ACC)]).toEqual([1, true]);
  });
});
