import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServiceConfig, Storage } from "@benchdata/core";
import { createDeliveryWorker, createMemoryStorage, cryptoRandom, defineConfig, generateSigningSecret, makeWebhookUrlChecker, manualClock, newId, quotaWarningEvent, systemClock, verifySignature } from "@benchdata/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeResolve, nodeTransport } from "./webhook-transport.ts";

type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

interface Receiver {
  port: number;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string; servername?: string }>;
  connections: number;
  close(): Promise<void>;
}

async function listen(server: http.Server | https.Server, handler: Handler): Promise<Receiver> {
  const r: Receiver = { port: 0, requests: [], connections: 0, close: async () => {} };
  server.on("connection", () => r.connections++);
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const servername = (req.socket as { servername?: string }).servername;
      r.requests.push({ method: req.method!, url: req.url!, headers: req.headers, body, ...(servername ? { servername } : {}) });
      handler(req, body, res);
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  r.port = (server.address() as AddressInfo).port;
  r.close = () =>
    new Promise<void>((ok) => {
      server.closeAllConnections?.();
      server.close(() => ok());
    });
  return r;
}

const httpReceiver = (handler: Handler): Promise<Receiver> => listen(http.createServer({ keepAliveTimeout: 5000 }), handler);

const send = (t: ReturnType<typeof nodeTransport>, url: string, over: { timeoutMs?: number; address?: string } = {}) =>
  t.send({ url: new URL(url), address: over.address ?? "127.0.0.1", headers: { "Content-Type": "application/json", "X-Test": "1" }, body: '{"hello":"wörld"}', timeoutMs: over.timeoutMs ?? 2000 });

describe("nodeResolve", () => {
  it("returns IP literals as they are and resolves localhost to loopback", async () => {
    expect(await nodeResolve("93.184.216.34")).toEqual(["93.184.216.34"]);
    expect(await nodeResolve("[::1]")).toEqual(["::1"]);
    expect(await nodeResolve("localhost")).toContain("127.0.0.1");
    await expect(nodeResolve("no-such-host.invalid")).rejects.toThrow();
  });
});

