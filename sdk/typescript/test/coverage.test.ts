// The SDK against the server's OpenAPI document, without drover serve: every
// operation is in the table of docs/typescript.md, covered (by the Client
// methods, or the Worker or Consumer, it names) or listed as deliberately not
// covered with the reason; each Client method named sends a request of its
// operation whose query and body the document accepts (a loopback server
// checks them), and reads the document's answer. (The wire types themselves
// are generated from the document: `npm run check-generated`.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Client, Workflow } from "@drover/client";
import { repo } from "./helpers.js";
import { answerSchema, bodySchema, errors, matches, operations, queryParams, sample, type Operation } from "./openapi.js";

const NOW = new Date("2030-01-02T00:00:00Z");

async function first<T>(it: AsyncGenerator<T>): Promise<T | undefined> {
  for await (const x of it) return x;
  return undefined;
}

function workflow(): Workflow {
  const wf = new Workflow();
  const a = wf.add("a", { kind: "k", queue: "q" });
  wf.add("b", { kind: "k", dependsOn: [1] }, [a], { releaseOnParentFailure: true });
  return wf;
}

// One call of each Client method, with every option it sends, so that the
// body checked against the document is as full as a caller can make it.
const calls: Record<string, (c: Client) => Promise<unknown>> = {
  insert: (c) => c.insert("k", { a: 1 }, {
    queue: "q", priority: 1, runAt: NOW, maxAttempts: 3, tags: ["t"], metadata: { m: 1 }, timeoutMs: 1000, dependsOn: [1], key: "key",
    keyLimit: 1, keyRate: 1, keyRatePeriodMs: 1000, uniqueKey: "u", uniqueStates: ["available"], uniqueByQueue: true, workerType: "gpu",
    workerNames: ["w"], workerLabels: { l: "v" }, onWorkerAbsent: "fallback", workerAbsentAfterMs: 1000,
  }),
  insertMany: (c) => c.insertMany([{ kind: "k", args: {}, queue: "q" }]),
  insertBatch: (c) => c.insertBatch([{ kind: "k" }], { kind: "cb" }),
  insertWorkflow: (c) => c.insertWorkflow(workflow()),
  getJob: (c) => c.getJob(1),
  listJobs: (c) => c.listJobs({
    state: ["available", "running"], queue: "q", kind: "k", tags: ["t"], args: { a: 1 }, metadata: { m: 1 }, createdSince: NOW, createdUntil: NOW,
    scheduledSince: NOW, scheduledUntil: NOW, attemptedSince: NOW, attemptedUntil: NOW, finishedSince: NOW, finishedUntil: NOW, order: "desc",
    count: true, after: 1, limit: 10,
  }),
  jobs: (c) => first(c.jobs({ queue: "q" })),
  jobResult: (c) => c.jobResult(1),
  workflowGraph: (c) => c.workflowGraph(1),
  getBatch: (c) => c.getBatch(1),
  listBatches: (c) => c.listBatches({ before: 5, limit: 10 }),
  batchResults: (c) => c.batchResults(1, { after: 1, limit: 10 }),
  batchResultsAll: (c) => first(c.batchResultsAll(1)),
  stats: (c) => c.stats("q"),
  cancel: (c) => c.cancel(1),
  retry: (c) => c.retry(1),
  discard: (c) => c.discard(1),
  bulk: (c) => c.bulk("retry", { state: "discarded", queue: "q", kind: "k" }),
  bulkByIds: (c) => c.bulkByIds("delete", [1, 2]),
  getBulk: (c) => c.getBulk(1),
  waitBulk: (c) => c.waitBulk(1),
  listQueues: (c) => c.listQueues(),
  getQueue: (c) => c.getQueue("q"),
  pauseQueue: (c) => c.pauseQueue("q", { kind: "k" }),
  resumeQueue: (c) => c.resumeQueue("q", { kind: "k" }),
  setStrictOrder: (c) => c.setStrictOrder("q", 2),
  listWorkers: (c) => c.listWorkers(),
  listUnroutable: (c) => c.listUnroutable(),
  listPeriodic: (c) => c.listPeriodic(),
  getPeriodic: (c) => c.getPeriodic("p"),
  createPeriodic: (c) => c.createPeriodic("p", "@hourly", "k", { a: 1 }, { queue: "q", priority: 1, maxAttempts: 2, tags: ["t"] }),
  updatePeriodic: (c) => c.updatePeriodic("p", "@daily", "k", {}, { queue: "q", priority: 1, maxAttempts: 2, tags: ["t"] }),
  deletePeriodic: (c) => c.deletePeriodic("p"),
  pausePeriodic: (c) => c.pausePeriodic("p"),
  resumePeriodic: (c) => c.resumePeriodic("p"),
  triggerPeriodic: (c) => c.triggerPeriodic("p"),
  createTopic: (c) => c.createTopic("t", { lanes: 4, retentionMs: -1 }),
  listTopics: (c) => c.listTopics(),
  getTopic: (c) => c.getTopic("t"),
  deleteTopic: (c) => c.deleteTopic("t"),
  publish: (c) => c.publish("t", [{ payload: { a: 1 }, key: "k", metadata: { m: 1 } }, { payload: new Uint8Array([0, 1]) }]),
  publishMany: (c) => c.publishMany([{ payload: "x", topic: "t", key: "k" }, { payload: new Uint8Array([255]), topic: "u" }]),
  createSubscription: (c) => c.createSubscription("t", "s", { fromEarliest: true, maxAttempts: 5 }),
  deleteSubscription: (c) => c.deleteSubscription("t", "s"),
  subscriptionLag: (c) => c.subscriptionLag("t"),
  receive: (c) => c.receive("t", "s", { worker: "w", maxBatches: 2, batchSize: 10, leaseMs: 5000, waitMs: 100 }),
  ack: (c) => c.ack("t", "s", [{ receipt: "r1", failed: { 1: "why" } }, { receipt: "r2" }]),
  nack: (c) => c.nack("t", "s", ["r1"], "why"),
  extendBatches: (c) => c.extendBatches("t", "s", ["r1", "r2"], { leaseMs: 60_000 }),
  releaseBatches: (c) => c.releaseBatches("t", "s", ["r1"]),
  subscriptionLanes: (c) => c.subscriptionLanes("t", "s"),
  releaseLane: (c) => c.releaseLane("t", "s", 3),
  rewindSubscription: (c) => c.rewindSubscription("t", "s", { earliest: true }),
};

