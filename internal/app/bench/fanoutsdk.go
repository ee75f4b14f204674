package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// `drover bench fanout --via python|typescript`: the consumer processes are
// the SDK's own topic consumers, talking to drover serve's API served from
// the bench process on loopback, each serving every subscription of the
// run with a batch handler. They write the ledger a `drover bench
// fanout-consumer` process writes (records of topic, subscription and n,
// then n pairs of message seq and latency in µs, little endian) and print
// the same stats lines, so that the point checks every delivery the same
// way and reports deliveries per second per consumer process beside Go's.

// pythonConsumerScript is the Python consumer process: python SCRIPT URL
// TOKEN PREFIX TOPICS SUBSCRIPTIONS CONSUMERS BATCH_SIZE LEASE_S LEDGER.
const pythonConsumerScript = `import asyncio, json, struct, sys, time

import drover

url, token, prefix, topics, subs, consumers, batch_size, lease, ledger = sys.argv[1:]
out = open(ledger, "ab")
delivered = 0


def handler(t, s):
    async def handle(batch):
        global delivered
        now = time.time_ns()
        rec = bytearray(struct.pack("<HHI", t, s, len(batch)))
        for d in batch:
            seq, ns = struct.unpack_from("<QQ", d.data)
            rec += struct.pack("<II", seq & 0xFFFFFFFF, max(0, (now - ns) // 1000) & 0xFFFFFFFF)
        out.write(rec)
        delivered += len(batch)
    return handle


async def main():
    c = drover.AsyncConsumer(url, token, lease=float(lease), poll_wait=1, shutdown_timeout=10)
    for t in range(int(topics)):
        for s in range(int(subs)):
            c.subscribe(f"{prefix}-{t}", f"m{s}", handler(t, s), batch=True, concurrency=int(consumers),
                        batch_size=int(batch_size))

    async def report():
        while True:
            print(json.dumps({"ready": True, "delivered": delivered}), flush=True)
            await asyncio.sleep(0.1)

    r = asyncio.create_task(report())
    await c.run()
    r.cancel()
    out.flush()
    print(json.dumps({"ready": True, "delivered": delivered}), flush=True)


asyncio.run(main())
`

// typescriptConsumerScript is the TypeScript consumer process, with the
// Python one's arguments; %s is the URL of the SDK's module.
const typescriptConsumerScript = `import { Consumer } from %q;
import { openSync, writeSync, closeSync } from "node:fs";

const [url, token, prefix, topics, subs, consumers, batchSize, lease, ledger] = process.argv.slice(2);
const out = openSync(ledger, "a");
let delivered = 0;
const quiet = { debug() {}, info() {}, warn: (m) => console.error(m), error: (m) => console.error(m) };
const c = new Consumer({ url, token, leaseMs: Number(lease) * 1000, pollWaitMs: 1000, shutdownTimeoutMs: 10000, logger: quiet });
for (let t = 0; t < Number(topics); t++) {
  for (let s = 0; s < Number(subs); s++) {
    c.subscribeBatch(prefix + "-" + t, "m" + s, (batch) => {
      const now = BigInt(Date.now()) * 1000000n;
      const rec = Buffer.alloc(8 + 8 * batch.length);
      rec.writeUInt16LE(t, 0);
      rec.writeUInt16LE(s, 2);
      rec.writeUInt32LE(batch.length, 4);
      batch.forEach((d, i) => {
        const v = new DataView(d.data.buffer, d.data.byteOffset, d.data.byteLength);
        const us = (now - v.getBigUint64(8, true)) / 1000n;
        rec.writeUInt32LE(Number(v.getBigUint64(0, true) & 0xffffffffn), 8 + 8 * i);
        rec.writeUInt32LE(Number(us > 0n ? us & 0xffffffffn : 0n), 12 + 8 * i);
      });
      writeSync(out, rec);
      delivered += batch.length;
    }, { concurrency: Number(consumers), batchSize: Number(batchSize) });
  }
}
const tick = setInterval(() => console.log(JSON.stringify({ ready: true, delivered })), 100);
await c.run();
clearInterval(tick);
closeSync(out);
console.log(JSON.stringify({ ready: true, delivered }));
`

// sdkConsumerCommand is the command of one SDK consumer process writing
// ledger, with its script written into dir on first use.
func (p *procConsumers) sdkConsumerCommand(ledger string) (*exec.Cmd, error) {
	file, source := "drover_bench_consumer.py", pythonConsumerScript
	if p.o.sdk.via == viaTypeScript {
		file, source = "drover_bench_consumer.mjs", fmt.Sprintf(typescriptConsumerScript, p.o.sdk.module)
	}
	script := filepath.Join(p.dir, file)
	if _, err := os.Stat(script); err != nil {
		if err := os.WriteFile(script, []byte(source), 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(p.o.sdk.exe, script, p.api.url, p.api.secret, p.prefix, strconv.Itoa(p.o.topics),
		strconv.Itoa(p.o.subscriptions), strconv.Itoa(p.o.consumers), strconv.Itoa(p.o.batchSize),
		strconv.FormatFloat(p.o.lease.Seconds(), 'f', -1, 64), ledger)
	cmd.Dir = p.dir
	return cmd, nil
}

// fanoutSDK fills in what runs the SDK consumers of --via, checking that
// the SDK is installed there before anything is published.
func (o *fanoutOptions) fanoutSDK(ctx context.Context, python, node, project string) error {
	switch o.via {
	case "", viaClient:
		o.via = viaClient
		return nil
	case viaPython:
		o.sdk = sdk{via: viaPython, name: "Python", exe: pythonFrom(python)}
		return checkPython(ctx, o.sdk.exe)
	case viaTypeScript:
		exe, dir := nodeFrom(node, project)
		module, err := checkNode(ctx, exe, dir)
		o.sdk = sdk{via: viaTypeScript, name: "TypeScript", exe: exe, module: module}
		return err
	}
	return usagef("--via %q: use client (drover bench fanout-consumer processes), python or typescript", o.via)
}
