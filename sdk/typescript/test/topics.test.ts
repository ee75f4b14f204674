// Topics against a real `drover serve` on every store: the client's topic
// and subscription calls, receiving and acknowledging by hand, and the
// Consumer with per-message and per-batch handlers, failures retried as jobs
// of the topic's retry queue until the subscription's max_attempts.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { ConflictError, Consumer, FailedMessages, ForbiddenError, NotFoundError, UnauthorizedError, ValidationError, type Client, type Delivery, type DeliveryContext, type ReceivedBatch, type SubscriptionLane } from "@drover/client";
import { DelayProxy, Server, backends, quiet, waitFor } from "./helpers.js";

const newTopic = () => "t-" + randomBytes(6).toString("hex");

for (const backend of backends()) {
  describe(`topics (${backend})`, () => {
    let server: Server;
    let client: Client;
    before(async () => {
      server = await Server.start(backend);
      client = server.client();
    });
    after(async () => {
      await server?.stop();
    });

    async function topic(lanes = 4): Promise<string> {
      const t = newTopic();
      await client.createTopic(t, { lanes });
      return t;
    }

    test("topic and subscription calls", async () => {
      const t = await topic();
      const again = await client.createTopic(t, { lanes: 4 });
      assert.deepEqual([again.name, again.lanes, again.retention_ms], [t, 4, 7 * 24 * 3600 * 1000]);
      assert.equal(await client.createSubscription(t, "s1", { maxAttempts: 3 }), true);
      assert.equal(await client.createSubscription(t, "s1"), false);
      assert.equal(await client.createSubscription(t, "s2", { fromEarliest: true }), true);
      const listed = (await client.listTopics()).find((x) => x.name === t);
      assert.deepEqual(listed?.subscriptions.sort(), ["s1", "s2"]);
      const ids = await client.publish(t, [{ payload: { n: 1 }, key: "k" }, { payload: new Uint8Array([0, 255]) }, { payload: "text", metadata: { m: 1 } }]);
      assert.equal(ids.length, 3);
      // On PostgreSQL a publish is ordered (and counted in the lag) by the
      // sequencer a moment after it commits.
      await waitFor(async () => (await client.subscriptionLag(t)).every((l) => l.pending === 3), "the lag to count the publish");
      const lag = new Map((await client.subscriptionLag(t)).map((l) => [l.subscription, l]));
      assert.equal(lag.get("s1")?.pending, 3);
      assert.ok(lag.get("s1")?.oldest_pending);
      await client.deleteSubscription(t, "s2");
      await assert.rejects(client.deleteSubscription(t, "s2"), NotFoundError);
      await assert.rejects(client.createTopic(newTopic(), { lanes: 5000 }), (e: unknown) => e instanceof ValidationError && /lanes/.test(e.message));
      await assert.rejects(client.publish(t, [{ payload: {}, topic: t }]), /messages\[0\]: topic/);
      await assert.rejects(server.client(server.workToken).createTopic(newTopic()), ForbiddenError);
      assert.deepEqual((await client.subscriptionLag(t)).map((l) => [l.subscription, l.pending]), [["s1", 3]]);
      const got = await client.getTopic(t);
      assert.deepEqual([got.name, got.lanes, got.subscriptions], [t, 4, ["s1"]]);
      await assert.rejects(client.createTopic(t, { lanes: 8 }), ConflictError); // exists with other options
      await client.deleteTopic(t);
      await assert.rejects(client.getTopic(t), NotFoundError);
      await assert.rejects(client.deleteTopic(t), NotFoundError);
      assert.ok(!(await client.listTopics()).some((x) => x.name === t));
    });

    test("receive, ack and nack by hand", async () => {
      const t = await topic();
      const other = await topic(1);
      await client.createSubscription(t, "s", { maxAttempts: 2 });
      await client.createSubscription(other, "s");
      const [a, b, c] = await client.publishMany([
        { topic: t, key: "k1", payload: { x: [1, 2] } },
        { topic: t, key: "k1", payload: new Uint8Array([1, 2]) },
        { topic: other, payload: null, metadata: { m: true } },
      ]);
      const batches = await client.receive(t, "s", { worker: "hand", maxBatches: 4, waitMs: 2000 });
      assert.equal(batches.length, 1);
      const [first, second] = batches[0]!.messages;
      assert.deepEqual([first!.id, first!.key, first!.isJSON, first!.payload, Buffer.from(first!.data).toString()], [a, "k1", true, { x: [1, 2] }, '{"x":[1,2]}']);
      assert.deepEqual([second!.id, second!.isJSON, second!.payload, [...second!.data]], [b, false, undefined, [1, 2]]);
      assert.deepEqual([first!.topic, first!.subscription, first!.attempt], [t, "s", 1]);
      assert.deepEqual(await client.ack(t, "s", [{ receipt: batches[0]!.receipt, failed: { [b!]: "bad bytes" } }]), [true]);
      assert.deepEqual(await client.ack(t, "s", [{ receipt: batches[0]!.receipt }]), [false]);
      await waitFor(async () => (await client.listJobs({ queue: `topic:${t}` })).jobs.length === 1, "the retry job");
      const retry = (await client.listJobs({ queue: `topic:${t}` })).jobs[0]!;
      assert.equal(retry.kind, "drover.topic");
      assert.deepEqual([(retry.args as { id: number }).id, retry.max_attempts], [b, 1]);
      const [ob] = await client.receive(other, "s", { worker: "hand", waitMs: 2000 });
      assert.deepEqual([ob!.messages[0]!.id, ob!.messages[0]!.isJSON, ob!.messages[0]!.payload, ob!.messages[0]!.metadata], [c, true, null, { m: true }]);
      assert.deepEqual(await client.nack(other, "s", [ob!.receipt], "not now"), [true]);
      await waitFor(async () => (await client.listJobs({ queue: `topic:${other}` })).jobs.length === 1, "the nacked message's job");
    });

    test("rewind a subscription", async () => {
      const t = await topic();
      await client.createSubscription(t, "r", { fromEarliest: true });
      const ids = await client.publish(t, [0, 1, 2].map((n) => ({ payload: { n }, key: "k" })));
      const receiveAll = async (): Promise<number[]> => {
        const got: number[] = [];
        for (let i = 0; i < 50; i++) {
          const batches = await client.receive(t, "r", { worker: "w", batchSize: 10, waitMs: 200 });
          if (batches.length === 0 && got.length >= ids.length) break;
          for (const b of batches) got.push(...b.messages.map((m) => m.id));
          assert.deepEqual(await client.ack(t, "r", batches.map((b) => ({ receipt: b.receipt }))), batches.map(() => true));
        }
        return got;
      };
      assert.deepEqual(await receiveAll(), ids);
      ids.push(...(await client.publish(t, [{ payload: { n: 3 }, key: "k" }])));
      const [held] = await client.receive(t, "r", { worker: "w", batchSize: 10, waitMs: 5000 });
      const rewound = await client.rewindSubscription(t, "r", { earliest: true });
      assert.deepEqual([rewound.lanes, rewound.released, rewound.pending], [1, 1, 4]);
      assert.ok(rewound.oldest_pending);
      assert.deepEqual(await client.ack(t, "r", [{ receipt: held!.receipt }]), [false]);
      assert.deepEqual(await receiveAll(), ids);

      await assert.rejects(client.rewindSubscription(t, "r", { since: new Date(Date.now() + 3600_000) }), (e: unknown) => e instanceof ValidationError && /future/.test(e.message));
      await assert.rejects(client.rewindSubscription(t, "nosuch", { earliest: true }), (e: unknown) => e instanceof NotFoundError && /nosuch/.test(e.message));
      await assert.rejects(server.client(server.workToken).rewindSubscription(t, "r", { earliest: true }), ForbiddenError);
      const since = await client.rewindSubscription(t, "r", { since: new Date(Date.now() - 3600_000) });
      assert.deepEqual([since.lanes, since.released, since.pending], [1, 0, 4]);
      assert.deepEqual(await receiveAll(), ids);
    });

    /** The one lane of subscription s that a consumer holds. */
    async function heldLane(t: string): Promise<SubscriptionLane> {
      const lane = await heldLaneIfAny(t);
      assert.ok(lane, "no lane held");
      return lane;
    }
    /** The one lane of s held, undefined when none is. */
    async function heldLaneIfAny(t: string): Promise<SubscriptionLane | undefined> {
      const lanes = await client.subscriptionLanes(t, "s");
      assert.equal(lanes.length, 4);
      const held = lanes.filter((l) => l.holder);
      assert.ok(held.length <= 1, JSON.stringify(lanes));
      return held[0];
    }
    const ms = (at: string | undefined) => (at ? Date.parse(at) : 0);

    test("extend, release and lanes by hand", async () => {
      const t = await topic();
      await client.createSubscription(t, "s");
      const ids = await client.publish(t, [0, 1, 2].map((n) => ({ payload: { n }, key: "k" })));
      const work = server.client(server.workToken);
      const attempts = (b: ReceivedBatch | undefined) => b?.messages.map((m) => [m.id, m.attempt]);
      const [batch, ...more] = await work.receive(t, "s", { worker: "a", leaseMs: 2000, waitMs: 2000 });
      assert.equal(more.length, 0);
      assert.deepEqual(attempts(batch), ids.map((id) => [id, 1]));
      const lane = await heldLane(t);
      // The cursor of a subscription made after other topics' publishes
      // starts where the topic stood, below the messages it receives.
      assert.deepEqual([lane.holder, lane.lag, lane.attempt], ["a", 3, 1]);
      assert.ok(lane.cursor < ids[0]!);
      assert.ok(lane.lease_expires_at);

      // Extended, the lease outlives the two seconds it was received for.
      assert.deepEqual(await work.extendBatches(t, "s", [batch!.receipt], { leaseMs: 120_000 }), [true]);
      const extended = await heldLane(t);
      assert.equal(extended.holder, "a");
      assert.ok(ms(extended.lease_expires_at) - ms(lane.lease_expires_at) > 60_000);
      assert.deepEqual(await work.receive(t, "s", { worker: "b", waitMs: 2500 }), []); // past the first lease: still a's
      // A receipt goes back as it came: an altered one is refused, naming it.
      const r = batch!.receipt;
      const forged = r.slice(0, -2) + (r.endsWith("AA") ? "BB" : "AA");
      await assert.rejects(work.extendBatches(t, "s", [forged]), (e: unknown) => e instanceof ValidationError && /receipt/.test(e.message));
      await assert.rejects(work.extendBatches(t, "nosuch", [r]), NotFoundError);

      // Released, the batch goes to the next receive at once, its delivery not counted.
      assert.deepEqual(await work.releaseBatches(t, "s", [r]), [true]);
      assert.deepEqual(await work.releaseBatches(t, "s", [r]), [false]);
      const [again] = await work.receive(t, "s", { worker: "b", leaseMs: 120_000, waitMs: 2000 });
      assert.deepEqual(attempts(again), ids.map((id) => [id, 1]));

      // An operator frees the lane b holds: b's extend and ack are refused,
      // and the next delivery counts (one message at a time after a lost lease).
      const taken = await heldLane(t);
      assert.equal(taken.holder, "b");
      await assert.rejects(work.releaseLane(t, "s", taken.lane), ForbiddenError);
      assert.equal(await client.releaseLane(t, "s", taken.lane), true);
      assert.equal(await client.releaseLane(t, "s", taken.lane), false);
      assert.deepEqual(await work.extendBatches(t, "s", [again!.receipt]), [false]);
      assert.deepEqual(await work.ack(t, "s", [{ receipt: again!.receipt }]), [false]);
      const [third] = await work.receive(t, "s", { worker: "c", leaseMs: 120_000, waitMs: 2000 });
      assert.deepEqual(attempts(third), [[ids[0], 2]]);
      assert.deepEqual(await work.ack(t, "s", [{ receipt: third!.receipt }]), [true]);
      const done = (await client.subscriptionLanes(t, "s")).find((l) => l.lane === taken.lane);
      assert.deepEqual([done?.cursor, done?.lag, done?.holder, done?.lease_expires_at], [ids[0], 2, undefined, undefined]);
    });

    test("the consumer extends a long handler's lease and releases its batch at shutdown", async () => {
      const t = await topic();
      await client.createSubscription(t, "s");
      const [first] = await client.publish(t, [{ payload: { n: 0 }, key: "k" }]);
      const seen: Array<[number, number]> = [];
      let finish!: () => void;
      const finished = new Promise<void>((r) => (finish = r));
      const consumer = new Consumer({ url: server.url, token: server.workToken, leaseMs: 2000, pollWaitMs: 1000, logger: quiet });
      consumer.subscribe(t, "s", async (m: Delivery) => {
        seen.push([m.id, m.attempt]);
        await finished;
      });
      consumer.start();
      try {
        await waitFor(() => seen.length > 0, "the handler to start");
        // The lane is read until it shows a holder: on a loaded machine a
        // renewal may come after the lease ended, and until it does (the
        // server renews a lapsed lease that no one took) the lane shows none.
        let lane: SubscriptionLane | undefined;
        const held = async () => (lane = await heldLaneIfAny(t)) !== undefined;
        await waitFor(held, "the lane held");
        const start = lane!;
        assert.equal(start.holder, consumer.consumerId);
        // Two leases later the lane is still the consumer's, renewed.
        await waitFor(async () => (await held()) && ms(lane!.lease_expires_at) - ms(start.lease_expires_at) >= 4000, "the extends of two leases");
        assert.deepEqual([lane!.holder, lane!.attempt], [consumer.consumerId, 1]);
        finish();
        await waitFor(async () => (await client.subscriptionLag(t)).find((l) => l.subscription === "s")?.pending === 0, "the ack");
      } finally {
        finish();
        await consumer.stop();
      }
      assert.deepEqual(seen, [[first, 1]]);

      // A handler still running at shutdown: its batch is released, received
      // again at once by hand rather than after the minute's lease, its
      // delivery not counted. This reads a subscription of its own: the first
      // consumer's last long poll of s may outlive it on the server for a
      // moment, and a message it leased there would be delivered again, counted.
      await client.createSubscription(t, "r");
      const [second] = await client.publish(t, [{ payload: { n: 1 }, key: "k" }]);
      seen.length = 0;
      const stopping = new Consumer({ url: server.url, token: server.workToken, leaseMs: 60_000, pollWaitMs: 1000, shutdownTimeoutMs: 500, logger: quiet });
      stopping.subscribe(t, "r", async (m: Delivery, ctx: DeliveryContext) => {
        seen.push([m.id, m.attempt]);
        await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r(), { once: true }));
      });
      stopping.start();
      try {
        await waitFor(() => seen.length > 0, "the handler to start");
      } finally {
        await stopping.stop();
      }
      assert.deepEqual(seen, [[second, 1]]);
      const work = server.client(server.workToken);
      const [batch] = await work.receive(t, "r", { worker: "after", waitMs: 5000 });
      assert.deepEqual(batch?.messages.map((m) => [m.id, m.attempt]), [[second, 1]]);
      assert.deepEqual(await work.ack(t, "r", [{ receipt: batch!.receipt }]), [true]);
    });

    test("the consumer receives batches ahead of its handlers, and releases those not started at shutdown", async () => {
      const t = await topic(2);
      await client.createSubscription(t, "s");
      // Keyed messages until both lanes have some.
      for (let i = 0; ; i++) {
        await client.publish(t, [{ payload: { i }, key: `k${i}` }]);
        await waitFor(async () => (await client.subscriptionLanes(t, "s")).reduce((n, l) => n + l.lag, 0) === i + 1, "the lag to count the publish");
        if ((await client.subscriptionLanes(t, "s")).every((l) => l.lag > 0)) break;
      }
      const seen: number[][] = [];
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      const consumer = new Consumer({ url: server.url, token: server.workToken, leaseMs: 10_000, pollWaitMs: 1000, logger: quiet });
      consumer.subscribeBatch(t, "s", async (batch: Delivery[]) => {
        seen.push(batch.map((m) => m.id));
        await gate;
      }, { concurrency: 1, prefetch: 1 });
      consumer.start();
      let stopped: Promise<void> | undefined;
      try {
        await waitFor(() => seen.length === 1, "the first batch's handler");
        // One handler runs; the other lane's batch was received ahead of it.
        await waitFor(async () => (await client.subscriptionLanes(t, "s")).every((l) => l.holder === consumer.consumerId), "both lanes held");
        stopped = consumer.stop();
        // The stop has begun (its first steps are microtasks) before the handler ends.
        await new Promise((r) => setImmediate(r));
        open();
      } finally {
        open();
        await (stopped ?? consumer.stop());
      }
      assert.equal(seen.length, 1, "a batch received ahead was started after the stop");
      // The running batch was acknowledged, the one received ahead released:
      // received again at once, its delivery not counted.
      const work = server.client(server.workToken);
      const again = await work.receive(t, "s", { worker: "after", maxBatches: 2, waitMs: 5000 });
      assert.equal(again.length, 1);
      assert.ok(again[0]!.messages.every((m) => m.attempt === 1 && !seen[0]!.includes(m.id)));
      const lanes = await client.subscriptionLanes(t, "s");
      assert.equal(lanes.reduce((n, l) => n + l.lag, 0), again[0]!.messages.length);
      assert.deepEqual(await work.ack(t, "s", [{ receipt: again[0]!.receipt }]), [true]);
    });

    test("the consumer handles every message in key order", async () => {
      const t = await topic();
      await client.createSubscription(t, "s");
      const seen: Array<[string, number]> = [];
      const consumer = new Consumer({ url: server.url, token: server.workToken, leaseMs: 5000, pollWaitMs: 1000, logger: quiet });
      consumer.subscribe(t, "s", (m: Delivery) => {
        seen.push([m.key, (m.payload as { seq: number }).seq]);
      }, { concurrency: 4, batchSize: 7 });
      consumer.start();
      try {
        for (let r = 0; r < 3; r++) {
          await client.publish(t, Array.from({ length: 20 }, (_, i) => ({ payload: { seq: r * 20 + i }, key: `k${i % 5}` })));
        }
        await waitFor(() => seen.length >= 60, "every message handled");
      } finally {
        await consumer.stop();
      }
      assert.deepEqual(seen.map(([, s]) => s).sort((x, y) => x - y), Array.from({ length: 60 }, (_, i) => i));
      for (const k of new Set(seen.map(([k]) => k))) {
        const seqs = seen.filter(([kk]) => kk === k).map(([, s]) => s);
        assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y), `key ${k} out of order`);
      }
      await waitFor(async () => (await client.subscriptionLag(t))[0]?.pending === 0, "every batch acknowledged");
    });

    test("a consumer of several subscriptions keeps their leases when the server answers slowly", async () => {
      // Six subscriptions (two topics of three) in one consumer, behind a
      // proxy that holds every extend and ack for 800 ms, as a loaded server
      // answers: each handler runs through three extensions of its
      // subscription, and the subscription's spare handlers keep receiving,
      // so a lane whose lease ran out is leased again. Extending one
      // subscription after another, the last ones' leases (6 s) ran out
      // before their turn came (6/3 s + 6 × 800 ms): their handlers were
      // stopped, their batches delivered again and their acks refused. The
      // lease is no shorter so that an extend's own timeout (half the
      // lease, 3 s) leaves a loaded server 2 s of its own beyond the
      // proxy's hold.
      const leaseMs = 6000;
      const proxy = await DelayProxy.start(server.url, 800, /\/(extend|ack)$/);
      const subs: Array<[string, string]> = [];
      const published = new Map<string, number[]>();
      for (let i = 0; i < 2; i++) {
        const t = await topic(2);
        for (const s of ["a", "b", "c"]) {
          await client.createSubscription(t, s);
          subs.push([t, s]);
        }
        published.set(t, await client.publish(t, Array.from({ length: 6 }, (_, j) => ({ payload: { j }, key: `k${j}` }))));
      }
      const handled = new Map<string, number>();
      const stopped: string[] = [];
      const warnings: string[] = [];
      const logger = { ...quiet, warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
      const consumer = new Consumer({ url: proxy.url, token: server.workToken, leaseMs, pollWaitMs: 1000, logger });
      for (const [t, s] of subs) {
        const extends_ = `/${t}/subscriptions/${s}/extend`;
        consumer.subscribeBatch(t, s, async (batch, ctx) => {
          for (const m of batch) handled.set(`${t}/${s}/${m.id}`, (handled.get(`${t}/${s}/${m.id}`) ?? 0) + 1);
          const from = proxy.count(extends_);
          await waitFor(() => proxy.count(extends_) >= from + 3 || ctx.signal.aborted, `extends of ${t}/${s}`);
          if (ctx.signal.aborted) stopped.push(`${t}/${s}: ${ctx.reason}`);
        }, { concurrency: 4 });
      }
      consumer.start();
      try {
        await waitFor(async () => {
          for (const t of published.keys()) if (!(await client.subscriptionLag(t)).every((l) => l.pending === 0)) return false;
          return handled.size === 36;
        }, "every message handled and acknowledged");
      } finally {
        await consumer.stop();
        await proxy.stop();
      }
      assert.deepEqual(stopped, []);
      assert.deepEqual(warnings, []);
      const want = subs.flatMap(([t, s]) => published.get(t)!.map((id) => `${t}/${s}/${id}`)).sort();
      assert.deepEqual([...handled.keys()].sort(), want);
      assert.deepEqual([...handled.values()].filter((n) => n !== 1), [], "messages handled more than once");
    });

    test("failed messages retry by the subscription's policy", async () => {
      const t = await topic();
      await client.createSubscription(t, "s", { maxAttempts: 3 });
      const ids = await client.publish(t, Array.from({ length: 5 }, (_, i) => ({ payload: { n: i }, key: "one" })));
      const doomed = ids[1]!;
      const flaky = ids[3]!;
      const attempts = new Map<number, number[]>();
      const consumer = new Consumer({ url: server.url, token: server.workToken, leaseMs: 5000, pollWaitMs: 1000, logger: quiet });
      consumer.subscribeBatch(t, "s", async (batch, ctx) => {
        assert.deepEqual([ctx.topic, ctx.subscription], [t, "s"]);
        for (const m of batch) attempts.set(m.id, [...(attempts.get(m.id) ?? []), m.attempt]);
        const failed = new Map<number, unknown>();
        for (const m of batch) {
          if (m.id === doomed) failed.set(m.id, new TypeError("always"));
          else if (m.id === flaky && m.attempt === 1) failed.set(m.id, "once");
        }
        if (failed.size > 0) throw new FailedMessages(failed);
      });
      consumer.start();
      try {
        await waitFor(async () => {
          const st = await client.stats(`topic:${t}`);
          return st["discarded"] === 1 && st["completed"] === 1;
        }, "the retries to end");
      } finally {
        await consumer.stop();
      }
      assert.deepEqual(attempts.get(doomed), [1, 2, 3]);
      assert.deepEqual(attempts.get(flaky), [1, 2]);
      for (const id of ids) if (id !== doomed && id !== flaky) assert.deepEqual(attempts.get(id), [1]);
      const dead = (await client.listJobs({ queue: `topic:${t}`, state: "discarded" })).jobs[0]!;
      assert.equal((dead.args as { id: number }).id, doomed);
      assert.equal(dead.errors.at(-1)?.error, "TypeError: always");
    });

    test("consumer errors", async () => {
      const t = await topic();
      const bad = new Consumer({ url: server.url, token: "drv_unknown", pollWaitMs: 1000, logger: quiet });
      bad.subscribe(t, "s", () => {});
      await assert.rejects(bad.run(), UnauthorizedError);
      assert.throws(() => bad.subscribe(t, "s2", () => {}), /before start/);
      const c = new Consumer({ url: server.url, token: server.token });
      c.subscribe(t, "s", () => {});
      assert.throws(() => c.subscribe(t, "s", () => {}), /registered already/);
      assert.throws(() => c.subscribe(t, "s2", () => {}, { batchSize: 0 }), /batchSize/);
      assert.throws(() => new Consumer({ leaseMs: 600_000 }), /leaseMs/);
      assert.throws(() => new Consumer({ url: server.url, token: server.token }).start(), /no subscriptions/);
      // A subscription that is not stored stops the consumer, naming it, rather than waiting forever.
      const typo = new Consumer({ url: server.url, token: server.workToken, pollWaitMs: 1000, logger: quiet });
      typo.subscribe(t, "nosuch", () => {});
      await assert.rejects(typo.run(), (e: unknown) => e instanceof NotFoundError && /nosuch/.test(e.message));
    });
  });
}
