// Where a V8 CPU profile's time went, by layer: node internals, the adapter's bridge, core's http layer,
// storage, drivers, libraries, GC. Native frames (no URL: V8 builtins, C++ bindings such as
// better-sqlite3's statement calls) count toward the nearest JavaScript caller's layer, so "SQLite" time
// lands on the storage code that asked for it.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** The parts of a `.cpuprofile` (Chrome DevTools format) read here. */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Share of busy CPU time per layer, largest first. */
export interface BucketShare {
  bucket: string;
  ms: number;
  share: number;
}

const RULES: [RegExp, string][] = [
  [/\/packages\/adapter-node\/src\//, "adapter-node bridge"],
  [/\/packages\/adapter-bun\/src\//, "adapter-bun"],
  [/\/packages\/core\/src\/http\//, "core http (pipeline, handlers)"],
  [/\/packages\/core\/src\/storage\//, "core memory storage"],
  [/\/packages\/core\/src\/(stats|data)\//, "core stats + synthetic data"],
  [/\/packages\/core\/src\//, "core (keys, limits, ids, …)"],
  [/\/packages\/storage-kysely\/src\//, "storage-kysely"],
  [/\/node_modules\/kysely\//, "kysely"],
  [/\/node_modules\/better-sqlite3\//, "better-sqlite3"],
  [/\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|pgpass|postgres-[a-z]+)\//, "pg driver"],
  [/\/node_modules\/valibot\//, "valibot"],
  [/\/node_modules\/@noble\//, "@noble/hashes"],
  [/\/node_modules\/itty-router\//, "itty-router"],
  [/\/node_modules\/(tsx|esbuild|get-tsconfig)\//, "tsx loader"],
  [/\/bench\//, "bench target script"],
  [/^node:/, "node internals (http, net, streams)"],
];

function bucketOf(url: string): string | null {
  if (url === "") return null;
  for (const [pattern, name] of RULES) if (pattern.test(url)) return name;
  return "other JavaScript";
}

/** Self time per layer (idle excluded), from a parsed `.cpuprofile`. */
export function profileBuckets(profile: CpuProfile): BucketShare[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const bucketCache = new Map<number, string>();
  const bucketOfNode = (id: number): string => {
    const cached = bucketCache.get(id);
    if (cached !== undefined) return cached;
    const node = byId.get(id) as ProfileNode;
    const fn = node.callFrame.functionName;
    let bucket: string;
    if (fn === "(garbage collector)") bucket = "garbage collector";
    else if (fn === "(program)") bucket = "(program): VM, native, event loop";
    else if (fn === "(idle)") bucket = "(idle)";
    else if (fn === "(root)") bucket = "(program): VM, native, event loop";
    else {
      const own = bucketOf(node.callFrame.url);
      const up = parent.get(id);
      bucket = own ?? (up === undefined ? "native (no JS caller)" : bucketOfNode(up));
      if (bucket === "(program): VM, native, event loop" && own === null) bucket = "native (no JS caller)";
    }
    bucketCache.set(id, bucket);
    return bucket;
  };
  const ms = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    // The first sample's delta runs from the start request to the first tick: not time spent in that frame.
    if (i === 0) return;
    const bucket = bucketOfNode(id);
    ms.set(bucket, (ms.get(bucket) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  ms.delete("(idle)");
  const total = [...ms.values()].reduce((a, b) => a + b, 0);
  return [...ms]
    .map(([bucket, t]) => ({ bucket, ms: t, share: total === 0 ? 0 : t / total }))
    .sort((a, b) => b.ms - a.ms);
}

/** The heaviest functions by self time (native frames folded into their caller), for the report's detail. */
export function topFunctions(profile: CpuProfile, count: number): { name: string; share: number }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (id: number): string => {
    const node = byId.get(id) as ProfileNode;
    const { functionName, url } = node.callFrame;
    if (functionName.startsWith("(")) return functionName;
    // No line numbers: under tsx they point into the transformed module, not the source.
    const file = url.replace(/^file:\/\/.*?\/(packages|node_modules|bench)\//, "$1/");
    return `${functionName || "(anonymous)"} ${file || "(native)"}`;
  };
  const ms = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    if (i === 0) return;
    const node = byId.get(id) as ProfileNode;
    if (node.callFrame.functionName === "(idle)") return;
    const t = (profile.timeDeltas[i] ?? 0) / 1000;
    total += t;
    const name = label(id);
    ms.set(name, (ms.get(name) ?? 0) + t);
  });
  return [...ms]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, t]) => ({ name, share: total === 0 ? 0 : t / total }));
}
