"""``drover-worker``: runs a Worker defined in the user's module.

    drover-worker --url http://127.0.0.1:8080 --token drv_… --queue default \\
        --concurrency 50 myapp.jobs:worker
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from .errors import DroverError
from .worker import Worker


def load(target: str) -> Worker:
    """Imports module:attribute and returns the Worker it names."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise SystemExit(f"drover-worker: {target!r}: want module:attribute, e.g. myapp.jobs:worker")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    module = importlib.import_module(module_name)
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SystemExit(f"drover-worker: module {module_name} has no attribute {attr!r}") from None
    if not isinstance(obj, Worker):
        raise SystemExit(f"drover-worker: {target} is a {type(obj).__name__}, not a drover.Worker")
    return obj


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="drover-worker", description="Run a drover.Worker defined in a module.")
    p.add_argument("target", help="module:attribute naming a drover.Worker, e.g. myapp.jobs:worker")
    p.add_argument("--url", default=os.environ.get("DROVER_URL"), help="server URL (default $DROVER_URL)")
    p.add_argument("--token", default=os.environ.get("DROVER_TOKEN"),
                   help="token with the work scope (default $DROVER_TOKEN)")
    p.add_argument("--queue", action="append", dest="queues",
                   help="queue to work (repeat, or separate with commas, for several)")
    p.add_argument("--concurrency", type=int, help="most jobs running at once")
    p.add_argument("--lease", type=float, help="lease of each attempt in seconds (heartbeats extend it)")
    p.add_argument("--poll-wait", type=float, help="longest long poll of a claim in seconds")
    p.add_argument("--shutdown-timeout", type=float, help="seconds running jobs get to finish on SIGTERM")
    p.add_argument("--worker-id", help="this process's id, recorded as the jobs' lease owner")
    p.add_argument("--worker-name",
                   help="the name routed jobs aim at (default: --worker-id, once a routing option is given)")
    p.add_argument("--worker-type", help="the worker's type: it also takes jobs routed to it")
    p.add_argument("--label", action="append", dest="labels", metavar="KEY=VALUE",
                   help="a label of the worker (repeat for more): it also takes jobs that require it")
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR")
    a = p.parse_args(argv)
    logging.basicConfig(level=a.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    worker = load(a.target)
    queues = [q.strip() for arg in a.queues for q in arg.split(",") if q.strip()] if a.queues else None
    try:
        labels = None
        if a.labels:
            labels = {}
            for pair in a.labels:
                k, sep, v = pair.partition("=")
                if not sep:
                    raise ValueError(f"--label {pair!r}: use KEY=VALUE")
                labels[k] = v
        worker.configure(url=a.url, token=a.token, queues=queues, concurrency=a.concurrency, lease=a.lease,
                         poll_wait=a.poll_wait, shutdown_timeout=a.shutdown_timeout, worker_id=a.worker_id,
                         worker_name=a.worker_name, worker_type=a.worker_type, worker_labels=labels)
        worker.run()
    except (ValueError, DroverError) as e:
        print(f"drover-worker: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
