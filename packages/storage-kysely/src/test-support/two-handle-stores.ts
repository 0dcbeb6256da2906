// For HTTP tests of two app instances sharing one store: each kind (memory; a SQLite file; PostgreSQL when
// reachable, see pg-test-database.ts) opens two handles on the same store. Files and databases are removed
// after the test file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import type { Storage } from "@benchdata/core";
import { createMemoryStorage } from "@benchdata/core";
import { type OpenStorageOptions, openStorage } from "../open-storage.ts";
import { createTestDatabase, pgAvailableForTests } from "./pg-test-database.ts";

/** Store kind → opens two handles on one fresh store (migrated). `name` labels the skip message and temp files. */
export async function twoHandleStores(name: string, options: OpenStorageOptions = {}): Promise<Record<string, () => Promise<[Storage, Storage]>>> {
  const pgOn = await pgAvailableForTests(name);
  const dir = mkdtempSync(join(tmpdir(), `benchdata-${name}-`));
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const twice = async (url: string): Promise<[Storage, Storage]> => {
    const a = await openStorage(url, options);
    await a.migrate();
    return [a, await openStorage(url, options)];
  };
  const stores: Record<string, () => Promise<[Storage, Storage]>> = {
    memory: async () => {
      const s = createMemoryStorage();
      return [s, s];
    },
    sqlite: () => twice(`sqlite:${join(dir, `${Math.random().toString(36).slice(2)}.db`)}`),
  };
  if (pgOn) {
    stores.postgres = async () => {
      const t = await createTestDatabase();
      drops.push(t.drop);
      return twice(t.url);
    };
  }
  return stores;
}
