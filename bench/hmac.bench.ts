/**
 * Webhook signing: HMAC-SHA256 with @noble/hashes (what core's `signPayload` uses: pure JavaScript, runs
 * everywhere) against WebCrypto's `crypto.subtle.sign` (native, but asynchronous), on 1 KB and 64 KB bodies.
 * WebCrypto is measured twice: with the CryptoKey imported once and reused, and with `importKey` on every
 * call (what a signer that keeps no per-secret cache pays). node:crypto's createHmac is shown for reference.
 * Samples of the implementations are interleaved, so load from elsewhere hits them alike; median of samples.
 *
 *   npx tsx bench/hmac.bench.ts
 */
import { createHmac } from "node:crypto";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";

/** One implementation at one body size. */
export interface HmacResult {
  readonly impl: "@noble/hashes hmac" | "WebCrypto subtle.sign (key reused)" | "WebCrypto importKey + sign" | "node:crypto createHmac";
  readonly bytes: number;
  readonly opsPerSec: number;
  readonly microsPerOp: number;
}

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const SAMPLES = 7;

async function rate(run: (reps: number) => Promise<unknown> | unknown, sampleMs: number): Promise<(reps: number) => Promise<number>> {
  // Calibrated once: the call count that makes a sample last about sampleMs.
  let reps = 1;
  for (;;) {
    const t0 = performance.now();
    await run(reps);
    const dt = performance.now() - t0;
    if (dt >= sampleMs) break;
    reps *= 2;
  }
  return async () => {
    const t0 = performance.now();
    await run(reps);
    return (performance.now() - t0) / reps; // ms per op
  };
}

/** Measures every implementation on 1 KB and 64 KB bodies. */
export async function runHmacBench(options: { sampleMs?: number } = {}): Promise<HmacResult[]> {
  const sampleMs = options.sampleMs ?? 150;
  const keyBytes = new TextEncoder().encode(SECRET);
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const results: HmacResult[] = [];
  for (const bytes of [1024, 65_536]) {
    const body = new Uint8Array(bytes).map((_, i) => (i * 31) & 0xff);
    const impls: [HmacResult["impl"], (reps: number) => Promise<unknown> | unknown][] = [
      ["@noble/hashes hmac", (reps) => {
        let x = 0;
        for (let i = 0; i < reps; i++) x ^= hmac(sha256, keyBytes, body)[0] as number;
        return x;
      }],
      ["WebCrypto subtle.sign (key reused)", async (reps) => {
        for (let i = 0; i < reps; i++) await crypto.subtle.sign("HMAC", key, body);
      }],
      ["WebCrypto importKey + sign", async (reps) => {
        for (let i = 0; i < reps; i++) {
          const k = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
          await crypto.subtle.sign("HMAC", k, body);
        }
      }],
      ["node:crypto createHmac", (reps) => {
        let x = 0;
        for (let i = 0; i < reps; i++) x ^= createHmac("sha256", keyBytes).update(body).digest()[0] as number;
        return x;
      }],
    ];
    const timers = [];
    for (const [, run] of impls) timers.push(await rate(run, sampleMs));
    const samples: number[][] = impls.map(() => []);
    for (let s = 0; s < SAMPLES; s++) for (let i = 0; i < impls.length; i++) (samples[i] as number[]).push(await (timers[i] as (reps: number) => Promise<number>)(0));
    impls.forEach(([impl], i) => {
      const sorted = (samples[i] as number[]).sort((a, b) => a - b);
      const ms = sorted[sorted.length >> 1] as number;
      results.push({ impl, bytes, opsPerSec: 1000 / ms, microsPerOp: ms * 1000 });
    });
  }
  return results;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  for (const r of await runHmacBench()) console.log(`${r.impl.padEnd(36)} ${String(r.bytes).padStart(6)} B  ${Math.round(r.opsPerSec).toLocaleString("en").padStart(9)} ops/s  ${r.microsPerOp.toFixed(2)} µs`);
}
