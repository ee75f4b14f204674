"""Topics against a real ``drover serve``: the client's topic and
subscription calls, receiving and acknowledging by hand, and the consumer
(sync and asyncio) with per-message and per-batch handlers, failures
retried as jobs of the topic's retry queue until the subscription's
max_attempts."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

import drover
from conftest import DelayProxy, Server, wait_for


@pytest.fixture
def topic(client: drover.Client) -> Iterator[str]:
    name = "t-" + uuid.uuid4().hex[:12]
    client.create_topic(name, lanes=4)
    yield name


def test_topic_and_subscription_calls(server: Server, client: drover.Client, topic: str) -> None:
    again = client.create_topic(topic, lanes=4)
    assert again.name == topic and again.lanes == 4 and again.retention_ms == 7 * 24 * 3600 * 1000
    assert client.create_subscription(topic, "s1", max_attempts=3) is True
    assert client.create_subscription(topic, "s1") is False
    assert client.create_subscription(topic, "s2", from_earliest=True) is True
    listed = {t.name: t for t in client.list_topics()}
    assert sorted(listed[topic].subscriptions) == ["s1", "s2"]

    ids = client.publish(topic, [drover.Message({"n": 1}, key="k"), drover.Message(b"\x00\xffbytes"),
                                 drover.Message("text", metadata={"source": "test"})])
    assert len(ids) == 3 and ids == sorted(ids)
    # On PostgreSQL a publish is ordered (and counted in the lag) by the
    # sequencer a moment after it commits.
    wait_for(lambda: all(lg.pending == 3 for lg in client.subscription_lag(topic)), what="the lag to count the publish")
    lag = {lg.subscription: lg for lg in client.subscription_lag(topic)}
    assert lag["s1"].pending == 3 and lag["s2"].pending == 3 and lag["s1"].oldest_pending is not None

    client.delete_subscription(topic, "s2")
    with pytest.raises(drover.NotFoundError):
        client.delete_subscription(topic, "s2")
    assert [lg.subscription for lg in client.subscription_lag(topic)] == ["s1"]
    got = client.get_topic(topic)
    assert (got.name, got.lanes, got.subscriptions) == (topic, 4, ["s1"])
    with pytest.raises(drover.ConflictError):
        client.create_topic(topic, lanes=8)  # exists with other options

    # Bad input is refused by name and stores nothing.
    with pytest.raises(drover.ValidationError, match="lanes"):
        client.create_topic("t-" + uuid.uuid4().hex[:8], lanes=5000)
    with pytest.raises(ValueError, match=r"messages\[0\]: topic"):
        client.publish(topic, [drover.Message({}, topic=topic)])
    with pytest.raises(ValueError, match=r"messages\[1\]: topic: required"):
        client.publish_many([drover.Message({}, topic=topic), drover.Message({})])
    with server.client(server.work_token) as worker, pytest.raises(drover.ForbiddenError):
        worker.create_topic("t-" + uuid.uuid4().hex[:8])
    assert client.subscription_lag(topic)[0].pending == 3

    client.delete_topic(topic)
    for call in (lambda: client.get_topic(topic), lambda: client.delete_topic(topic)):
        with pytest.raises(drover.NotFoundError):
            call()
    assert topic not in {t.name for t in client.list_topics()}


def test_receive_ack_and_nack_by_hand(client: drover.Client, topic: str) -> None:
    other = "t-" + uuid.uuid4().hex[:12]
    client.create_topic(other, lanes=1)
    client.create_subscription(topic, "s", max_attempts=2)
    client.create_subscription(other, "s")
    # One publish over two topics; the payloads come back as published.
    a, b, c = client.publish_many([drover.Message({"x": [1, 2]}, topic=topic, key="k1"),
                                   drover.Message(b"\x01\x02", topic=topic, key="k1"),
                                   drover.Message(None, topic=other, metadata={"m": True})])
    batches = client.receive(topic, "s", worker="hand", max_batches=4, wait_ms=2000)
    assert len(batches) == 1  # one key, one lane
    (batch,) = batches
    first, second = batch.messages
    assert (first.id, first.key, first.is_json, first.payload, first.data) == (a, "k1", True, {"x": [1, 2]},
                                                                              b'{"x":[1,2]}')
    assert (second.id, second.is_json, second.payload, second.data) == (b, False, None, b"\x01\x02")
    assert first.topic == topic and first.subscription == "s" and first.attempt == 1
    assert first.published_at is not None
    # The second message fails: acked with it in failed, it becomes a retry job.
    assert client.ack(topic, "s", [(batch.receipt, {b: "bad bytes"})]) == [True]
    assert client.ack(topic, "s", [(batch.receipt, None)]) == [False]  # its lease ended with the ack
    retry = wait_job(client, f"topic:{topic}")
    assert retry.kind == "drover.topic" and retry.args["id"] == b and retry.args["subscription"] == "s"
    assert retry.max_attempts == 1
    assert client.subscription_lag(topic)[0].pending == 0

    (ob,) = client.receive(other, "s", worker="hand", wait_ms=2000)
    (m,) = ob.messages
    assert (m.id, m.is_json, m.payload, m.metadata) == (c, True, None, {"m": True})
    assert client.nack(other, "s", [ob.receipt], "not now") == [True]
    assert wait_job(client, f"topic:{other}").metadata["first_error"] == "not now"


def held_lane(client: drover.Client, topic: str) -> drover.SubscriptionLane:
    """The one lane of subscription s that a consumer holds."""
    lanes = client.subscription_lanes(topic, "s")
    assert len(lanes) == 4
    (lane,) = [lane for lane in lanes if lane.holder]
    return lane


def test_extend_release_and_lanes_by_hand(server: Server, client: drover.Client, topic: str) -> None:
    client.create_subscription(topic, "s")
    ids = client.publish(topic, [drover.Message({"n": i}, key="k") for i in range(3)])
    with server.client(server.work_token) as work:
        (batch,) = work.receive(topic, "s", worker="a", lease_ms=2000, wait_ms=2000)
        assert [(m.id, m.attempt) for m in batch.messages] == [(i, 1) for i in ids]
        lane = held_lane(client, topic)
        # The cursor of a subscription made after other topics' publishes
        # starts where the topic stood, below the messages it receives.
        assert (lane.holder, lane.lag, lane.attempt) == ("a", 3, 1) and lane.cursor < ids[0]
        assert lane.lease_expires_at is not None

        # Extended, the lease outlives the two seconds it was received for.
        assert work.extend_batches(topic, "s", [batch.receipt], lease_ms=120_000) == [True]
        extended = held_lane(client, topic)
        assert extended.lease_expires_at is not None and extended.holder == "a"
        assert (extended.lease_expires_at - lane.lease_expires_at).total_seconds() > 60
        assert work.receive(topic, "s", worker="b", wait_ms=2500) == []  # past the first lease: still a's
        # A receipt goes back as it came: an altered one is refused, naming it.
        forged = batch.receipt[:-2] + ("AA" if not batch.receipt.endswith("AA") else "BB")
        with pytest.raises(drover.ValidationError, match="receipt"):
            work.extend_batches(topic, "s", [forged])
        with pytest.raises(drover.NotFoundError):
            work.extend_batches(topic, "nosuch", [batch.receipt])

        # Released, the batch goes to the next receive at once, its
        # delivery not counted.
        assert work.release_batches(topic, "s", [batch.receipt]) == [True]
        assert work.release_batches(topic, "s", [batch.receipt]) == [False]
        (again,) = work.receive(topic, "s", worker="b", lease_ms=120_000, wait_ms=2000)
        assert [(m.id, m.attempt) for m in again.messages] == [(i, 1) for i in ids]

        # An operator frees the lane b holds: b's extend and ack are
        # refused, and the next delivery counts (one message at a time
        # after a lost lease).
        lane = held_lane(client, topic)
        assert lane.holder == "b"
        with pytest.raises(drover.ForbiddenError):
            work.release_lane(topic, "s", lane.lane)
        assert client.release_lane(topic, "s", lane.lane) is True
        assert client.release_lane(topic, "s", lane.lane) is False
        assert work.extend_batches(topic, "s", [again.receipt]) == [False]
        assert work.ack(topic, "s", [(again.receipt, None)]) == [False]
        (third,) = work.receive(topic, "s", worker="c", lease_ms=120_000, wait_ms=2000)
        assert [(m.id, m.attempt) for m in third.messages] == [(ids[0], 2)]
        assert work.ack(topic, "s", [(third.receipt, None)]) == [True]
    (done,) = [d for d in client.subscription_lanes(topic, "s") if d.lane == lane.lane]
    assert (done.cursor, done.lag, done.holder, done.lease_expires_at) == (ids[0], 2, "", None)


def test_consumer_extends_a_long_handler_and_releases_at_shutdown(
    server: Server, client: drover.Client, topic: str
) -> None:
    """A handler that outlasts its two-second lease keeps its batch (the
    consumer extends it: the lane stays its own, the delivery's attempt 1);
    one still running at shutdown has its batch released, received again at
    once by hand rather than after the minute's lease, its attempt not
    counted. The second part reads a subscription of its own: the first
    consumer's last long poll of s may outlive it on the server for a
    moment, and a message it leased there would be delivered again, counted."""
    client.create_subscription(topic, "s")
    (first,) = client.publish(topic, [drover.Message({"n": 0}, key="k")])
    seen: list[tuple[int, int]] = []
    finish = threading.Event()
    consumer = drover.Consumer(server.url, server.work_token, lease=2, poll_wait=1)

    @consumer.subscription(topic, "s")
    def handle(msg: drover.Delivery, ctx: drover.DeliveryContext) -> None:
        seen.append((msg.id, msg.attempt))
        finish.wait(30)

    consumer.start()
    try:
        wait_for(lambda: bool(seen), what="the handler to start")
        start = held_lane(client, topic)
        started = start.lease_expires_at
        assert start.holder == consumer.consumer_id and started is not None

        def renewed() -> float:
            ends = held_lane(client, topic).lease_expires_at
            return (ends - started).total_seconds() if ends is not None else 0

        # Two leases later the lane is still the consumer's, renewed.
        wait_for(lambda: renewed() >= 4, what="the extends of two leases")
        lane = held_lane(client, topic)
        assert (lane.holder, lane.attempt) == (consumer.consumer_id, 1)
        finish.set()
        wait_for(lambda: lag(client, topic, "s") == 0, what="the ack")
    finally:
        finish.set()
        consumer.stop()
    assert seen == [(first, 1)]
    client.create_subscription(topic, "r")

    (second,) = client.publish(topic, [drover.Message({"n": 1}, key="k")])
    seen.clear()
    finish.clear()
    stopping = drover.Consumer(server.url, server.work_token, lease=60, poll_wait=1, shutdown_timeout=0.5)

    @stopping.subscription(topic, "r")
    def hang(msg: drover.Delivery, ctx: drover.DeliveryContext) -> None:
        seen.append((msg.id, msg.attempt))
        ctx.cancelled.wait(30)

    stopping.start()
    try:
        wait_for(lambda: bool(seen), what="the handler to start")
    finally:
        stopping.stop()
    assert seen == [(second, 1)]
    with server.client(server.work_token) as work:
        (batch,) = work.receive(topic, "r", worker="after", wait_ms=5000)
        assert [(m.id, m.attempt) for m in batch.messages] == [(second, 1)]
        assert work.ack(topic, "r", [(batch.receipt, None)]) == [True]
    assert lag(client, topic, "r") == 0


def lag(client: drover.Client, topic: str, subscription: str) -> int:
    """The messages of the topic a subscription has not acknowledged."""
    return next(lg.pending for lg in client.subscription_lag(topic) if lg.subscription == subscription)


def wait_job(client: drover.Client, queue: str) -> drover.Job:
    wait_for(lambda: bool(client.list_jobs(queue=queue).jobs), what=f"a job in {queue}")
    return client.list_jobs(queue=queue).jobs[0]


def test_consumer_handles_every_message_in_key_order(server: Server, client: drover.Client, topic: str) -> None:
    client.create_subscription(topic, "s")
    seen: list[tuple[str, int]] = []
    lock = threading.Lock()
    consumer = drover.Consumer(server.url, server.work_token, lease=5, poll_wait=1, shutdown_timeout=5)

    @consumer.subscription(topic, "s", concurrency=4, batch_size=7)
    def handle(msg: drover.Delivery) -> None:
        with lock:
            seen.append((msg.key, msg.payload["seq"]))

    consumer.start()
    try:
        for r in range(3):  # publishes while the consumer runs
            client.publish(topic, [drover.Message({"seq": r * 20 + i}, key=f"k{i % 5}") for i in range(20)])
        wait_for(lambda: len(seen) >= 60, what="every message handled")
    finally:
        consumer.stop()
    assert sorted(s for _, s in seen) == list(range(60))
    for k in {k for k, _ in seen}:
        seqs = [s for kk, s in seen if kk == k]
        assert seqs == sorted(seqs), f"key {k} out of order: {seqs}"
    wait_for(lambda: client.subscription_lag(topic)[0].pending == 0, what="every batch acknowledged")


def test_consumer_of_several_subscriptions_keeps_their_leases_when_the_server_answers_slowly(
    server: Server, client: drover.Client, caplog: pytest.LogCaptureFixture
) -> None:
    """Six subscriptions (two topics of three) in one consumer, behind a
    proxy that holds every extend and ack for a second, as a loaded server
    answers: each handler runs through two extensions of its subscription,
    and the subscription's spare handlers keep receiving, so that a lane
    whose lease ran out is leased again. Extending one subscription after
    another, the last ones' leases (6 s) ran out before their turn came
    (2 s, then 1 s for each subscription before): their handlers were stopped, their batches delivered
    again and their acks refused."""
    proxy = DelayProxy(server.url, 1.0, r"/(extend|ack)$")
    subs: list[tuple[str, str]] = []
    published: dict[str, list[int]] = {}
    for _ in range(2):
        t = "t-" + uuid.uuid4().hex[:12]
        client.create_topic(t, lanes=2)
        for s in ("a", "b", "c"):
            client.create_subscription(t, s)
            subs.append((t, s))
        published[t] = client.publish(t, [drover.Message({"j": j}, key=f"k{j}") for j in range(6)])
    handled: Counter[tuple[str, str, int]] = Counter()
    stopped: list[str] = []
    lock = threading.Lock()
    consumer = drover.Consumer(proxy.url, server.work_token, lease=6, poll_wait=1)
    for t, s in subs:

        def handle(batch: list[drover.Delivery], ctx: drover.DeliveryContext, t: str = t, s: str = s) -> None:
            with lock:
                handled.update((t, s, m.id) for m in batch)
            extends = f"/{t}/subscriptions/{s}/extend"
            first = proxy.count(extends)
            wait_for(lambda: proxy.count(extends) >= first + 2 or ctx.is_cancelled(), what=f"extends of {t}/{s}")
            if ctx.is_cancelled():
                stopped.append(f"{t}/{s}: {ctx.cancel_reason}")

        consumer.subscribe(t, s, handle, batch=True, concurrency=4)

    def done() -> bool:
        return len(handled) == 36 and all(lg.pending == 0 for t in published for lg in client.subscription_lag(t))

    with caplog.at_level(logging.WARNING, logger="drover"), proxy:
        consumer.start()
        try:
            wait_for(done, timeout=60, what="every message handled and acknowledged")
        finally:
            consumer.stop()
    assert stopped == []
    assert [r.getMessage() for r in caplog.records] == []
    assert sorted(handled) == sorted((t, s, i) for t, s in subs for i in published[t])
    assert [k for k, n in handled.items() if n != 1] == [], "messages handled more than once"


def test_failed_messages_retry_by_the_subscription_policy(server: Server, client: drover.Client,
                                                          topic: str) -> None:
    """A batch handler fails one message each time (FailedMessages) and
    another once: the first is delivered max_attempts times and then dead,
    the second twice; the rest once."""
    client.create_subscription(topic, "s", max_attempts=3)
    ids = client.publish(topic, [drover.Message({"n": i}, key="one") for i in range(5)])
    doomed, flaky = ids[1], ids[3]
    attempts: dict[int, list[int]] = {}
    lock = threading.Lock()
    consumer = drover.Consumer(server.url, server.work_token, lease=5, poll_wait=1)

    @consumer.subscription(topic, "s", batch=True)
    def handle(batch: list[drover.Delivery], ctx: drover.DeliveryContext) -> None:
        assert ctx.topic == topic and ctx.subscription == "s"
        with lock:
            for m in batch:
                attempts.setdefault(m.id, []).append(m.attempt)
        failed: dict[int, BaseException | str] = {}
        for m in batch:
            if m.id == doomed:
                failed[m.id] = ValueError("always")
            elif m.id == flaky and m.attempt == 1:
                failed[m.id] = "once"
        if failed:
            raise drover.FailedMessages(failed)

    consumer.start()
    try:
        wait_for(lambda: client.stats(f"topic:{topic}").get("discarded") == 1
                 and client.stats(f"topic:{topic}").get("completed") == 1, what="the retries to end")
    finally:
        consumer.stop()
    assert attempts[doomed] == [1, 2, 3]
    assert attempts[flaky] == [1, 2]
    assert all(attempts[i] == [1] for i in ids if i not in (doomed, flaky))
    (dead,) = client.list_jobs(queue=f"topic:{topic}", state="discarded").jobs
    assert dead.args["id"] == doomed and dead.errors[-1].error == "ValueError: always"
    assert client.subscription_lag(topic)[0].pending == 0


def test_async_consumer_and_client(server: Server, topic: str) -> None:
    """The asyncio consumer with an async per-message handler that fails
    one message once, beside the AsyncClient on the same loop."""

    async def main() -> tuple[list[tuple[int, int]], list[int]]:
        handled: list[tuple[int, int]] = []
        async with drover.AsyncClient(server.url, server.token) as c:
            assert await c.create_subscription(topic, "s", max_attempts=2)
            ids = await c.publish(topic, [drover.Message({"i": i}) for i in range(10)])
            consumer = drover.AsyncConsumer(server.url, server.work_token, lease=5, poll_wait=1)

            @consumer.subscription(topic, "s", concurrency=2, batch_size=3)
            async def handle(msg: drover.Delivery) -> None:
                await asyncio.sleep(0.01)
                handled.append((msg.id, msg.attempt))
                if msg.payload == {"i": 4} and msg.attempt == 1:
                    raise RuntimeError("once")

            run = asyncio.create_task(consumer.run(handle_signals=False))
            deadline = time.monotonic() + 30
            while len(handled) < 11 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            consumer.request_stop()
            await run
            lags = await c.subscription_lag(topic)
            assert lags[0].pending == 0
            return handled, ids

    handled, ids = asyncio.run(main())
    assert Counter(i for i, _ in handled) == Counter({**dict.fromkeys(ids, 1), ids[4]: 2})
    assert sorted(a for i, a in handled if i == ids[4]) == [1, 2]


def test_consumer_errors(server: Server, client: drover.Client, topic: str) -> None:
    consumer = drover.Consumer(server.url, "drv_unknown", poll_wait=1)

    @consumer.subscription(topic, "s")
    def handle(msg: drover.Delivery) -> None: ...

    with pytest.raises(drover.UnauthorizedError):
        consumer.run()
    with pytest.raises(RuntimeError, match="before it starts"):
        consumer.subscribe(topic, "s2", handle)
    fresh = drover.Consumer(server.url, server.token)
    fresh.subscribe(topic, "s", handle)
    with pytest.raises(ValueError, match="registered already"):
        fresh.subscribe(topic, "s", handle)
    with pytest.raises(ValueError, match="batch_size"):
        fresh.subscribe(topic, "s2", handle, batch_size=0)
    with pytest.raises(ValueError, match="lease"):
        drover.Consumer(server.url, server.token, lease=600)
    with pytest.raises(TypeError, match="unknown options"):
        drover.Consumer(server.url, server.token, leas=6)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="no subscriptions"):
        drover.Consumer(server.url, server.token).run()
    # A subscription that is not stored stops the consumer, naming it,
    # rather than waiting forever.
    typo = drover.Consumer(server.url, server.work_token, poll_wait=1)
    typo.subscribe(topic, "nosuch", handle)
    with pytest.raises(drover.NotFoundError, match="nosuch"):
        typo.run()


def test_rewind_subscription(server: Server, client: drover.Client, topic: str) -> None:
    """A rewound subscription delivers its messages again, sync and
    asyncio: to the earliest, every message, the batch out at the rewind
    refused on ack; to a time, those published since. Bad requests are
    refused by name and move nothing (issue 38)."""
    client.create_subscription(topic, "r", from_earliest=True)
    ids = client.publish(topic, [drover.Message({"n": i}, key="k") for i in range(3)])

    def receive_all(c: drover.Client) -> list[int]:
        got: list[int] = []
        for _ in range(50):
            batches = c.receive(topic, "r", worker="w", batch_size=10, wait_ms=200)
            if not batches and len(got) >= len(ids):
                break
            for b in batches:
                got += [m.id for m in b.messages]
            assert c.ack(topic, "r", [(b.receipt, None) for b in batches]) == [True] * len(batches)
        return got

    assert receive_all(client) == ids
    assert client.receive(topic, "r", worker="w", wait_ms=0) == []
    ids += client.publish(topic, [drover.Message({"n": 3}, key="k")])
    (held,) = client.receive(topic, "r", worker="w", batch_size=10, wait_ms=5000)
    rewound = client.rewind_subscription(topic, "r", earliest=True)
    assert (rewound.lanes, rewound.released, rewound.pending) == (1, 1, 4) and rewound.oldest_pending is not None
    assert client.ack(topic, "r", [(held.receipt, None)]) == [False]
    assert receive_all(client) == ids

    with pytest.raises(drover.ValidationError, match="future"):
        client.rewind_subscription(topic, "r", since=datetime.now(timezone.utc) + timedelta(hours=1))
    with pytest.raises(drover.NotFoundError, match="nosuch"):
        client.rewind_subscription(topic, "nosuch", earliest=True)
    with pytest.raises(ValueError, match="one of since and earliest"):
        client.rewind_subscription(topic, "r")
    assert client.subscription_lag(topic)[0].pending == 0

    async def rewind_async() -> drover.SubscriptionRewind:
        async with drover.AsyncClient(server.url, server.token) as c:
            return await c.rewind_subscription(topic, "r", since=datetime.now(timezone.utc) - timedelta(hours=1))

    again = asyncio.run(rewind_async())
    assert (again.lanes, again.released, again.pending) == (1, 0, 4)
    assert receive_all(client) == ids
