// The benchdata CLI driven as a user would: real processes, a real SQLite file, output read back.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, http, startServe } from "./helpers.ts";

describe("benchdata CLI", () => {
  let dir: string;
  let db: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "benchdata-cli-"));
    db = `sqlite:${join(dir, "cli.db")}`;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("every command answers --help with its usage", () => {
    const main = cli(["--help"]);
    expect(main.status).toBe(0);
    for (const c of ["serve", "demo", "migrate", "accounts create", "keys create", "import FILE"]) expect(main.stdout).toContain(c);
    for (const c of [["serve"], ["demo"], ["migrate"], ["accounts", "--help"], ["keys", "--help"], ["import"]]) {
      const r = cli([...c, "--help"]);
      expect(r.status, c.join(" ")).toBe(0);
      expect(r.stdout).toMatch(/^Usage: benchdata /);
    }
  }, 120_000);

  it("an unknown command or flag is a usage error (exit 2) that says what was wrong", () => {
    const a = cli(["frobnicate"]);
    expect(a.status).toBe(2);
    expect(a.stderr).toContain('unknown command "frobnicate"');
    const b = cli(["serve", "--prot", "1"]);
    expect(b.status).toBe(2);
    expect(b.stderr).toContain("--prot");
    const c = cli(["accounts", "create", "--name", "x", "--db", db]);
    expect(c.status).toBe(2);
    expect(c.stderr).toContain("--tier is required");
  });

  it("serve refuses a config file with an unknown key or a wrong type, naming the key", () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ webhooks: { timeout: 5 }, trustProxy: "yes" }));
    const r = cli(["serve", "--db", "memory:", "--config", bad]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("webhooks.timeout");
    expect(r.stderr).toContain("trustProxy");
    writeFileSync(bad, "{not json");
    expect(cli(["serve", "--db", "memory:", "--config", bad]).stderr).toContain("not valid JSON");
  });

  it("migrate, accounts create and keys create print what they did; the raw key works against a server on the same file", async () => {
    const m = cli(["migrate", "--db", db]);
    expect(m.status, m.stderr).toBe(0);
    expect(m.stderr).toContain("schema is up to date");
    const acc = cli(["accounts", "create", "--name", "CLI Co", "--tier", "startup", "--db", db]);
    expect(acc.status, acc.stderr).toBe(0);
    const account = JSON.parse(acc.stdout);
    expect(account).toMatchObject({ tier: "startup" });
    expect(account.account_id).toMatch(/^acc_[0-9A-Z]{26}$/);
    expect(account.session_token).toMatch(/^bds_sess_/);
    const refused = cli(["keys", "create", "--account", account.account_id, "--name", "k", "--environment", "test", "--scopes", "benchmarks:read,score:read", "--db", db]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("score:read");
    const k = cli(["keys", "create", "--account", account.account_id, "--name", "server", "--environment", "test", "--scopes", "benchmarks:read,merchant:read", "--db", db]);
    expect(k.status, k.stderr).toBe(0);
    const key = JSON.parse(k.stdout);
    expect(key).toMatchObject({ name: "server", environment: "test", scopes: ["benchmarks:read", "merchant:read"], is_active: true });
    expect(key.raw_key).toMatch(/^svc_test_[A-Za-z0-9_-]{48}$/);

    // Persists across restarts: a server started afterwards on the same file knows the key.
    const node = await startServe(["--db", db]);
    try {
      const r = await http(`${node.url}/data/v1/benchmarks?category=retail`, { headers: { host: "sandbox.example.com", authorization: `Bearer ${key.raw_key}` } });
      expect(r.status, r.text).toBe(200);
      expect(r.json.category).toBe("retail");
      // Logs are structured lines and never carry the raw key.
      expect(node.logs.join("\n")).not.toContain(key.raw_key);
    } finally {
      expect(await node.stop("SIGTERM")).toBe(0);
    }
    const again = await startServe(["--db", db]);
    try {
      const usage = await http(`${again.url}/api/v1/console/usage/summary`, { headers: { authorization: `Bearer ${account.session_token}` } });
      expect(usage.status).toBe(200);
      expect(usage.json).toMatchObject({ today: 1, active_keys: 1 });
    } finally {
      await again.stop();
    }
  }, 120_000);

  it("keys create leaves no console session behind (it used to store a 30-day session on every run, never shown, never ended)", () => {
    const acc = JSON.parse(cli(["accounts", "create", "--name", "Sessionless Co", "--tier", "growth", "--db", db]).stdout);
    for (const name of ["one", "two"]) {
      const k = cli(["keys", "create", "--account", acc.account_id, "--name", name, "--environment", "live", "--scopes", "benchmarks:read", "--db", db]);
      expect(k.status, k.stderr).toBe(0);
    }
    // Not a scope at all: a usage error (2), refused before the database is opened.
    const refused = cli(["keys", "create", "--account", acc.account_id, "--name", "bad", "--environment", "live", "--scopes", "nope:read", "--db", db]);
    expect(refused.status).toBe(2);
    // Refused by the console route itself (the tier does not permit the scope).
    const notPermitted = cli(["keys", "create", "--account", acc.account_id, "--name", "bad", "--environment", "live", "--scopes", "score:read", "--db", db]);
    expect(notPermitted.status).toBe(1);
    expect(notPermitted.stderr).toContain("console.scope_not_permitted");
    const missing = cli(["keys", "create", "--account", "acc_00000000000000000000000000", "--name", "k", "--environment", "test", "--scopes", "benchmarks:read", "--db", db]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("No account `acc_00000000000000000000000000`");
    // The only session the account has is the one `accounts create` printed.
    const end = cli(["accounts", "end-sessions", "--account", acc.account_id, "--db", db]);
    expect(JSON.parse(end.stdout)).toEqual({ account_id: acc.account_id, revoked_sessions: 1 });
  }, 120_000);

  it("an account's IP allow-list guards its console sessions on a real server (a spoofed X-Forwarded-For counts only with trustProxy); keys create, the operator's, still works; --console-ip-exempt is the override", async () => {
    const acc = JSON.parse(cli(["accounts", "create", "--name", "Fenced Co", "--tier", "enterprise", "--db", db]).stdout);
    const fenced = cli(["accounts", "update", "--account", acc.account_id, "--allowed-cidrs", "203.0.113.0/24, 2001:db8::/32", "--db", db]);
    expect(fenced.status, fenced.stderr).toBe(0);
    expect(JSON.parse(fenced.stdout)).toMatchObject({ allowed_cidrs: ["203.0.113.0/24", "2001:db8::/32"], console_ip_exempt: false });
    expect(cli(["accounts", "update", "--account", acc.account_id, "--console-ip-exempt", "maybe", "--db", db]).status).toBe(2);
    const proxyConfig = join(dir, "trust-proxy.json");
    writeFileSync(proxyConfig, JSON.stringify({ trustProxy: true }));
    const direct = await startServe(["--db", db]);
    const proxied = await startServe(["--db", db, "--config", proxyConfig]);
    try {
      const auth = { authorization: `Bearer ${acc.session_token}` };
      const keys = (node: { url: string }, headers: Record<string, string> = {}) => http(`${node.url}/api/v1/console/keys`, { headers: { ...auth, ...headers } });
      // The test talks from 127.0.0.1, outside the ranges.
      const refused = await keys(direct);
      expect([refused.status, refused.json.code]).toEqual([403, "auth.ip_not_allowed"]);
      const spoofed = await keys(direct, { "x-forwarded-for": "203.0.113.5" });
      expect([spoofed.status, spoofed.json.code]).toEqual([403, "auth.ip_not_allowed"]);
      const hook = await http(`${direct.url}/api/v1/console/webhooks`, { method: "POST", headers: { ...auth, "x-forwarded-for": "203.0.113.5" }, body: { url: "https://hooks.example.com/x", events: ["key.created"] } });
      expect(hook.json.code).toBe("auth.ip_not_allowed");
      // Behind a proxy the operator trusts, its X-Forwarded-For names the client.
      expect((await keys(proxied, { "x-forwarded-for": "203.0.113.5" })).status).toBe(200);
      expect((await keys(proxied)).json.code).toBe("auth.ip_not_allowed");

      const k = cli(["keys", "create", "--account", acc.account_id, "--name", "server", "--environment", "live", "--scopes", "benchmarks:read", "--db", db]);
      expect(k.status, k.stderr).toBe(0);
      expect(JSON.parse(k.stdout).raw_key).toMatch(/^svc_live_/);

      const exempt = cli(["accounts", "update", "--account", acc.account_id, "--console-ip-exempt", "true", "--db", db]);
      expect(JSON.parse(exempt.stdout)).toMatchObject({ allowed_cidrs: ["203.0.113.0/24", "2001:db8::/32"], console_ip_exempt: true });
      const listed = await keys(direct);
      expect(listed.status, listed.text).toBe(200);
      expect(listed.json.data.map((x: { name: string }) => x.name)).toEqual(["server"]);
      cli(["accounts", "update", "--account", acc.account_id, "--console-ip-exempt", "false", "--allowed-cidrs", "", "--db", db]);
      expect((await keys(direct)).status).toBe(200);
    } finally {
      await direct.stop();
      await proxied.stop();
    }
  }, 120_000);

  it("accounts sign-in-link prints a one-time link that signs in once; accounts end-sessions ends every session", async () => {
    const acc = JSON.parse(cli(["accounts", "create", "--name", "Link Co", "--tier", "growth", "--db", db]).stdout);
    const l = cli(["accounts", "sign-in-link", "--account", acc.account_id, "--base-url", "https://console.example.com/ignored", "--db", db]);
    expect(l.status, l.stderr).toBe(0);
    const link = JSON.parse(l.stdout);
    expect(link.sign_in_url).toMatch(/^https:\/\/console\.example\.com\/console\/#sign-in=bds_link_[A-Za-z0-9_-]{48}$/);
    const token = link.sign_in_url.split("=")[1];
    expect(cli(["accounts", "sign-in-link", "--db", db]).status).toBe(2);
    expect(cli(["accounts", "sign-in-link", "--account", acc.account_id, "--base-url", "ftp://x", "--db", db]).status).toBe(2);
    const node = await startServe(["--db", db]);
    try {
      const signIn = () => http(`${node.url}/api/v1/console/sign-in`, { method: "POST", headers: { "x-benchdata-console": "1" }, body: { token } });
      const first = await signIn();
      expect(first.status, first.text).toBe(200);
      expect(String(first.headers["set-cookie"])).toMatch(/^__Host-bds_console=bds_sess_/);
      expect((await signIn()).json.code).toBe("console.invalid_sign_in");
      expect(node.logs.join("\n")).not.toContain(token);
      const before = await http(`${node.url}/api/v1/console/keys`, { headers: { authorization: `Bearer ${acc.session_token}` } });
      expect(before.status).toBe(200);
      const end = cli(["accounts", "end-sessions", "--account", acc.account_id, "--db", db]);
      expect(end.status, end.stderr).toBe(0);
      expect(JSON.parse(end.stdout)).toEqual({ account_id: acc.account_id, revoked_sessions: 2 });
      const after = await http(`${node.url}/api/v1/console/keys`, { headers: { authorization: `Bearer ${acc.session_token}` } });
      expect(after.json.code).toBe("console.invalid_session");
    } finally {
      await node.stop();
    }
  }, 120_000);

  it("accounts suspend refuses the account's key and console at once on a server running on the same file; accounts resume restores them", async () => {
    const acc = JSON.parse(cli(["accounts", "create", "--name", "Suspend Co", "--tier", "startup", "--db", db]).stdout);
    const key = JSON.parse(cli(["keys", "create", "--account", acc.account_id, "--name", "k", "--environment", "test", "--scopes", "benchmarks:read", "--db", db]).stdout);
    const node = await startServe(["--db", db]);
    try {
      const data = () => http(`${node.url}/data/v1/benchmarks?category=retail`, { headers: { host: "sandbox.example.com", authorization: `Bearer ${key.raw_key}` } });
      const consoleKeys = () => http(`${node.url}/api/v1/console/keys`, { headers: { authorization: `Bearer ${acc.session_token}` } });
      expect((await data()).status).toBe(200);
      const s = cli(["accounts", "suspend", acc.account_id, "--reason", "abuse report", "--db", db]);
      expect(s.status, s.stderr).toBe(0);
      expect(JSON.parse(s.stdout)).toMatchObject({ account_id: acc.account_id, status: "suspended", suspended_reason: "abuse report" });
      // The server remembered the key; it refuses it at its very next request.
      const refused = await data();
      expect(refused.status).toBe(403);
      expect(refused.json.code).toBe("account.suspended");
      expect((await consoleKeys()).json.code).toBe("account.suspended");
      const r = cli(["accounts", "resume", "--account", acc.account_id, "--db", db]);
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: "active", suspended_at: null });
      expect((await data()).status).toBe(200);
      expect((await consoleKeys()).status).toBe(200);
    } finally {
      await node.stop();
    }
    // Usage errors (exit 2) are in usage-errors.test.ts; a well-formed call for an account that does not exist exits 1.
    const missing = cli(["accounts", "suspend", "acc_00000000000000000000000000", "--db", db]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("No account `acc_00000000000000000000000000`");
  }, 120_000);

  it("accounts list, export and delete: a table or --json page by page; the export is the whole document (owner-only, no secret); delete asks for --yes, then a server on the same file refuses the account's key at its next request", async () => {
    const file = `sqlite:${join(dir, "lifecycle.db")}`;
    const made = (name: string, tier: string) => JSON.parse(cli(["accounts", "create", "--name", name, "--tier", tier, "--db", file]).stdout);
    const acc = made("Lifecycle Co", "growth");
    const other = made("Other Co", "startup");
    const key = JSON.parse(cli(["keys", "create", "--account", acc.account_id, "--name", "k", "--environment", "test", "--scopes", "benchmarks:read", "--db", file]).stdout);

    const table = cli(["accounts", "list", "--db", file]);
    expect(table.status, table.stderr).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ACCOUNT\s+NAME\s+TIER\s+STATUS\s+CREATED$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 4))).toEqual([
      [acc.account_id, "Lifecycle Co", "growth", "active"],
      [other.account_id, "Other Co", "startup", "active"],
    ]);
    expect(table.stderr).toContain("2 accounts.");
    const found = JSON.parse(cli(["accounts", "list", "--json", "--search", "LIFECYCLE", "--db", file]).stdout);
    expect(found).toMatchObject({ data: [{ account_id: acc.account_id, name: "Lifecycle Co" }], has_more: false, next_cursor: null });
    const first = cli(["accounts", "list", "--limit", "1", "--db", file]);
    expect(first.stderr).toContain("more after this page: add --cursor");
    const page = JSON.parse(cli(["accounts", "list", "--limit", "1", "--json", "--db", file]).stdout);
    expect(page.has_more).toBe(true);
    const next = JSON.parse(cli(["accounts", "list", "--limit", "1", "--json", "--cursor", page.next_cursor, "--db", file]).stdout);
    expect(next.data.map((a: { account_id: string }) => a.account_id)).toEqual([other.account_id]);
    const all = JSON.parse(cli(["accounts", "list", "--limit", "1", "--all", "--json", "--db", file]).stdout);
    expect(all.data.map((a: { account_id: string }) => a.account_id)).toEqual([acc.account_id, other.account_id]);
    // A cursor the API never gave is refused by the API (422): a usage error.
    expect(cli(["accounts", "list", "--cursor", "bogus", "--db", file]).status).toBe(2);

    const out = join(dir, "lifecycle-export.json");
    const exported = cli(["accounts", "export", acc.account_id, "--out", out, "--db", file]);
    expect(exported.status, exported.stderr).toBe(0);
    expect(exported.stderr).toContain(`exported ${acc.account_id}`);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const text = readFileSync(out, "utf8");
    const doc = JSON.parse(text);
    expect(doc).toMatchObject({ format: "benchdata.account-export/1", account: { account_id: acc.account_id, name: "Lifecycle Co" }, keys: [{ key_id: key.key_id }] });
    expect(doc.console_sessions).toHaveLength(1);
    for (const secret of [key.raw_key, acc.session_token]) expect(text).not.toContain(secret);
    expect(existsSync(`${out}.partial`)).toBe(false);
    // A directory, or a folder that does not exist: refused or failed with the reason, nothing left behind (no EBADF).
    const intoDir = cli(["accounts", "export", acc.account_id, "--out", dir, "--db", file]);
    expect(intoDir.status).toBe(2);
    expect(intoDir.stderr).toContain("is a directory");
    const missing = cli(["accounts", "export", acc.account_id, "--out", join(dir, "no-such-folder", "x.json"), "--db", file]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("ENOENT");
    expect(missing.stderr).not.toContain("EBADF");
    // Over an existing file: replaced whole, still 0600.
    writeFileSync(out, "old");
    expect(cli(["accounts", "export", acc.account_id, "--out", out, "--db", file]).status).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8")).account.account_id).toBe(acc.account_id);
    expect(readdirSync(dir).filter((f) => f.endsWith(".partial"))).toEqual([]);
    const toStdout = cli(["accounts", "export", "--account", acc.account_id, "--db", file]);
    expect(JSON.parse(toStdout.stdout).account.account_id).toBe(acc.account_id);

    const node = await startServe(["--db", file]);
    try {
      const data = () => http(`${node.url}/data/v1/benchmarks?category=retail`, { headers: { host: "sandbox.example.com", authorization: `Bearer ${key.raw_key}` } });
      expect((await data()).status).toBe(200);
      const refused = cli(["accounts", "delete", acc.account_id, "--db", file]);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain("without --yes");
      expect(refused.stderr).toContain("deletes its keys, sessions, sign-in links, webhooks");
      expect((await data()).status).toBe(200);
      const erased = cli(["accounts", "delete", acc.account_id, "--yes", "--db", file]);
      expect(erased.status, erased.stderr).toBe(0);
      const result = JSON.parse(erased.stdout);
      expect(result).toMatchObject({ account_id: acc.account_id, deleted: true });
      expect(erased.stderr).toContain(`erased ${acc.account_id} at ${result.deleted_at}`);
      expect(result.erasure).toMatchObject({ status: "erased", erased_now: true });
      // The erasure's own log line, as a server writes it: the operator's record that it happened.
      const logged = erased.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
      expect(logged).toContainEqual(expect.objectContaining({ level: "warn", msg: expect.stringContaining("account erased by the operator"), account_id: acc.account_id }));
      // The server remembered the key; it refuses it at its very next request, as a key that never was.
      const after = await data();
      expect([after.status, after.json.code]).toEqual([401, "auth.unknown_key"]);
      const session = await http(`${node.url}/api/v1/console/keys`, { headers: { authorization: `Bearer ${acc.session_token}` } });
      expect(session.json.code).toBe("console.invalid_session");
    } finally {
      await node.stop();
    }
    const again = cli(["accounts", "delete", acc.account_id, "--yes", "--db", file]);
    expect(again.stderr).toContain(`${acc.account_id} was already erased`);
    expect(JSON.parse(again.stdout)).toEqual(JSON.parse(cli(["accounts", "delete", acc.account_id, "--yes", "--db", file]).stdout));
    const tombstones = cli(["accounts", "list", "--status", "deleted", "--db", file]).stdout;
    expect(tombstones).toMatch(new RegExp(`${acc.account_id}\\s+growth\\s+deleted`));
    const gone = cli(["accounts", "export", acc.account_id, "--out", join(dir, "gone.json"), "--db", file]);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toContain(`No account \`${acc.account_id}\``);
    expect(existsSync(join(dir, "gone.json"))).toBe(false);
    expect(existsSync(join(dir, "gone.json.partial"))).toBe(false);
  }, 120_000);

  it("import: a good file is loaded with a summary; a bad row fails with its line number and changes nothing", () => {
    const good = join(dir, "good.csv");
    const rows = ["business_id,category,segment,period,metric,value"];
    for (let b = 0; b < 40; b++) rows.push(`biz${b},retail,stores,2026-Q2,gross_margin,${(0.3 + b / 200).toFixed(4)}`);
    writeFileSync(good, rows.join("\n") + "\n");
    const ok = cli(["import", good, "--db", db]);
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout.trim().split("\n").pop()!)).toMatchObject({ rows: 40, businesses: 40 });
    expect(ok.stderr).toContain("imported 40 rows");
    // Nothing was stored for retail 2026-Q2: it is added, not "replaced"; a second import replaces it.
    expect(ok.stderr).toContain("(category, period) pairs: 1 added, 0 replaced");
    expect(JSON.parse(ok.stdout.trim().split("\n").pop()!)).toMatchObject({ added: [{ category: "retail", period: "2026-Q2" }], replaced: [] });
    const again = cli(["import", good, "--db", db]);
    expect(again.stderr).toContain("(category, period) pairs: 0 added, 1 replaced");
    // A replaced period can be differenced against its earlier version: the operator is told, and not on a first import.
    expect(again.stderr).toContain("note: retail 2026-Q2 replaced earlier data");
    expect(ok.stderr).not.toContain("replaced earlier data");

    const bad = join(dir, "bad.csv");
    writeFileSync(bad, [rows[0], "a,retail,stores,2026-Q3,gross_margin,0.5", "b,retail,stores,2026-Q3,churn_rate,0.1", ""].join("\n"));
    const r = cli(["import", bad, "--db", db]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/line 3/);
    expect(r.stderr).toContain("churn_rate");
    expect(r.stderr).toContain("nothing was changed");
    const missing = cli(["import", join(dir, "nope.csv"), "--db", db]);
    expect(missing.status).toBe(2);
  });

  it("SIGTERM drains an in-flight request before the process exits", async () => {
    const node = await startServe(["--db", "memory:"]);
    // A request whose body is still arriving when SIGTERM lands: the server must finish it, then exit 0.
    const socket = connect(node.port, "127.0.0.1");
    await new Promise<void>((r) => socket.once("connect", () => r()));
    const body = JSON.stringify({ name: "k", environment: "test", scopes: ["benchmarks:read"] });
    socket.write(`POST /api/v1/console/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nAuthorization: Bearer bds_sess_nope\r\n\r\n${body.slice(0, 10)}`);
    let answer = "";
    socket.on("data", (c: Buffer) => (answer += c.toString()));
    await new Promise((r) => setTimeout(r, 300));
    const exited = node.stop("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    expect(node.child.exitCode).toBeNull();
    socket.write(body.slice(10));
    expect(await exited).toBe(0);
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(answer).toContain("console.invalid_session");
    socket.destroy();
  });
  it("accounts update sets limits through the admin API's rules: a block of size 0 is refused naming the field and changes nothing; release-hold answers", () => {
    const acc = JSON.parse(cli(["accounts", "create", "--name", "Limits Co", "--tier", "growth", "--db", db]).stdout);
    const zero = cli(["accounts", "update", "--account", acc.account_id, "--monthly-quota", "3", "--block-size", "0", "--db", db]);
    expect(zero.status).not.toBe(0);
    expect(zero.stderr).toContain("block_size");
    expect(zero.stderr).toContain("validation.invalid_body");
    const set = cli(["accounts", "update", "--account", acc.account_id, "--monthly-quota", "3", "--block-size", "2", "--db", db]);
    expect(set.status, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ limit_overrides: { monthly_quota: 3, block_size: 2 }, limits: { monthly_quota: 3, block_size: 2 } });
    const notInt = cli(["accounts", "update", "--account", acc.account_id, "--block-size", "lots", "--db", db]);
    expect(notInt.status).toBe(2);
    expect(notInt.stderr).toContain("--block-size must be an integer");
    const release = cli(["accounts", "release-hold", "--account", acc.account_id, "--db", db]);
    expect(release.status, release.stderr).toBe(0);
    expect(JSON.parse(release.stdout)).toEqual({ account_id: acc.account_id, released: false });
  });
});
