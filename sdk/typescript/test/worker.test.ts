import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { Cancel, Retry, Snooze, UnauthorizedError, ValidationError, Worker, Workflow, type Client, type WorkerOptions } from "@drover/client";
import { Server, allIn, backends, newQueue, quiet, states, waitFor } from "./helpers.js";

function flakyInner(n: number): never {
  throw new TypeError(`boom ${n}`);
}

for (const backend of backends()) {
  describe(`worker (${backend})`, () => {
    let server: Server;
    let client: Client;
    before(async () => {
      server = await Server.start(backend);
      client = server.client();
    });
    after(async () => {
      await server?.stop();
    });
    const makeWorker = (queue: string, o: WorkerOptions = {}) =>
      new Worker({ url: server.url, token: server.workToken, queues: [queue], pollWaitMs: 1000, logger: quiet, ...o });

    test("every job runs exactly once, results stored, concurrency honoured", async () => {
      const queue = newQueue();
      const n = 120;
      const ids = await client.insertMany(Array.from({ length: n }, (_, i) => ({ kind: "square", args: { n: i }, queue })));
      const runs = new Map<number, number>();
      let now = 0;
      let peak = 0;
      const w = makeWorker(queue, { concurrency: 8 });
      w.register<{ n: number }, { sq: number }>("square", async (job) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        now++;
        peak = Math.max(peak, now, w.running);
        await delay(20);
        now--;
        return { sq: job.args.n * job.args.n };
      });
      w.start();
      try {
        await waitFor(() => allIn(client, queue, "completed"), "every job completed");
      } finally {
        await w.stop();
      }
      assert.deepEqual([...runs.keys()].sort((a, b) => a - b), ids);
      assert.ok([...runs.values()].every((c) => c === 1), "a job ran twice");
      assert.ok(peak <= 8, `peak ${peak} over concurrency 8`);
      assert.equal(peak, 8);
      for (let i = 0; i < 10; i++) assert.deepEqual((await client.jobResult(ids[i]!)).result, { sq: i * i });
      const rows = server.jobsListCli("--queue", queue);
      assert.equal(rows.length, n);
      assert.ok(rows.every((r) => r.state === "completed"));
    });

    // SQLite's JSON functions hold no nesting past 1,000 levels; PostgreSQL's
    // jsonb refuses a number past numeric's range, which JSON.stringify
    // cannot write, so the test runs on SQLite.
    const noRefusal = backend === "postgres" ? "no result JSON.stringify writes that PostgreSQL refuses" : false;
    test("a result the store refuses fails only its job, and the worker says so", { skip: noRefusal }, async () => {
      const queue = newQueue();
      let deep: unknown[] = [];
      for (let i = 0; i < 1500; i++) deep = [deep];
      const logged: { level: string; msg: string }[] = [];
      const log = (level: string) => (msg: string) => void logged.push({ level, msg });
      const w = makeWorker(queue, { logger: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") } });
      w.register<{ poison: boolean }>("answer", (job) => (job.args.poison ? { deep } : { ok: true }));
      const ids = await client.insertMany([0, 1, 2].map((i) => ({ kind: "answer", args: { poison: i === 1 }, queue })));
      w.start();
      try {
        await waitFor(async () => {
          const s = await states(client, queue);
          return s.get(ids[0]!) === "completed" && s.get(ids[1]!) === "discarded" && s.get(ids[2]!) === "completed";
        }, "the outcomes");
      } finally {
        await w.stop();
      }
      const errors = (await client.getJob(ids[1]!)).errors;
      assert.equal(errors.length, 1);
      assert.match(errors[0]!.error, /the store refused/);
      const about = (id: number) => logged.filter((l) => l.msg.includes(`job ${id} `));
      const refused = about(ids[1]!);
      assert.deepEqual(refused.map((l) => l.level), ["error"], JSON.stringify(logged));
      assert.match(refused[0]!.msg, /refused by the store: .*; recorded as a failed attempt/);
      assert.deepEqual([...about(ids[0]!), ...about(ids[2]!)], []);
    });

    test("routing: workers say what they are, jobs run only where they may, labels change at run time", async () => {
      const queue = newQueue();
      const ran = new Map<number, string>();
      const workerOf = (name: string, o: WorkerOptions) => {
        const w = makeWorker(queue, { workerId: `${name}-proc`, ...o });
        w.register("route", (job) => {
          ran.set(job.id, name);
        });
        return w;
      };
      const gpu = workerOf("gpu", { workerType: "gpu", workerLabels: { vram: "48g" } });
      const plain = workerOf("plain", {});
      const byType = await client.insert("route", {}, { queue, workerType: "gpu" });
      const byLabel = await client.insert("route", {}, { queue, workerLabels: { vram: "48g" } });
      const byName = await client.insert("route", {}, { queue, workerNames: ["gpu-proc"] });
      const anyone = await client.insert("route", {}, { queue });
      const later = await client.insert("route", {}, {
        queue, workerType: "gpu", workerLabels: { vram: "80g" }, onWorkerAbsent: "fail", workerAbsentAfterMs: 600_000, workerNames: ["gpu-proc"],
      });
      gpu.start();
      plain.start();
      try {
        await waitFor(() => ran.size === 4, "the four routable jobs to run");
        assert.equal(ran.get(byType), "gpu");
        assert.equal(ran.get(byLabel), "gpu");
        assert.equal(ran.get(byName), "gpu");
        assert.ok(["gpu", "plain"].includes(ran.get(anyone)!));
        const job = await client.getJob(later);
        assert.equal(job.state, "available");
        assert.equal(job.unroutable, true);
        assert.deepEqual(job.routing?.worker_labels, { vram: "80g" });
        gpu.setWorkerLabels({ vram: "80g" });
        await waitFor(() => ran.has(later), "the job to run once the labels changed");
        assert.equal(ran.get(later), "gpu");
      } finally {
        await gpu.stop();
        await plain.stop();
      }
    });

    test("a failure records message and stack, and the job is retried", async () => {
      const queue = newQueue();
      const w = makeWorker(queue);
      w.register<{ n: number }>("flaky", (job) => {
        if (job.attempt === 1) flakyInner(job.args.n);
        return "ok";
      });
      const id = await client.insert("flaky", { n: 7 }, { queue, maxAttempts: 3 });
      w.start();
      try {
        await waitFor(async () => (await client.getJob(id)).state === "completed", "the retry to complete");
      } finally {
        await w.stop();
      }
      const job = await client.getJob(id);
      assert.equal(job.attempt, 2);
      assert.equal(job.errors.length, 1);
      const err = job.errors[0]!;
      assert.equal(err.attempt, 1);
      assert.equal(err.error, "TypeError: boom 7");
      assert.match(err.trace ?? "", /flakyInner/);
      assert.equal((await client.jobResult(id)).result, "ok");
    });

    test("the last failure discards; Cancel cancels; Retry chooses when", async () => {
      const queue = newQueue();
      const w = makeWorker(queue);
      const attempts = new Map<number, number>();
      w.register("doomed", () => {
        throw new Error("always");
      });
      w.register("cancel-me", () => {
        throw new Cancel("not wanted");
      });
      w.register("later", (job) => {
        attempts.set(job.id, job.attempt);
        if (job.attempt === 1) throw new Retry("not yet", { delayMs: 0 });
        return job.attempt;
      });
      const d = await client.insert("doomed", {}, { queue, maxAttempts: 1 });
      const c = await client.insert("cancel-me", {}, { queue });
      const l = await client.insert("later", {}, { queue });
      w.start();
      try {
        await waitFor(async () => {
          const s = await states(client, queue);
          return s.get(d) === "discarded" && s.get(c) === "cancelled" && s.get(l) === "completed";
        }, "discarded, cancelled, completed");
      } finally {
        await w.stop();
      }
      assert.equal((await client.getJob(d)).errors[0]?.error, "Error: always");
      assert.equal((await client.getJob(c)).errors[0]?.error, "not wanted");
      assert.equal((await client.jobResult(l)).result, 2);
    });

    test("cancellation reaches the handler through its AbortSignal", async () => {
      const queue = newQueue();
      const w = makeWorker(queue, { leaseMs: 3000 }); // heartbeats every second
      let started = false;
      let reason: string | undefined;
      w.register("long", async (_job, ctx) => {
        started = true;
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error("never cancelled")), 30_000);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(t);
            reason = ctx.reason;
            reject(ctx.signal.reason);
          });
        });
      });
      const id = await client.insert("long", {}, { queue });
      w.start();
      try {
        await waitFor(() => started, "the handler to start");
        await client.cancel(id);
        await waitFor(async () => (await client.getJob(id)).state === "cancelled", "the job cancelled", 15_000);
      } finally {
        await w.stop();
      }
      assert.equal(reason, "cancel_requested");
    });

    test("a timeout aborts and fails the attempt", async () => {
      const queue = newQueue();
      const w = makeWorker(queue);
      w.register("slow", async (_job, ctx) => {
        await delay(30_000, undefined, { signal: ctx.signal });
      }, { timeoutMs: 300 });
      const id = await client.insert("slow", {}, { queue, maxAttempts: 1 });
      w.start();
      try {
        await waitFor(async () => (await client.getJob(id)).state === "discarded", "the job to fail");
      } finally {
        await w.stop();
      }
      assert.match((await client.getJob(id)).errors[0]?.error ?? "", /^timed out after 300 ms/);
    });

    test("stop lets running handlers finish and report", async () => {
      const queue = newQueue();
      const w = makeWorker(queue, { concurrency: 2 });
      let started = 0;
      w.register("hang", async () => {
        started++;
        await delay(800);
        return "done";
      });
      const ids = await client.insertMany(Array.from({ length: 4 }, () => ({ kind: "hang", args: {}, queue })));
      w.start();
      await waitFor(() => started === 2, "two handlers to start");
      await w.stop();
      const s = await states(client, queue);
      assert.deepEqual(ids.map((i) => s.get(i)).sort(), ["available", "available", "completed", "completed"]);
    });

    test("a handler that outlasts the shutdown timeout has its job released, not failed", async () => {
      const queue = newQueue();
      const w = makeWorker(queue, { concurrency: 2, shutdownTimeoutMs: 300 });
      let started = 0;
      const reasons: Array<string | undefined> = [];
      w.register("stubborn", async () => {
        started++;
        await delay(3000); // ignores its signal
      });
      w.register("polite", async (_job, ctx) => {
        started++;
        try {
          await delay(30_000, undefined, { signal: ctx.signal });
        } finally {
          reasons.push(ctx.reason);
        }
      });
      const s = await client.insert("stubborn", {}, { queue });
      const p = await client.insert("polite", {}, { queue });
      w.start();
      await waitFor(() => started === 2, "both handlers to start");
      const t0 = Date.now();
      await w.stop();
      assert.ok(Date.now() - t0 < 2500, `stop took ${Date.now() - t0} ms`);
      assert.deepEqual(reasons, ["shutdown"]);
      for (const id of [s, p]) {
        const job = await client.getJob(id);
        // Released: available again at once rather than after its lease, its
        // attempt undone, no error recorded (not retryable).
        assert.equal(job.state, "available");
        assert.equal(job.attempt, 0);
        assert.deepEqual(job.errors, []);
      }
      // Another worker then runs both, as their first attempt.
      const attempts: number[] = [];
      const other = makeWorker(queue, { concurrency: 2 });
      const quick = (job: { attempt: number }) => {
        attempts.push(job.attempt);
        return "done";
      };
      other.register("stubborn", quick).register("polite", quick);
      other.start();
      try {
        await waitFor(() => allIn(client, queue, "completed"), "both completed elsewhere");
      } finally {
        await other.stop();
      }
      assert.deepEqual(attempts, [1, 1]);
      for (const id of [s, p]) {
        const job = await client.getJob(id);
        assert.equal(job.attempt, 1);
        assert.deepEqual(job.errors, []);
        assert.equal((await client.jobResult(id)).result, "done");
      }
    });

    test("Snooze reruns the job after the delay with the same attempt, exactly once more", async () => {
      const queue = newQueue();
      const w = makeWorker(queue);
      const runs: Array<{ attempt: number; at: number }> = [];
      w.register("sleepy", (job) => {
        runs.push({ attempt: job.attempt, at: Date.now() });
        if (runs.length === 1) throw new Snooze(300);
        return "awake";
      });
      const id = await client.insert("sleepy", {}, { queue, maxAttempts: 1 });
      w.start();
      try {
        await waitFor(async () => (await client.getJob(id)).state === "completed", "completed after the snooze");
        await delay(800); // room for a wrong third run
      } finally {
        await w.stop();
      }
      // Twice, both as attempt 1 (maxAttempts 1 would have discarded the job
      // had the snooze used the attempt), the second after the delay.
      assert.deepEqual(runs.map((r) => r.attempt), [1, 1]);
      assert.ok(runs[1]!.at - runs[0]!.at >= 300, `reran after ${runs[1]!.at - runs[0]!.at} ms`);
      const job = await client.getJob(id);
      assert.equal(job.attempt, 1);
      assert.deepEqual(job.errors, []);
      assert.equal((await client.jobResult(id)).result, "awake");
      assert.throws(() => new Snooze(-1), RangeError);
    });

    test("a workflow runs in dependency order; a batch's results hold the return values", async () => {
      const queue = newQueue();
      const order: string[] = [];
      const w = makeWorker(queue, { concurrency: 4 });
      w.register<{ step: string }>("step", (job) => {
        order.push(job.args.step);
        return `${job.args.step}!`;
      });
      const wf = new Workflow();
      const a = wf.add("a", { kind: "step", args: { step: "a" }, queue });
      const b = wf.add("b", { kind: "step", args: { step: "b" }, queue }, [a]);
      wf.add("c", { kind: "step", args: { step: "c" }, queue }, [a, b]);
      const ids = await client.insertWorkflow(wf);
      const batch = await client.insertBatch(
        Array.from({ length: 5 }, (_, i) => ({ kind: "step", args: { step: `m${i}` }, queue })),
        { kind: "step", args: { step: "callback" }, queue },
      );
      w.start();
      try {
        await waitFor(() => allIn(client, queue, "completed"), "every job completed");
      } finally {
        await w.stop();
      }
      assert.deepEqual(order.filter((s) => s.length === 1), ["a", "b", "c"]);
      assert.equal((await client.jobResult(ids["c"]!)).result, "c!");
      const results = [];
      for await (const r of client.batchResultsAll(batch.id)) results.push(r.result);
      assert.deepEqual(results, ["m0!", "m1!", "m2!", "m3!", "m4!"]);
      assert.equal((await client.getBatch(batch.id)).counts.completed, 5);
      assert.throws(() => wf.add("d", { kind: "step" }, ["nope"]), /unknown step/);
    });

    test("a workflow is one request, all or none; a step gets its parents' ids and results", async () => {
      const queue = newQueue();
      const setup = await client.insert("setup", {}, { queue });
      const wf = new Workflow();
      const a = wf.add("a", { kind: "produce", args: { n: 2 }, queue, dependsOn: [setup] });
      const b = wf.add("b", { kind: "produce", args: { n: 3 }, queue });
      wf.add("sum", { kind: "sum", queue }, [a, b]);
      const ids = await client.insertWorkflow(wf);
      assert.deepEqual(Object.keys(ids).sort(), ["a", "b", "sum"]);
      assert.equal((await client.getJob(ids["sum"]!)).state, "pending");
      const n = (job: { parent_results: { result: unknown }[] }) =>
        job.parent_results.reduce((t, r) => t + (r.result as { n: number }).n, 0);
      let seen: { dependsOn: number[]; states: string[] } | undefined;
      const w = makeWorker(queue, { concurrency: 2 });
      w.register("setup", () => ({ n: 1 }));
      w.register<{ n: number }>("produce", (job) => ({ n: job.args.n + n(job) }));
      w.register("sum", (job) => {
        seen = { dependsOn: job.depends_on, states: job.parent_results.map((r) => r.state) };
        return { total: n(job) };
      });
      w.start();
      try {
        await waitFor(async () => (await client.getJob(ids["sum"]!)).state === "completed", "the workflow to finish");
      } finally {
        await w.stop();
      }
      assert.deepEqual((await client.jobResult(ids["sum"]!)).result, { total: 6 }); // a: 2 + setup's 1, b: 3
      assert.deepEqual(seen, { dependsOn: [ids["a"]!, ids["b"]!].sort((x, y) => x - y), states: ["completed", "completed"] });

      const bad = new Workflow();
      const first = bad.add("first", { kind: "fine", queue: newQueue() });
      bad.add("second", { kind: "not a kind", queue: first.spec.queue }, [first]);
      await assert.rejects(client.insertWorkflow(bad), (e: Error) => e instanceof ValidationError && /not a kind/.test(e.message));
      assert.deepEqual(await states(client, first.spec.queue!), new Map());
    });

    test("a bad token stops the worker with UnauthorizedError", async () => {
      const w = new Worker({ url: server.url, token: "drv_bad", queues: [newQueue()], logger: quiet });
      w.register("x", () => undefined);
      w.start();
      await assert.rejects(w.done, UnauthorizedError);
      assert.throws(() => w.register("y", () => undefined), /before start/);
      assert.throws(() => new Worker({ concurrency: 0 }), /concurrency/);
    });
  });
}
