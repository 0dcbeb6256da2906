// Counting a running process's instructions with valgrind's callgrind, switched on only around the work that is
// measured (the process runs under `valgrind --tool=callgrind --instr-atstart=no`). Instruction counts do not
// depend on what else the machine runs, so they compare code on a busy machine where time cannot.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** valgrind's command line for a process whose dumps go to `dir` (callgrind.out.<pid>.<n>), counting nothing until switched on. */
export function callgrindWrapper(dir: string): string[] {
  return ["valgrind", "--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${join(dir, "callgrind.out.%p")}`];
}

/** Instructions process `pid` executed while `work` ran; the dump is kept as `keepAs` when given. */
export async function instructionsDuring(pid: number, dir: string, work: () => Promise<void>, keepAs?: string): Promise<number> {
  const control = (...args: string[]): void => {
    const r = spawnSync("callgrind_control", [...args, String(pid)], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`callgrind_control ${args.join(" ")} failed: ${r.stderr}`);
  };
  control("-z");
  control("-i", "on");
  await work();
  control("-d");
  control("-i", "off");
  const dumps = readdirSync(dir)
    .filter((f) => f.startsWith(`callgrind.out.${pid}.`))
    .sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop()));
  const last = dumps.at(-1);
  if (last === undefined) throw new Error("no callgrind dump");
  const text = readFileSync(join(dir, last), "utf8");
  if (keepAs !== undefined) writeFileSync(keepAs, text);
  rmSync(join(dir, last));
  const totals = /^totals:\s*(\d+)/m.exec(text);
  if (totals === null) throw new Error(`no totals in ${last}`);
  return Number(totals[1]);
}
