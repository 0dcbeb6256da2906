/** The polling loop shared by the delivery and billing workers: claim work up to a concurrency, handle it concurrently. */

/** The parts a worker supplies. */
export interface WorkerLoopSpec<T> {
  /** Claims up to `limit` items (under a lease, in storage). */
  readonly claim: (limit: number) => Promise<T[]>;
  /** Handles one claimed item; a throw is reported to `onError` and otherwise ignored (the lease will expire). */
  readonly handle: (item: T) => Promise<void>;
  /** Items handled at once, at most. */
  readonly concurrency: number;
  /** Pause between claims when nothing wakes the loop. */
  readonly pollIntervalMs: number;
  readonly onError: (stage: "claim" | "handle", error: unknown) => void;
}

/** A worker's controls. */
export interface WorkerLoop {
  /** Claims what is due now (up to the free concurrency), handles it all, and resolves with how many. */
  tick(): Promise<number>;
  /** Starts the loop: a claim every poll interval, at once on `nudge()`, and whenever an item finishes. */
  start(): void;
  /** Wakes the loop now. */
  nudge(): void;
  /** Stops the loop and waits for the items in flight. */
  stop(): Promise<void>;
}

/** Builds a worker loop; nothing runs until `tick()` or `start()`. */
export function workerLoop<T>(spec: WorkerLoopSpec<T>): WorkerLoop {
  const concurrency = Math.max(1, spec.concurrency);
  const inflight = new Set<Promise<void>>();
  let running = false;
  let loopDone: Promise<void> | null = null;
  let wakeRequested = false;
  let wakeSleeper: (() => void) | null = null;

  function wake(): void {
    wakeRequested = true;
    wakeSleeper?.();
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        wakeSleeper = null;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      wakeSleeper = finish;
    });
  }

  async function claimAndLaunch(): Promise<Promise<void>[]> {
    const free = concurrency - inflight.size;
    if (free <= 0) return [];
    const items = await spec.claim(free);
    return items.map((item) => {
      const p: Promise<void> = spec
        .handle(item)
        .catch((e: unknown) => spec.onError("handle", e))
        .finally(() => {
          inflight.delete(p);
          // A freed slot may let waiting work go now rather than at the next poll.
          if (running) wake();
        });
      inflight.add(p);
      return p;
    });
  }

  async function loop(): Promise<void> {
    while (running) {
      wakeRequested = false;
      try {
        await claimAndLaunch();
      } catch (e) {
        spec.onError("claim", e);
      }
      if (!running) break;
      if (!wakeRequested) await sleep(spec.pollIntervalMs);
    }
  }

  return {
    async tick() {
      const launched = await claimAndLaunch();
      await Promise.all(launched);
      return launched.length;
    },
    start() {
      if (running) return;
      running = true;
      loopDone = loop();
    },
    nudge() {
      wake();
    },
    async stop() {
      running = false;
      wake();
      await loopDone;
      loopDone = null;
      await Promise.allSettled([...inflight]);
    },
  };
}
