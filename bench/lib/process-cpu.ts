import { spawnSync } from "node:child_process";
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

/** CPU time (user + system, ms) used so far by the given processes; those gone meanwhile count nothing. */
export function cpuMsOfPids(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone meanwhile.
    }
  }
  return ticks * TICK_MS;
}

/**
 * The PostgreSQL backends connected to `database` now (pg_stat_activity, through psql as user postgres on
 * 127.0.0.1), so that a measurement counts its own database's work and not that of whatever else the server
 * is doing (other databases' tests).
 */
export function pgBackendPids(database: string): number[] {
  const r = spawnSync("psql", ["-At", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-c", `SELECT pid FROM pg_stat_activity WHERE datname = '${database.replace(/'/g, "''")}'`], { encoding: "utf8" });
  if (r.status !== 0) return [];
  return r.stdout.split("\n").filter((line) => /^\d+$/.test(line)).map(Number);
}
