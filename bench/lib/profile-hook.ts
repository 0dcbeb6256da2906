// Opt-in CPU profiling of a Node target under load: with BENCH_PROFILE_FILE set, SIGUSR2 starts V8's
// sampling profiler (after the warm-up, so start-up and JIT warm-up stay out) and `saveProfile()`, called
// on the way out, writes the .cpuprofile there. Without the variable both are no-ops.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const file = process.env.BENCH_PROFILE_FILE;
let session: Session | null = null;

function post<T>(method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    (session as Session).post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as T)));
  });
}

if (file !== undefined && file !== "") {
  session = new Session();
  session.connect();
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 200 });
  process.on("SIGUSR2", () => {
    void post("Profiler.start");
  });
}

/** Stops the profiler (if started) and writes its profile to BENCH_PROFILE_FILE. */
export async function saveProfile(): Promise<void> {
  if (session === null || file === undefined) return;
  try {
    const { profile } = await post<{ profile: unknown }>("Profiler.stop");
    writeFileSync(file, JSON.stringify(profile));
  } catch {
    // Never started: nothing to write.
  }
}
