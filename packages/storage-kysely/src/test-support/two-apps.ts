// Two app instances over the two handles of one store (twoHandleStores), with a published saas cell for data
// requests to answer: what the HTTP tests of "a change on one instance holds on the other" start from.
import type { Storage } from "@benchdata/core";
import type { AppOptions } from "@benchdata/core/http";
import { createApp } from "@benchdata/core/http";

/** The sandbox host (test keys) and the live host. */
export const SANDBOX = "http://sandbox.benchdata.test";
export const LIVE = "http://api.benchdata.test";
/** Data requests the published cell answers. */
export const BENCH = "/data/v1/benchmarks?category=saas";
export const PERCENTILE = "/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5&period=2026-Q3";

/** Two apps over one store, and how to close its handles. */
export interface TwoApps {
  readonly handles: [Storage, Storage];
  readonly a: ReturnType<typeof createApp>;
  readonly b: ReturnType<typeof createApp>;
  close(): Promise<void>;
}

/** Opens the store's two handles, publishes saas gross_margin for 2026-Q3 (40 businesses), and makes an app on each. */
export async function twoApps(open: () => Promise<[Storage, Storage]>, options: Omit<AppOptions, "storage">): Promise<TwoApps> {
  const handles = await open();
  const values = Array.from({ length: 40 }, (_, i) => 0.3 + i / 100);
  await handles[0].replaceCells([{ category: "saas", segment: "all", period: "2026-Q3", metric: "gross_margin", cell: { sorted: Float64Array.from(values), sampleSize: 40 } }], []);
  return {
    handles,
    a: createApp({ ...options, storage: handles[0] }),
    b: createApp({ ...options, storage: handles[1] }),
    async close() {
      await handles[0].close();
      if (handles[1] !== handles[0]) await handles[1].close();
    },
  };
}
