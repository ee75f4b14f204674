// Consumer processes against a real `drover serve` on every store: one is
// killed (SIGKILL) in the middle of a batch and its batch is delivered
// again, nothing lost; several share a subscription and each key's messages
// are handled in publish order; SIGTERM lets a running batch finish.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "@drover/client";
import { Server, backends, waitFor } from "./helpers.js";

const child = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "child-consumer.js");

interface Handled {
  pid: number;
  id: number;
  key: string;
  seq: number;
  attempt: number;
}

function spawnConsumer(server: Server, topic: string, ledger: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [child], {
    stdio: ["ignore", "inherit", "inherit"],
    env: {
      ...process.env, DROVER_URL: server.url, DROVER_TOKEN: server.workToken, TOPIC: topic, LEDGER: ledger, LEASE_MS: "2000",
      CONCURRENCY: "1", BATCH: "10", ...env,
    },
  });
}

const entries = (ledger: string): string[][] => (existsSync(ledger) ? readFileSync(ledger, "utf8").split("\n").filter(Boolean).map((l) => l.split(" ")) : []);

function handled(ledger: string): Handled[] {
  return entries(ledger).filter((e) => e[0] === "msg").map((e) => {
    const [id, key, seq, attempt] = e[2]!.split(":");
    return { pid: Number(e[1]), id: Number(id), key: key!, seq: Number(seq), attempt: Number(attempt) };
  });
}

const exited = (p: ChildProcess) =>
  p.exitCode !== null || p.signalCode !== null ? Promise.resolve(p.exitCode) : new Promise<number | null>((r) => p.once("exit", (code) => r(code)));

async function stop(procs: ChildProcess[]): Promise<void> {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill("SIGTERM");
  await Promise.all(procs.map(exited));
}

for (const backend of backends()) {
  describe(`consumer processes (${backend})`, () => {
    let server: Server;
    let client: Client;
    before(async () => {
      server = await Server.start(backend);
      client = server.client();
    });
    after(async () => {
      await server?.stop();
    });

    async function topic(lanes: number): Promise<string> {
      const t = "t-" + randomBytes(6).toString("hex");
      await client.createTopic(t, { lanes });
      await client.createSubscription(t, "s");
      return t;
    }
    const newLedger = () => join(mkdtempSync(join(tmpdir(), "drover-ts-consumer-")), "ledger");
    const pending = async (t: string) => (await client.subscriptionLag(t))[0]?.pending;

    test("a consumer killed mid-batch: the batch is delivered again, nothing lost", async () => {
      const t = await topic(2);
      const ledger = newLedger();
      const ids = await client.publish(t, Array.from({ length: 40 }, (_, i) => ({ payload: { seq: i }, key: `k${i % 2}` })));
      const first = spawnConsumer(server, t, ledger, { HANG_ON_BATCH: "2", HANG: "60000" });
      try {
        // The first batch acknowledged (the consumer starts the next batch
        // while the first's ack is on the way), the second one running.
        await waitFor(async () => entries(ledger).filter((e) => e[0] === "start").length === 2 && (await pending(t)) === 30,
          "the first batch acknowledged and the second started");
        first.kill("SIGKILL");
        await exited(first);
      } finally {
        first.kill("SIGKILL");
      }
      const starts = entries(ledger).filter((e) => e[0] === "start");
      const inFlight = new Set(starts[1]!.slice(2).map((m) => Number(m.split(":")[0])));
      assert.equal(inFlight.size, 10);
      const second = spawnConsumer(server, t, ledger, { CONCURRENCY: "2" });
      try {
        await waitFor(() => {
          const bySecond = new Set(handled(ledger).filter((h) => h.pid === second.pid).map((h) => h.id));
          return [...inFlight].every((id) => bySecond.has(id));
        }, "the killed batch delivered again after its lease");
        await waitFor(async () => (await pending(t)) === 0, "every message acknowledged");
      } finally {
        await stop([second]);
      }
      const done = handled(ledger);
      assert.deepEqual(new Set(done.map((h) => h.id)), new Set(ids));
      const byFirst = new Set(done.filter((h) => h.pid === first.pid).map((h) => h.id));
      assert.ok([...inFlight].every((id) => !byFirst.has(id)));
      assert.deepEqual(new Set(done.filter((h) => h.pid === second.pid).map((h) => h.id)), new Set(ids.filter((id) => !byFirst.has(id))));
    });

    test("key order holds with several consumer processes", async () => {
      const t = await topic(4);
      const ledger = newLedger();
      const procs = Array.from({ length: 3 }, () => spawnConsumer(server, t, ledger, { CONCURRENCY: "2", BATCH: "5", PER_MESSAGE_MS: "5" }));
      let seq = 0;
      try {
        // Every process is up (and receiving) before the messages come.
        await waitFor(() => entries(ledger).filter((e) => e[0] === "ready").length === 3, "three consumers ready");
        for (let r = 0; r < 6; r++) {
          await client.publish(t, Array.from({ length: 50 }, (_, i) => ({ payload: { seq: seq + i }, key: `k${(seq + i) % 8}` })));
          seq += 50;
        }
        await waitFor(() => handled(ledger).length >= seq, "every message handled", 60_000);
        await waitFor(async () => (await pending(t)) === 0, "every message acknowledged");
      } finally {
        await stop(procs);
      }
      const done = handled(ledger);
      assert.deepEqual(done.map((h) => h.seq).sort((a, b) => a - b), Array.from({ length: seq }, (_, i) => i), "a message lost or handled twice");
      for (const key of new Set(done.map((h) => h.key))) {
        const seqs = done.filter((h) => h.key === key).map((h) => h.seq);
        assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), `key ${key} handled out of order`);
      }
      assert.ok(new Set(done.map((h) => h.pid)).size >= 2, "the lanes were shared");
      assert.deepEqual(procs.map((p) => p.exitCode), [0, 0, 0]);
    });

    test("SIGTERM lets a running batch finish", async () => {
      const t = await topic(1);
      const ledger = newLedger();
      await client.publish(t, Array.from({ length: 5 }, (_, i) => ({ payload: { seq: i } })));
      const proc = spawnConsumer(server, t, ledger, { HANG_ON_BATCH: "1", HANG: "1000" });
      try {
        await waitFor(() => entries(ledger).some((e) => e[0] === "start"), "the batch to start");
        proc.kill("SIGTERM");
        assert.equal(await exited(proc), 0);
      } finally {
        proc.kill("SIGKILL");
      }
      assert.deepEqual(entries(ledger).map((e) => e[0]).filter((w) => w !== "ready"), ["start", "msg", "msg", "msg", "msg", "msg", "done"]);
      assert.equal(await pending(t), 0);
    });
  });
}
