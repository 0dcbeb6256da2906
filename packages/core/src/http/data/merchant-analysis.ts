/**
 * What the merchant endpoints share: finding a merchant's snapshots (404 `not_found` for an unknown merchant,
 * `data.not_found` for a period it has no snapshot of), and ranking a snapshot's metrics in their cells.
 */
import type { Metric } from "../../data/catalog.ts";
import { METRICS } from "../../data/catalog.ts";
import { parsePeriod } from "../../data/period.ts";
import type { BenchmarkSource, Cell } from "../../data/source.ts";
import { ALL_SEGMENTS } from "../../data/source.ts";
import { ServiceError } from "../../errors/service-error.ts";
import type { MetricComparison } from "../../merchant/compare-metric.ts";
import { compareMetric } from "../../merchant/compare-metric.ts";
import { latestSnapshot, previousSnapshot } from "../../merchant/snapshot-order.ts";
import type { SnapshotRecord, SnapshotStore } from "../../storage/types.ts";
import type { WithheldReason } from "../../privacy/suppression.ts";
import { combinedReason } from "../../privacy/suppression.ts";
import { noData, withheldWhy } from "./cell-lookup.ts";
import { withheldReason } from "./publication.ts";
import { publishedRank } from "./cell-summary.ts";
import type { DataCall } from "./data-endpoint.ts";
import { cellName } from "./data-endpoint.ts";
import type { AppContext } from "../app-options.ts";

/** The storage facets these routes use (the app's storage, seen through them). */
const store = (app: AppContext): SnapshotStore => app.storage;

/** A metric of the snapshot that could not be ranked, and why. */
export interface Unranked {
  readonly metric: Metric;
  readonly value: number;
  /** `no_data`: no cell for the metric in the snapshot's period nor any other; `insufficient_sample`: the cell is withheld (`withheld` says why). */
  readonly reason: "no_data" | "insufficient_sample";
  /** The cell's period, for `insufficient_sample`. */
  readonly benchmarkPeriod: string | null;
  /** Why the cell is withheld, for `insufficient_sample` (its size is never given). */
  readonly withheld: WithheldReason | null;
}

/** A snapshot with its metrics ranked, and the snapshot before it (for trends). */
export interface MerchantAnalysis {
  readonly snapshot: SnapshotRecord;
  readonly previous: SnapshotRecord | null;
  /** Ranked metrics, in catalogue order. */
  readonly ranked: readonly MetricComparison[];
  readonly unranked: readonly Unranked[];
  /** The peers, as sentences name them: "saas (all segments)", "saas/smb". */
  readonly where: string;
}

/** 404 `not_found` for a merchant without snapshots in this account and environment. */
function unknownMerchant(call: DataCall<unknown>, merchantId: string): ServiceError {
  return new ServiceError(404, "not_found", `No merchant ${JSON.stringify(merchantId)} in this account's ${call.dataset} snapshots. Post one with POST /data/v1/merchant/vcfs.`);
}

/** The merchant's snapshots (one per period), refusing an unknown merchant. */
export async function merchantSnapshots(call: DataCall<unknown>, merchantId: string): Promise<SnapshotRecord[]> {
  const all = await store(call.app).merchantSnapshots(call.account.id, call.dataset, merchantId);
  if (all.length === 0) throw unknownMerchant(call, merchantId);
  return all;
}

/** The snapshot of `period` (else the latest) and the one before it, refusing a period without a snapshot. */
function chooseSnapshot(all: readonly SnapshotRecord[], merchantId: string, period: string | undefined): { snapshot: SnapshotRecord; previous: SnapshotRecord | null } {
  const snapshot = period === undefined ? latestSnapshot(all) : (all.find((s) => s.period === period) ?? null);
  if (snapshot === null) {
    throw new ServiceError(404, "data.not_found", `No snapshot of merchant ${JSON.stringify(merchantId)} for ${period}. Its snapshots cover: ${all.map((s) => s.period).join(", ")}.`);
  }
  return { snapshot, previous: previousSnapshot(all, snapshot) };
}

