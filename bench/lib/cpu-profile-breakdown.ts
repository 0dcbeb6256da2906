// Where a request's CPU goes, from a V8 `.cpuprofile` (node --cpu-prof) of a server under load: samples of a
// time window only (the measured load, not start-up and seeding), by step of the request (bridge, router,
// auth, admission, handler, serialisation), by package, by function (self time) and by function including
// what it calls (total time), each as a share of busy samples and as µs per request (share × the server's CPU
// per request as /proc counted it). Frames in a package's bundled dist/ are traced back to their source file
// through the bundle's source map, so the steps are told apart though one bundle holds them all.
import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber?: number };
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
  [/\/packages\/(adapter-node|cli)\/(src|dist)\//, "adapter-node and the CLI (bridge, wiring, workers' transport)"],
  [/\/packages\/core\/(src|dist)\//, "core (pipeline, memory storage, handlers, workers)"],
  [/\/packages\/storage-kysely\/(src|dist)\//, "storage-kysely"],
  [/\/node_modules\/kysely\//, "kysely"],
  [/\/node_modules\/better-sqlite3(-13)?\//, "better-sqlite3"],
  [/\/node_modules\/(fastify|@fastify\/[^/]+|find-my-way|avvio|fast-json-stringify|toad-cache|ajv)\//, "fastify and its plugins"],
  [/\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|pgpass|postgres-[a-z]+)\//, "pg driver"],
  [/\/node_modules\/valibot\//, "valibot"],
  [/\/node_modules\/itty-router\//, "itty-router"],
  [/\/node_modules\//, "other libraries"],
  [/^node:/, "node internals (http, net, streams, timers)"],
];

// Steps of the request, matched on the source file (after the source map): first match wins. The peer's
// libraries are sorted into the same steps.
const STEPS: [RegExp, string][] = [
  [/^node:internal\/crypto|\/adapter-node\/src\/hash-secret-node\.ts|\/core\/src\/keys\/|\/core\/src\/http\/data\/(key-checks|lookup-cache)\.ts|\/@noble\//, "auth: the key's hash and lookup"],
  [/\/adapter-node\/src\/bridge-(response|write|headers)\.ts|\/core\/src\/http\/(reply|request-id)\.ts|\/core\/src\/http\/data\/round-output\.ts|\/fast-json-stringify\//, "serialisation: the answer, its headers, the write"],
  // undici's Request and Response are what the bridge builds (Node's own code, but the bridge's cost).
  [/\/adapter-node\/src\/|^node:internal\/deps\/undici\//, "bridge: node:http to Request and back"],
  [/\/itty-router\/|\/core\/src\/http\/(base-router|route|create-app|request-url|fail-closed-storage|access-log|route-metrics|no-route)\.ts|\/find-my-way\//, "router"],
  [/\/core\/src\/http\/data\/data-pipeline\.ts/, "pipeline: the checks around the admission"],
  [/\/core\/src\/(storage|rate-limit|quota|billing)\/|\/storage-kysely\/(src|dist)\/|\/better-sqlite3(-13)?\/|\/(pg|pg-protocol|pg-pool|pg-types)\/|\/kysely\/|\/@fastify\/rate-limit\/|\/toad-cache\//, "admission: limits in the store"],
  [/\/core\/src\/|\/valibot\/|\/ajv\/|\/@fastify\/ajv-compiler\/|\/bench\/lib\/target-peer\.ts/, "handler: query, cell, rank, sentence"],
  [/\/fastify\/|\/avvio\/|\/@fastify\//, "framework: Fastify's request lifecycle"],
  [/^node:/, "node:http, net, streams (the floor's work)"],
];

const maps = new Map<string, { map: SourceMap; dir: string } | null>();

/** The source file a bundled frame came from (through `<file>.map`), or its URL when there is no map. */
function sourceOf(url: string, line: number, column: number): string {
  if (!url.startsWith("file://") || !url.includes("/dist/")) return url;
  const file = fileURLToPath(url);
  let entry = maps.get(file);
  if (entry === undefined) {
    entry = existsSync(`${file}.map`) ? { map: new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8"))), dir: dirname(file) } : null;
    maps.set(file, entry);
  }
  if (entry === null) return url;
  const found = entry.map.findEntry(line, column) as { originalSource?: string };
  if (found.originalSource === undefined) return url;
  return found.originalSource.startsWith("file://") ? fileURLToPath(found.originalSource) : resolve(entry.dir, found.originalSource);
}

function stepOf(source: string): string | null {
  if (source === "") return null;
  for (const [pattern, name] of STEPS) if (pattern.test(source)) return name;
  return "other JavaScript";
}

function layerOf(url: string): string | null {
  if (url === "") return null;
  for (const [pattern, name] of LAYERS) if (pattern.test(url)) return name;
  return "other JavaScript";
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber, columnNumber } = node.callFrame;
  if (functionName.startsWith("(")) return functionName;
  const source = sourceOf(url, lineNumber, columnNumber ?? 0);
  const file = source === url ? url.replace(/^file:\/\/.*?\/(packages|node_modules)\//, "") : source.replace(/^.*?\/(packages|node_modules|bench)\//, "");
  return `${functionName || "(anonymous)"} ${file ? (source === url ? `${file}:${lineNumber + 1}` : file) : "(native)"}`;
}

/** The breakdown as Markdown: layers, top functions by self time and by total time. */
export function requestBreakdown(profile: CpuProfile, options: { from?: number; to?: number; requests: number; cpuMicrosPerRequest: number | null; top?: number }): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** Sorts each profile node into a group by `own` (null: no URL), native frames into their JavaScript caller's. */
  const grouping = (own: (frame: ProfileNode["callFrame"]) => string | null): ((id: number) => string) => {
    const cache = new Map<number, string>();
    const groupOf = (id: number): string => {
      const cached = cache.get(id);
      if (cached !== undefined) return cached;
      const node = byId.get(id) as ProfileNode;
      const fn = node.callFrame.functionName;
      let group: string;
      if (fn === "(garbage collector)") group = "garbage collector";
      else if (fn === "(program)" || fn === "(root)") group = "(program): VM, native, event loop";
      else {
        const up = parent.get(id);
        group = own(node.callFrame) ?? (up === undefined ? "native" : groupOf(up));
      }
      cache.set(id, group);
      return group;
    };
    return groupOf;
  };
  const layerOfNode = grouping((frame) => layerOf(frame.url));
  const stepOfNode = grouping((frame) => stepOf(frame.url === "" ? "" : sourceOf(frame.url, frame.lineNumber, frame.columnNumber ?? 0)));
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const layers = new Map<string, number>();
  const steps = new Map<string, number>();
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
    const step = stepOfNode(id);
    steps.set(step, (steps.get(step) ?? 0) + dt);
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
    `## By step of the request (native frames count toward their JavaScript caller)\n${head("step")}\n${sorted(steps).map(([n, v]) => row(n, v)).join("\n")}`,
    `## By package\n${head("package")}\n${sorted(layers).map(([n, v]) => row(n, v)).join("\n")}`,
    `## Top ${top} functions by self time\n${head("function")}\n${sorted(self).slice(0, top).map(([n, v]) => row(n, v)).join("\n")}`,
    `## Top ${top} functions by total time (self + callees)\n${head("function")}\n${sorted(total).filter(([n]) => !n.startsWith("(")).slice(0, top).map(([n, v]) => row(n, v)).join("\n")}`,
  ].join("\n\n");
}
