/**
 * The harness of the differential tests: random operation sequences played on shared SQLite and PostgreSQL
 * stores (PostgreSQL when reachable) must give the expected results: an oracle's when the test has one (core's
 * pure functions, played directly; the memory store is then held to it too), else a fresh memory store's.
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
  /** The shortest sequence (default 1): long enough, for a test whose interesting states take many steps to reach. */
  readonly minOps?: number;
  /** The test's time-out (default 120 s). */
  readonly timeoutMs?: number;
  /** Plays a sequence on a store; `tag` is unique per sequence (the SQL stores are shared by every run). */
  readonly play: (s: Storage, ops: readonly Op[], tag: string) => Promise<unknown[]>;
  /** What `play` must give on every store, computed without a store; absent: a fresh memory store's results. */
  readonly oracle?: (ops: readonly Op[], tag: string) => unknown[];
}

/** Registers a differential test: every store gives exactly the oracle's (or memory store's) results, for 60 sequences. */
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
        fc.asyncProperty(fc.array(d.op, { minLength: d.minOps ?? 1, maxLength: d.maxOps }), async (ops) => {
          const tag = `r${++run}`;
          const oracle = d.oracle;
          const expected = oracle === undefined ? await d.play(createMemoryStorage(), ops, tag) : oracle(ops, tag);
          const compared = oracle === undefined ? stores : [{ name: "memory", s: createMemoryStorage() as Storage }, ...stores];
          for (const { name, s } of compared) {
            const got = await d.play(s, ops, tag);
            expect({ name, got }).toEqual({ name, got: expected });
          }
        }),
        { numRuns: 60 },
      );
    }, d.timeoutMs ?? 120_000);
  });
}
