// Operations for admin tokens against a real `drover serve`: queue pause and
// resume (whole and by kind), strict order, the worker registry and
// unroutable jobs, bulk actions, batch listing and workflow graphs.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { ForbiddenError, NotFoundError, ValidationError, Worker, Workflow, type Client } from "@drover/client";
import { Server, backends, newQueue, quiet, states, waitFor } from "./helpers.js";

for (const backend of backends()) {
  describe(`operations (${backend})`, () => {
    let server: Server;
    let client: Client;
    before(async () => {
      server = await Server.start(backend);
      client = server.client();
    });
    after(async () => {
      await server?.stop();
    });

    test("pause and resume by queue and kind; the worker registry", async () => {
      const queue = newQueue();
      // A queue the store does not know (a typo) is refused rather than paused.
      await assert.rejects(client.getQueue(queue), NotFoundError);
      await assert.rejects(client.pauseQueue(queue), NotFoundError);
      const ja = await client.insert("a", {}, { queue });
      const jb = await client.insert("b", {}, { queue });
      const fresh = await client.getQueue(queue);
      assert.deepEqual([fresh.paused, fresh.paused_kinds, fresh.updated_at ?? null], [false, [], null]);
      assert.equal((await client.pauseQueue(queue)).paused, true);
      const ran: string[] = [];
      const w = new Worker({ url: server.url, token: server.workToken, queues: [queue], pollWaitMs: 500, concurrency: 2, logger: quiet });
      w.register("a", (job) => void ran.push(job.kind));
      w.register("b", (job) => void ran.push(job.kind));
      w.start();
      try {
        assert.deepEqual((await client.pauseQueue(queue, { kind: "b" })).paused_kinds, ["b"]);
        assert.ok((await client.listQueues()).some((q) => q.name === queue));
        const resumed = await client.resumeQueue(queue);
        assert.deepEqual([resumed.paused, resumed.paused_kinds], [false, ["b"]]);
        await waitFor(async () => (await client.getJob(ja)).state === "completed", "kind a to run");
        assert.equal((await client.getJob(jb)).state, "available");
        assert.deepEqual((await client.resumeQueue(queue, { kind: "b" })).paused_kinds, []);
        await waitFor(async () => (await client.getJob(jb)).state === "completed", "kind b to run once resumed");
      } finally {
        await w.stop();
      }
      assert.deepEqual(ran, ["a", "b"]);
      const me = (await client.listWorkers()).find((x) => x.owner === w.workerId);
      assert.ok(me && me.source === "http" && me.queues.includes(queue) && me.plain);
    });

    test("strict order and unroutable jobs", async () => {
      const queue = newQueue();
      const id = await client.insert("gpu", {}, { queue, workerNames: ["nobody-" + queue], onWorkerAbsent: "wait" });
      assert.equal((await client.setStrictOrder(queue, 2)).strict_order, 2);
      assert.equal((await client.setStrictOrder(queue, 0)).strict_order, 0);
      await assert.rejects(client.setStrictOrder(queue, -1), ValidationError);
      const groups = (await client.listUnroutable()).filter((u) => u.queue === queue);
      assert.deepEqual(groups.map((g) => [g.jobs, g.first_id, g.routing?.worker_names]), [[1, id, ["nobody-" + queue]]]);
    });

    test("bulk actions", async () => {
      const queue = newQueue();
      const ids = await client.insertMany(Array.from({ length: 6 }, (_, i) => ({ kind: "bulk", args: { i }, queue })));
      let task = await client.waitBulk((await client.bulk("cancel", { queue, state: "available" })).id, { timeoutMs: 30_000 });
      assert.deepEqual([task.status, task.action, task.matched, task.changed], ["done", "cancel", 6, 6]);
      task = await client.waitBulk((await client.bulkByIds("retry", ids.slice(0, 2))).id, { timeoutMs: 30_000 });
      assert.deepEqual([task.selected, task.changed], [2, 2]);
      const st = await states(client, queue);
      assert.deepEqual(ids.map((i) => st.get(i)), ["available", "available", "cancelled", "cancelled", "cancelled", "cancelled"]);
      task = await client.waitBulk((await client.bulk("delete", { queue, kind: "bulk", state: "cancelled" })).id, { timeoutMs: 30_000 });
      assert.equal(task.changed, 4);
      assert.deepEqual([...(await states(client, queue)).keys()], ids.slice(0, 2));
    });

    test("batches and workflow graphs", async () => {
      const queue = newQueue();
      const b1 = await client.insertBatch([{ kind: "m", queue }]);
      const b2 = await client.insertBatch([{ kind: "m", queue }, { kind: "m", queue }]);
      const page = await client.listBatches({ limit: 1 });
      assert.deepEqual(page.batches.map((b) => b.id), [b2.id]);
      assert.ok(page.nextBefore !== null);
      assert.equal((await client.listBatches({ before: page.nextBefore, limit: 1 })).batches[0]?.id, b1.id);
      const wf = new Workflow();
      const a = wf.add("a", { kind: "step", queue });
      wf.add("b", { kind: "step", queue }, [a]);
      const refs = await client.insertWorkflow(wf);
      const graph = await client.workflowGraph(refs["b"]!);
      assert.equal(graph.jobs[0]?.id, refs["b"]);
      assert.deepEqual(graph.edges, [{ parent: refs["a"], child: refs["b"] }]);
      assert.equal(graph.truncated, false);
    });

    test("operations need an admin token", async () => {
      const enq = server.client(server.enqueueToken);
      await assert.rejects(enq.pauseQueue(newQueue()), ForbiddenError);
      await assert.rejects(enq.listQueues(), ForbiddenError);
      await assert.rejects(enq.bulk("retry"), ForbiddenError);
    });
  });
}