/**
 * Calls fn with the URL of a server on loopback that checks each request
 * against the document and answers with a sample; returns the operations it
 * saw, and throws the first request the document refuses.
 */
async function recorded(fn: (url: string) => Promise<unknown>): Promise<Operation[]> {
  const seen: Operation[] = [];
  const refused: unknown[] = [];
  const check = (method: string, target: string, raw: string) => {
    const url = new URL(target, "http://drover");
    const op = operations().find((o) => matches(o, method, url.pathname));
    assert.ok(op, `${method} ${url.pathname}: no operation of the document`);
    seen.push(op);
    const unknown = [...url.searchParams.keys()].filter((k) => !queryParams(op).has(k));
    assert.deepEqual(unknown, [], `${op.id}: query parameters that are not the operation's`);
    const schema = bodySchema(op);
    const body = raw ? JSON.parse(raw) : undefined;
    if (schema) assert.deepEqual(errors(body, schema), [], `${op.id}: the body ${JSON.stringify(body)} is not the document's`);
    else assert.ok(body === undefined || (typeof body === "object" && Object.keys(body as object).length === 0), `${op.id} takes no body`);
    const answer = answerSchema(op);
    const out = (answer ? sample(answer) : {}) as Record<string, unknown>;
    if (op.id === "getBulk") out["status"] = "done";
    if (op.id === "listJobs" || op.id === "getBatchResults") out["next_after"] = null;
    return out;
  };
  const srv = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      res.setHeader("Content-Type", "application/json");
      try {
        res.end(JSON.stringify(check(req.method ?? "GET", req.url ?? "/", raw)));
      } catch (e) {
        refused.push(e);
        res.statusCode = 400;
        res.end(JSON.stringify({ error: String(e), status: 400 }));
      }
    });
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  try {
    await fn(`http://127.0.0.1:${(srv.address() as AddressInfo).port}`).catch((e: unknown) => {
      if (refused.length === 0) throw e;
    });
  } finally {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
  if (refused.length > 0) throw refused[0];
  return seen;
}