/**
 * Ranks each metric of the snapshot in its category/segment cell of the snapshot's period; a metric without a
 * cell there falls back to the latest period of the same granularity with one. Cells below the publication
 * minimum rank nothing.
 */
export async function rankSnapshot(source: BenchmarkSource, snapshot: SnapshotRecord, minimum: number): Promise<{ ranked: MetricComparison[]; unranked: Unranked[] }> {
  const { category, segment, period } = snapshot;
  const metrics = METRICS.filter((m) => snapshot.metrics[m] !== undefined);
  const granularity = parsePeriod(period)?.granularity ?? "quarterly";
  const same = await source.cells(category, segment, period, metrics);
  const found = await Promise.all(
    metrics.map(async (metric): Promise<{ cell: Cell; period: string } | null> => {
      const cell = same.get(metric);
      if (cell !== undefined) return { cell, period };
      const latest = (await source.recentPeriods(category, segment, metric, granularity, 1))[0];
      if (latest === undefined) return null;
      const fallback = (await source.cells(category, segment, latest, [metric])).get(metric);
      return fallback === undefined ? null : { cell: fallback, period: latest };
    }),
  );
  const reasons = await Promise.all(metrics.map((metric, i) => {
    const hit = found[i];
    return hit === null || hit === undefined ? null : withheldReason(source, category, segment, hit.period, metric, hit.cell, minimum);
  }));
  const ranked: MetricComparison[] = [];
  const unranked: Unranked[] = [];
  metrics.forEach((metric, i) => {
    const value = snapshot.metrics[metric] as number;
    const hit = found[i];
    const reason = reasons[i] ?? null;
    if (hit === null || hit === undefined) unranked.push({ metric, value, reason: "no_data", benchmarkPeriod: null, withheld: null });
    else if (reason !== null) unranked.push({ metric, value, reason: "insufficient_sample", benchmarkPeriod: hit.period, withheld: reason });
    else ranked.push(compareMetric(metric, value, { sorted: hit.cell.sorted, sampleSize: hit.cell.sampleSize, period: hit.period }, publishedRank(hit.cell, value, minimum)));
  });
  return { ranked, unranked };
}

/** The whole analysis of a merchant: its snapshot (of `period`, else the latest), the previous one, and the ranks. */
export async function analyseMerchant(call: DataCall<unknown>, merchantId: string, period: string | undefined): Promise<MerchantAnalysis> {
  const { snapshot, previous } = chooseSnapshot(await merchantSnapshots(call, merchantId), merchantId, period);
  const { ranked, unranked } = await rankSnapshot(call.source, snapshot, call.app.config.data.minSampleSize);
  return { snapshot, previous, ranked, unranked, where: cellName(snapshot.category, snapshot.segment) };
}

/**
 * Refuses an analysis with nothing ranked: 404 `data.insufficient_sample` when cells exist but are too small,
 * else `data.not_found` (listing the category's segments when the snapshot's has no data).
 */
export async function requireRanked(call: DataCall<unknown>, a: MerchantAnalysis): Promise<void> {
  if (a.ranked.length > 0) return;
  const minimum = call.app.config.data.minSampleSize;
  const { snapshot: s } = a;
  const withheld = a.unranked.flatMap((u) => (u.withheld === null ? [] : [u.withheld]));
  if (withheld.length > 0) {
    throw new ServiceError(404, "data.insufficient_sample", `Not enough businesses in ${a.where} to rank any metric of the snapshot: ${withheldWhy(combinedReason(withheld), minimum)}.`);
  }
  if (s.segment !== ALL_SEGMENTS && !(await call.source.segments(s.category)).includes(s.segment)) return noData(call.source, s.category, s.segment, null);
  throw new ServiceError(404, "data.not_found", `No benchmark data for ${a.where} for any metric of the snapshot (${s.period} or any other ${parsePeriod(s.period)?.granularity ?? ""} period).`);
}
