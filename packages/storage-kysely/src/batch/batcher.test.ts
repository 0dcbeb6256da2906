import { describe, expect, it } from "vitest";
import { batcher } from "./batcher.ts";

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("batcher", () => {
  it("calls made in one turn of the event loop go out as one batch, results in order", async () => {
    const batches: number[][] = [];
    const double = batcher((xs: readonly number[]) => {
      batches.push([...xs]);
      return xs.map((x) => x * 2);
    }, { maxBatch: 100, concurrency: 1 });
    expect(await Promise.all([1, 2, 3].map(double))).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it("while `concurrency` batches are out, new calls wait and leave together as the next batch", async () => {
    const batches: number[][] = [];
    let release: () => void = () => {};
    const slow = batcher(async (xs: readonly number[]) => {
      batches.push([...xs]);
      if (batches.length === 1) await new Promise<void>((r) => (release = r));
      return xs;
    }, { maxBatch: 100, concurrency: 1 });
    const first = slow(1);
    await turn();
    const rest = [2, 3, 4].map(slow);
    await turn();
    await turn();
    expect(batches).toEqual([[1]]);
    release();
    expect(await Promise.all([first, ...rest])).toEqual([1, 2, 3, 4]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it("splits at maxBatch", async () => {
    const sizes: number[] = [];
    const id = batcher((xs: readonly number[]) => {
      sizes.push(xs.length);
      return [...xs];
    }, { maxBatch: 4, concurrency: 1 });
    await Promise.all(Array.from({ length: 10 }, (_, i) => id(i)));
    expect(sizes).toEqual([4, 4, 2]);
  });

  it("an Error in a call's place rejects that call alone; a throwing batch rejects all of its calls", async () => {
    const check = batcher((xs: readonly number[]) => xs.map((x) => (x < 0 ? new Error(`negative ${x}`) : x)), { maxBatch: 10, concurrency: 1 });
    const got = await Promise.allSettled([check(1), check(-2), check(3)]);
    expect(got.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((got[1] as PromiseRejectedResult).reason.message).toBe("negative -2");

    const broken = batcher((): number[] => {
      throw new Error("database gone");
    }, { maxBatch: 10, concurrency: 1 });
    const all = await Promise.allSettled([broken(1), broken(2)]);
    expect(all.map((r) => (r.status === "rejected" ? r.reason.message : "ok"))).toEqual(["database gone", "database gone"]);
    // The batcher keeps working after a failed batch.
    expect(await check(7)).toBe(7);
  });

  it("a result count that does not match the calls rejects the batch rather than misrouting results", async () => {
    const short = batcher((xs: readonly number[]) => xs.slice(1), { maxBatch: 10, concurrency: 1 });
    await expect(Promise.all([short(1), short(2)])).rejects.toThrow(/2 calls got 1 results/);
  });
});
