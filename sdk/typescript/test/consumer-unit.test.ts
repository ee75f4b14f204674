// The Consumer against a scripted server, for what a real one does only
// rarely or by timing: the same messages received again while their first
// batch still runs here, an extend that reports a lease lost, a release at
// shutdown. The answers follow the contract of extend and release (a list of
// booleans in the order of the receipts).
import { afterEach, beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server as HttpServer } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import { Consumer, FailedMessages, type DeliveryCancelReason } from "@drover/client";
import { quiet, waitFor } from "./helpers.js";

type Body = Record<string, unknown> & { receipts?: string[]; acks?: unknown[] };

class Scripted {
  readonly requests: Array<[string, Body]> = [];
  batches: unknown[] = [];
  replies: Record<string, (b: Body) => unknown> = {
    ack: (b) => ({ accepted: (b.acks ?? []).map(() => true) }),
    extend: (b) => ({ extended: (b.receipts ?? []).map(() => true) }),
    release: (b) => ({ released: (b.receipts ?? []).map(() => true) }),
  };
  http: HttpServer;
  url = "";

  constructor() {
    this.http = createServer((req, res) => {
      let raw = "";
      req.on("data", (c: Buffer) => (raw += c.toString()));
      req.on("end", async () => {
        const body = JSON.parse(raw || "{}") as Body;
        const last = (req.url ?? "").split("/").pop()!;
        this.requests.push([last, body]);
        let out: unknown;
        if (last === "receive") {
          const b = this.batches.shift();
          if (!b) await delay(50);
          out = { batches: b ? [b] : [] };
        } else if (last === "claim") {
          await delay(50);
          out = { jobs: [] };
        } else {
          out = this.replies[last]!(body);
        }
        const data = JSON.stringify(out);
        res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(data) });
        res.end(data);
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.http.listen(0, "127.0.0.1", () => r()));
    const a = this.http.address();
    this.url = `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
  }

  sent(endpoint: string): Body[] {
    return this.requests.filter(([p]) => p === endpoint).map(([, b]) => b);
  }
}

const batch = (receipt: string, ...ids: number[]) => ({
  receipt,
  dropped: 0,
  messages: ids.map((id) => ({ id, payload: { i: id }, published_at: "2026-01-01T00:00:00Z", attempt: 1 })),
});

let fake: Scripted;
beforeEach(async () => {
  fake = new Scripted();
  await fake.start();
});
afterEach(async () => {
  fake.http.closeAllConnections();
  await new Promise((r) => fake.http.close(r));
});

test("a batch is never handled twice at once", async () => {
  fake.batches = [batch("r1", 1, 2), batch("r2", 1, 2)];
  const active = new Set<number>();
  const order: Array<[string, number]> = [];
  const consumer = new Consumer({ url: fake.url, token: "drv_t", leaseMs: 10_000, pollWaitMs: 100, logger: quiet });
  consumer.subscribe("t", "s", async (m) => {
    assert.ok(!active.has(m.id), `message ${m.id} handled twice at once`);
    active.add(m.id);
    order.push(["start", m.id]);
    await delay(200);
    active.delete(m.id);
    order.push(["end", m.id]);
  }, { concurrency: 2 });
  consumer.start();
  try {
    await waitFor(() => fake.sent("ack").flatMap((b) => b.acks ?? []).length === 2, "both batches acknowledged");
  } finally {
    await consumer.stop();
  }
  const once: Array<[string, number]> = [["start", 1], ["end", 1], ["start", 2], ["end", 2]];
  assert.deepEqual(order, [...once, ...once]);
  assert.deepEqual(fake.sent("ack").flatMap((b) => (b.acks as Array<{ receipt: string }>).map((a) => a.receipt)), ["r1", "r2"]);
});

test("a lost lease aborts the handler and drops the ack", async () => {
  fake.batches = [batch("r1", 1, 2, 3)];
  fake.replies["extend"] = (b) => ({ extended: (b.receipts ?? []).map(() => false) });
  const reasons: Array<DeliveryCancelReason | undefined> = [];
  const handled: number[] = [];
  const consumer = new Consumer({ url: fake.url, token: "drv_t", leaseMs: 1500, pollWaitMs: 100, logger: quiet });
  consumer.subscribe("t", "s", async (m, ctx) => {
    handled.push(m.id);
    await new Promise<void>((r) => {
      const t = setTimeout(r, 5000);
      ctx.signal.addEventListener("abort", () => {
        clearTimeout(t);
        r();
      });
    });
    reasons.push(ctx.reason);
  });
  consumer.start();
  try {
    await waitFor(() => reasons.length > 0, "the handler to be aborted");
    await delay(300); // room for a wrong ack or a next message
  } finally {
    await consumer.stop();
  }
  assert.deepEqual(reasons, ["lease_lost"]);
  assert.deepEqual(handled, [1]);
  assert.deepEqual(fake.sent("extend")[0], { receipts: ["r1"], lease_ms: 1500 });
  assert.deepEqual([fake.sent("ack"), fake.sent("release")], [[], []]);
});

test("shutdown releases unfinished batches", async () => {
  fake.batches = [batch("r1", 1), batch("r2", 2)];
  let started = false;
  const consumer = new Consumer({ url: fake.url, token: "drv_t", leaseMs: 10_000, pollWaitMs: 100, shutdownTimeoutMs: 200, logger: quiet });
  consumer.subscribeBatch("t", "s", async (msgs) => {
    if (msgs[0]!.id === 1) {
      started = true;
      await delay(3000); // ignores the abort
      return;
    }
    throw new FailedMessages({ 2: "no", 99: "not in the batch" });
  }, { concurrency: 2 });
  consumer.start();
  await waitFor(() => started && fake.sent("ack").length > 0, "the first batch running, the second acknowledged");
  const t0 = Date.now();
  await consumer.stop();
  assert.ok(Date.now() - t0 < 2500);
  assert.deepEqual(fake.sent("ack"), [{ acks: [{ receipt: "r2", failed: { "2": "no" } }] }]);
  assert.deepEqual(fake.sent("release"), [{ receipts: ["r1"] }]);
});
