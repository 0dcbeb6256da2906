import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStorage } from "@benchdata/core";
import type { Storage } from "@benchdata/core";
import { importFile, importObservations } from "./import/import-observations.ts";
import { ImportError } from "./import/validate-observation.ts";
import { openStorage } from "./open-storage.ts";
import { createTestDatabase, pgAvailableForTests } from "./test-support/pg-test-database.ts";

const dir = mkdtempSync(join(tmpdir(), "benchdata-import-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = "business_id,category,segment,period,metric,value";
const csv = (...rows: string[]): Readable => Readable.from([`${[HEADER, ...rows].join("\n")}\n`]);

async function values(s: Storage, segment: string, period = "2026-Q1", metric: "gross_margin" | "churn_rate" = "gross_margin"): Promise<{ values: number[]; n: number } | null> {
  const c = (await s.benchmarks.cells("saas", segment, period, [metric])).get(metric);
  return c ? { values: Array.from(c.sorted), n: c.sampleSize } : null;
}

async function expectImportError(p: Promise<unknown>, line: number, text: RegExp): Promise<void> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ImportError);
  expect((e as ImportError).line).toBe(line);
  expect((e as ImportError).message).toMatch(new RegExp(`^line ${line}: `));
  expect((e as ImportError).message).toMatch(text);
}

