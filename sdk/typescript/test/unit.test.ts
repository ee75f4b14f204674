import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer as createHTTPSServer } from "node:https";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Backoff,
  ConflictError,
  ConnectionError,
  DroverError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
  UnavailableError,
  ValidationError,
  Worker,
  encodeResult,
  errorForStatus,
  Client,
} from "@drover/client";
import { cert, key } from "./fixtures/tls.js";
import { quiet, repo, waitFor } from "./helpers.js";

const pkg = join(repo, "sdk", "typescript");

test("error classes by status", () => {
  const cases: Array<[number, new (...a: never[]) => DroverError, boolean]> = [
    [400, ValidationError, false],
    [415, ValidationError, false],
    [401, UnauthorizedError, false],
    [403, ForbiddenError, false],
    [404, NotFoundError, false],
    [409, ConflictError, false],
    [413, PayloadTooLargeError, false],
    [429, RateLimitedError, true],
    [503, UnavailableError, true],
    [500, ServerError, true],
  ];
  for (const [status, cls, retryable] of cases) {
    const e = errorForStatus(status, "why", "/v1/x");
    assert.ok(e instanceof cls, `${status}`);
    assert.ok(e instanceof DroverError);
    assert.equal(e.retryable, retryable);
    assert.equal(e.status, status);
    assert.equal(e.serverMessage, "why");
    assert.equal(e.message, `/v1/x: why (HTTP ${status})`);
  }
  assert.equal(new ConnectionError("refused").retryable, true);
});

test("backoff grows with jitter and caps", () => {
  const b = new Backoff(100, 1000);
  const d = Array.from({ length: 8 }, () => b.next());
  assert.ok(d[0]! >= 50 && d[0]! <= 100);
  assert.ok(d[3]! >= 400 && d[3]! <= 800);
  for (const x of d.slice(4)) assert.ok(x >= 500 && x <= 1000);
  b.reset();
  assert.ok(b.next() <= 100);
});

test("results must be JSON of at most 64 KiB", () => {
  assert.deepEqual(encodeResult({ a: 1 }), { a: 1 });
  assert.throws(() => encodeResult("x".repeat(70_000)), /over the limit/);
  assert.throws(() => encodeResult(10n), /not JSON/);
});

