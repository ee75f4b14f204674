// Job search through listJobs and jobs() against a real `drover serve`: each
// test inserts jobs into a queue of its own and asserts exactly which ids
// every filter returns.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { ValidationError, type Client, type JobFilter, type ListJobsOptions } from "@drover/client";
import { Server, backends, newQueue, waitFor } from "./helpers.js";

const minute = 60_000;
const hour = 60 * minute;

for (const backend of backends()) {
  describe(`search (${backend})`, () => {
    let server: Server;
    let client: Client;
    before(async () => {
      server = await Server.start(backend);
      client = server.client();
    });
    after(async () => {
      await server?.stop();
    });

    /** Every job of the queue that matches, paging to the end. */
    async function search(queue: string, filter: JobFilter & { limit?: number } = {}): Promise<number[]> {
      const out: number[] = [];
      for await (const j of client.jobs({ ...filter, queue })) out.push(j.id);
      return out;
    }

    test("args, metadata and tags", async () => {
      const queue = newQueue();
      const [ada, bob, sms, items] = await client.insertMany([
        { kind: "email", args: { to: "ada@example.com", lang: "en" }, queue, tags: ["vip", "eu"], metadata: { tenant: "acme" } },
        { kind: "email", args: { to: "bob@example.com", lang: "en" }, queue, tags: ["eu"], metadata: { tenant: "acme", plan: "pro" } },
        { kind: "sms", args: { to: "ada@example.com", route: { carrier: "x", hops: 2 } }, queue, tags: ["vip"], metadata: { tenant: "globex" } },
        { kind: "email", args: { to: "cy@example.com", items: [1, 2, 3], n: 1 }, queue },
      ]);

      // args: containment of a key, of nested objects, of array elements
      // in any order, numbers by value, combined with kind.
      assert.deepEqual(await search(queue, { args: { to: "ada@example.com" } }), [ada, sms]);
      assert.deepEqual(await search(queue, { args: { route: { hops: 2 } } }), [sms]);
      assert.deepEqual(await search(queue, { args: { items: [3, 1] } }), [items]);
      assert.deepEqual(await search(queue, { args: { n: 1.0 } }), [items]);
      assert.deepEqual(await search(queue, { args: { lang: "en" }, kind: "email" }), [ada, bob]);
      assert.deepEqual(await search(queue, { args: { to: "ada@example.com", lang: "fr" } }), []);
      assert.deepEqual(await search(queue, { args: {} }), [ada, bob, sms, items]);

      // metadata alike.
      assert.deepEqual(await search(queue, { metadata: { tenant: "acme" } }), [ada, bob]);
      assert.deepEqual(await search(queue, { metadata: { tenant: "acme", plan: "pro" } }), [bob]);
      assert.deepEqual(await search(queue, { metadata: { tenant: "initech" } }), []);

      // tags: the jobs that carry every one given.
      assert.deepEqual(await search(queue, { tags: ["vip"] }), [ada, sms]);
      assert.deepEqual(await search(queue, { tags: ["vip", "eu"] }), [ada]);
      assert.deepEqual(await search(queue, { tags: ["eu"], metadata: { plan: "pro" }, state: "available" }), [bob]);
      assert.deepEqual(await search(queue, { tags: ["eu"], state: ["completed", "discarded"] }), []);

      // One page of listJobs, newest first.
      const page = await client.listJobs({ queue, args: { to: "ada@example.com" }, order: "desc" });
      assert.deepEqual(page.jobs.map((j) => j.id), [sms, ada]);
      assert.equal(page.nextAfter, null);
      assert.equal(page.count, undefined);
    });

    test("time ranges", async () => {
      const queue = newQueue();
      const before = new Date();
      const first = await client.insertMany([0, 1, 2].map((i) => ({ kind: "t", args: { i }, queue })));
      // Date has milliseconds: let the clock (the server's too, on this
      // machine) pass the first insert's millisecond before the second.
      const t1 = Date.parse((await client.getJob(first[2]!)).created_at);
      await waitFor(() => Date.now() > t1 + 1, "the next millisecond");
      const second = await client.insertMany([3, 4].map((i) => ({ kind: "t", args: { i }, queue })));
      const scheduled = await client.insert("t", { i: 5 }, { queue, runAt: new Date(Date.now() + 2 * hour) });
      const afterAll = new Date();
      const everyone = [...first, ...second, scheduled];

      // Created: a range around now holds them all, one in the future none.
      assert.deepEqual(
        await search(queue, { createdSince: new Date(before.getTime() - minute), createdUntil: new Date(afterAll.getTime() + minute) }),
        everyone,
      );
      assert.deepEqual(await search(queue, { createdSince: new Date(afterAll.getTime() + hour) }), []);
      assert.deepEqual(await search(queue, { createdUntil: new Date(before.getTime() - minute) }), []);

      // Split the two inserts between them: [since, until) on each side.
      const mid = new Date(t1 + 1);
      assert.deepEqual(await search(queue, { createdUntil: mid }), first);
      assert.deepEqual(await search(queue, { createdSince: mid, kind: "t" }), [...second, scheduled]);

      // Scheduled (run_at): only the job due in two hours lies past one hour.
      const inAnHour = new Date(Date.now() + hour);
      assert.deepEqual(await search(queue, { scheduledSince: inAnHour }), [scheduled]);
      assert.deepEqual(await search(queue, { scheduledUntil: inAnHour }), [...first, ...second]);

      // Finished and attempted: a bound on a time a job has not set excludes
      // it; cancelling a waiting job finishes it.
      assert.equal((await client.cancel(second[1]!)).state, "cancelled");
      assert.deepEqual(await search(queue, { finishedSince: new Date(before.getTime() - minute) }), [second[1]]);
      assert.deepEqual(await search(queue, { finishedUntil: new Date(Date.now() + minute) }), [second[1]]);
      assert.deepEqual(await search(queue, { finishedSince: new Date(Date.now() + minute) }), []);
      assert.deepEqual(await search(queue, { attemptedSince: new Date("2000-01-01T00:00:00Z") }), []);
      assert.deepEqual(await search(queue, { attemptedUntil: new Date(Date.now() + 24 * hour) }), []);
    });

    test("order, count and paging with after", async () => {
      const queue = newQueue();
      const ids = await client.insertMany(
        Array.from({ length: 40 }, (_, i) => ({
          kind: "p",
          args: { i, pick: i % 3 === 0 },
          queue,
          tags: i % 3 === 0 ? ["pick"] : ["skip"],
          metadata: { n: i },
        })),
      );
      const picked = ids.filter((_, i) => i % 3 === 0);
      assert.equal(picked.length, 14);

      // Newest first.
      assert.deepEqual(await search(queue, { order: "desc" }), [...ids].reverse());
      assert.deepEqual((await client.listJobs({ queue, order: "desc", limit: 3 })).jobs.map((j) => j.id), ids.slice(-3).reverse());

      // count: the exact count of the filter, whatever the page's limit.
      const page = await client.listJobs({ queue, tags: ["pick"], count: true, limit: 1 });
      assert.deepEqual(page.count, { value: 14, exact: true });
      assert.deepEqual(page.jobs.map((j) => j.id), picked.slice(0, 1));
      assert.equal(page.nextAfter, picked[0]);
      assert.deepEqual((await client.listJobs({ queue, args: { pick: false }, count: true })).count, { value: 26, exact: true });
      assert.deepEqual((await client.listJobs({ queue, metadata: { n: 99 }, count: true })).count, { value: 0, exact: true });
      assert.equal((await client.listJobs({ queue, tags: ["pick"] })).count, undefined);

      // Paging with after over a filtered search visits each match once, in
      // either order.
      for (const [order, want] of [["asc", picked], ["desc", [...picked].reverse()]] as const) {
        const seen: number[] = [];
        let cursor: number | undefined;
        let pages = 0;
        for (;;) {
          const opts: ListJobsOptions = { queue, tags: ["pick"], order, after: cursor, limit: 4 };
          const p = await client.listJobs(opts);
          seen.push(...p.jobs.map((j) => j.id));
          pages++;
          if (p.nextAfter === null) break;
          cursor = p.nextAfter;
        }
        assert.deepEqual(seen, want, order);
        assert.ok(pages >= 4, `${order}: ${pages} pages`);
      }
      assert.deepEqual(await search(queue, { args: { pick: true }, limit: 3 }), picked);
      assert.deepEqual(await search(queue, { args: { pick: true }, order: "desc", limit: 5 }), [...picked].reverse());
    });

    test("errors name the parameter", async () => {
      const queue = newQueue();
      const id = await client.insert("e", { a: 1 }, { queue });
      const bad = (options: ListJobsOptions) => client.listJobs({ queue, ...options });
      await assert.rejects(bad({ args: [1, 2] as unknown as Record<string, unknown> }), (e: unknown) => {
        assert.ok(e instanceof ValidationError);
        assert.equal(e.status, 400);
        assert.match(e.serverMessage, /^args filter "\[1,2\]": must be a JSON object/);
        return true;
      });
      await assert.rejects(bad({ metadata: "tenant" as unknown as Record<string, unknown> }), (e: unknown) => {
        assert.ok(e instanceof ValidationError);
        assert.match(e.serverMessage, /^metadata filter .*must be a JSON object/);
        return true;
      });
      const now = new Date();
      await assert.rejects(bad({ createdSince: now, createdUntil: new Date(now.getTime() - hour) }), (e: unknown) => {
        assert.ok(e instanceof ValidationError);
        assert.match(e.serverMessage, /created/);
        return true;
      });
      await assert.rejects(bad({ order: "sideways" as "asc" }), (e: unknown) => {
        assert.ok(e instanceof ValidationError);
        assert.match(e.serverMessage, /^order "sideways"/);
        return true;
      });
      // What the query cannot carry is refused before any request.
      await assert.rejects(bad({ tags: ["a,b"] }), (e: unknown) => e instanceof TypeError && /^tags: "a,b" is not a tag/.test(e.message));
      await assert.rejects(bad({ createdSince: new Date("nope") }), (e: unknown) => e instanceof TypeError && /^createdSince: want a valid Date/.test(e.message));
      // Nothing was changed by the refused searches.
      assert.deepEqual(await search(queue), [id]);
      assert.equal((await client.getJob(id)).state, "available");
    });
  });
}
