/**
 * Group commit for the hot path: calls made while the event loop is busy with other requests are run as one
 * batch (one SQLite transaction, one PostgreSQL round trip), so the fixed cost of a transaction and a commit
 * is shared by every request in it. A batch starts at the end of the current turn of the event loop
 * (`setImmediate`), after the requests that arrived in the same turn have joined it; while `concurrency`
 * batches are out, new calls queue and leave together as the next. When calls are rare each is a batch of one,
 * so an idle server adds no wait.
 */

/** How a batcher groups calls. */
export interface BatcherOptions {
  /** The most calls in one batch. */
  readonly maxBatch: number;
  /** The most batches out at once. */
  readonly concurrency: number;
}

interface Pending<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * A function that queues one call and resolves with its result. `run` gets the calls of a batch in order and
 * returns one result per call, in the same order; an `Error` in its place rejects that call alone, and a
 * throw or rejection of `run` rejects every call of the batch.
 */
export function batcher<I, O>(run: (items: readonly I[]) => readonly (O | Error)[] | Promise<readonly (O | Error)[]>, options: BatcherOptions): (item: I) => Promise<O> {
  let queue: Pending<I, O>[] = [];
  let out = 0;
  let scheduled = false;

  const schedule = (): void => {
    if (scheduled || queue.length === 0 || out >= options.concurrency) return;
    scheduled = true;
    setImmediate(flush);
  };

  function flush(): void {
    scheduled = false;
    while (queue.length > 0 && out < options.concurrency) {
      let batch: Pending<I, O>[];
      if (queue.length <= options.maxBatch) {
        batch = queue;
        queue = [];
      } else batch = queue.splice(0, options.maxBatch);
      out++;
      void send(batch);
    }
  }

  async function send(batch: Pending<I, O>[]): Promise<void> {
    try {
      const results = await run(batch.map((p) => p.item));
      if (results.length !== batch.length) throw new Error(`a batch of ${batch.length} calls got ${results.length} results`);
      for (let i = 0; i < batch.length; i++) {
        const r = results[i] as O | Error;
        if (r instanceof Error) batch[i]!.reject(r);
        else batch[i]!.resolve(r);
      }
    } catch (error) {
      for (const p of batch) p.reject(error);
    } finally {
      out--;
      schedule();
    }
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      schedule();
    });
}