describe("nodeTransport over http", () => {
  let r: Receiver;
  const t = nodeTransport();
  beforeAll(async () => {
    r = await httpReceiver((req, _body, res) => {
      if (req.url === "/redirect") return void res.writeHead(302, { Location: "/elsewhere" }).end("moved");
      if (req.url === "/error") return void res.writeHead(503).end('{"error":"busy"}');
      if (req.url === "/big") return void res.writeHead(200).end("y".repeat(1_000_000));
      if (req.url === "/hang") return; // never answers
      if (req.url === "/stall-body") {
        res.writeHead(200);
        res.write("partial");
        return; // the body never ends
      }
      res.writeHead(200, { "Content-Type": "application/json" }).end('{"ok":true}');
    });
  });
  afterAll(async () => {
    t.close();
    await r.close();
  });

  it("connects to the pinned address while sending the URL's hostname as Host", async () => {
    const res = await send(t, `http://hooks.test:${r.port}/in?x=1`);
    expect(res).toEqual({ status: 200, body: '{"ok":true}' });
    const got = r.requests.at(-1)!;
    expect(got).toMatchObject({ method: "POST", url: "/in?x=1", body: '{"hello":"wörld"}' });
    expect(got.headers).toMatchObject({ host: `hooks.test:${r.port}`, "content-type": "application/json", "x-test": "1", "content-length": String(Buffer.byteLength('{"hello":"wörld"}')) });
  });

  it("keeps the connection alive between requests to one origin", async () => {
    const before = r.connections;
    for (let i = 0; i < 5; i++) await send(t, `http://keepalive.test:${r.port}/in`);
    expect(r.connections - before).toBe(1);
  });

  it("does not follow a redirect: the 3xx is the answer", async () => {
    const n = r.requests.length;
    expect(await send(t, `http://hooks.test:${r.port}/redirect`)).toEqual({ status: 302, body: "moved" });
    await new Promise((ok) => setTimeout(ok, 50));
    expect(r.requests.length - n).toBe(1);
  });

  it("reports a non-2xx status with its body", async () => {
    expect(await send(t, `http://hooks.test:${r.port}/error`)).toEqual({ status: 503, body: '{"error":"busy"}' });
  });

  it("reads at most 2 KB of a large body", async () => {
    const res = await send(t, `http://hooks.test:${r.port}/big`);
    expect(res.status).toBe(200);
    expect(res.body).toBe("y".repeat(2048));
  });

  it("times out a receiver that never answers", async () => {
    const started = Date.now();
    await expect(send(t, `http://hooks.test:${r.port}/hang`, { timeoutMs: 300 })).rejects.toMatchObject({ name: "TransportError", kind: "timeout" });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("a receiver that sent its status but stalls the body has answered, with what it sent", async () => {
    expect(await send(t, `http://hooks.test:${r.port}/stall-body`, { timeoutMs: 300 })).toEqual({ status: 200, body: "partial" });
  });

  it("reports a refused connection", async () => {
    const closed = await httpReceiver(() => {});
    const port = closed.port;
    await closed.close();
    await expect(send(t, `http://hooks.test:${port}/in`)).rejects.toMatchObject({ kind: "refused" });
  });

  it("reports TLS failure when https meets a plain http server", async () => {
    await expect(send(t, `https://hooks.test:${r.port}/in`)).rejects.toMatchObject({ kind: "tls" });
  });
});

describe("nodeTransport over https (a certificate for hooks.test made with openssl)", () => {
  let dir: string;
  let cert: string;
  let r: Receiver;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "benchdata-tls-"));
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "1",
      "-subj", "/CN=hooks.test", "-addext", "subjectAltName=DNS:hooks.test",
    ], { stdio: "ignore" });
    cert = readFileSync(join(dir, "cert.pem"), "utf8");
    const server = https.createServer({ key: readFileSync(join(dir, "key.pem")), cert });
    r = await listen(server, (_req, _body, res) => void res.writeHead(204).end());
  });
  afterAll(async () => {
    await r.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("verifies the certificate against the hostname while connecting to the pinned address (SNI = hostname)", async () => {
    const t = nodeTransport({ ca: cert });
    expect(await send(t, `https://hooks.test:${r.port}/in`)).toEqual({ status: 204, body: "" });
    expect(r.requests.at(-1)).toMatchObject({ servername: "hooks.test", headers: { host: `hooks.test:${r.port}` } });
    // The same address under another name: the certificate does not match.
    await expect(send(t, `https://other.test:${r.port}/in`)).rejects.toMatchObject({ kind: "tls" });
    t.close();
  });

  it("refuses an untrusted certificate by default", async () => {
    const t = nodeTransport();
    await expect(send(t, `https://hooks.test:${r.port}/in`)).rejects.toMatchObject({ kind: "tls" });
    t.close();
  });

  it("rejectUnauthorized: false (tests only) skips verification", async () => {
    const t = nodeTransport({ rejectUnauthorized: false });
    expect((await send(t, `https://other.test:${r.port}/in`)).status).toBe(204);
    t.close();
  });
});

describe("URL safety with real resolution and delivery", () => {
  const fakeResolve = async (host: string): Promise<string[]> => (host === "evil.test" ? ["127.0.0.1"] : nodeResolve(host));
  let r: Receiver;
  beforeAll(async () => {
    r = await httpReceiver((_req, _body, res) => void res.writeHead(200).end('{"ok":true}'));
  });
  afterAll(() => r.close());

  async function deliverOnce(config: ServiceConfig, url: string): Promise<{ storage: Storage; accountId: string; webhookId: string; secret: string }> {
    const storage = createMemoryStorage();
    const clock = manualClock(Date.UTC(2026, 10, 16));
    const accountId = newId("acc", clock, cryptoRandom);
    await storage.createAccount({ id: accountId, name: "a", tier: "developer", createdAt: clock.now(), limits: {}, allowedCidrs: [], billing: {} });
    const wh = { id: newId("wh", clock, cryptoRandom), accountId, url, events: ["quota.warning" as const], secret: generateSigningSecret(cryptoRandom), createdAt: clock.now() };
    await storage.createWebhook(wh, 10);
    await storage.emitEvent(quotaWarningEvent(newId("evt", clock, cryptoRandom), accountId, clock.now(), { used: 8, allowance: 10, threshold: 8, periodStart: 0, periodEnd: 1 }), clock.now());
    const transport = nodeTransport();
    await createDeliveryWorker({ storage, clock, transport, resolve: fakeResolve, config }).tick();
    transport.close();
    return { storage, accountId, webhookId: wh.id, secret: wh.secret };
  }

  it("refuses evil.test (→ 127.0.0.1) and localhost at creation", async () => {
    const check = makeWebhookUrlChecker(defineConfig({ webhooks: { allowHttp: true } }), fakeResolve);
    expect((await check(`http://evil.test:${r.port}/in`))?.code).toBe("validation.invalid_url");
    expect((await check(`http://localhost:${r.port}/in`))?.code).toBe("validation.invalid_url");
    expect((await check(`https://evil.test/in`))?.detail).toMatch(/loopback/);
    const dev = makeWebhookUrlChecker(defineConfig({ webhooks: { allowHttp: true, allowPrivateNetworks: true } }), fakeResolve);
    expect(await dev(`http://localhost:${r.port}/in`)).toBeNull();
  });

  it.each(["evil.test", "localhost"])("refuses %s again at delivery time: `blocked`, and the receiver gets nothing", async (host) => {
    const before = r.requests.length;
    const { storage, accountId, webhookId } = await deliverOnce(defineConfig({ webhooks: { allowHttp: true } }), `http://${host}:${r.port}/in`);
    expect(r.requests.length).toBe(before);
    const [d] = await storage.listDeliveries(accountId, webhookId, 1);
    expect(d).toMatchObject({ status: "pending", attemptLog: [{ error: "blocked", statusCode: null }] });
  });

  it("delivers to the same host when the operator allows private networks (development)", async () => {
    const { storage, accountId, webhookId, secret } = await deliverOnce(defineConfig({ webhooks: { allowHttp: true, allowPrivateNetworks: true } }), `http://evil.test:${r.port}/in`);
    const [d] = await storage.listDeliveries(accountId, webhookId, 1);
    expect(d).toMatchObject({ status: "succeeded", attemptLog: [{ statusCode: 200, error: null, responseBody: '{"ok":true}' }] });
    const got = r.requests.at(-1)!;
    expect(got.headers.host).toBe(`evil.test:${r.port}`);
    expect(verifySignature(secret, got.body, got.headers["x-service-signature"] as string)).toBe(true);
  });
});

