import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { POSTGRES_MIGRATIONS } from "./postgres/migrations/index.ts";
import { SQLITE_MIGRATIONS } from "./sqlite/migrations/index.ts";
import { FUNCTIONS_REVISION } from "./postgres/functions.ts";
import { FUNCTIONS_SHA256 } from "./postgres/postgres-migrate.ts";
import { releasedMigrations } from "./migration.ts";

const SRC = fileURLToPath(new URL(".", import.meta.url));
const sha256 = (text: string | Buffer): string => createHash("sha256").update(text).digest("hex");

/** The manifest's lines: released files with their hashes, and the functions' revisions. */
function manifest(): { files: Map<string, string>; functions: { revision: number; sha256: string }[] } {
  const files = new Map<string, string>();
  const functions: { revision: number; sha256: string }[] = [];
  for (const line of readFileSync(`${SRC}migrations-manifest.txt`, "utf8").split("\n")) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const fields = line.split(" ");
    if (fields[0] === "functions") {
      functions.push({ revision: Number(fields[1]), sha256: fields[2]! });
    } else {
      expect(fields, `manifest line "${line}"`).toHaveLength(2);
      expect(files.has(fields[0]!), `${fields[0]} listed twice`).toBe(false);
      files.set(fields[0]!, fields[1]!);
    }
  }
  return { files, functions };
}

describe("migrations", () => {
  it("versions are unique and strictly ascending in each dialect (two changes landing with one number would break migrate)", () => {
    for (const list of [SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS]) {
      const versions = list.map((m) => m.version);
      expect(versions).toEqual([...new Set(versions)].sort((a, b) => a - b));
      for (const m of list) expect(m.name).not.toBe("");
    }
    expect(() => releasedMigrations({ "0001-a": { name: "a", sql: "" }, "0001-b": { name: "b", sql: "" } })).toThrow(/share a number/);
    expect(() => releasedMigrations({ "1-a": { name: "a", sql: "" } })).toThrow(/NNNN-slug/);
  });

  it("every released migration file is in the manifest with its SHA-256, and no released file changed or went away", () => {
    const { files } = manifest();
    const onDisk = ["postgres", "sqlite"].flatMap((d) =>
      readdirSync(`${SRC}${d}/migrations`)
        .filter((f) => /^\d{4}-.*\.ts$/.test(f))
        .map((f) => `${d}/migrations/${f}`),
    );
    // A file without a line: a new migration needs its line appended (README, "Adding a migration").
    for (const path of onDisk) expect(files.has(path), `${path} is not in migrations-manifest.txt`).toBe(true);
    for (const [path, hash] of files) {
      expect(onDisk, `${path} is in the manifest but gone: a released migration is never removed`).toContain(path);
      expect(sha256(readFileSync(`${SRC}${path}`)), `${path} changed after its release: add a migration instead`).toBe(hash);
    }
  });

  it("each dialect's index runs every file in its directory, by the file's name", () => {
    for (const [dir, list] of [
      ["postgres", POSTGRES_MIGRATIONS],
      ["sqlite", SQLITE_MIGRATIONS],
    ] as const) {
      const stems = readdirSync(`${SRC}${dir}/migrations`)
        .filter((f) => /^\d{4}-.*\.ts$/.test(f))
        .map((f) => f.slice(0, -3))
        .sort();
      expect(list.map((m) => m.id)).toEqual(stems);
    }
  });

  it("the PostgreSQL functions' text is the manifest's last revision: a change of it bumps FUNCTIONS_REVISION and appends a line", () => {
    const { functions } = manifest();
    expect(functions.map((f) => f.revision)).toEqual(functions.map((_, i) => i + 1));
    expect(new Set(functions.map((f) => f.sha256)).size).toBe(functions.length);
    expect(functions.at(-1)).toEqual({ revision: FUNCTIONS_REVISION, sha256: FUNCTIONS_SHA256 });
  });
});
