import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
  type Client,
} from "@drover/client";
import { Server, backends, newQueue, waitFor } from "./helpers.js";

for (const backend of backends()) {
  describe(`client (${backend})`, () => {
    let server: Server;
    let client: Client;
    before(async () => {
      server = await Server.start(backend);
      client = server.client();
    });
    after(async () => {
      await server?.stop();
    });

    test("insert with options and get", async () => {
      const queue = newQueue();
      const runAt = new Date(Date.now() + 3600_000);
      const id = await client.insert("email", { to: "ada@example.com" }, {
        queue, priority: 3, runAt, maxAttempts: 5, tags: ["welcome"], metadata: { tenant: "t1" }, timeoutMs: 60_000,
      });
      assert.ok(id > 0);
      const job = await client.getJob<{ to: string }>(id);
      assert.equal(job.kind, "email");
      assert.equal(job.args.to, "ada@example.com");
      assert.equal(job.queue, queue);
      assert.equal(job.state, "scheduled");
      assert.equal(job.priority, 3);
      assert.equal(job.max_attempts, 5);
      assert.deepEqual(job.tags, ["welcome"]);
      assert.deepEqual(job.metadata, { tenant: "t1" });
      assert.equal(job.timeout_ms, 60_000);
      assert.equal(Math.abs(new Date(job.run_at).getTime() - runAt.getTime()) < 1000, true);
    });

    test("unique key skips duplicates", async () => {
      const queue = newQueue();
      const a = await client.insert("u", {}, { queue, uniqueKey: "k1" });
      const b = await client.insert("u", {}, { queue, uniqueKey: "k1" });
      assert.ok(a > 0);
      assert.equal(b, 0);
    });

    test("insertMany and cursor paging", async () => {
      const queue = newQueue();
      const ids = await client.insertMany(Array.from({ length: 25 }, (_, i) => ({ kind: "p", args: { i }, queue })));
      assert.equal(ids.length, 25);
      const page = await client.listJobs({ queue, limit: 10 });
      assert.deepEqual(page.jobs.map((j) => j.id), ids.slice(0, 10));
      assert.equal(page.nextAfter, ids[9]);
      const seen: number[] = [];
      for await (const j of client.jobs({ queue, state: ["available"] })) seen.push(j.id);
      assert.deepEqual(seen, ids);
      let after: number | undefined;
      const paged: number[] = [];
      for (;;) {
        const p = await client.listJobs({ queue, limit: 7, after });
        paged.push(...p.jobs.map((j) => j.id));
        if (p.nextAfter === null) break;
        after = p.nextAfter;
      }
      assert.deepEqual(paged, ids);
      const stats = await client.stats(queue);
      assert.equal(stats["available"], 25);
    });

    test("cancel, retry, discard", async () => {
      const queue = newQueue();
      const id = await client.insert("c", {}, { queue });
      assert.equal((await client.cancel(id)).state, "cancelled");
      assert.equal((await client.retry(id)).state, "available");
      assert.equal((await client.discard(id)).state, "discarded");
      const r = await client.jobResult(id);
      assert.equal(r.state, "discarded");
      assert.equal(r.result, null);
    });

    test("typed errors carry the server's message", async () => {
      const queue = newQueue();
      await assert.rejects(client.getJob(999_999_999), (e: unknown) => e instanceof NotFoundError && e.status === 404);
      await assert.rejects(client.insert("bad kind!", {}, { queue }), (e: unknown) => {
        assert.ok(e instanceof ValidationError);
        assert.match(e.serverMessage, /kind/);
        return true;
      });
      await assert.rejects(client.insert("k", [1, 2], { queue }), (e: unknown) => {
        assert.ok(e instanceof ValidationError);
        assert.match(e.serverMessage, /^jobs\[0\]\.args: must be a JSON object, got an array/);
        return true;
      });
      await assert.rejects(client.insert("k", {}, { queue, runAt: "tomorrow" }), (e: unknown) => {
        assert.ok(e instanceof ValidationError);
        assert.match(e.serverMessage, /^jobs\.run_at: want an RFC 3339 time/);
        return true;
      });
      await assert.rejects(server.client("drv_nope").getJob(1), UnauthorizedError);
      await assert.rejects(server.client(server.enqueueToken).cancel(1), ForbiddenError);
      const parent = await client.insert("parent", {}, { queue });
      await client.insert("child", {}, { queue, dependsOn: [parent] });
      await client.cancel(parent);
      await assert.rejects(client.retry(parent), (e: unknown) => e instanceof ConflictError && e.status === 409);
    });

    test("batch with callback, batch results", async () => {
      const queue = newQueue();
      const b = await client.insertBatch(
        [{ kind: "r", args: { n: 1 }, queue }, { kind: "r", args: { n: 2 }, queue }],
        { kind: "done", args: {}, queue },
      );
      assert.equal(b.jobIds.length, 2);
      assert.ok(b.callbackJobId);
      const batch = await client.getBatch(b.id);
      assert.equal(batch.total, 2);
      assert.equal(batch.counts.pending, 2);
      const page = await client.batchResults(b.id);
      assert.deepEqual(page.results, []);
      assert.equal(page.nextAfter, null);
    });

    test("periodic jobs: create, tick under the server's leader, pause, trigger, update, delete", async () => {
      const queue = newQueue();
      // A name of its own: the server is shared by the file's tests.
      const name = `tick-${queue}`;
      const created = await client.createPeriodic(name, "@every 1s", "tick", { n: 1 }, { queue, tags: ["cron"] });
      assert.equal(created.source, "api");
      assert.equal(created.paused, false);
      assert.ok(created.next_run_at);
      assert.equal(created.last_run_at, null);
      await assert.rejects(client.createPeriodic(name, "@hourly", "tick"), (e: unknown) => e instanceof ConflictError);
      assert.ok((await client.listPeriodic()).some((p) => p.name === name));

      await waitFor(async () => (await client.listJobs({ queue, kind: "tick" })).jobs.length >= 2, "two ticks");
      const [job] = (await client.listJobs({ queue, kind: "tick" })).jobs;
      assert.deepEqual(job?.args, { n: 1 });
      assert.equal(job?.metadata?.["periodic"], name);

      const paused = await client.pausePeriodic(name);
      assert.equal(paused.paused, true);
      assert.equal(paused.next_run_at, null);
      const triggered = await client.triggerPeriodic(name);
      assert.equal(triggered.kind, "tick");
      assert.equal(triggered.metadata?.["triggered"], true);
      assert.ok((await client.getPeriodic(name)).last_run_at);

      const updated = await client.updatePeriodic(name, "@daily", "tick", { n: 2 }, { queue });
      assert.equal(updated.schedule, "@daily");
      assert.deepEqual(updated.args, { n: 2 });
      assert.equal(updated.paused, true);
      assert.equal((await client.resumePeriodic(name)).paused, false);
      await client.deletePeriodic(name);
      await assert.rejects(client.getPeriodic(name), (e: unknown) => e instanceof NotFoundError);
      await assert.rejects(client.createPeriodic(name, "61 * * * *", "tick"),
        (e: unknown) => e instanceof ValidationError && e.message.includes("schedule"));
    });
  });
}
