// `benchdata audit verify | export` on SQLite and PostgreSQL (issue 27): what the CLI changes is recorded as `cli`,
// the chain verifies, and one row edited straight in the database makes verify exit 1 naming that entry.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { cli, pgAvailable, tempDatabase } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "benchdata-audit-cli-"));
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of drops) await drop();
  rmSync(dir, { recursive: true, force: true });
});

/** The database kinds, each with a way to run one SQL statement on it behind benchdata's back. */
const kinds: Record<string, () => Promise<{ db: string; sql(text: string): Promise<void> }>> = {
  sqlite: async () => {
    const file = join(dir, "audit.db");
    return {
      db: `sqlite:${file}`,
      sql: async (text) => {
        const d = new Database(file);
        d.exec(text);
        d.close();
      },
    };
  },
};
if (await pgAvailable()) {
  kinds.postgres = async () => {
    const t = await tempDatabase("benchdata_audit_cli");
    drops.push(t.drop);
    return {
      db: t.url,
      sql: async (text) => {
        const c = new pg.Client({ connectionString: t.url });
        await c.connect();
        await c.query(text);
        await c.end();
      },
    };
  };
}

for (const [name, open] of Object.entries(kinds)) {
  describe(`benchdata audit: ${name}`, () => {
    it("records what the CLI changes as cli, verifies, exports JSON lines since a time, and names the entry an edit in the database broke", async () => {
      const { db, sql } = await open();
      const created = cli(["accounts", "create", "--name", "Tamper Ltd", "--tier", "growth", "--db", db]);
      expect(created.status, created.stderr).toBe(0);
      const account = JSON.parse(created.stdout).account_id as string;
      // The key first: a suspended account can be given no new key.
      const key = cli(["keys", "create", "--account", account, "--name", "ci", "--environment", "test", "--scopes", "benchmarks:read", "--db", db]);
      expect(key.status, key.stderr).toBe(0);
      const suspended = cli(["accounts", "suspend", account, "--reason", "review", "--db", db]);
      expect(suspended.status, suspended.stderr).toBe(0);

      const ok = cli(["audit", "verify", "--db", db]);
      expect(ok.status, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, entries: 3, erased: 0, head_seq: 3 });
      expect(ok.stderr).toContain("audit chain verified: 3 entries");

      const out = join(dir, `${name}-audit.jsonl`);
      const exported = cli(["audit", "export", "--since", "2000-01-01T00:00:00Z", "--out", out, "--db", db]);
      expect(exported.status, exported.stderr).toBe(0);
      expect(exported.stderr).toContain("exported 3 audit entries");
      const lines = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.map((l) => [l.seq, l.action, l.actor, l.account_id])).toEqual([
        [1, "account.create", "cli", account],
        [2, "key.create", "cli", account],
        [3, "account.suspend", "cli", account],
      ]);
      expect(lines[2]!.personal).toEqual({ reason: "review" });
      const later = cli(["audit", "export", "--since", "2100-01-01T00:00:00Z", "--db", db]);
      expect([later.status, later.stdout]).toEqual([0, ""]);
      expect(cli(["audit", "export", "--since", "yesterday", "--db", db]).status).toBe(2);

      // Someone rewrites history in the database: the key's creation becomes its revocation.
      await sql(`UPDATE audit_log SET action = 'key.revoke' WHERE seq = 2`);
      const broken = cli(["audit", "verify", "--db", db]);
      expect(broken.status).toBe(1);
      expect(broken.stderr).toContain(`BROKEN at entry ${lines[1]!.id} (position 2)`);
      expect(JSON.parse(broken.stdout)).toMatchObject({ ok: false, entries: 1, break: { id: lines[1]!.id, seq: 2, reason: "hash" } });

      // Put back, the chain holds again; an entry cut off the end is found at the head.
      await sql(`UPDATE audit_log SET action = 'key.create' WHERE seq = 2`);
      expect(cli(["audit", "verify", "--db", db]).status).toBe(0);
      await sql(`DELETE FROM audit_log WHERE seq = 3`);
      const cut = cli(["audit", "verify", "--db", db]);
      expect(cut.status).toBe(1);
      expect(JSON.parse(cut.stdout).break).toMatchObject({ id: null, seq: 3, reason: "head" });
    }, 120_000);
  });
}
