#!/usr/bin/env python3
"""Fills a running `drover serve` with a realistic day's mix, for the
dashboard's screenshots (docs/dashboard.png, docs/dashboard-*.png).

Standard library only. Against DROVER_URL with an admin token DROVER_TOKEN
it stores three periodic jobs (one paused), enqueues thousands of jobs
across six queues (tags, tenants in metadata, some scheduled for later),
twenty workflows (fetch, three resizes, publish) and ten batches with a
callback, puts queue payments in strict order (where one failing capture
holds up the rest), caps reports and pauses one kind of email, creates a
topic whose two subscriptions lag, then works the queues for --seconds with
worker threads over the HTTP API while it publishes: most jobs complete with
a result, some fail and are retried, a few fail for good. The load comes in
waves, so that the charts have a shape.

    DROVER_URL=http://127.0.0.1:8080 DROVER_TOKEN=drv_... python3 scripts/dashboard-demo.py --seconds 180

Every request goes to DROVER_URL only (a server on this machine); the run
stops by itself.
"""
import argparse
import json
import os
import random
import threading
import time
import urllib.error
import urllib.request

URL = os.environ.get("DROVER_URL", "http://127.0.0.1:8080")
TOKEN = os.environ["DROVER_TOKEN"]
QUEUES = {"email": ["email.send", "email.digest"], "images": ["image.resize", "image.thumbnail"],
          "reports": ["report.build"], "billing": ["invoice.charge", "invoice.refund"],
          "default": ["webhook.deliver", "user.sync", "cache.warm"], "payments": ["payment.capture"]}
TENANTS = ["acme", "initech", "globex", "umbrella", "hooli"]


def call(method, path, body=None):
    req = urllib.request.Request(URL + path, data=None if body is None else json.dumps(body).encode(), method=method,
                                 headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=90) as resp:
            raw = resp.read()
            return json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raise SystemExit(f"{method} {path}: {e.code} {e.read().decode()}")


def job(queue, kind, i, **extra):
    tenant = TENANTS[i % len(TENANTS)]
    j = {"kind": kind, "queue": queue, "args": {"user_id": i % 900, "tenant": tenant, "n": i},
         "metadata": {"tenant": tenant}, "tags": ["vip"] if i % 11 == 0 else [], "max_attempts": 3 if i % 4 else 5}
    j.update(extra)
    return j


def seed(rng, n):
    for name, schedule, kind, queue in [("nightly-report", "@every 1m", "report.build", "reports"),
                                        ("cache-warm", "@every 20s", "cache.warm", "default"),
                                        ("invoice-run", "0 2 * * *", "invoice.charge", "billing")]:
        call("POST", "/v1/periodic", {"name": name, "schedule": schedule, "kind": kind, "queue": queue,
                                      "args": {"periodic": True}})
    call("POST", "/v1/periodic/invoice-run/pause")
    batch = []
    for i in range(n):
        queue = rng.choice(list(QUEUES))
        extra = {}
        if i % 40 == 0:
            extra["run_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + rng.randint(600, 7200)))
        batch.append(job(queue, rng.choice(QUEUES[queue]), i, **extra))
        if len(batch) == 500:
            call("POST", "/v1/jobs", {"jobs": batch})
            batch = []
    if batch:
        call("POST", "/v1/jobs", {"jobs": batch})
    for w in range(20):
        steps = [{"ref": "fetch", "kind": "image.fetch", "queue": "images", "args": {"album": w}}]
        for k in range(3):
            steps.append({"ref": f"resize{k}", "kind": "image.resize", "queue": "images", "args": {"album": w, "size": 64 << k},
                          "after": ["fetch"]})
        steps.append({"ref": "publish", "kind": "album.publish", "queue": "default", "args": {"album": w},
                      "after": ["resize0", "resize1", "resize2"]})
        call("POST", "/v1/workflows", {"steps": steps})
    for b in range(10):
        jobs = [job("reports", "report.build", 10_000 + b * 100 + k) for k in range(50)]
        call("POST", "/v1/batches", {"jobs": jobs, "callback": {"kind": "report.merge", "queue": "reports", "args": {"batch": b}}})
    # Settings an operator would look for: a strict queue, a capped one, a
    # paused kind; and a topic whose subscriptions nobody consumes yet.
    call("POST", "/v1/queues/payments/strict", {"max_running": 1})
    call("POST", "/v1/queues/email/pause?kind=email.digest")
    call("POST", "/v1/topics", {"name": "orders", "lanes": 8})
    for sub in ("billing", "analytics"):
        call("POST", "/v1/topics/orders/subscriptions", {"name": sub})


def worker(queue, stop, rate, rng):
    """Claims and finishes jobs of queue at about rate() jobs a second."""
    wid = f"demo-{queue}-{threading.get_ident() % 1000}"
    while not stop.is_set():
        want = max(1, int(rate() / 4))
        jobs = call("POST", "/v1/claim", {"queue": queue, "worker": wid, "max": want, "lease_ms": 30000, "wait_ms": 1000})["jobs"]
        if not jobs:
            continue
        time.sleep(rng.uniform(0.05, 0.25))
        results = []
        for j in jobs:
            r = {"id": j["id"], "attempt": j["attempt"], "lease_token": j["lease_token"], "outcome": "completed"}
            kind, n = j["kind"], j["args"].get("n", 0) if isinstance(j["args"], dict) else 0
            if kind == "webhook.deliver" and n % 3 == 0:
                r.update(outcome="failed", error=f"POST https://hooks.example.com/{n}: 503 Service Unavailable",
                         retry_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + rng.randint(5, 40))))
            elif kind == "payment.capture" and n % 50 == 0:
                # Held for hours: in strict order, the queue waits behind it.
                r.update(outcome="failed", error=f"capture {n}: card issuer unavailable",
                         retry_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 7200)))
            elif kind == "invoice.charge" and n % 17 == 0:
                r.update(outcome="failed", error=f"card declined for tenant {j['args'].get('tenant')}",
                         trace="Traceback (most recent call last):\n  File \"billing.py\", line 88, in charge\nCardDeclined: insufficient_funds")
            elif rng.random() < 0.02:
                r.update(outcome="failed", error="timeout talking to the upstream service")
            else:
                r["result"] = {"ms": rng.randint(3, 400)}
            results.append(r)
        call("POST", "/v1/finish", {"results": results})
        time.sleep(max(0.0, len(jobs) / max(rate(), 0.1) - 0.15))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=6000)
    ap.add_argument("--seconds", type=int, default=180)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work-only", action="store_true", help="skip the setup: work and publish on a store filled before")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    if not a.work_only:
        seed(rng, a.jobs)
    start = time.time()
    # Waves: the rate per worker rises and falls over the run.
    rate = lambda: 6 + 5 * (1 + __import__("math").sin((time.time() - start) / 25))
    stop = threading.Event()
    threads = [threading.Thread(target=worker, args=(q, stop, rate, random.Random(a.seed + i)))
               for i, q in enumerate(list(QUEUES) * 2)]
    for t in threads:
        t.start()
    feeder = random.Random(a.seed + 99)
    i = a.jobs
    while time.time() - start < a.seconds:
        time.sleep(2)
        queue = feeder.choice(list(QUEUES))
        call("POST", "/v1/jobs", {"jobs": [job(queue, feeder.choice(QUEUES[queue]), i + k) for k in range(feeder.randint(20, 80))]})
        i += 80
        call("POST", "/v1/topics/orders/publish", {"messages": [{"key": f"customer-{feeder.randint(1, 40)}",
                                                                  "payload": {"order": i + k}} for k in range(feeder.randint(5, 30))]})
    stop.set()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