function importSuite(name: string, create: () => Promise<{ s: Storage; dispose(): Promise<void> }>): void {
  describe(`importObservations: ${name}`, () => {
    let s: Storage;
    let dispose: () => Promise<void>;
    beforeAll(async () => {
      ({ s, dispose } = await create());
    });
    afterAll(async () => {
      await dispose();
    });

    it("imports a CSV: a cell per segment plus `all`, sorted, with distinct-business sample sizes", async () => {
      const progress: number[] = [];
      const sum = await importObservations(
        s,
        csv(
          "b1,saas,smb,2026-Q1,gross_margin,0.5",
          "b2,saas,smb,2026-Q1,gross_margin,0.7",
          "b3,saas,enterprise,2026-Q1,gross_margin,0.9",
          "b3,saas,enterprise,2026-Q1,churn_rate,0.02",
          "b1,saas,smb,2026-Q2,gross_margin,0.55",
          "b4,saas,smb,2026-04,churn_rate,0.03",
        ),
        { format: "csv", onProgress: (rows) => progress.push(rows), progressEvery: 2 },
      );
      expect(sum).toMatchObject({ rows: 6, businesses: 4, periods: 3, belowMinimum: 0 });
      // Q1 gross_margin: smb, enterprise, all; Q1 churn: enterprise, all; Q2: smb, all; 2026-04: smb, all.
      expect(sum.cells).toBe(9);
      // Nothing was there: every (category, period) is added, none replaced.
      expect(sum.added).toEqual([
        { category: "saas", period: "2026-04" },
        { category: "saas", period: "2026-Q1" },
        { category: "saas", period: "2026-Q2" },
      ]);
      expect(sum.replaced).toEqual([]);
      expect(progress).toEqual([2, 4, 6, 6]);
      expect(await values(s, "all")).toEqual({ values: [0.5, 0.7, 0.9], n: 3 });
      expect(await values(s, "smb")).toEqual({ values: [0.5, 0.7], n: 2 });
      expect(await values(s, "enterprise", "2026-Q1", "churn_rate")).toEqual({ values: [0.02], n: 1 });
      expect(await s.benchmarks.latestPeriod("saas", "all", "quarterly")).toBe("2026-Q2");
      expect(await s.benchmarks.latestPeriod("saas", "smb", "monthly")).toBe("2026-04");
      expect(await s.benchmarks.segments("saas")).toEqual(["enterprise", "smb"]);
    });

    it("the summary tells the (category, period) pairs replaced from those added", async () => {
      const sum = await importObservations(s, csv("r1,saas,smb,2026-Q2,gross_margin,0.6", "r1,saas,smb,2026-Q3,gross_margin,0.6"), { format: "csv" });
      expect(sum.replaced).toEqual([{ category: "saas", period: "2026-Q2" }]);
      expect(sum.added).toEqual([{ category: "saas", period: "2026-Q3" }]);
      expect(await values(s, "all", "2026-Q2")).toEqual({ values: [0.6], n: 1 });
    });

    it("imports NDJSON (numbers or numeric strings, blank lines skipped) into the same cells", async () => {
      const lines = [
        JSON.stringify({ business_id: "n1", category: "retail", segment: "stores", period: "2025-Q4", metric: "refund_rate", value: 0.1 }),
        "",
        JSON.stringify({ business_id: 42, category: "retail", segment: "online", period: "2025-Q4", metric: "refund_rate", value: "0.3" }),
      ];
      const sum = await importObservations(s, Readable.from([Buffer.from(lines.join("\r\n"))]), { format: "ndjson", minSampleSize: 2 });
      expect(sum).toMatchObject({ rows: 2, businesses: 2, cells: 3, periods: 1, belowMinimum: 2 });
      const c = (await s.benchmarks.cells("retail", "all", "2025-Q4", ["refund_rate"])).get("refund_rate")!;
      expect(Array.from(c.sorted)).toEqual([0.1, 0.3]);
      expect(await s.benchmarks.segments("retail")).toEqual(["online", "stores"]);
    });

    it("reads an async iterable of lines and a Web ReadableStream", async () => {
      async function* lines(): AsyncGenerator<string> {
        yield HEADER;
        yield "w1,fintech,neo,2024-Q1,burn_multiple,1.5";
        yield "w2,fintech,neo,2024-Q1,burn_multiple,2.5";
      }
      expect((await importObservations(s, lines(), { format: "csv" })).rows).toBe(2);
      const web = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode(`${HEADER}\nw3,fintech,neo,2024-Q2,burn_m`));
          c.enqueue(new TextEncoder().encode("ultiple,3.5\n"));
          c.close();
        },
      });
      expect((await importObservations(s, web, { format: "csv" })).rows).toBe(1);
      expect(await s.benchmarks.recentPeriods("fintech", "neo", "burn_multiple", "quarterly", 5)).toEqual(["2024-Q1", "2024-Q2"]);
    });

    it("reads quoted CSV fields: commas, quotes and line breaks inside, quoted numbers, any column order", async () => {
      const file = join(dir, `quoted-${name}.csv`);
      writeFileSync(file, ['value,metric,period,segment,category,business_id', '"0.25",gross_margin,2023-Q1,"mid_market","saas","Acme, Inc."', '0.75,gross_margin,2023-Q1,smb,saas,"The ""Quoted"" Co"', '0.5,gross_margin,2023-Q1,smb,saas,"two', 'lines"', '0.1,gross_margin,2023-Q1,smb,saas,'].join("\n"));
      // The last record (line 6, after a record spanning lines 4-5) has an empty business_id.
      await expectImportError(importFile(s, file), 6, /empty business_id/);
      writeFileSync(file, ['value,metric,period,segment,category,business_id', '"0.25",gross_margin,2023-Q1,"mid_market","saas","Acme, Inc."', '0.75,gross_margin,2023-Q1,smb,saas,"The ""Quoted"" Co"', '0.5,gross_margin,2023-Q1,smb,saas,"two', 'lines"'].join("\n"));
      const seen: number[] = [];
      const sum = await importFile(s, file, { onProgress: (rows, bytes, total) => seen.push(rows, bytes === total ? 1 : 0) });
      expect(sum).toMatchObject({ rows: 3, businesses: 3 });
      expect(seen.slice(-2)).toEqual([3, 1]);
      expect((await s.benchmarks.cells("saas", "all", "2023-Q1", ["gross_margin"])).get("gross_margin")!.sampleSize).toBe(3);
    });

    it("a bad row fails the whole import with its line number, and stored data is unchanged", async () => {
      const before = await values(s, "all");
      const bad = csv("b1,saas,smb,2026-Q1,gross_margin,0.1", "b2,saas,smb,2026-Q1,gross_margin,0.2", "b3,saas,smb,2026-Q1,gross_margin,abc");
      await expectImportError(importObservations(s, bad, { format: "csv" }), 4, /"abc" is not a number/);
      expect(await values(s, "all")).toEqual(before);
      for (const [row, message] of [
        ["b1,saas,smb,2026-Q5,gross_margin,0.1", /invalid period "2026-Q5"/],
        ["b1,saas,smb,2026-13,gross_margin,0.1", /invalid period/],
        ["b1,sass,smb,2026-Q1,gross_margin,0.1", /unknown category "sass"/],
        ["b1,saas,smb,2026-Q1,margin,0.1", /unknown metric "margin"/],
        ["b1,saas,all,2026-Q1,gross_margin,0.1", /segment "all" is reserved/],
        ["b1,saas,Big Co,2026-Q1,gross_margin,0.1", /invalid segment "Big Co"/],
        ["b1,saas,smb,2026-Q1,gross_margin,", /value is missing/],
        ["b1,saas,smb,2026-Q1,gross_margin,1e999", /not a finite number/],
        ["b1,saas,smb,2026-Q1,gross_margin,0x10", /not a number/],
        [",saas,smb,2026-Q1,gross_margin,0.1", /empty business_id/],
        ["b1,saas,smb,2026-Q1,gross_margin", /invalid CSV/],
      ] as const) {
        await expectImportError(importObservations(s, csv("ok,saas,smb,2026-Q1,gross_margin,0.3", row), { format: "csv" }), 3, message);
      }
      await expectImportError(importObservations(s, Readable.from(['{"business_id":"x","category":"saas","segment":"smb","period":"2026-Q1","metric":"gross_margin","value":1}\n{oops\n']), { format: "ndjson" }), 2, /invalid JSON/);
      await expectImportError(importObservations(s, Readable.from(["business_id,category,segment,period,value\n"]), { format: "csv" }), 1, /lacks column\(s\) metric/);
      expect(await values(s, "all")).toEqual(before);
    });

    it("a metric the category does not offer is an error naming the line and the metrics offered", async () => {
      await expectImportError(importObservations(s, csv("r1,retail,stores,2026-Q1,gross_margin,0.3", "r1,retail,stores,2026-Q1,churn_rate,0.1"), { format: "csv" }), 3, /metric "churn_rate" is not offered by category "retail" \(offered: gross_margin, .*refund_rate/);
    });

    it("a duplicate (business, category, segment, period, metric) is an error naming both lines; the earliest problem is reported", async () => {
      const before = await values(s, "all");
      await expectImportError(
        importObservations(s, csv("d1,saas,smb,2026-Q1,gross_margin,0.1", "d2,saas,smb,2026-Q1,gross_margin,0.2", "d1,saas,smb,2026-Q1,gross_margin,0.3"), { format: "csv" }),
        4,
        /duplicate of line 2: business "d1" already has gross_margin for saas\/smb\/2026-Q1/,
      );
      await expectImportError(
        importObservations(s, csv("d1,saas,smb,2026-Q1,gross_margin,0.1", "d1,saas,smb,2026-Q1,gross_margin,0.1", "d3,saas,smb,2026-Q1,gross_margin,zzz"), { format: "csv" }),
        3,
        /duplicate of line 2/,
      );
      expect(await values(s, "all")).toEqual(before);
    });

    it("a business in two segments counts once in `all`, with the mean of its values", async () => {
      await importObservations(s, csv("m1,saas,smb,2022-Q1,gross_margin,0.2", "m1,saas,enterprise,2022-Q1,gross_margin,0.6", "m2,saas,smb,2022-Q1,gross_margin,0.1"), { format: "csv" });
      expect(await values(s, "all", "2022-Q1")).toEqual({ values: [0.1, 0.4], n: 2 });
      expect(await values(s, "smb", "2022-Q1")).toEqual({ values: [0.1, 0.2], n: 2 });
    });

    it("re-importing a period replaces it whole (segments that vanished go), other periods stay", async () => {
      await importObservations(s, csv("p1,saas,smb,2021-Q1,gross_margin,0.1", "p2,saas,mid,2021-Q1,churn_rate,0.2", "p3,saas,smb,2021-Q2,gross_margin,0.3"), { format: "csv" });
      expect(await values(s, "mid", "2021-Q1", "churn_rate")).not.toBeNull();
      await importObservations(s, csv("p9,saas,smb,2021-Q1,gross_margin,0.9"), { format: "csv" });
      expect(await values(s, "mid", "2021-Q1", "churn_rate")).toBeNull();
      expect(await values(s, "all", "2021-Q1", "churn_rate")).toBeNull();
      expect(await values(s, "all", "2021-Q1")).toEqual({ values: [0.9], n: 1 });
      expect(await values(s, "all", "2021-Q2")).toEqual({ values: [0.3], n: 1 });
    });
  });
}

importSuite("memory (fallback staging)", async () => ({ s: createMemoryStorage(), dispose: async () => {} }));

let files = 0;
importSuite("sqlite", async () => {
  const s = await openStorage(`sqlite:${join(dir, `import-${++files}.db`)}`);
  await s.migrate();
  return { s, dispose: () => s.close() };
});

if (await pgAvailableForTests("import-observations")) {
  importSuite("postgres", async () => {
    const t = await createTestDatabase();
    const s = await openStorage(t.url);
    await s.migrate();
    return {
      s,
      dispose: async () => {
        await s.close();
        await t.drop();
      },
    };
  });
}
