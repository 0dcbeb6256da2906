// The admin surface of a real `benchdata serve`: what it refuses to start with, and how it guards the admin API.
import { describe, expect, it } from "vitest";
import { cli, http, startServe } from "./helpers.ts";

const STRONG = "admin-surface-token-0123456789abcdef";

describe("benchdata serve: the admin token", () => {
  it("weak admin token: serve refuses to start (exit 2) with a token shorter than 32 characters, naming the reason", () => {
    for (const weak of ["admin", "x".repeat(31)]) {
      const r = cli(["serve", "--db", "memory:", "--port", "0", "--host", "127.0.0.1"], { BENCHDATA_ADMIN_TOKEN: weak });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain("BENCHDATA_ADMIN_TOKEN");
      expect(r.stderr).toContain("at least 32");
      if (weak.length > 5) expect(r.stderr, "the token itself is never printed").not.toContain(weak);
    }
  }, 120_000);

  it("a 32-character admin token starts the admin API", async () => {
    const node = await startServe(["--db", "memory:"], { BENCHDATA_ADMIN_TOKEN: STRONG });
    try {
      const r = await http(`${node.url}/api/v1/admin/accounts`, { method: "POST", headers: { authorization: `Bearer ${STRONG}` }, body: { name: "Strong Co", tier: "developer" } });
      expect(r.status, r.text).toBe(201);
    } finally {
      await node.stop();
    }
  }, 60_000);
});
