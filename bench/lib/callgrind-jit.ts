/**
 * Names for the JIT code in a callgrind dump. Callgrind counts every instruction exactly but knows only the
 * address of V8's generated code ("0x000000000d14d200"); run node with `--perf-basic-prof` and V8 writes
 * /tmp/perf-<pid>.map (start, size, name per code object), which names those addresses. The result: self
 * instructions per function, JavaScript included, independent of what else the machine runs.
 *
 *   npx tsx bench/lib/callgrind-jit.ts <callgrind.out> <perf-PID.map> [requests] [rows]
 */
import { readFileSync } from "node:fs";

interface Range {
  start: number;
  end: number;
  name: string;
}

function readMap(file: string): Range[] {
  const ranges: Range[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (m === null) continue;
    const start = parseInt(m[1] as string, 16);
    ranges.push({ start, end: start + parseInt(m[2] as string, 16), name: m[3] as string });
  }
  // A later entry for the same address (code re-created there) wins.
  ranges.sort((a, b) => a.start - b.start);
  return ranges;
}

function nameAt(ranges: Range[], address: number): string | undefined {
  let lo = 0;
  let hi = ranges.length - 1;
  let found: Range | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = ranges[mid] as Range;
    if (r.start <= address) {
      found = r;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found !== undefined && address < found.end ? found.name : undefined;
}

/** Self instructions per function name in a callgrind dump (compressed names resolved, JIT code named by the map). */
export function selfCosts(dumpFile: string, mapFile: string | null): Map<string, number> {
  const ranges = mapFile === null ? [] : readMap(mapFile);
  const names = new Map<string, string>();
  const costs = new Map<string, number>();
  let current = "";
  let inCall = false;
  const resolve = (spec: string): string => {
    // "(12) name" defines id 12; "(12)" refers to it.
    const m = /^\((\d+)\)(?: (.*))?$/.exec(spec);
    if (m === null) return spec;
    if (m[2] !== undefined) names.set(m[1] as string, m[2]);
    return names.get(m[1] as string) ?? spec;
  };
  const pretty = (name: string): string => {
    const hex = /^0x([0-9a-f]+)$/.exec(name);
    if (hex === null) return name;
    return nameAt(ranges, parseInt(hex[1] as string, 16)) ?? name;
  };
  for (const line of readFileSync(dumpFile, "utf8").split("\n")) {
    if (line.startsWith("fn=")) {
      current = pretty(resolve(line.slice(3)));
      inCall = false;
    } else if (line.startsWith("cfn=")) {
      resolve(line.slice(4));
    } else if (line.startsWith("calls=")) {
      inCall = true;
    } else if (/^[+-]?\d|^\*/.test(line)) {
      // A cost line: position then Ir. The line after `calls=` is the call's inclusive cost, not self.
      if (inCall) {
        inCall = false;
        continue;
      }
      const parts = line.split(" ");
      const ir = Number(parts[1] ?? 0);
      if (Number.isFinite(ir)) costs.set(current, (costs.get(current) ?? 0) + ir);
    }
  }
  return costs;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dump, map, requests = "1", rows = "60"] = process.argv.slice(2);
  if (dump === undefined) throw new Error("usage: callgrind-jit.ts <callgrind.out> [perf-PID.map] [requests] [rows]");
  const costs = selfCosts(dump, map && map !== "-" ? map : null);
  const total = [...costs.values()].reduce((a, b) => a + b, 0);
  const n = Number(requests);
  console.log(`total ${Math.round(total / n).toLocaleString("en")} instructions per request`);
  for (const [name, ir] of [...costs].sort((a, b) => b[1] - a[1]).slice(0, Number(rows))) {
    console.log(`${(ir / n).toFixed(0).padStart(8)}  ${((100 * ir) / total).toFixed(2).padStart(6)}%  ${name}`);
  }
}
