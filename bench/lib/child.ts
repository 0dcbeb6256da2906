// Runs one in-process benchmark in a fresh process (its own heap: peak RSS and GC are its own, and the
// load generator's garbage is not on its clock) and hands the result back as the last stdout line,
// `BENCH_RESULT <json>`. Progress goes to stderr.
//
//   node --import tsx bench/lib/child.ts <stats|webhooks|import|query|pipeline|hmac>   options as JSON in BENCH_CHILD_OPTIONS
const bench = process.argv[2];
const options = JSON.parse(process.env.BENCH_CHILD_OPTIONS ?? "{}") as Record<string, unknown>;
const log = (line: string): void => void process.stderr.write(`  ${line}\n`);

async function run(): Promise<unknown> {
  switch (bench) {
    case "stats":
      return (await import("../stats.bench.ts")).runStatsBench();
    case "webhooks":
      return (await import("../webhooks.bench.ts")).runWebhooksBench(options);
    case "import":
      return (await import("../../packages/storage-kysely/bench/import.bench.ts")).runImportBench({ ...options, log });
    case "query":
      return (await import("../query.bench.ts")).runQueryBench({ ...options, log });
    case "pipeline":
      return (await import("../pipeline.bench.ts")).runPipelineBench(options);
    case "hmac":
      return (await import("../hmac.bench.ts")).runHmacBench(options);
    default:
      throw new Error(`unknown benchmark ${String(bench)}`);
  }
}

export {};

const result = await run();
process.stdout.write(`\nBENCH_RESULT ${JSON.stringify(result)}\n`);
// Pools, timers or workers a benchmark leaves behind must not keep the process alive.
process.exit(0);