test("the generated types match the OpenAPI document", () => {
  const r = spawnSync(process.execPath, [join(pkg, "scripts", "generate.mjs"), "--check"], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
});

test("worker sends bearer and JSON content type, echoes lease tokens, drops a lost lease's result", async () => {
  const seen: Array<{ path: string; auth: string | undefined; ctype: string | undefined; body: any }> = [];
  let claimed = false;
  const srv = createServer((req: IncomingMessage, res) => {
    let data = "";
    req.on("data", (c) => (data += c));
    req.on("end", () => {
      const body = data ? JSON.parse(data) : undefined;
      seen.push({ path: req.url ?? "", auth: req.headers.authorization, ctype: req.headers["content-type"], body });
      res.setHeader("Content-Type", "application/json");
      if (req.url === "/v1/claim") {
        if (claimed) {
          setTimeout(() => res.end('{"jobs":[]}'), 200);
          return;
        }
        claimed = true;
        const job = (id: number, token: string) => ({
          id, state: "running", queue: "default", kind: "k", priority: 0, args: { n: id }, tags: [], attempt: 1,
          max_attempts: 25, errors: [], error_count: 0, created_at: "2026-01-01T00:00:00Z", run_at: "2026-01-01T00:00:00Z",
          cancel_requested: false, lease_token: token,
        });
        res.end(JSON.stringify({ jobs: [job(1, "a".repeat(32)), job(2, "b".repeat(32))] }));
      } else if (req.url === "/v1/heartbeat") {
        res.end(JSON.stringify({ lost: [2], cancel_requested: [] }));
      } else if (req.url === "/v1/finish") {
        res.end(JSON.stringify({ accepted: body.results.map((r: { id: number }) => r.id), rejected: [] }));
      } else {
        res.statusCode = 404;
        res.end('{"error":"no","status":404}');
      }
    });
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const addr = srv.address();
  const url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  const w = new Worker({ url, token: "tok", leaseMs: 1200, pollWaitMs: 100, concurrency: 4, logger: quiet });
  let reason: string | undefined;
  w.register<{ n: number }>("k", async (job, ctx) => {
    if (job.args.n === 1) return { ok: 1 };
    await new Promise((r) => ctx.signal.addEventListener("abort", r));
    reason = ctx.reason;
    return { ok: 2 };
  });
  w.start();
  await waitFor(() => reason !== undefined, "the lost lease to reach the handler", 5000);
  await w.stop();
  const c = new Client(url, "tok");
  await assert.rejects(c.getJob(5), (e: unknown) => e instanceof NotFoundError && e.serverMessage === "no" && e.path === "/v1/jobs/5");
  await assert.rejects(c.cancel(5), NotFoundError);
  assert.deepEqual(seen.slice(-2).map((s) => s.path), ["/v1/jobs/5", "/v1/jobs/5/cancel"]);
  srv.close();
  for (const s of seen) {
    assert.equal(s.auth, "Bearer tok");
    assert.equal(s.ctype, "application/json");
  }
  assert.equal(reason, "lease_lost");
  const hb = seen.find((s) => s.path === "/v1/heartbeat");
  assert.deepEqual(hb?.body.attempts, [
    { id: 1, attempt: 1, lease_token: "a".repeat(32) },
    { id: 2, attempt: 1, lease_token: "b".repeat(32) },
  ].filter((a) => hb?.body.attempts.some((b: { id: number }) => b.id === a.id)));
  const results = seen.filter((s) => s.path === "/v1/finish").flatMap((s) => s.body.results);
  assert.deepEqual(results, [{ id: 1, attempt: 1, lease_token: "a".repeat(32), outcome: "completed", result: { ok: 1 } }]);
});

test("client errors carry the server's message; a refused connection is a ConnectionError", async () => {
  const c = new Client("http://127.0.0.1:1", "tok", { timeoutMs: 2000 });
  await assert.rejects(c.getJob(1), (e: unknown) => e instanceof ConnectionError && e.retryable);
  assert.throws(() => new Client("ftp://x", "t"), /want http/);
  assert.throws(() => new Client("http://x", ""), /token/);
});

test("the transport: one kept-alive connection, a timeout and an abort are ConnectionErrors, a kept-alive connection reset before its answer is replaced", async () => {
  const sockets = new Set<unknown>();
  const paths: string[] = [];
  const srv = createServer((req, res) => {
    const reused = sockets.has(req.socket);
    sockets.add(req.socket);
    paths.push(req.url ?? "");
    // As a server closing an idle connection just as the request goes out:
    // no answer, the connection reset.
    if (req.url === "/v1/jobs/3" && reused) return void req.socket.destroy();
    if (req.url !== "/v1/jobs/1" && req.url !== "/v1/jobs/3") return; // never answers
    res.setHeader("Content-Type", "application/json");
    // Written in two chunks: the answer is read whole.
    res.write('{"id":1,');
    res.end('"state":"running"}');
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  try {
    const c = new Client(`http://127.0.0.1:${port}/`, "tok", { timeoutMs: 300 });
    for (let i = 0; i < 3; i++) assert.deepEqual(await c.getJob(1), { id: 1, state: "running" });
    assert.equal(sockets.size, 1, "the requests shared one kept-alive connection");
    await assert.rejects(c.getJob(2), (e: unknown) => e instanceof ConnectionError && e.message === "/v1/jobs/2: timed out");
    // A kept-alive connection reset before any answer is replaced by a fresh one, once.
    assert.deepEqual(await c.getJob(1), { id: 1, state: "running" });
    const before = sockets.size;
    assert.deepEqual(await c.getJob(3), { id: 1, state: "running" });
    assert.deepEqual([sockets.size, paths.filter((p) => p === "/v1/jobs/3").length], [before + 1, 2]);
    const w = new Client(`http://127.0.0.1:${port}`, "tok");
    const abort = new AbortController();
    const pending = w.receive("t", "s", { worker: "w", signal: abort.signal });
    await waitFor(() => paths.includes("/v1/topics/t/subscriptions/s/receive"), "the receive to arrive");
    abort.abort();
    await assert.rejects(pending, (e: unknown) => e instanceof ConnectionError && e.message === "/v1/topics/t/subscriptions/s/receive: aborted");
  } finally {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});

test("the client speaks HTTPS, checking the server's certificate", async () => {
  const srv = createHTTPSServer({ cert, key }, (req, res) => {
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify({ id: Number(req.url?.split("/").pop()), auth: req.headers.authorization }));
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const url = `https://127.0.0.1:${(srv.address() as { port: number }).port}`;
  try {
    // A certificate no authority this process trusts signed: refused.
    await assert.rejects(new Client(url, "tok", { timeoutMs: 5000 }).getJob(1), (e: unknown) => e instanceof ConnectionError && /certificate/.test(e.message));
    const dir = mkdtempSync(join(tmpdir(), "drover-ts-tls-"));
    writeFileSync(join(dir, "ca.pem"), cert);
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), "fixtures", "https-client.js")], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, "ca.pem"), DROVER_URL: url, DROVER_TOKEN: "tok", JOB: "7" },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let s = "";
      p.stdout.on("data", (c: Buffer) => (s += c.toString()));
      p.on("error", reject);
      p.on("exit", (code) => (code === 0 ? resolve(s) : reject(new Error(`https client exited ${code}`))));
    });
    assert.deepEqual(out.trim().split("\n").map((l) => JSON.parse(l)), [{ id: 7, auth: "Bearer tok" }, { id: 7, auth: "Bearer tok" }]);
  } finally {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});

test("503 and refused connections are retried with backoff; unacknowledged results are sent again", async () => {
  let finishes = 0;
  const claimMax: number[] = [];
  let claimed = false;
  const srv = createServer((req, res) => {
    let data = "";
    req.on("data", (c) => (data += c));
    req.on("end", () => {
      const body = data ? JSON.parse(data) : {};
      res.setHeader("Content-Type", "application/json");
      if (req.url === "/v1/claim") {
        claimMax.push(body.max);
        if (claimMax.length <= 2) {
          res.statusCode = 503;
          res.end('{"error":"store unreachable","status":503}');
          return;
        }
        if (claimed) {
          setTimeout(() => res.end('{"jobs":[]}'), 100);
          return;
        }
        claimed = true;
        res.end(JSON.stringify({ jobs: [{ id: 9, state: "running", queue: "default", kind: "k", priority: 0, args: {}, tags: [],
          attempt: 3, max_attempts: 25, errors: [], error_count: 0, created_at: "2026-01-01T00:00:00Z",
          run_at: "2026-01-01T00:00:00Z", cancel_requested: false, lease_token: "c".repeat(32) }] }));
      } else if (req.url === "/v1/finish") {
        finishes++;
        if (finishes < 3) {
          res.statusCode = 503;
          res.end('{"error":"not ready","status":503}');
          return;
        }
        res.end(JSON.stringify({ accepted: [9], rejected: [] }));
      } else {
        res.end('{"lost":[],"cancel_requested":[]}');
      }
    });
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const addr = srv.address();
  const url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  const w = new Worker({ url, token: "tok", concurrency: 3, pollWaitMs: 100, maxBackoffMs: 200, logger: quiet });
  w.register("k", () => "r");
  w.start();
  await waitFor(() => finishes >= 3, "the result to be accepted on the third try", 5000);
  await w.stop();
  srv.close();
  assert.equal(finishes, 3);
  assert.ok(claimMax.length >= 3);
  assert.equal(claimMax[0], 3);
  assert.ok(claimMax.every((m) => m >= 1 && m <= 3), `claims asked for ${claimMax.join(",")}`);
});

test("a handler that looks at ctx.signal only after its job was interrupted finds it aborted; claimed jobs get empty depends_on", async () => {
  let claimed = false;
  const srv = createServer((req: IncomingMessage, res) => {
    let data = "";
    req.on("data", (c) => (data += c));
    req.on("end", () => {
      res.setHeader("Content-Type", "application/json");
      if (req.url === "/v1/claim") {
        if (claimed) {
          setTimeout(() => res.end('{"jobs":[]}'), 200);
          return;
        }
        claimed = true;
        res.end(JSON.stringify({ jobs: [{
          id: 1, state: "running", queue: "default", kind: "k", priority: 0, args: {}, tags: [], attempt: 1,
          max_attempts: 25, errors: [], error_count: 0, created_at: "2026-01-01T00:00:00Z", run_at: "2026-01-01T00:00:00Z",
          cancel_requested: false, lease_token: "a".repeat(32),
        }] }));
      } else if (req.url === "/v1/heartbeat") {
        res.end(JSON.stringify({ lost: [], cancel_requested: [1] }));
      } else {
        const body = JSON.parse(data);
        res.end(JSON.stringify({ accepted: body.results.map((r: { id: number }) => r.id), rejected: [] }));
      }
    });
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const addr = srv.address();
  const url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  const w = new Worker({ url, token: "tok", leaseMs: 1200, pollWaitMs: 100, concurrency: 2, logger: quiet });
  let seen: { aborted: boolean; name: string; dependsOn: unknown; parents: unknown } | undefined;
  w.register("k", async (job, ctx) => {
    // The cancel request arrives with the first heartbeat (every 400 ms);
    // the signal is not read before it.
    await waitFor(() => ctx.reason !== undefined, "the cancel request", 5000);
    seen = { aborted: ctx.signal.aborted, name: (ctx.signal.reason as Error).name, dependsOn: job.depends_on, parents: job.parent_results };
    throw new Error("cancelled as asked");
  });
  w.start();
  await waitFor(() => seen !== undefined, "the handler to see its signal", 5000);
  await w.stop();
  srv.close();
  assert.deepEqual(seen, { aborted: true, name: "AbortError", dependsOn: [], parents: [] });
});

test("the worker claims and finishes in the compact form, and falls back to the full one with a server that refuses it", async () => {
  for (const knowsCompact of [true, false]) {
    const claims: any[] = [];
    const finishes: any[] = [];
    let served = false;
    const token = "c".repeat(32);
    const srv = createServer((req: IncomingMessage, res) => {
      let data = "";
      req.on("data", (c) => (data += c));
      req.on("end", () => {
        const body = data ? JSON.parse(data) : undefined;
        res.setHeader("Content-Type", "application/json");
        if (req.url === "/v1/claim") {
          claims.push(body);
          if (body.compact !== undefined && !knowsCompact) {
            res.statusCode = 400;
            res.end('{"error":"request body: unknown field \\"compact\\"","status":400}');
            return;
          }
          if (served) {
            setTimeout(() => res.end(body.compact ? '{"shared":{},"jobs":[]}' : '{"jobs":[]}'), 200);
            return;
          }
          served = true;
          const shared = { state: "running", queue: "default", kind: "k", priority: 0, tags: [], attempt: 1, max_attempts: 25,
            errors: [], error_count: 0, created_at: "2026-01-01T00:00:00Z", run_at: "2026-01-01T00:00:00Z", cancel_requested: false,
            lease_token: token };
          const entries = [{ id: 1, args: { n: 1 } }, { id: 2, args: { n: 2 } }];
          res.end(JSON.stringify(body.compact ? { shared, jobs: entries } : { jobs: entries.map((e) => ({ ...shared, ...e })) }));
        } else if (req.url === "/v1/finish") {
          finishes.push(body);
          res.end(JSON.stringify({ accepted: body.results.map((r: { id: number }) => r.id), rejected: [], refused: [] }));
        } else if (req.url === "/v1/heartbeat") {
          res.end('{"lost":[],"cancel_requested":[]}');
        } else {
          res.statusCode = 404;
          res.end('{"error":"no","status":404}');
        }
      });
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const addr = srv.address();
    const url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
    const w = new Worker({ url, token: "tok", pollWaitMs: 100, concurrency: 4, logger: quiet });
    const seen: Array<[number, string | undefined, string]> = [];
    w.register<{ n: number }>("k", async (job) => {
      seen.push([job.id, job.lease_token, job.queue]);
      return job.args.n === 2 ? { ok: 2 } : undefined;
    });
    w.start();
    await waitFor(() => finishes.flatMap((f) => f.results).length === 2, "the results", 5000);
    await w.stop();
    srv.close();
    assert.deepEqual(seen.sort(), [[1, token, "default"], [2, token, "default"]]);
    if (knowsCompact) {
      assert.equal(claims[0].compact, true);
      for (const f of finishes) assert.deepEqual(f.shared, { attempt: 1, lease_token: token, outcome: "completed" });
      assert.deepEqual(finishes.flatMap((f) => f.results), [{ id: 1 }, { id: 2, result: { ok: 2 } }]);
    } else {
      // Refused once; every claim after it, and the finish, in the full form.
      assert.equal(claims[0].compact, true);
      assert.ok(claims.slice(1).every((c) => c.compact === undefined), JSON.stringify(claims));
      assert.ok(finishes.every((f) => f.shared === undefined), JSON.stringify(finishes));
      assert.deepEqual(finishes.flatMap((f) => f.results), [
        { id: 1, attempt: 1, lease_token: token, outcome: "completed" },
        { id: 2, attempt: 1, lease_token: token, outcome: "completed", result: { ok: 2 } },
      ]);
    }
  }
});
