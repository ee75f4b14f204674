#!/usr/bin/env python3
"""A Drover worker in plain Python (standard library only), over the HTTP API.

It claims a batch (long-polling while the queue is empty), runs each job,
extends the leases of jobs that run long, and reports the whole batch in one
request. Results are fenced by (id, attempt, lease_token): every call about a
job echoes the lease_token its claim returned, so no other caller can finish
it or extend its lease; if this process dies, its jobs come back when their
leases expire, and a late result is rejected.

    DROVER_URL=http://127.0.0.1:8080 DROVER_TOKEN=drv_... python3 worker.py email
"""
import json
import os
import socket
import sys
import threading
import traceback
import urllib.error
import urllib.request

URL = os.environ.get("DROVER_URL", "http://127.0.0.1:8080")
TOKEN = os.environ["DROVER_TOKEN"]
QUEUE = sys.argv[1] if len(sys.argv) > 1 else "default"
WORKER = f"{socket.gethostname()}-{os.getpid()}"
LEASE_MS = 30_000
ONCE = os.environ.get("DROVER_ONCE") == "1"  # stop when the queue is empty


def call(path, body):
    req = urllib.request.Request(URL + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=90) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as e:  # every error is JSON naming the problem
        raise SystemExit(f"{path}: {e.code} {json.load(e)['error']}")


def handle(job):
    """The work. Raise to fail the attempt (it is retried with backoff)."""
    args = job["args"]
    if job["kind"] == "fail":
        raise ValueError(f"cannot handle {args}")
    print(f"job {job['id']} ({job['kind']}, attempt {job['attempt']}): {args}", flush=True)


def heartbeat(held, stop):
    """Extends the leases of the batch every third of the lease while it runs."""
    while not stop.wait(LEASE_MS / 3000):
        reply = call("/v1/heartbeat", {"lease_ms": LEASE_MS, "attempts": held})
        if reply["lost"] or reply["cancel_requested"]:
            print("stop:", reply, flush=True)  # a real worker would interrupt those jobs


def main():
    while True:
        jobs = call("/v1/claim", {"queue": QUEUE, "worker": WORKER, "max": 10, "lease_ms": LEASE_MS,
                                  "wait_ms": 1000 if ONCE else 30_000})["jobs"]
        if not jobs:
            if ONCE:
                return
            continue
        stop = threading.Event()
        beat = threading.Thread(target=heartbeat, args=([{"id": j["id"], "attempt": j["attempt"], "lease_token": j["lease_token"]}
                                                       for j in jobs], stop))
        beat.start()
        results = []
        for job in jobs:
            result = {"id": job["id"], "attempt": job["attempt"], "lease_token": job["lease_token"],
                      "outcome": "completed"}
            try:
                handle(job)
            except Exception as e:
                # The store decides between a retry and a discard from
                # the job's own max_attempts; nothing to echo for it.
                result.update(outcome="failed", error=str(e), trace=traceback.format_exc())
            results.append(result)
        stop.set()
        beat.join()
        reply = call("/v1/finish", {"results": results})
        if reply["rejected"]:
            print("rejected (lease lost):", reply["rejected"], flush=True)


if __name__ == "__main__":
    main()
