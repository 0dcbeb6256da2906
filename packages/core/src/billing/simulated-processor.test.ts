import { describe, expect, it } from "vitest";
import type { PaymentRequest } from "./payment-processor.ts";
import { simulatedProcessor, simulatedRef } from "./simulated-processor.ts";

const req = (over: Partial<PaymentRequest> = {}): PaymentRequest => ({
  invoiceId: "inv_1",
  accountId: "acc_1",
  amount: 1000,
  currency: "usd",
  idempotencyKey: "benchdata:acc_1:2026-11-01T00:00:00.000Z:block-1",
  description: "block 1",
  ...over,
});

describe("simulatedProcessor", () => {
  it("gives a deterministic reference derived from the idempotency key", async () => {
    const p = simulatedProcessor({ outcome: "succeed" });
    const r = await p.charge(req());
    expect(r).toEqual({ status: "succeeded", processorRef: simulatedRef(req().idempotencyKey) });
    expect(r.processorRef).toMatch(/^sim_[0-9a-f]{24}$/);
    await expect(simulatedProcessor({ outcome: "succeed" }).charge(req())).resolves.toEqual(r);
  });

  it("is idempotent: the same key replays the result and records one charge, even concurrently", async () => {
    const p = simulatedProcessor({ outcome: "succeed", latencyMs: 20 });
    const results = await Promise.all(Array.from({ length: 20 }, () => p.charge(req())));
    expect(new Set(results.map((r) => r.processorRef)).size).toBe(1);
    expect(p.charges).toHaveLength(1);
    expect(p.calls).toHaveLength(20);
    await p.charge(req({ idempotencyKey: "other" }));
    expect(p.charges).toHaveLength(2);
  });

  it("refuses a key reused with other parameters", async () => {
    const p = simulatedProcessor({ outcome: "succeed" });
    await p.charge(req());
    await expect(p.charge(req({ amount: 2000 }))).rejects.toThrow(/idempotency/);
  });

  it("declines with a reason, and replays the decline for the same key", async () => {
    const p = simulatedProcessor({ outcome: "fail", failureReason: "insufficient_funds" });
    const r = await p.charge(req());
    expect(r).toMatchObject({ status: "failed", reason: "insufficient_funds" });
    expect(await p.charge(req())).toEqual(r);
    expect(p.charges).toHaveLength(1);
  });

  it("`error` throws without charging; `lost` charges, throws, and the retry replays the charge", async () => {
    let outcome: "error" | "lost" | "succeed" = "error";
    const p = simulatedProcessor({ outcome: () => outcome });
    await expect(p.charge(req())).rejects.toThrow(/no charge/);
    expect(p.charges).toHaveLength(0);
    outcome = "lost";
    await expect(p.charge(req())).rejects.toThrow(/lost/);
    expect(p.charges).toHaveLength(1);
    outcome = "fail" as never; // a replay ignores the outcome: the charge already exists
    expect(await p.charge(req())).toMatchObject({ status: "succeeded" });
    expect(p.charges).toHaveLength(1);
  });
});
