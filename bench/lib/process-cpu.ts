import { readdirSync, readFileSync } from "node:fs";

// Linux reports CPU time in clock ticks, 100 per second nearly everywhere.
const TICK_MS = 10;

/**
 * CPU time (user + system, ms) used so far by every process whose command name is `name` (e.g. the
 * PostgreSQL server and its backends); null where /proc is unavailable. A process that exits between two
 * readings takes its time with it, so read while the processes of interest are alive.
 */
export function cpuMsOfCommand(name: string): number | null {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  let ticks = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const open = stat.indexOf("(");
      const close = stat.lastIndexOf(")");
      if (stat.slice(open + 1, close) !== name) continue;
      const fields = stat.slice(close + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process exited meanwhile.
    }
  }
  return ticks * TICK_MS;
}

/** The 1-, 5- and 15-minute load averages, or null off Linux. */
export function loadAverage(): [number, number, number] | null {
  try {
    const [a, b, c] = readFileSync("/proc/loadavg", "utf8").split(" ").map(Number);
    return [a as number, b as number, c as number];
  } catch {
    return null;
  }
}
