"""The consumer against a scripted server, for what a real one does only
rarely or by timing: the same messages received again while their first
batch still runs here, an extend that reports a lease lost, a release at
shutdown. The scripted answers follow the contract of extend and release
(a list of booleans in the order of the receipts)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import drover
from conftest import wait_for

Reply = Callable[[dict[str, Any]], dict[str, Any]]


class Scripted:
    """Answers a consumer of topic t, subscription s: receive hands out the
    batches queued in ``batches`` (then nothing, after a short wait), the
    other endpoints answer with ``replies`` by last path segment; every
    request is recorded."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.batches: list[dict[str, Any]] = []
        self.replies: dict[str, Reply] = {
            "ack": lambda b: {"accepted": [True] * len(b["acks"])},
            "extend": lambda b: {"extended": [True] * len(b["receipts"])},
            "release": lambda b: {"released": [True] * len(b["receipts"])},
            "claim": lambda b: {"jobs": []},
        }
        #: Seconds an endpoint (by last path segment) takes to answer, after
        #: which "<endpoint> answered" is recorded, before the answer is sent.
        self.delays: dict[str, float] = {}
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                last = self.path.rsplit("/", 1)[-1]
                with fake.lock:
                    fake.requests.append((last, body))
                    batch = fake.batches.pop(0) if last == "receive" and fake.batches else None
                if last == "receive":
                    if batch is None:
                        time.sleep(0.05)
                    out: dict[str, Any] = {"batches": [batch] if batch else []}
                elif last == "claim":
                    time.sleep(0.05)
                    out = fake.replies["claim"](body)
                else:
                    out = fake.replies[last](body)
                if last in fake.delays:
                    time.sleep(fake.delays[last])  # the slow server this one plays
                    with fake.lock:
                        fake.requests.append((f"{last} answered", body))
                data = json.dumps(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def sent(self, endpoint: str) -> list[dict[str, Any]]:
        with self.lock:
            return [b for p, b in self.requests if p == endpoint]


def batch(receipt: str, *ids: int) -> dict[str, Any]:
    return {"receipt": receipt, "dropped": 0, "messages": [
        {"id": i, "payload": {"i": i}, "published_at": "2026-01-01T00:00:00Z", "attempt": 1} for i in ids]}


@pytest.fixture
def fake() -> Iterator[Scripted]:
    f = Scripted()
    yield f
    f.httpd.shutdown()


def test_a_batch_is_never_handled_twice_at_once(fake: Scripted) -> None:
    """The lane comes back (its lease ran out) while its first batch still
    runs here: the second batch waits for the first to end."""
    fake.batches = [batch("r1", 1, 2), batch("r2", 1, 2)]
    active: set[int] = set()
    order: list[tuple[str, int]] = []
    lock = threading.Lock()
    consumer = drover.Consumer(fake.url, "drv_t", lease=10, poll_wait=0.1)

    @consumer.subscription("t", "s", concurrency=2)
    def handle(msg: drover.Delivery) -> None:
        with lock:
            assert msg.id not in active, f"message {msg.id} handled twice at once"
            active.add(msg.id)
            order.append(("start", msg.id))
        time.sleep(0.2)
        with lock:
            active.discard(msg.id)
            order.append(("end", msg.id))

    consumer.start()
    try:
        wait_for(lambda: len(fake.sent("ack")) >= 1 and sum(len(a["acks"]) for a in fake.sent("ack")) == 2,
                 what="both batches acknowledged")
    finally:
        consumer.stop()
    assert order == [("start", 1), ("end", 1), ("start", 2), ("end", 2)] * 2
    # Two receivers ask at once, so the answers that carry r1 and r2 may come
    # back in either order: whichever the consumer takes first runs first,
    # and the other waits for it. Each is acknowledged once.
    assert sorted(a["receipt"] for body in fake.sent("ack") for a in body["acks"]) == ["r1", "r2"]


def test_a_lost_lease_stops_the_handler_and_drops_the_ack(fake: Scripted) -> None:
    fake.batches = [batch("r1", 1, 2, 3)]
    fake.replies["extend"] = lambda b: {"extended": [False] * len(b["receipts"])}
    reasons: list[str | None] = []
    handled: list[int] = []
    consumer = drover.Consumer(fake.url, "drv_t", lease=1.5, poll_wait=0.1)

    @consumer.subscription("t", "s")
    def handle(msg: drover.Delivery, ctx: drover.DeliveryContext) -> None:
        handled.append(msg.id)
        ctx.cancelled.wait(5)
        reasons.append(ctx.cancel_reason)

    consumer.start()
    try:
        wait_for(lambda: bool(reasons), what="the handler to be stopped")
        time.sleep(0.3)  # room for a wrong ack or a next message
    finally:
        consumer.stop()
    assert reasons == ["lease_lost"] and handled == [1]
    assert fake.sent("extend")[0] == {"receipts": ["r1"], "lease_ms": 1500}
    assert fake.sent("ack") == [] and fake.sent("release") == []


def test_shutdown_releases_unfinished_batches(fake: Scripted) -> None:
    fake.batches = [batch("r1", 1), batch("r2", 2)]
    started = threading.Event()
    consumer = drover.Consumer(fake.url, "drv_t", lease=10, poll_wait=0.1, shutdown_timeout=0.2)

    @consumer.subscription("t", "s", batch=True, concurrency=2)
    def handle(msgs: list[drover.Delivery]) -> None:
        if msgs[0].id == 1:
            started.set()
            time.sleep(3)  # ignores the cancellation
        else:
            raise drover.FailedMessages({2: "no", 99: "not in the batch"})

    consumer.start()
    assert started.wait(5)
    wait_for(lambda: bool(fake.sent("ack")), what="the second batch acknowledged")
    t0 = time.monotonic()
    consumer.stop()
    assert time.monotonic() - t0 < 2.5
    assert fake.sent("ack") == [{"acks": [{"receipt": "r2", "failed": {"2": "no"}}]}]
    assert fake.sent("release") == [{"receipts": ["r1"]}]


def consume_until(fake: Scripted, concurrency: int, done: Callable[[], bool], what: str) -> None:
    """Runs a consumer of t/s with a batch handler that does nothing until
    done() holds."""
    consumer = drover.Consumer(fake.url, "drv_t", lease=10, poll_wait=0.1)
    consumer.subscribe("t", "s", lambda msgs: None, batch=True, concurrency=concurrency)
    consumer.start()
    try:
        wait_for(done, what=what)
    finally:
        consumer.stop()


def test_a_receive_waits_for_the_acks_of_the_batches_before_it(fake: Scripted) -> None:
    """The server holds a batch's lane until its ack is stored: a receive
    sent while the ack was on its way found the lane held and waited out
    the server's poll interval (a second on PostgreSQL) before it got the
    lane's next batch. The receive goes out once the ack is answered."""
    fake.batches = [batch("r1", 1), batch("r2", 2), batch("r3", 3)]
    fake.delays["ack"] = 0.3
    consume_until(fake, 1, lambda: sum(len(a["acks"]) for a in fake.sent("ack answered")) == 3, "three acks answered")
    with fake.lock:
        order = [p for p, _ in fake.requests if p in ("receive", "ack", "ack answered")]
    acks = [i for i, p in enumerate(order) if p == "ack"]
    for i in acks:
        assert order[i + 1] == "ack answered", f"a receive went out while an ack was on its way: {order}"
    assert len(acks) == 3


def test_a_receive_takes_half_the_handlers_at_most(fake: Scripted) -> None:
    """Two receivers of a subscription each ask for half of its handlers at
    most, so that the server reads the batches of some lanes while the
    consumer handles those of the others; asking for every free handler,
    a subscription's batches were received, handled and acknowledged
    together, and the server and the consumer each waited for the other."""
    fake.batches = [batch(f"r{i}", i) for i in range(1, 5)]
    consume_until(fake, 5, lambda: sum(len(a["acks"]) for a in fake.sent("ack")) == 4, "four batches acknowledged")
    asked = [b["max_batches"] for b in fake.sent("receive")]
    assert max(asked) == 3 and min(asked) >= 1, asked
