#!/usr/bin/env node
// Side-by-side peer benchmark of graphile-worker for Drover.
//
// Runs the same burndown and latency scenarios as `drover bench` and writes a
// report with the same JSON keys. It is NOT part of Drover: it has its own
// package.json and only measures a peer on the same machine as Drover.
//
// The parent process migrates, resets and inserts; K child processes (forks of
// this file) work the jobs, each a graphile-worker pool tuned like
// graphile-worker's own perfTest (see ../README.md).
"use strict";

const { fork } = require("node:child_process");
const { parseArgs } = require("node:util");
const { performance } = require("node:perf_hooks");
const { EventEmitter } = require("node:events");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
// As graphile-worker's perfTest does: don't log every successful job. It is
// read when graphile-worker is loaded, so set it before require().
if (!process.env.NO_LOG_SUCCESS) process.env.NO_LOG_SUCCESS = "1";
const { Pool } = require("pg");
const gw = require("graphile-worker");

const TASK = "drover_peer_bench";
const GW_VERSION = require(
  path.join(path.dirname(require.resolve("graphile-worker")), "..", "package.json"),
).version;

// Wall-clock milliseconds with sub-millisecond resolution, comparable across
// processes on the same machine.
const nowMs = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function parseDuration(s) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(String(s).trim());
  if (!m) throw new Error(`bad duration ${s}`);
  const v = parseFloat(m[1]);
  return m[2] === "ms" ? v : m[2] === "m" ? v * 60000 : v * 1000;
}

// settle vacuums and analyzes graphile-worker's job tables, then asks for a
// checkpoint (skipped, as drover bench skips it, when the role may not run
// one), so that the work phase starts from the same state as Drover's.
async function settle(pool) {
  await pool.query(
    "vacuum (analyze) graphile_worker._private_jobs, graphile_worker._private_job_queues",
  );
  try {
    await pool.query("checkpoint");
  } catch (e) {
    if (e.code !== "42501") throw e; // insufficient_privilege
  }
}

