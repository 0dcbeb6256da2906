/** Storage conformance, merchant snapshots (`SnapshotStore`): isolation, listing order and atomic replacement. */
import { describe, expect, it } from "vitest";
import type { Storage } from "../storage/types.ts";
import { account, id, snapshot, storePerBlock, T0 } from "./conformance-fixtures.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";

/** Registers these cases for one implementation under `name`. */
export function snapshotsConformance(name: string, target: ConformanceTarget): void {
  describe(`storage conformance: ${name}`, () => {
    describe("merchant snapshots", () => {
      let s!: Storage;
      storePerBlock(target, (store) => (s = store));

      it("stores a snapshot and reads it back by id, in the listing and in the merchant's snapshots", async () => {
        const a = account();
        const r = snapshot(a.id, { segment: "smb", metrics: { gross_margin: 0.1234567891, revenue_growth: -0.02, customer_ltv: 1e-7, burn_multiple: 123456789.25 } });
        expect(await s.saveSnapshot(r)).toBeNull();
        expect(await s.getSnapshot(a.id, "live", r.id)).toEqual(r);
        expect(await s.listSnapshots(a.id, "live", { limit: 10 })).toEqual([r]);
        expect(await s.merchantSnapshots(a.id, "live", "m-1")).toEqual([r]);
        expect(await s.getSnapshot(a.id, "live", "vcfs_missing")).toBeNull();
      });

      it("isolation: another account or the other environment never sees a snapshot", async () => {
        const a = account();
        const b = account();
        const live = snapshot(a.id);
        const test = snapshot(a.id, { environment: "test", metrics: { gross_margin: 0.2 } });
        await s.saveSnapshot(live);
        // The same merchant and period in the test environment is another slot: nothing is replaced.
        expect(await s.saveSnapshot(test)).toBeNull();
        expect(await s.getSnapshot(b.id, "live", live.id)).toBeNull();
        expect(await s.getSnapshot(a.id, "test", live.id)).toBeNull();
        expect(await s.getSnapshot(a.id, "live", test.id)).toBeNull();
        expect(await s.listSnapshots(b.id, "live", { limit: 10 })).toEqual([]);
        expect(await s.merchantSnapshots(b.id, "live", "m-1")).toEqual([]);
        expect(await s.listSnapshots(a.id, "live", { limit: 10 })).toEqual([live]);
        expect(await s.listSnapshots(a.id, "test", { limit: 10 })).toEqual([test]);
        expect(await s.merchantSnapshots(a.id, "test", "m-1")).toEqual([test]);
      });

      it("lists newest first (createdAt, then id), filters by merchant, honours the limit; merchantSnapshots ascend by period", async () => {
        const a = account();
        const first = snapshot(a.id, { merchantId: "m-a", period: "2026-Q1", createdAt: T0 + 1 });
        const second = snapshot(a.id, { merchantId: "m-b", period: "2026-Q1", createdAt: T0 + 2 });
        const third = snapshot(a.id, { merchantId: "m-a", period: "2025-Q4", createdAt: T0 + 3 });
        const tieLow = snapshot(a.id, { merchantId: "m-a", period: "2026-Q2", createdAt: T0 + 3 });
        for (const r of [third, first, tieLow, second]) await s.saveSnapshot(r);
        // `third` and `tieLow` share a createdAt: the larger id (the later one minted) comes first.
        expect((await s.listSnapshots(a.id, "live", { limit: 10 })).map((r) => r.id)).toEqual([tieLow.id, third.id, second.id, first.id]);
        expect((await s.listSnapshots(a.id, "live", { limit: 2 })).map((r) => r.id)).toEqual([tieLow.id, third.id]);
        expect((await s.listSnapshots(a.id, "live", { merchantId: "m-a", limit: 10 })).map((r) => r.id)).toEqual([tieLow.id, third.id, first.id]);
        expect((await s.listSnapshots(a.id, "live", { merchantId: "m-none", limit: 10 }))).toEqual([]);
        expect((await s.merchantSnapshots(a.id, "live", "m-a")).map((r) => r.period)).toEqual(["2025-Q4", "2026-Q1", "2026-Q2"]);
      });

      it("replacement: saving the same merchant and period replaces the old snapshot (new id) and reports it", async () => {
        const a = account();
        const old = snapshot(a.id, { merchantId: "m-r", period: "2026-Q2", createdAt: T0 });
        const other = snapshot(a.id, { merchantId: "m-r", period: "2026-Q1", createdAt: T0 });
        await s.saveSnapshot(old);
        await s.saveSnapshot(other);
        const next = snapshot(a.id, { merchantId: "m-r", period: "2026-Q2", category: "retail", segment: "omnichannel", metrics: { refund_rate: 0.05 }, createdAt: T0 + 10 });
        expect(await s.saveSnapshot(next)).toEqual(old);
        expect(await s.getSnapshot(a.id, "live", old.id)).toBeNull();
        expect(await s.getSnapshot(a.id, "live", next.id)).toEqual(next);
        expect((await s.merchantSnapshots(a.id, "live", "m-r")).map((r) => r.id)).toEqual([other.id, next.id]);
        expect((await s.listSnapshots(a.id, "live", { merchantId: "m-r", limit: 10 })).map((r) => r.id)).toEqual([next.id, other.id]);
      });

      it("replacement is atomic: 12 concurrent saves of one period leave one snapshot, each save but one replacing exactly one", async () => {
        const a = account();
        const saves = Array.from({ length: 12 }, (_, i) => snapshot(a.id, { merchantId: "m-c", period: "2026-05", createdAt: T0 + i }));
        const replaced = await Promise.all(saves.map((r) => s.saveSnapshot(r)));
        const left = await s.merchantSnapshots(a.id, "live", "m-c");
        expect(left).toHaveLength(1);
        const replacedIds = replaced.filter((r) => r !== null && r !== "deleted").map((r) => (r as { id: string }).id);
        expect(replacedIds).toHaveLength(11);
        // Every save except the survivor was replaced exactly once.
        expect(new Set([...replacedIds, left[0]!.id]).size).toBe(12);
      });
    });
  });
}
