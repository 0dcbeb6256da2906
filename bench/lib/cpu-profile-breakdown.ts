// Where a request's CPU goes, from a V8 `.cpuprofile` (node --cpu-prof) of a server under load: samples of a
// time window only (the measured load, not start-up and seeding), by layer, by function (self time) and by
// function including what it calls (total time), each as a share of busy samples and as µs per request
// (share × the server's CPU per request as /proc counted it).

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** The parts of a `.cpuprofile` read here. */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

const LAYERS: [RegExp, string][] = [
  [/\/packages\/adapter-node\/(src|dist)\//, "adapter-node (bridge, CLI, workers' transport)"],
  [/\/packages\/core\/(src|dist)\//, "core (pipeline, memory storage, handlers, workers)"],
  [/\/packages\/storage-kysely\/(src|dist)\//, "storage-kysely"],
  [/\/node_modules\/kysely\//, "kysely"],
  [/\/node_modules\/better-sqlite3\//, "better-sqlite3"],
  [/\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|pgpass|postgres-[a-z]+)\//, "pg driver"],
  [/\/node_modules\/valibot\//, "valibot"],
  [/\/node_modules\/itty-router\//, "itty-router"],
  [/\/node_modules\//, "other libraries"],
  [/^node:/, "node internals (http, net, streams, timers)"],
];

function layerOf(url: string): string | null {
  if (url === "") return null;
  for (const [pattern, name] of LAYERS) if (pattern.test(url)) return name;
  return "other JavaScript";
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  if (functionName.startsWith("(")) return functionName;
  const file = url.replace(/^file:\/\/.*?\/(packages|node_modules)\//, "").replace(/^node:/, "node:");
  return `${functionName || "(anonymous)"} ${file ? `${file}:${lineNumber + 1}` : "(native)"}`;
}

/** The breakdown as Markdown: layers, top functions by self time and by total time. */
export function requestBreakdown(profile: CpuProfile, options: { from?: number; to?: number; requests: number; cpuMicrosPerRequest: number | null; top?: number }): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const layerCache = new Map<number, string>();
  const layerOfNode = (id: number): string => {
    const cached = layerCache.get(id);
    if (cached !== undefined) return cached;
    const node = byId.get(id) as ProfileNode;
    const fn = node.callFrame.functionName;
    let layer: string;
    if (fn === "(garbage collector)") layer = "garbage collector";
    else if (fn === "(program)" || fn === "(root)") layer = "(program): VM, native, event loop";
    else if (fn === "(idle)") layer = "(idle)";
    else {
      const own = layerOf(node.callFrame.url);
      const up = parent.get(id);
      // Native frames (no URL) count toward their JavaScript caller's layer.
      layer = own ?? (up === undefined ? "native" : layerOfNode(up));
    }
    layerCache.set(id, layer);
    return layer;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const layers = new Map<string, number>();
  let busy = 0;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (i === 0) return;
    if (options.from !== undefined && t < options.from) return;
    if (options.to !== undefined && t > options.to) return;
    const node = byId.get(id) as ProfileNode;
    if (node.callFrame.functionName === "(idle)") return;
    busy += dt;
    const layer = layerOfNode(id);
    layers.set(layer, (layers.get(layer) ?? 0) + dt);
    const name = label(node);
    self.set(name, (self.get(name) ?? 0) + dt);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at) as ProfileNode;
      const l = label(n);
      if (l === "(root)" || seen.has(l)) continue;
      seen.add(l);
      total.set(l, (total.get(l) ?? 0) + dt);
    }
  });
  const cpu = options.cpuMicrosPerRequest;
  const row = (name: string, time: number): string =>
    `| ${name.replace(/\|/g, "\\|")} | ${((100 * time) / busy).toFixed(1)}% | ${cpu === null ? "–" : ((cpu * time) / busy).toFixed(2)} |`;
  const top = options.top ?? 25;
  const sorted = (m: Map<string, number>): [string, number][] => [...m].sort((a, b) => b[1] - a[1]);
  const head = (what: string): string => `| ${what} | share of busy samples | ≈ µs per request |\n|---|---:|---:|`;
  return [
    `${(busy / 1000).toFixed(0)} ms of busy samples over ${options.requests.toLocaleString("en")} requests.`,
    `## By layer (native frames count toward their JavaScript caller)\n${head("layer")}\n${sorted(layers).map(([n, v]) => row(n, v)).join("\n")}`,
    `## Top ${top} functions by self time\n${head("function")}\n${sorted(self).slice(0, top).map(([n, v]) => row(n, v)).join("\n")}`,
    `## Top ${top} functions by total time (self + callees)\n${head("function")}\n${sorted(total).filter(([n]) => !n.startsWith("(")).slice(0, top).map(([n, v]) => row(n, v)).join("\n")}`,
  ].join("\n\n");
}
