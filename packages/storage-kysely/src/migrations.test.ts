import { describe, expect, it } from "vitest";
import { POSTGRES_MIGRATIONS } from "./postgres/postgres-schema.ts";
import { SQLITE_MIGRATIONS } from "./sqlite/sqlite-schema.ts";

describe("migrations", () => {
  it("versions are unique and strictly ascending in each dialect (two changes landing with one number would break migrate)", () => {
    for (const list of [SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS]) {
      const versions = list.map((m) => m.version);
      expect(versions).toEqual([...new Set(versions)].sort((a, b) => a - b));
      for (const m of list) expect(m.name).not.toBe("");
    }
  });
});