describe("isolation over real HTTP", () => {
  it("a receiver hanging for the whole time-out does not delay a healthy one", async () => {
    const healthy = await httpReceiver((_req, _body, res) => void res.writeHead(200).end("{}"));
    const hanging = await httpReceiver(() => {});
    const config = defineConfig({ webhooks: { allowHttp: true, allowPrivateNetworks: true, timeoutSeconds: 2, concurrencyPerWebhook: 2, ordered: false } });
    const storage = createMemoryStorage();
    const clock = systemClock;
    const accountId = newId("acc", clock, cryptoRandom);
    await storage.createAccount({ id: accountId, name: "a", tier: "developer", createdAt: clock.now(), limits: {}, allowedCidrs: [], billing: {} });
    const mk = async (port: number) => {
      const wh = { id: newId("wh", clock, cryptoRandom), accountId, url: `http://127.0.0.1:${port}/in`, events: ["quota.warning" as const], secret: generateSigningSecret(cryptoRandom), createdAt: clock.now() };
      await storage.createWebhook(wh, 10);
      return wh.id;
    };
    const [healthyId, hangingId] = [await mk(healthy.port), await mk(hanging.port)];
    for (let i = 0; i < 20; i++) await storage.emitEvent(quotaWarningEvent(newId("evt", clock, cryptoRandom), accountId, clock.now(), { used: i, allowance: 10, threshold: 8, periodStart: 0, periodEnd: 1 }), clock.now());
    const transport = nodeTransport();
    const worker = createDeliveryWorker({ storage, clock, transport, resolve: nodeResolve, config, concurrency: 8, pollIntervalMs: 50 });
    const started = Date.now();
    worker.start();
    for (;;) {
      const ds = await storage.listDeliveries(accountId, healthyId, 100);
      if (ds.every((d) => d.status === "succeeded")) break;
      await new Promise((ok) => setTimeout(ok, 10));
    }
    const healthyMs = Date.now() - started;
    // All 20 healthy deliveries completed well inside the hanging receiver's first 2 s time-out.
    expect(healthyMs).toBeLessThan(1500);
    expect((await storage.listDeliveries(accountId, hangingId, 100)).filter((d) => d.attempts > 0)).toHaveLength(0);
    // The hanging receiver holds exactly concurrencyPerWebhook (2) sends; its other 18 deliveries wait their turn.
    expect(hanging.requests).toHaveLength(2);
    await worker.stop();
    transport.close();
    const timedOut = (await storage.listDeliveries(accountId, hangingId, 100)).filter((d) => d.attemptLog[0]?.error === "timeout");
    expect(timedOut.length).toBeGreaterThanOrEqual(2);
    await healthy.close();
    await hanging.close();
  }, 20_000);
});