function options() {
  const { values } = parseArgs({
    options: {
      "database-url": { type: "string", default: process.env.DATABASE_URL || "" },
      scenario: { type: "string", default: "burndown" },
      jobs: { type: "string", default: "200000" },
      rate: { type: "string", default: "1000" },
      duration: { type: "string", default: "10s" },
      json: { type: "string", default: "" },
      processes: { type: "string", default: "4" },
      concurrency: { type: "string", default: "24" },
      "local-queue-size": { type: "string", default: "500" },
      "refetch-delay-ms": { type: "string", default: "10" },
      "complete-job-batch-delay": { type: "string", default: "0" },
      "fail-job-batch-delay": { type: "string", default: "0" },
      "poll-interval": { type: "string", default: "2000" },
      "insert-batch": { type: "string", default: "10000" },
      "insert-concurrency": { type: "string", default: "4" },
      "settle-after-load": { type: "string", default: "true" },
      timeout: { type: "string", default: "15m" },
      child: { type: "boolean", default: false },
      verbose: { type: "boolean", short: "v", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(`usage: node bench.js --database-url postgres://... [--scenario burndown|latency]
  [--jobs 200000] [--rate 1000 --duration 10s] [--json FILE] [--processes 4]
  [--concurrency 24] [--local-queue-size 500] [--refetch-delay-ms 10]
  [--complete-job-batch-delay 0] [--fail-job-batch-delay 0] [--poll-interval 2000]
  [--insert-batch 10000] [--insert-concurrency 4] [--settle-after-load true|false]
  [--timeout 15m] [-v]
A negative local-queue-size / batch delay disables that feature (graphile-worker's -1).
--settle-after-load (burndown, default true): VACUUM (ANALYZE) the job tables and
CHECKPOINT between loading the jobs and starting the workers, as drover bench does.`);
    process.exit(0);
  }
  const bool = (k) => {
    const v = String(values[k]).toLowerCase();
    if (v === "true" || v === "1") return true;
    if (v === "false" || v === "0") return false;
    throw new Error(`--${k} must be true or false`);
  };
  const int = (k) => {
    const v = parseInt(values[k], 10);
    if (!Number.isFinite(v)) throw new Error(`--${k} must be an integer`);
    return v;
  };
  return {
    databaseUrl: values["database-url"],
    scenario: values.scenario,
    jobs: int("jobs"),
    rate: int("rate"),
    durationMs: parseDuration(values.duration),
    json: values.json,
    processes: int("processes"),
    concurrency: int("concurrency"),
    localQueueSize: int("local-queue-size"),
    refetchDelayMs: int("refetch-delay-ms"),
    completeJobBatchDelay: int("complete-job-batch-delay"),
    failJobBatchDelay: int("fail-job-batch-delay"),
    pollInterval: int("poll-interval"),
    insertBatch: int("insert-batch"),
    insertConcurrency: int("insert-concurrency"),
    settleAfterLoad: bool("settle-after-load"),
    timeoutMs: parseDuration(values.timeout),
    child: values.child,
    verbose: values.verbose,
  };
}

// The graphile-worker preset, as in graphile-worker's perfTest/graphile.config.js.
function preset(o) {
  const worker = {
    concurrentJobs: o.concurrency,
    maxPoolSize: o.concurrency + 1,
    pollInterval: o.pollInterval,
    gracefulShutdownAbortTimeout: 2500,
    completeJobBatchDelay: o.completeJobBatchDelay,
    failJobBatchDelay: o.failJobBatchDelay,
  };
  if (o.localQueueSize > 0) {
    worker.localQueue = { size: o.localQueueSize };
    if (o.refetchDelayMs > 0) worker.localQueue.refetchDelay = { durationMs: o.refetchDelayMs };
  } else {
    worker.localQueue = { size: -1 };
  }
  return { worker };
}

// graphile-worker's own messages: warnings and errors only (its info/debug
// messages are per job and would slow the benchmark down).
function quietLogger() {
  return new gw.Logger((scope) => (level, message) => {
    if (level === "error" || level === "warning") {
      console.error(`[graphile-worker ${process.pid}] ${level}: ${message}`);
    }
  });
}

// ---------------------------------------------------------------- child ----

async function child(o) {
  // Resolves once the message is handed to the IPC channel, so that exiting
  // right after does not drop it.
  const send = (msg) =>
    new Promise((res, rej) => process.send(msg, (err) => (err ? rej(err) : res())));
  const pgPool = new Pool({
    connectionString: o.databaseUrl,
    max: o.concurrency + 1,
    application_name: "drover-peer-graphile-worker",
  });
  pgPool.on("error", (e) => console.error("pg pool error", e));
  pgPool.on("connect", (client) => client.on("error", (e) => console.error("pg client error", e)));

  const latency = o.scenario === "latency";
  const startLat = []; // ms, insert -> task start
  const completeLat = []; // ms, insert -> completion DELETE committed
  const pendingInsertedAt = new Map(); // job id -> inserted-at ms
  const completionTimes = []; // ms, one per successful job (task finished)
  let successes = 0;
  let failures = 0;
  let lastCompleteMs = 0;

  if (latency) {
    // Instrument the pool's clients so that we know when graphile-worker's
    // batched completion (DELETE of the job rows) has actually returned.
    pgPool.on("connect", (client) => {
      const orig = client.query;
      client.query = function (config, ...rest) {
        const r = orig.call(this, config, ...rest);
        if (
          config &&
          typeof config === "object" &&
          Array.isArray(config.values) &&
          r &&
          typeof r.then === "function" &&
          ((typeof config.name === "string" && config.name.startsWith("complete_job")) ||
            /^\s*(with j as \(\s*)?delete from \S*_private_jobs/i.test(config.text || ""))
        ) {
          r.then(
            () => {
              const t = nowMs();
              const v = config.values[0];
              for (const id of Array.isArray(v) ? v : [v]) {
                const k = String(id);
                const ins = pendingInsertedAt.get(k);
                if (ins !== undefined) {
                  pendingInsertedAt.delete(k);
                  completeLat.push(t - ins);
                  lastCompleteMs = t;
                }
              }
            },
            () => {},
          );
        }
        return r;
      };
    });
  }

  // Warm the pool so connection setup is not timed.
  const clients = await Promise.all(
    Array.from({ length: o.concurrency + 1 }, () => pgPool.connect()),
  );
  clients.forEach((c) => c.release());

  const events = new EventEmitter();
  events.setMaxListeners(100);
  events.on("job:success", () => {
    successes++;
    completionTimes.push(nowMs());
  });
  events.on("job:failed", ({ job, error }) => {
    failures++;
    console.error(`job ${job.id} failed: ${error}`);
  });
  events.on("job:error", ({ job, error }) => {
    console.error(`job ${job.id} errored: ${error}`);
  });

  const taskList = {
    [TASK]: async (payload, helpers) => {
      if (latency && payload && payload.t) {
        const t = nowMs();
        startLat.push(t - payload.t);
        pendingInsertedAt.set(String(helpers.job.id), payload.t);
      }
    },
  };
  const runnerOptions = {
    pgPool,
    taskList,
    events,
    noHandleSignals: true,
    logger: quietLogger(),
    preset: preset(o),
  };

  const finish = async (startedMs) => {
    await send({
      type: "done",
      pid: process.pid,
      startedMs,
      endMs: nowMs(),
      successes,
      failures,
      lastCompleteMs,
      completionTimes: Float64Array.from(completionTimes),
      startLat: Float64Array.from(startLat),
      completeLat: Float64Array.from(completeLat),
    });
  };

  process.on("message", async (msg) => {
    try {
      if (msg.type === "go" && !latency) {
        const started = nowMs();
        await gw.runOnce(runnerOptions);
        await finish(started);
        await pgPool.end();
        process.exit(0);
      } else if (msg.type === "stop" && latency) {
        await runner.stop();
        await finish(0);
        await pgPool.end();
        process.exit(0);
      }
    } catch (e) {
      console.error(e);
      process.exit(1);
    }
  });

  let runner = null;
  if (latency) {
    runner = await gw.run(runnerOptions);
    runner.promise.catch((e) => {
      console.error("runner failed", e);
      process.exit(1);
    });
  }
  await send({ type: "ready", pid: process.pid });
}

// --------------------------------------------------------------- parent ----

// The command that reproduces the run, shell-quoted.
function commandLine() {
  const q = (a) => (a === "" || /[^\w@%+=:,./-]/.test(a) ? `'${a.replace(/'/g, "'\\''")}'` : a);
  return ["node", path.relative(process.cwd(), __filename) || __filename, ...process.argv.slice(2)]
    .map(q)
    .join(" ");
}

// The machine, described the way `drover bench` does.
function machine() {
  const cpus = os.cpus();
  const model = cpus.length ? cpus[0].model.trim().replace(/\s+/g, " ") : "";
  const cpu = `${cpus.length} CPUs` + (model ? ` (${model})` : "");
  const gib = Math.round(os.totalmem() / 2 ** 30);
  return [`${process.platform}/${process.arch}`, cpu, `${gib} GiB RAM`, `node ${process.version}`].join(", ");
}

function percentile(sorted, q) {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

function summary(values) {
  const s = Float64Array.from(values).sort();
  const r3 = (x) => Math.round(x * 1000) / 1000;
  return {
    p50: r3(percentile(s, 0.5)),
    p95: r3(percentile(s, 0.95)),
    p99: r3(percentile(s, 0.99)),
    max: r3(s.length ? s[s.length - 1] : 0),
    count: s.length,
  };
}

async function startChildren(o) {
  const kids = [];
  const readies = [];
  const dones = [];
  for (let i = 0; i < o.processes; i++) {
    const args = process.argv.slice(2).filter((a) => a !== "--child");
    const kid = fork(__filename, [...args, "--child"], {
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let onReady, onDone, failReady, failDone;
    readies.push(new Promise((res, rej) => ((onReady = res), (failReady = rej))));
    dones.push(new Promise((res, rej) => ((onDone = res), (failDone = rej))));
    dones[dones.length - 1].catch(() => {}); // handled where awaited
    kid.on("message", (m) => {
      if (m.type === "ready") onReady(m);
      else if (m.type === "done") onDone(m);
    });
    let gotDone = false;
    kid.on("message", (m) => {
      if (m.type === "done") gotDone = true;
    });
    // 'close' comes after the IPC channel is closed, so after any message.
    kid.on("close", (code, signal) => {
      if (code !== 0 || !gotDone) {
        const err = new Error(
          `worker process ${kid.pid} exited (code ${code}, signal ${signal}) without reporting`,
        );
        failReady(err);
        failDone(err);
        console.error(err.message);
        process.exitCode = 1;
      }
    });
    kids.push(kid);
  }
  await Promise.all(readies);
  return { kids, dones };
}

async function countRemaining(pool) {
  const { rows } = await pool.query(
    `select count(*)::int as remaining,
            count(*) filter (where last_error is not null)::int as errored,
            count(*) filter (where locked_at is not null)::int as locked
       from graphile_worker._private_jobs
      where task_id = (select id from graphile_worker._private_tasks where identifier = $1)`,
    [TASK],
  );
  return rows[0];
}

async function parent(o) {
  if (!/^postgres(ql)?:\/\//.test(o.databaseUrl)) {
    throw new Error("--database-url must be postgres://... (graphile-worker supports PostgreSQL only)");
  }
  if (o.scenario !== "burndown" && o.scenario !== "latency") {
    throw new Error(`--scenario must be burndown or latency, not ${o.scenario}`);
  }
  const startedAt = new Date();
  const pool = new Pool({
    connectionString: o.databaseUrl,
    max: Math.max(2, o.insertConcurrency),
    application_name: "drover-peer-graphile-worker-inserter",
  });
  pool.on("error", (e) => console.error("pg pool error", e));
  pool.on("connect", (client) => client.on("error", (e) => console.error("pg client error", e)));

  // 1. Migrate graphile-worker's schema, then start from an empty queue.
  await gw.runMigrations({ pgPool: pool, logger: quietLogger() });
  await pool.query(
    "truncate graphile_worker._private_jobs, graphile_worker._private_job_queues",
  );
  await pool.query("vacuum analyze graphile_worker._private_jobs");
  const {
    rows: [{ synchronous_commit: syncCommit }],
  } = await pool.query("show synchronous_commit");

  let inserted = 0;
  let insertSecs = 0;
  let seconds = 0;
  let results;
  const log = (...a) => o.verbose && console.error("graphile-worker-bench:", ...a);

  if (o.scenario === "burndown") {
    // 2. Insert all jobs with graphile_worker.add_jobs, o.insertBatch per call.
    const t0 = nowMs();
    while (inserted < o.jobs) {
      const n = Math.min(o.insertBatch, o.jobs - inserted);
      const specs = new Array(n);
      for (let i = 0; i < n; i++) specs[i] = { identifier: TASK, payload: { n: inserted + i } };
      await pool.query(
        "select count(*) from graphile_worker.add_jobs(array(select json_populate_recordset(null::graphile_worker.job_spec, $1::json)))",
        [JSON.stringify(specs)],
      );
      inserted += n;
    }
    insertSecs = (nowMs() - t0) / 1000;
    log(`inserted ${inserted} in ${insertSecs.toFixed(3)}s`);

    // 2b. Settle the loaded tables exactly as `drover bench` settles its own
    //     (droverpg.Driver.Settle): VACUUM (ANALYZE), then CHECKPOINT, outside
    //     the measured interval. Without it graphile-worker works 200K jobs
    //     on statistics taken of an empty table (the vacuum above) and ran at
    //     36K jobs/s where the same binary did 58-65K once analysed: the
    //     comparison then measured our harness, not graphile-worker. Any
    //     production table that autovacuum has seen is analysed, so this is
    //     how its users run it.
    if (o.settleAfterLoad) {
      const t1 = nowMs();
      await settle(pool);
      log(`settled (vacuum analyze + checkpoint) in ${((nowMs() - t1) / 1000).toFixed(3)}s`);
    }

    // 3. Start the worker processes, let them connect, then run them all
    //    `--once` (runOnce: work until no job is left, then exit).
    const { kids, dones } = await startChildren(o);
    const go = nowMs();
    kids.forEach((k) => k.send({ type: "go" }));
    const timer = setTimeout(() => {
      console.error("timeout: killing worker processes");
      kids.forEach((k) => k.kill("SIGKILL"));
    }, o.timeoutMs);
    results = await Promise.all(dones);
    clearTimeout(timer);
    const end = Math.max(...results.map((r) => r.endMs));
    seconds = (end - go) / 1000;
    results.go = go;
  } else {
    // 2. Start continuously running worker processes.
    const { kids, dones } = await startChildren(o);
    await sleep(500); // let LISTEN connections settle
    // 3. Insert one job per add_job call at o.rate for o.durationMs.
    const total = Math.floor((o.rate * o.durationMs) / 1000);
    const interval = 1000 / o.rate;
    let next = 0;
    let failedInserts = 0;
    const t0 = nowMs();
    const loop = async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const wait = t0 + i * interval - nowMs();
        if (wait > 1) await sleep(wait);
        try {
          await pool.query(
            "select graphile_worker.add_job($1, $2::json)",
            [TASK, JSON.stringify({ n: i, t: nowMs() })],
          );
          inserted++;
        } catch (e) {
          failedInserts++;
          if (failedInserts < 5) console.error("insert failed:", e.message);
        }
      }
    };
    await Promise.all(Array.from({ length: o.insertConcurrency }, loop));
    insertSecs = (nowMs() - t0) / 1000;
    log(`inserted ${inserted} in ${insertSecs.toFixed(3)}s`);

    // 4. Wait for the queue to drain, then stop the workers.
    const deadline = nowMs() + o.timeoutMs;
    for (;;) {
      const r = await countRemaining(pool);
      if (r.remaining === 0 || nowMs() > deadline) break;
      await sleep(100);
    }
    await sleep(200); // let completion batches of the last jobs report
    kids.forEach((k) => k.send({ type: "stop" }));
    results = await Promise.all(dones);
    const last = Math.max(...results.map((r) => r.lastCompleteMs));
    seconds = (last - t0) / 1000;
    results.go = t0;
  }

  // 5. Check the database: graphile-worker deletes a job when it completes,
  //    so a completed job is one that is no longer in the table.
  const db = await countRemaining(pool);
  await pool.end();

  const successes = results.reduce((a, r) => a + r.successes, 0);
  const failures = results.reduce((a, r) => a + r.failures, 0);
  const completedInDb = inserted - db.remaining;
  const times = [];
  for (const r of results) for (const t of r.completionTimes) times.push(t);
  const sorted = Float64Array.from(times).sort();
  let steady = 0;
  const skip = Math.ceil(inserted / 10);
  const lastMs = o.scenario === "burndown" ? results.go + seconds * 1000 : sorted[sorted.length - 1];
  if (sorted.length > skip && skip > 0) {
    const span = (lastMs - sorted[skip - 1]) / 1000;
    if (span > 0) steady = (sorted.length - skip) / span;
  }

  const r1 = (x) => Math.round(x * 10) / 10;
  const r3 = (x) => Math.round(x * 1000) / 1000;
  const zero = { p50: 0, p95: 0, p99: 0, max: 0, count: 0 };
  const batchDesc = (v) => (v >= 0 ? `${v}ms` : "off");
  const settings = [
    `graphile-worker perfTest settings: ${o.processes} worker process(es) x concurrentJobs ${o.concurrency} (pg pool ${o.concurrency + 1} each)`,
    o.localQueueSize > 0
      ? `localQueue.size ${o.localQueueSize}` + (o.refetchDelayMs > 0 ? `, refetchDelay ${o.refetchDelayMs}ms` : "")
      : "localQueue off",
    `completeJobBatchDelay ${batchDesc(o.completeJobBatchDelay)}, failJobBatchDelay ${batchDesc(o.failJobBatchDelay)}`,
    `pollInterval ${o.pollInterval}ms + LISTEN/NOTIFY`,
    `synchronous_commit=${syncCommit}`,
    "noop task",
    o.scenario === "burndown"
      ? o.settleAfterLoad
        ? "job tables VACUUM (ANALYZE)d and CHECKPOINT after loading, before the workers start (as drover bench does)"
        : "job tables NOT analysed after loading (--settle-after-load false): statistics are those of the empty table"
      : "job tables vacuum-analysed empty before the run",
    o.scenario === "burndown"
      ? `insert: graphile_worker.add_jobs, ${o.insertBatch} jobs per call, before the workers start; workers run runOnce (like the CLI's --once) and exit when no job is left; seconds = from 'go' to the last process's exit (includes runOnce's start-up and the final completion batch)`
      : `insert: one graphile_worker.add_job per job at ${o.rate}/s for ${o.durationMs / 1000}s from ${o.insertConcurrency} connections while the workers run; latency_ms = insert -> completion DELETE returned (observed on the worker's pg client), start_latency_ms = insert -> task start`,
    "completed = no longer in graphile_worker._private_jobs (graphile-worker deletes completed jobs)",
    "steady rate excludes the first 10% of completions",
  ].join("; ");

  const report = {
    scenario: o.scenario,
    system: `graphile-worker ${GW_VERSION}`,
    driver: "postgres",
    settings,
    jobs: inserted,
    seconds: r3(seconds),
    jobs_per_sec: seconds > 0 ? r1(inserted / seconds) : 0,
    steady_jobs_per_sec: r1(steady),
    steady_note:
      "steady_jobs_per_sec excludes the first 10% of completed jobs: (jobs - ceil(jobs/10)) / (end - time of the ceil(jobs/10)-th task completion)",
    insert_per_sec: insertSecs > 0 ? r1(inserted / insertSecs) : 0,
    latency_ms: zero,
    start_latency_ms: zero,
    lost: inserted - completedInDb,
    duplicates: Math.max(0, successes - completedInDb),
    insert_seconds: r3(insertSecs),
    completed_in_db: completedInDb,
    not_completed_in_db: db.remaining,
    errored_in_db: db.errored,
    locked_in_db: db.locked,
    task_successes: successes,
    task_failures: failures,
    command: commandLine(),
    machine: machine(),
    node_version: process.version,
    started_at: startedAt.toISOString(),
  };
  if (o.scenario === "latency") {
    const cl = [];
    const sl = [];
    for (const r of results) {
      for (const v of r.completeLat) cl.push(v);
      for (const v of r.startLat) sl.push(v);
    }
    report.latency_ms = summary(cl);
    report.start_latency_ms = summary(sl);
    report.latency_samples = cl.length;
    report.target_rate = o.rate;
  }
  const out = JSON.stringify(report, null, 2);
  console.log(out);
  if (o.json) fs.writeFileSync(o.json, out + "\n");
  if (report.lost !== 0 || failures !== 0) {
    console.error(`graphile-worker-bench: ${report.lost} job(s) lost, ${failures} failed`);
    process.exitCode = 1;
  }
}

const o = options();
(o.child ? child(o) : parent(o)).catch((e) => {
  console.error(e);
  process.exit(1);
});
