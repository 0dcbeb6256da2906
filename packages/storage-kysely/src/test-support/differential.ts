/**
 * The harness of the differential tests: random operation sequences played on a fresh memory store and on
 * shared SQLite and PostgreSQL stores (PostgreSQL when reachable) must give the memory store's results.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStorage } from "@benchdata/core";
import type { Storage } from "@benchdata/core";
import { openStorage } from "../open-storage.ts";
import { createTestDatabase, pgAvailableForTests } from "./pg-test-database.ts";

/** What one differential test plays. */
export interface Differential<Op> {
  /** The describe block's title; also names the PostgreSQL suite in skip messages. */
  readonly title: string;
  /** The test's title. */
  readonly claim: string;
  readonly op: fc.Arbitrary<Op>;
  readonly maxOps: number;
  /** Plays a sequence on a store; `tag` is unique per sequence (the SQL stores are shared by every run). */
  readonly play: (s: Storage, ops: readonly Op[], tag: string) => Promise<unknown[]>;
}

/** Registers a differential test: every store gives exactly the memory store's results, for 60 sequences. */
export async function differential<Op>(d: Differential<Op>): Promise<void> {
  const pgOn = await pgAvailableForTests(d.title);
  let run = 0;
  describe(d.title, () => {
    const dir = mkdtempSync(join(tmpdir(), "benchdata-differential-"));
    const stores: { name: string; s: Storage }[] = [];
    let dropPg: (() => Promise<void>) | null = null;
    beforeAll(async () => {
      // Chunks of 2 stamps: the windows of a few stamps cross chunk boundaries (window-chunks.ts).
      const sqlite = await openStorage(`sqlite:${join(dir, "differential.db")}`, { clock: "app", windowChunkSize: 2 });
      await sqlite.migrate();
      stores.push({ name: "sqlite", s: sqlite });
      if (pgOn) {
        const t = await createTestDatabase();
        const pg = await openStorage(t.url, { clock: "app", windowChunkSize: 2 });
        await pg.migrate();
        stores.push({ name: "postgres", s: pg });
        dropPg = t.drop;
      }
    });
    afterAll(async () => {
      for (const { s } of stores) await s.close();
      await dropPg?.();
      rmSync(dir, { recursive: true, force: true });
    });

    it(d.claim, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(d.op, { minLength: 1, maxLength: d.maxOps }), async (ops) => {
          const tag = `r${++run}`;
          const expected = await d.play(createMemoryStorage(), ops, tag);
          for (const { name, s } of stores) {
            const got = await d.play(s, ops, tag);
            expect({ name, got }).toEqual({ name, got: expected });
          }
        }),
        { numRuns: 60 },
      );
    }, 120_000);
  });
}
