// A worker process dies, the server restarts: no job is lost or run twice.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as delay } from "node:timers/promises";
import { Worker, type Client } from "@drover/client";
import { Server, allIn, newQueue, quiet, waitFor } from "./helpers.js";

const child = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "child-worker.js");

function spawnWorker(server: Server, queue: string, ledger: string, hangMs: number, concurrency: number): ChildProcess {
  return spawn(process.execPath, [child], {
    stdio: ["ignore", "inherit", "inherit"],
    env: {
      ...process.env, DROVER_URL: server.url, DROVER_TOKEN: server.workToken, QUEUE: queue, LEDGER: ledger,
      HANG: String(hangMs), CONCURRENCY: String(concurrency),
    },
  });
}

function readLedger(path: string): Array<[string, number, number]> {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => {
    const [what, id, attempt] = l.split(" ");
    return [what!, Number(id), Number(attempt)];
  });
}

const exited = (p: ChildProcess) =>
  p.exitCode !== null || p.signalCode !== null ? Promise.resolve(p.exitCode) : new Promise<number | null>((r) => p.once("exit", (code) => r(code)));

describe("resilience", () => {
  let server: Server;
  let client: Client;
  before(async () => {
    server = await Server.start("sqlite");
    client = server.client();
  });
  after(async () => {
    await server?.stop();
  });

  test("a killed worker's jobs come back after the lease and a second worker completes them", async () => {
    const queue = newQueue();
    const ledger = join(mkdtempSync(join(tmpdir(), "drover-ts-ledger-")), "ledger");
    const ids = await client.insertMany(Array.from({ length: 10 }, (_, i) => ({ kind: "hang", args: { i }, queue })));
    const proc = spawnWorker(server, queue, ledger, 60_000, 5);
    try {
      await waitFor(() => readLedger(ledger).length === 5, "five jobs started in the child");
      proc.kill("SIGKILL");
      await exited(proc);
    } finally {
      proc.kill("SIGKILL");
    }
    const killed = new Set(readLedger(ledger).map(([, id]) => id));
    for (const id of killed) assert.equal((await client.getJob(id)).state, "running");

    const runs = new Map<number, number>();
    const w = new Worker({ url: server.url, token: server.workToken, queues: [queue], concurrency: 5, pollWaitMs: 1000, logger: quiet });
    w.register("hang", (job) => {
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
      return { by: "second" };
    });
    w.start();
    try {
      await waitFor(() => allIn(client, queue, "completed"), "every job completed after the leases expired", 40_000);
    } finally {
      await w.stop();
    }
    assert.deepEqual([...runs.keys()].sort((a, b) => a - b), ids);
    assert.ok([...runs.values()].every((c) => c === 1));
    for (const id of ids) {
      const job = await client.getJob(id);
      assert.deepEqual((await client.jobResult(id)).result, { by: "second" });
      if (killed.has(id)) {
        assert.equal(job.attempt, 2);
        assert.match(job.errors[0]?.error ?? "", /lease/);
      } else {
        assert.equal(job.attempt, 1);
      }
    }
  });

  test("SIGTERM lets a worker process's running jobs finish", async () => {
    const queue = newQueue();
    const ledger = join(mkdtempSync(join(tmpdir(), "drover-ts-ledger-")), "ledger");
    await client.insertMany(Array.from({ length: 4 }, () => ({ kind: "hang", args: {}, queue })));
    const proc = spawnWorker(server, queue, ledger, 1000, 2);
    try {
      await waitFor(() => readLedger(ledger).length === 2, "two jobs started");
      proc.kill("SIGTERM");
      assert.equal(await exited(proc), 0);
    } finally {
      proc.kill("SIGKILL");
    }
    assert.deepEqual(readLedger(ledger).map(([w]) => w), ["start", "start", "done", "done"]);
    const st: string[] = [];
    for await (const j of client.jobs({ queue })) st.push(j.state);
    assert.deepEqual(st.sort(), ["available", "available", "completed", "completed"]);
  });

  for (const sig of ["SIGTERM", "SIGKILL"] as const) {
    test(`a server restart (${sig}) mid-run loses nothing`, async () => {
      const srv = await Server.start("sqlite");
      const c = srv.client();
      try {
        const queue = newQueue();
        const ids = await c.insertMany(Array.from({ length: 300 }, (_, i) => ({ kind: "step", args: { i }, queue })));
        const runs = new Map<number, number>();
        let total = 0;
        const w = new Worker({
          url: srv.url, token: srv.workToken, queues: [queue], concurrency: 10, pollWaitMs: 1000, leaseMs: 5000,
          maxBackoffMs: 500, logger: quiet,
        });
        w.register<{ i: number }>("step", async (job) => {
          runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
          total++;
          await delay(30);
          return job.args.i;
        });
        w.start();
        try {
          await waitFor(() => total >= 60, "a fifth of the jobs to run");
          await srv.stop(sig);
          await delay(1000); // the worker keeps running handlers and holds their results
          await srv.start();
          await waitFor(() => allIn(c, queue, "completed"), "every job completed after the restart", 40_000);
        } finally {
          await w.stop();
        }
        assert.deepEqual([...runs.keys()].sort((a, b) => a - b), ids);
        assert.ok([...runs.values()].every((n) => n === 1), "a job ran twice");
        assert.deepEqual(srv.jobsListCli("--queue", queue).map((r) => r.state), Array(300).fill("completed"));
        for (let k = 0; k < 300; k += 50) assert.equal((await c.jobResult(ids[k]!)).result, k);
      } finally {
        await srv.stop();
      }
    });
  }
});
