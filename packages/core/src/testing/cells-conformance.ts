/** Storage conformance, benchmark cells (`CellStore`): publishing and replacing imported data. */
import { describe, expect, it } from "vitest";
import type { Storage } from "../storage/types.ts";
import type { Cell } from "../data/source.ts";
import { storePerBlock } from "./conformance-fixtures.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";

function cell(values: number[]): Cell {
  const sorted = Float64Array.from(values).sort();
  return { sorted, sampleSize: values.length };
}

/** Registers these cases for one implementation under `name`. */
export function cellsConformance(name: string, target: ConformanceTarget): void {
  describe(`storage conformance: ${name}`, () => {
    describe("benchmark cells", () => {
      let s!: Storage;
      storePerBlock(target, (store) => (s = store));

      it("publishes cells, answers periods and segments, and an import replaces a (category, period) whole", async () => {
        await s.replaceCells(
          [
            { category: "saas", segment: "all", period: "2026-Q1", metric: "gross_margin", cell: cell([0.5, 0.7, 0.6]) },
            { category: "saas", segment: "smb", period: "2026-Q1", metric: "gross_margin", cell: cell([0.5, 0.7]) },
            { category: "saas", segment: "all", period: "2026-Q2", metric: "gross_margin", cell: cell([0.8, 0.9]) },
            { category: "saas", segment: "all", period: "2026-Q2", metric: "churn_rate", cell: cell([0.04]) },
            { category: "saas", segment: "all", period: "2026-05", metric: "churn_rate", cell: cell([0.05, 0.03]) },
          ],
          [],
        );
        const b = s.benchmarks;
        expect(await b.latestPeriod("saas", "all", "quarterly")).toBe("2026-Q2");
        expect(await b.latestPeriod("saas", "all", "monthly")).toBe("2026-05");
        expect(await b.latestPeriod("retail", "all", "quarterly")).toBeNull();
        expect(await b.recentPeriods("saas", "all", "gross_margin", "quarterly", 4)).toEqual(["2026-Q1", "2026-Q2"]);
        expect(await b.recentPeriods("saas", "all", "gross_margin", "quarterly", 1)).toEqual(["2026-Q2"]);
        expect(await b.segments("saas")).toEqual(["smb"]);
        const got = await b.cells("saas", "all", "2026-Q1", ["gross_margin", "churn_rate"]);
        expect([...got.keys()]).toEqual(["gross_margin"]);
        expect(Array.from(got.get("gross_margin")!.sorted)).toEqual([0.5, 0.6, 0.7]);
        expect(got.get("gross_margin")!.sampleSize).toBe(3);
        // It names the pairs that held cells before (2026-Q1), not those that were empty (2025-Q4).
        const held = await s.replaceCells(
          [{ category: "saas", segment: "all", period: "2026-Q1", metric: "churn_rate", cell: cell([0.1]) }],
          [
            { category: "saas", period: "2025-Q4" },
            { category: "saas", period: "2026-Q1" },
          ],
        );
        expect(held).toEqual([{ category: "saas", period: "2026-Q1" }]);
        const replaced = await b.cells("saas", "all", "2026-Q1", ["gross_margin", "churn_rate"]);
        expect([...replaced.keys()]).toEqual(["churn_rate"]);
        expect((await b.cells("saas", "smb", "2026-Q1", ["gross_margin"])).size).toBe(0);
        expect(await b.segments("saas")).toEqual([]);
        expect((await b.cells("saas", "all", "2026-Q2", ["gross_margin"])).size).toBe(1);
      });

      it("keeps a cell's business ordinals (sample_size of several metrics counts distinct businesses), and none for a cell given none", async () => {
        const big = Uint32Array.from([0, 7, 65_536, 4_000_000_000]);
        await s.replaceCells(
          [
            { category: "retail", segment: "all", period: "2026-Q1", metric: "gross_margin", cell: { ...cell([0.1, 0.2, 0.3, 0.4]), businesses: big } },
            { category: "retail", segment: "all", period: "2026-Q1", metric: "refund_rate", cell: cell([0.01]) },
          ],
          [],
        );
        const got = await s.benchmarks.cells("retail", "all", "2026-Q1", ["gross_margin", "refund_rate"]);
        expect(Array.from(got.get("gross_margin")!.businesses ?? [])).toEqual([0, 7, 65_536, 4_000_000_000]);
        expect(got.get("refund_rate")!.businesses).toBeUndefined();
      });
    });
  });
}
