// The load generator in a process of its own (forked once by the CLI bench, then driven over IPC), so its
// CPU is not the orchestrator's and the orchestrator's bookkeeping never stalls a connection. Each message
// `{ id, load }` runs autocannon with `load` (LoadOptions) and answers `{ id, result, cpuMicros }`, where
// cpuMicros is this process's user + system CPU over the run.
import { type LoadOptions, measureLoad } from "./measure-load.ts";

interface Command {
  id: number;
  load: LoadOptions;
}

process.on("message", (message: Command) => {
  const before = process.cpuUsage();
  measureLoad(message.load).then(
    (result) => {
      const cpu = process.cpuUsage(before);
      process.send?.({ id: message.id, result, cpuMicros: cpu.user + cpu.system });
    },
    (error: unknown) => process.send?.({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
process.send?.({ ready: true });
