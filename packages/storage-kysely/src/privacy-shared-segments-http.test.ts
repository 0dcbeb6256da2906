/**
 * Privacy with businesses reported under several segments (issue 14; found by the third review), through HTTP on
 * every store. Guarding `all − Σ published segments` is not enough then: two published segments that share
 * businesses (s2 = s1 plus a few, the shared ones reporting the same value under both) subtract to the few,
 * s2 − s1. Published segments of a group never share a business now (decideSuppression's `share`).
 */
import { describe, expect, it, onTestFinished } from "vitest";
import type { Storage } from "@benchdata/core";
import { importObservations } from "./import/import-observations.ts";
import { attackerOf, privacyStores } from "./test-support/privacy-attacker.ts";

const PERIOD = "2026-Q3";

async function importRows(storage: Storage, rows: { id: string; segment: string; value: number }[]): Promise<void> {
  const lines = rows.map((r) => JSON.stringify({ business_id: r.id, category: "ecommerce", segment: r.segment, period: PERIOD, metric: "gross_margin", value: r.value }) + "\n");
  await importObservations(storage, lines, { format: "ndjson" });
}

const stores = await privacyStores("privacy-shared");

for (const [name, open] of Object.entries(stores)) {
  describe(`segments that share businesses: ${name}`, () => {
    it("s1 (30) and s2 (the same 30 with the same values, plus Y): s2 − s1 gives Y's exact value", async () => {
      const storage = await open();
      await storage.migrate?.();
      onTestFinished(() => storage.close?.());
      const rows: { id: string; segment: string; value: number }[] = [];
      // 100 businesses in segment "a" (withheld first by name order, which makes the room for s1 and s2).
      for (let i = 0; i < 100; i++) rows.push({ id: `a${i}`, segment: "a", value: 0.2 + (i % 50) * 0.004 });
      // 30 businesses reported under both s1 and s2 with the same value; Y (0.4321) only under s2.
      for (let i = 0; i < 30; i++) {
        const value = 0.3 + i * 0.005;
        rows.push({ id: `b${i}`, segment: "s1", value }, { id: `b${i}`, segment: "s2", value });
      }
      const y = 0.4321;
      rows.push({ id: "Y", segment: "s2", value: y });
      await importRows(storage, rows);
      const api = await attackerOf(storage);
      const none = { sample_size: NaN, stats: { mean: NaN, min: NaN, max: NaN }, histogram: [] };
      const dist = async (s: string) => {
        const r = await api.get(`/benchmarks/distribution?category=ecommerce&metric=gross_margin&buckets=10&period=${PERIOD}${s === "all" ? "" : `&segment=${s}`}`);
        return r.status === 200 ? r.body : none;
      };
      const s1 = await dist("s1");
      const s2 = await dist("s2");
      const bd = (await api.get(`/segments/breakdown?category=ecommerce&metric=gross_margin&period=${PERIOD}`)).body;
      // Published before the fix: all (131), s1 (30) and s2 (31), a complementary. Now s2 shares with s1 (earlier by
      // name) and is withheld; a too, since all − s1 leaves only Y.
      expect(bd.segments.map((r: { segment: string; withheld_reason: string | null }) => [r.segment, r.withheld_reason])).toEqual([["all", null], ["a", "complementary"], ["s1", null], ["s2", "complementary"]]);
      // The attack: a group of s2.n − s1.n businesses, and its sum.
      const n = s2.sample_size - s1.sample_size;
      const sum = s2.stats.mean * s2.sample_size - s1.stats.mean * s1.sample_size;
      // Nothing of a group of 1..29 may be derivable.
      expect(n > 0 && n < 30 && Math.abs(sum / n - y) < 1e-4).toBe(false);
    });

    it("a roll-up segment: s3 = s1 ∪ s2 ∪ {Y} (same values), all published: s3 − s1 − s2 gives Y's exact value", async () => {
      const storage = await open();
      await storage.migrate?.();
      onTestFinished(() => storage.close?.());
      const rows: { id: string; segment: string; value: number }[] = [];
      for (let i = 0; i < 200; i++) rows.push({ id: `a${i}`, segment: "a", value: 0.2 + (i % 50) * 0.004 });
      for (let i = 0; i < 30; i++) {
        const v1 = 0.3 + i * 0.005;
        const v2 = 0.31 + i * 0.004;
        rows.push({ id: `p${i}`, segment: "s1", value: v1 }, { id: `p${i}`, segment: "s3", value: v1 });
        rows.push({ id: `q${i}`, segment: "s2", value: v2 }, { id: `q${i}`, segment: "s3", value: v2 });
      }
      const y = 0.2987;
      rows.push({ id: "Y", segment: "s3", value: y });
      await importRows(storage, rows);
      const api = await attackerOf(storage);
      const bd = (await api.get(`/segments/breakdown?category=ecommerce&metric=gross_margin&period=${PERIOD}`)).body;
      const shown = new Map<string, { n: number; mean: number }>();
      for (const r of bd.segments) if (!r.withheld) shown.set(r.segment, { n: r.sample_size, mean: r.percentiles.mean });
      const s = (k: string) => shown.get(k) ?? { n: NaN, mean: NaN };
      const n = s("s3").n - s("s1").n - s("s2").n;
      const sum = s("s3").mean * s("s3").n - s("s1").mean * s("s1").n - s("s2").mean * s("s2").n;
      expect(n > 0 && n < 30 && Math.abs(sum / n - y) < 1e-4).toBe(false);
    });

    it("a withheld cell: b (5, below_minimum) and s2 = s1 ∪ b (same values): s2 − s1 gives b's exact size and mean", async () => {
      const storage = await open();
      await storage.migrate?.();
      onTestFinished(() => storage.close?.());
      const rows: { id: string; segment: string; value: number }[] = [];
      for (let i = 0; i < 200; i++) rows.push({ id: `a${i}`, segment: "a", value: 0.2 + (i % 50) * 0.004 });
      const small = [0.11, 0.52, 0.27, 0.34, 0.45];
      small.forEach((value, i) => rows.push({ id: `b${i}`, segment: "b", value }, { id: `b${i}`, segment: "s2", value }));
      for (let i = 0; i < 30; i++) {
        const value = 0.3 + i * 0.005;
        rows.push({ id: `p${i}`, segment: "s1", value }, { id: `p${i}`, segment: "s2", value });
      }
      await importRows(storage, rows);
      const api = await attackerOf(storage);
      const bd = (await api.get(`/segments/breakdown?category=ecommerce&metric=gross_margin&period=${PERIOD}`)).body;
      const shown = new Map<string, { n: number; mean: number }>();
      for (const r of bd.segments) shown.set(r.segment, r.withheld ? r.withheld_reason : { n: r.sample_size, mean: r.percentiles.mean });
      const s = (k: string) => (shown.get(k) as { n: number; mean: number } | undefined) ?? { n: NaN, mean: NaN };
      const n = s("s2").n - s("s1").n;
      const mean = (s("s2").mean * s("s2").n - s("s1").mean * s("s1").n) / n;
      const truth = small.reduce((a, b) => a + b, 0) / small.length;
      expect(n > 0 && n < 30 && Math.abs(mean - truth) < 1e-4).toBe(false);
    });
  });
}