/** The table of docs/typescript.md: operation id → [HTTP, what covers it, why not covered]. */
function coverage(): Map<string, [string, string[], string]> {
  const text = readFileSync(join(repo, "docs", "typescript.md"), "utf8");
  const m = /<!-- openapi-operations -->([\s\S]*?)<!-- \/openapi-operations -->/.exec(text);
  assert.ok(m, "docs/typescript.md: the operations table is missing");
  const rows = new Map<string, [string, string[], string]>();
  for (const line of m[1]!.split("\n")) {
    const cells = line.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
    if (cells.length !== 3 || !cells[0]!.startsWith("`")) continue;
    const [id, http, covered] = [cells[0]!.replaceAll("`", ""), cells[1]!.replaceAll("`", ""), cells[2]!];
    assert.ok(!rows.has(id), `docs/typescript.md: ${id} is listed twice`);
    if (covered.startsWith("not covered:")) {
      const reason = covered.slice("not covered:".length).trim();
      assert.ok(reason, `${id}: say why it is not covered`);
      rows.set(id, [http, [], reason]);
    } else {
      rows.set(id, [http, [...covered.matchAll(/`([A-Za-z]+(?:\.[A-Za-z]+)?)`/g)].map((x) => x[1]!), ""]);
    }
  }
  return rows;
}

test("every operation is covered or listed with a reason", () => {
  const rows = coverage();
  const ops = new Map(operations().map((o) => [o.id, o]));
  assert.deepEqual([...ops.keys()].filter((id) => !rows.has(id)), [], "operations missing from docs/typescript.md");
  assert.deepEqual([...rows.keys()].filter((id) => !ops.has(id)), [], "unknown operations in docs/typescript.md");
  for (const [id, [http, names, reason]] of rows) {
    const op = ops.get(id)!;
    assert.equal(http, `${op.method} ${op.path}`, id);
    assert.ok(names.length > 0 || reason, `${id}: neither covered nor explained`);
  }
});

test("covered operations are what the SDK sends", async () => {
  const sources = {
    Worker: readFileSync(join(repo, "sdk", "typescript", "src", "worker.ts"), "utf8"),
    Consumer: readFileSync(join(repo, "sdk", "typescript", "src", "consumer.ts"), "utf8"),
  };
  for (const [id, [, names]] of coverage()) {
    const op = operations().find((o) => o.id === id)!;
    for (const name of names) {
      if (name === "Worker" || name === "Consumer") {
        const last = op.path.split("/").pop()!;
        // Its loops send the path, or call the Client method of that name.
        const src = sources[name];
        assert.ok(src.includes(`"${op.path}"`) || src.includes(`"${last}"`) || src.includes(`.${last}(`), `${name} does not send ${id}`);
        continue;
      }
      const [cls, method] = name.split(".");
      assert.equal(cls, "Client", name);
      const call = calls[method!];
      assert.ok(call, `no call of Client.${method} in this test`);
      const seen = await recorded((url) => call(new Client(url, "drv_x")));
      assert.ok(seen.some((o) => o.id === op.id), `Client.${method} sent ${seen.map((o) => o.id).join(", ")}, not ${id}`);
    }
  }
});

test("every Client method is in the table", () => {
  const named = new Set([...coverage().values()].flatMap(([, names]) => names.filter((n) => n.startsWith("Client.")).map((n) => n.slice(7))));
  const methods = Object.getOwnPropertyNames(Client.prototype).filter((n) => n !== "constructor");
  assert.deepEqual(methods.sort(), [...named].sort());
  assert.deepEqual(Object.keys(calls).sort(), [...named].sort());
});
