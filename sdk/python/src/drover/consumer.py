"""The topic consumer: receives batches of subscriptions over the HTTP API,
runs their handlers, keeps their leases and acknowledges them.

:class:`AsyncConsumer` does the work on an asyncio loop; :class:`Consumer`
runs one in a thread of its own for sync code. Its parts, each a task of
the loop, are those of the worker (docs/topics.md has the model):

- a *receiver* per subscription (two for one of several handlers, each
  taking half of them at most) long-polls ``receive`` for at most as many
  batches as it has free handlers (each batch is one lane, in order), so
  that every batch received starts at once, once the acks of the batches
  that ended before are answered;
- each batch runs its handler once, per message in order or as a whole;
- an *extender* per subscription renews the leases of its batches held
  (running or waiting for their acks) every third of the lease, counted
  from the start of its last renewal, and stops the handler of a batch
  whose lease was lost: another consumer has it now;
- an *acker* per subscription acknowledges its batches that ended since its
  last request, in one request, failed messages named in ``failed``: the
  server makes them jobs of the topic's retry queue;
- a worker on the retry queues (``topic:<topic>``) runs those jobs through
  the same handlers, as one-message batches, with the job's retries and
  backoff: the subscription's ``max_attempts`` bounds the deliveries.

Each subscription has its own extender and acker, rather than one loop
taking the subscriptions in turn: when the server answers slowly (a loaded
machine), a turn through them all took one answer's time per subscription,
so that the last ones' leases ran out before their renewal was sent, and a
subscription whose batches kept ending held the one acker while the
others' acks waited.

A batch is handed to a handler at most once at a time in a process: a batch
that repeats messages of one still running here (its lease ran out and this
process received the lane again) waits for that one to end. At shutdown the
batches not started, and those whose handlers outlast the shutdown timeout,
are *released*: delivered again at once, to another consumer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from ._aio_http import AsyncTransport
from ._requests import acks_body, subscription_path
from ._runtime import Backoff, Changed, Handler, StopControl, SyncRunner, ThreadPool, describe, in_thread, truncate
from .errors import DroverError, NotFoundError, PayloadTooLargeError, ValidationError
from .models import Delivery, ReceivedBatch
from .worker import AsyncWorker, JobContext, Snooze, default_worker_id

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["AsyncConsumer", "Consumer", "ConsumerOptions", "DeliveryContext", "FailedMessages"]

log = logging.getLogger("drover.consumer")

# The kind of the jobs a topic's failed messages become, in its retry queue.
_RETRY_KIND = "drover.topic"
# How long a retry job of a subscription this consumer does not serve waits
# before it is claimed again (by a consumer that serves it, one hopes). It
# snoozes rather than fails, so that a consumer of another subscription of
# the topic never spends the message's attempts.
_ELSEWHERE_SNOOZE = 1.0
# The most receipts in one ack, extend or release request.
_MAX_PER_REQUEST = 1000
# The server's bound on a lease_ms (5 minutes); longer work is extended.
_MAX_LEASE = 300.0
# The longest error text the server keeps for a failed message.
_MAX_ERROR_BYTES = 1024


class FailedMessages(Exception):
    """Raise from a batch handler to fail some messages of its batch, by
    :attr:`Delivery.id`, with their errors, and acknowledge the others (Go's
    ``drover.FailedMessages``). Each failed message becomes a job of the
    topic's retry queue, for this subscription alone."""

    def __init__(self, failed: Mapping[int, BaseException | str]) -> None:
        super().__init__(f"{len(failed)} messages failed")
        self.failed = dict(failed)


class DeliveryContext:
    """What a subscription handler knows besides its messages, and how it
    learns to stop.

    ``cancelled`` (a threading.Event) is set when the handler should stop:
    the batch's lease was lost (``cancel_reason == "lease_lost"``: another
    consumer has it, and this one's ack would be refused) or the consumer is
    shutting down and the grace period ran out (``"shutdown"``: the batch is
    released, to be delivered again). A per-message handler's batch stops
    before its next message then; async handlers are also cancelled
    (CancelledError). For a retry (a one-message batch run as a job),
    ``job`` is the job's context, whose cancellation this one follows."""

    def __init__(self, topic: str, subscription: str, consumer_id: str, job: JobContext | None = None) -> None:
        self.topic = topic
        self.subscription = subscription
        self.consumer_id = consumer_id
        self.job = job
        self._cancelled = threading.Event() if job is None else job.cancelled
        self._reason: str | None = None

    @property
    def cancelled(self) -> threading.Event:
        return self._cancelled

    @property
    def cancel_reason(self) -> str | None:
        return self.job.cancel_reason if self.job is not None else self._reason

    def is_cancelled(self) -> bool:
        return self._cancelled.is_set()

    def _cancel(self, reason: str) -> None:
        if not self._cancelled.is_set():
            self._reason = reason
            self._cancelled.set()


class ConsumerOptions(TypedDict, total=False):
    """The options of a consumer (:class:`AsyncConsumer`, :class:`Consumer`);
    None leaves an option at its default.

    ``url`` and ``token`` (work scope) default to $DROVER_URL and
    $DROVER_TOKEN when the consumer starts. ``consumer_id`` names it in the
    lanes' leases and its retry jobs' (default hostname-pid-random).
    ``lease`` (seconds, default 30, 1 to 300): how long a batch is this
    consumer's before it is delivered again; the extender renews it every
    third while the handler runs. ``poll_wait`` (default 30): the longest
    long poll of a receive (at most the server's --max-wait).
    ``shutdown_timeout`` (default 30): what running handlers get after
    SIGTERM. ``max_backoff`` (default 10): the longest wait between tries
    while the server is unreachable. ``retry_concurrency``: the most retry
    jobs run at once (default the subscriptions' concurrency added up, at
    most 100)."""

    url: str | None
    token: str | None
    consumer_id: str | None
    lease: float | None
    poll_wait: float | None
    shutdown_timeout: float | None
    max_backoff: float | None
    retry_concurrency: int | None


@dataclass
class _Subscription:
    topic: str
    name: str
    handler: Handler
    batch: bool
    concurrency: int
    batch_size: int
    #: Batches received and not yet ended (running, or waiting to start).
    in_flight: int = 0
    #: Batches ended with an ack or a release to send, counted, and how many
    #: of them the acker has had answered: the server holds a batch's lane
    #: until then, so that a receive sent earlier would find it held and wait
    #: out the server's poll interval (a second on PostgreSQL).
    ended: int = 0
    settled: int = 0
    #: The batch each message in flight belongs to, by message id.
    holding: dict[int, _Batch] = field(default_factory=dict)
    #: Batches ended whose acks (receipt, failed) or releases wait to be sent.
    acks: dict[str, dict[int, str]] = field(default_factory=dict)
    releases: set[str] = field(default_factory=set)
    #: Receipts of batches held (running, waiting, or waiting for their ack),
    #: whose leases the extender renews.
    held: dict[str, _Batch] = field(default_factory=dict)
    dropped: int = 0

    @property
    def ref(self) -> str:
        return f"{self.topic}/{self.name}"


@dataclass
class _Batch:
    sub: _Subscription
    receipt: str
    messages: list[Delivery]
    ctx: DeliveryContext
    task: asyncio.Task[None] | None = None
    lost: bool = False
    ended: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)


class AsyncConsumer:
    """Runs handlers of topic subscriptions, on the running asyncio loop::

        consumer = drover.AsyncConsumer("http://127.0.0.1:8080", token)

        @consumer.subscription("orders", "billing", concurrency=4)
        async def bill(msg: drover.Delivery) -> None:
            order = msg.payload   # the JSON value; msg.data holds the bytes
            ...

        await consumer.run()   # until SIGTERM or SIGINT, or consumer.request_stop()

    A handler takes one message (``batch=False``, the default: called for
    each message of a batch in order; an exception fails that message and
    the next is handled) or the whole batch (``batch=True``: a list of
    deliveries; raising :class:`FailedMessages` fails those it names, any
    other exception the whole batch), with a :class:`DeliveryContext` as
    second parameter if it takes one. Sync handlers (``def``) run on
    threads beside the loop, async ones as its tasks. Failed messages are
    retried by the server as jobs of the topic's retry queue, which this
    consumer works too: a delivery's ``attempt`` counts them, and after the
    subscription's ``max_attempts`` the message is dead (a discarded job
    that ``drover jobs retry`` brings back). Handlers should be idempotent by
    :attr:`Delivery.id`: delivery is at least once."""

    def __init__(self, url: str | None = None, token: str | None = None, /, **options: Unpack[ConsumerOptions]) -> None:
        unknown = set(options) - set(ConsumerOptions.__annotations__)
        if unknown:
            raise TypeError(f"consumer: unknown options {', '.join(sorted(unknown))}")
        o = options
        self._url, self._token = url or o.get("url"), token or o.get("token")
        self.consumer_id = o.get("consumer_id") or default_worker_id()
        self._lease = o.get("lease") or 30.0
        if not 1 <= self._lease <= _MAX_LEASE:
            raise ValueError(f"lease {self._lease}: must be between 1 and {_MAX_LEASE:g} seconds")
        poll_wait, shutdown_timeout = o.get("poll_wait"), o.get("shutdown_timeout")
        self._poll_wait = 30.0 if poll_wait is None else max(0.0, poll_wait)
        self._shutdown_timeout = 30.0 if shutdown_timeout is None else max(0.0, shutdown_timeout)
        self._max_backoff = max(0.05, o.get("max_backoff") or 10.0)
        self._retry_concurrency = o.get("retry_concurrency")
        self._subs: dict[tuple[str, str], _Subscription] = {}
        self._control = StopControl()
        self._started = False
        self._stopping = False
        self._acker_stop = False
        self._fatal: BaseException | None = None
        self._changed = Changed()
        self._pool = ThreadPool("drover-consumer")
        self._receivers: list[asyncio.Task[None]] = []
        self._extenders: list[asyncio.Task[None]] = []
        self._ackers: list[asyncio.Task[None]] = []
        self._retries: AsyncWorker | None = None
        self._retry_task: asyncio.Task[None] | None = None
        self._recv_t: AsyncTransport | None = None
        self._t: AsyncTransport | None = None

    # Registration.

    def subscription(
        self, topic: str, name: str, *, batch: bool = False, concurrency: int = 1, batch_size: int = 100
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Registers the decorated function as the handler of the stored
        subscription ``name`` of ``topic`` (see :meth:`subscribe`)."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.subscribe(topic, name, fn, batch=batch, concurrency=concurrency, batch_size=batch_size)
            return fn

        return register

    def subscribe(
        self,
        topic: str,
        name: str,
        handler: Callable[..., Any],
        *,
        batch: bool = False,
        concurrency: int = 1,
        batch_size: int = 100,
    ) -> None:
        """Makes the consumer serve the stored subscription ``name`` of
        ``topic`` with ``handler``: per message, or with ``batch`` per batch.
        ``concurrency`` is how many batches of it run at once (more than the
        topic's lanes gain nothing); ``batch_size`` bounds a batch (1 to
        10,000). Every consumer of a subscription, in any process or
        language, competes for its lanes."""
        if self._started:
            raise RuntimeError("consumer: subscribe before it starts")
        if (topic, name) in self._subs:
            raise ValueError(f"subscription {topic}/{name}: a handler is registered already")
        if concurrency < 1:
            raise ValueError(f"concurrency {concurrency}: must be at least 1")
        if not 1 <= batch_size <= 10_000:
            raise ValueError(f"batch_size {batch_size}: must be between 1 and 10000")
        self._subs[(topic, name)] = _Subscription(topic=topic, name=name, handler=Handler(f"{topic}/{name}", handler),
                                                  batch=batch, concurrency=concurrency, batch_size=batch_size)

    @property
    def subscriptions(self) -> list[str]:
        """The subscriptions served, as "topic/name"."""
        return sorted(s.ref for s in self._subs.values())

    # Running.

    async def run(self, *, handle_signals: bool = True) -> None:
        """Runs until :meth:`request_stop` (or, with handle_signals on the
        main thread, SIGTERM or SIGINT), then shuts down gracefully: stops
        receiving, releases the batches not started, gives running handlers
        shutdown_timeout to finish and acknowledges them, and releases the
        batches of those still running then. A second request stops waiting
        for the handlers. Raises the error that stopped the consumer, if one
        did (an unknown token, a subscription the server does not have)."""
        await self._control.run(handle_signals, f"consumer {self.consumer_id}", self._start, self._shutdown)
        if self._fatal is not None:
            raise self._fatal

    def request_stop(self) -> None:
        """Asks the consumer to shut down gracefully; safe from any thread and
        from signal handlers. run() returns once it has."""
        self._control.request_stop()

    async def _start(self) -> None:
        if self._started:
            raise RuntimeError("consumer: started already")
        self._started = True
        url = self._url or os.environ.get("DROVER_URL")
        token = self._token or os.environ.get("DROVER_TOKEN")
        if not url or not token:
            raise ValueError("consumer: give url and token (or set DROVER_URL and DROVER_TOKEN)")
        if not self._subs:
            raise ValueError("consumer: no subscriptions (use @consumer.subscription(topic, name))")
        self._recv_t = AsyncTransport(url, token, timeout=self._poll_wait + 30)
        self._t = AsyncTransport(url, token, timeout=max(30.0, self._lease))
        topics = sorted({s.topic for s in self._subs.values()})
        concurrency = self._retry_concurrency or min(100, sum(s.concurrency for s in self._subs.values()))
        self._retries = AsyncWorker(url, token, queues=[f"topic:{t}" for t in topics], concurrency=concurrency,
                                    lease=self._lease, poll_wait=self._poll_wait,
                                    shutdown_timeout=self._shutdown_timeout, max_backoff=self._max_backoff,
                                    worker_id=self.consumer_id)
        self._retries.register(_RETRY_KIND, self._retry)
        self._retry_task = asyncio.create_task(self._run_retries(self._retries))
        subs = list(self._subs.values())
        self._extenders = [asyncio.create_task(self._extend_loop(s)) for s in subs]
        self._ackers = [asyncio.create_task(self._ack_loop(s)) for s in subs]
        # Two receivers for a subscription of several handlers, each taking
        # half of them at most (_reserve): one's receive is answered while
        # the other's batches are handled.
        self._receivers = [asyncio.create_task(self._receive_loop(s))
                           for s in subs for _ in range(min(2, s.concurrency))]
        log.info("consumer %s: subscriptions %s", self.consumer_id, ", ".join(self.subscriptions))

    async def _run_retries(self, worker: AsyncWorker) -> None:
        try:
            await worker.run(handle_signals=False)
        except DroverError as e:
            self._fail(e)

    def _fail(self, e: BaseException) -> None:
        if self._fatal is None:
            self._fatal = e
        self._control.request_stop()

    # Receiving.

    async def _reserve(self, sub: _Subscription) -> int:
        """Waits until the subscription has free handlers, takes them (half
        of its concurrency at most) and waits for the acks of the batches
        that ended before, whose lanes the receive is to get back; 0 when the
        consumer stops.

        Taking half at most keeps two receives' batches in different phases:
        the server reads the next batches of some lanes while this process
        handles those of the others. Taking every free handler at once, all
        of a subscription's batches were received together, handled
        together and acknowledged together, so that the server and the
        consumer each waited for the other."""
        while not self._stopping and sub.in_flight >= sub.concurrency:
            await self._changed.wait()
        if self._stopping:
            return 0
        n = min(sub.concurrency - sub.in_flight, (sub.concurrency + 1) // 2)
        sub.in_flight += n
        ended = sub.ended
        while not self._stopping and sub.settled < ended:
            await self._changed.wait()
        if self._stopping:
            self._unreserve(sub, n)
            return 0
        return n

    def _unreserve(self, sub: _Subscription, n: int) -> None:
        if n > 0:
            sub.in_flight -= n
            self._changed.notify()

    async def _receive_loop(self, sub: _Subscription) -> None:
        assert self._recv_t is not None
        backoff = Backoff(cap=self._max_backoff)
        body = {"worker": self.consumer_id, "batch_size": sub.batch_size, "lease_ms": int(self._lease * 1000),
                "wait_ms": int(self._poll_wait * 1000)}
        path = subscription_path(sub.topic, sub.name, "receive")
        while True:
            n = await self._reserve(sub)
            if n == 0:
                return
            try:
                out = await self._recv_t.request("POST", path, {**body, "max_batches": n})
            except asyncio.CancelledError:
                self._unreserve(sub, n)
                raise
            except DroverError as e:
                self._unreserve(sub, n)
                if not e.retryable:
                    log.error("receive from %s: %s", sub.ref, e)
                    self._fail(e)
                    return
                delay = backoff.next()
                log.warning("receive from %s: %s; retrying in %.1fs", sub.ref, e, delay)
                await asyncio.sleep(delay)
                continue
            backoff.reset()
            batches = [ReceivedBatch.from_json(b, sub.topic, sub.name) for b in out.get("batches") or []]
            self._unreserve(sub, n - len(batches))
            for b in batches:
                self._begin(sub, b)

    def _begin(self, sub: _Subscription, received: ReceivedBatch) -> None:
        if received.dropped > sub.dropped:
            log.error("subscription %s lagged past its topic's retention: %d messages were dropped unread",
                      sub.ref, received.dropped)
            sub.dropped = received.dropped
        b = _Batch(sub=sub, receipt=received.receipt, messages=received.messages,
                   ctx=DeliveryContext(sub.topic, sub.name, self.consumer_id))
        sub.held[b.receipt] = b
        # A batch repeating messages of one still running here waits for it:
        # the earlier one's lease ran out and this process received the lane
        # again. Its handler is told (lease_lost) at the next extend.
        before = {id(o): o for m in b.messages if (o := sub.holding.get(m.id)) is not None}
        for m in b.messages:
            sub.holding[m.id] = b
        b.task = asyncio.create_task(self._run(b, list(before.values())))

    async def _run(self, b: _Batch, before: list[_Batch]) -> None:
        failed: dict[int, BaseException | str] | None = None
        try:
            for o in before:
                await o.done.wait()
            if b.lost or self._stopping:
                return
            failed = await self._handle(b.sub, b.messages, b.ctx)
        except asyncio.CancelledError:
            failed = None
        finally:
            self._end(b, failed)

    async def _handle(
        self, sub: _Subscription, messages: list[Delivery], ctx: DeliveryContext
    ) -> dict[int, BaseException | str] | None:
        """Runs the handler on messages and returns the failed ones by id;
        None when the handler was stopped before it got through them (the
        batch is then released, not acknowledged)."""
        h = sub.handler
        if not h.is_async:
            return await in_thread(self._pool, lambda: _handle_sync(sub, messages, ctx))
        if sub.batch:
            try:
                await h.call(messages, ctx)
            except Exception as e:
                return _failed_of(messages, e)
            return {}
        failed: dict[int, BaseException | str] = {}
        for m in messages:
            if ctx.is_cancelled():
                return None
            try:
                await h.call(m, ctx)
            except Exception as e:
                failed[m.id] = e
        return failed

    def _end(self, b: _Batch, failed: dict[int, BaseException | str] | None) -> None:
        """The batch's handler ended (or never started): its ack, or its
        release when it did not get through, waits for the acker."""
        if b.ended:
            return
        b.ended = True
        sub = b.sub
        sub.in_flight -= 1
        for m in b.messages:
            if sub.holding.get(m.id) is b:
                del sub.holding[m.id]
        b.done.set()
        if b.lost:
            sub.held.pop(b.receipt, None)
            log.info("batch of %s ended after its lease was lost; not acknowledged", sub.ref)
            self._changed.notify()
            return
        sub.ended += 1
        if failed is None:
            sub.releases.add(b.receipt)
        else:
            sub.acks[b.receipt] = {i: truncate(e if isinstance(e, str) else describe(e), _MAX_ERROR_BYTES)
                                   for i, e in failed.items()}
            if failed:
                log.warning("%d of %d messages of %s failed (retried as jobs of queue topic:%s)", len(failed),
                            len(b.messages), sub.ref, sub.topic)
        self._changed.notify()

    def _stop_batch(self, b: _Batch, reason: str) -> None:
        b.ctx._cancel(reason)
        if b.task is not None and not b.ended:
            b.task.cancel()

    # Retries: a failed message's job, run through its subscription's handler.

    async def _retry(self, args: dict[str, Any], job: JobContext) -> None:
        sub = self._subs.get((str(args.get("topic")), str(args.get("subscription"))))
        if sub is None:
            raise Snooze(_ELSEWHERE_SNOOZE)
        d = Delivery.from_retry_args(args, job.attempt)
        failed = await self._handle(sub, [d], DeliveryContext(sub.topic, sub.name, self.consumer_id, job=job))
        if failed is None:
            raise asyncio.CancelledError  # stopped by the job's cancellation; the worker reports why
        if d.id in failed:
            e = failed[d.id]
            raise e if isinstance(e, BaseException) else RuntimeError(e)

    # Leases.

    async def _extend_loop(self, sub: _Subscription) -> None:
        """Renews the leases of the subscription's batches held, a third of
        the lease after the last renewal began (at once when that one took
        longer), so that a slow answer delays the next renewal by no more
        than itself."""
        assert self._t is not None
        loop = asyncio.get_running_loop()
        every = self._lease / 3
        backoff = Backoff(cap=min(self._max_backoff, every))
        path = subscription_path(sub.topic, sub.name, "extend")
        delay = every
        while True:
            await asyncio.sleep(delay)
            began = loop.time()
            retry_in: float | None = None
            batches = list(sub.held.values())
            for i in range(0, len(batches), _MAX_PER_REQUEST):
                chunk = batches[i : i + _MAX_PER_REQUEST]
                body = {"receipts": [b.receipt for b in chunk], "lease_ms": int(self._lease * 1000)}
                try:
                    out = await self._t.request("POST", path, body, timeout=max(2.0, self._lease / 2))
                except NotFoundError:
                    break  # deleted while consuming; its receives fail too
                except DroverError as e:
                    retry_in = backoff.next()
                    log.warning("extending %d batches of %s: %s; retrying in %.1fs", len(chunk), sub.ref, e, retry_in)
                    break
                backoff.reset()
                for b, ok in zip(chunk, out.get("extended") or [], strict=False):
                    if not ok:
                        self._lose(b)
            delay = retry_in if retry_in is not None else max(0.0, every - (loop.time() - began))

    def _lose(self, b: _Batch) -> None:
        """The batch's lease is lost: another consumer may have it now. Its
        handler is stopped, its ack dropped (the server would refuse it)."""
        b.lost = True
        sub = b.sub
        sub.held.pop(b.receipt, None)
        sub.acks.pop(b.receipt, None)
        sub.releases.discard(b.receipt)
        if not b.ended:
            log.warning("batch of %s: lease lost while its handler ran (it is delivered again); stopping it",
                        sub.ref)
            self._stop_batch(b, "lease_lost")

    # Acknowledgements.

    async def _ack_loop(self, sub: _Subscription) -> None:
        assert self._t is not None
        backoff = Backoff(cap=self._max_backoff)
        while True:
            # settled < ended with nothing to send: the acks of batches
            # whose leases were lost since were dropped.
            while not (sub.acks or sub.releases or sub.settled < sub.ended) and not self._acker_stop:
                await self._changed.wait()
            if not (sub.acks or sub.releases or sub.settled < sub.ended):
                return
            ended = sub.ended
            try:
                await self._send_acks(sub)
                await self._send_releases(sub)
                sub.settled = ended
                self._changed.notify()
            except DroverError as e:
                if self._control.hurry.is_set() and self._acker_stop:
                    log.error("could not acknowledge or release batches of %s: %s (they are delivered again after "
                              "their leases)", sub.ref, e)
                    return
                delay = backoff.next()
                log.warning("acknowledging batches of %s: %s; retrying in %.1fs", sub.ref, e, delay)
                await asyncio.sleep(delay)
                continue
            backoff.reset()

    async def _send_acks(self, sub: _Subscription) -> None:
        """Sends the acks of the batches ended so far; those that end
        meanwhile wait for the acker's next turn, so that a turn, and the
        receives waiting for it, take one answer's time."""
        assert self._t is not None
        path = subscription_path(sub.topic, sub.name, "ack")
        todo = list(sub.acks)
        for i in range(0, len(todo), _MAX_PER_REQUEST):
            receipts = [r for r in todo[i : i + _MAX_PER_REQUEST] if r in sub.acks]  # not lost since
            if not receipts:
                continue
            try:
                out = await self._t.request("POST", path, acks_body((r, sub.acks[r]) for r in receipts))
            except (ValidationError, PayloadTooLargeError) as e:
                # Nothing of a refused request is stored: the receipts go one
                # at a time to find the one at fault, which is dropped.
                if len(receipts) == 1:
                    log.error("ack of a batch of %s refused: %s; dropped (delivered again after its lease)",
                              sub.ref, e)
                    self._settle(sub, receipts)
                    continue
                for r in receipts:
                    if r not in sub.acks:
                        continue
                    one = {r: sub.acks[r]}
                    try:
                        await self._t.request("POST", path, acks_body(one.items()))
                    except (ValidationError, PayloadTooLargeError) as e1:
                        log.error("ack of a batch of %s refused: %s; dropped", sub.ref, e1)
                    self._settle(sub, [r])
                continue
            for ok in out.get("accepted") or []:
                if not ok:
                    log.warning("ack of a batch of %s refused: its lease had ended (it is delivered again)", sub.ref)
            self._settle(sub, receipts)

    async def _send_releases(self, sub: _Subscription) -> None:
        assert self._t is not None
        todo = sorted(sub.releases)
        for i in range(0, len(todo), _MAX_PER_REQUEST):
            receipts = [r for r in todo[i : i + _MAX_PER_REQUEST] if r in sub.releases]
            if not receipts:
                continue
            with contextlib.suppress(NotFoundError):  # deleted while consuming: nothing to hand back
                await self._t.request("POST", subscription_path(sub.topic, sub.name, "release"),
                                      {"receipts": receipts})
            sub.releases.difference_update(receipts)
            for r in receipts:
                sub.held.pop(r, None)

    def _settle(self, sub: _Subscription, receipts: Sequence[str]) -> None:
        for r in receipts:
            sub.acks.pop(r, None)
            sub.held.pop(r, None)

    # Shutting down.

    async def _shutdown(self) -> None:
        if not self._ackers:
            return  # never started
        self._stopping = True
        self._changed.notify()
        if self._retries is not None:
            self._retries.request_stop()
        for t in self._receivers:
            t.cancel()
        await asyncio.gather(*self._receivers, return_exceptions=True)
        batches = [b for s in self._subs.values() for b in s.held.values() if not b.ended]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._shutdown_timeout
        while any(not b.ended for b in batches) and not self._control.hurry.is_set():
            left = deadline - loop.time()
            if left <= 0:
                break
            await self._changed.wait(min(left, 0.2))
        running = [b for b in batches if not b.ended]
        if running:
            log.warning("%d batch handlers still running after %.0fs: stopping them; their batches are released",
                        len(running), self._shutdown_timeout)
            for b in running:
                self._stop_batch(b, "shutdown")
            grace = loop.time() + 1.0
            while any(not b.ended for b in running) and loop.time() < grace:
                await self._changed.wait(0.05)
            for b in running:
                self._end(b, None)  # abandoned: released; its handler's later end is ignored
        if self._retry_task is not None:
            await asyncio.gather(self._retry_task, return_exceptions=True)
        self._acker_stop = True
        self._changed.notify()
        _, pending = await asyncio.wait(self._ackers, timeout=max(10.0, self._max_backoff * 2))
        if pending:
            self._control.request_stop()  # a second request: hurry
            await asyncio.wait(pending, timeout=self._lease)
        loops = self._ackers + self._extenders
        for t in loops:
            t.cancel()
        await asyncio.gather(*loops, return_exceptions=True)
        self._pool.close()
        for tr in (self._recv_t, self._t):
            if tr is not None:
                await tr.close()
        log.info("consumer %s stopped", self.consumer_id)


def _failed_of(messages: list[Delivery], e: Exception) -> dict[int, BaseException | str]:
    """The failures of a batch handler that raised e: those a
    FailedMessages names among the batch's messages (ids of other messages
    are ignored, as Go's consumer does), or every message."""
    if not isinstance(e, FailedMessages):
        return {m.id: e for m in messages}
    ids = {m.id for m in messages}
    return {int(i): err for i, err in e.failed.items() if int(i) in ids}


def _handle_sync(
    sub: _Subscription, messages: list[Delivery], ctx: DeliveryContext
) -> dict[int, BaseException | str] | None:
    """AsyncConsumer._handle for a sync handler, on a pool thread."""
    h = sub.handler
    if sub.batch:
        try:
            h.call(messages, ctx)
        except Exception as e:
            return _failed_of(messages, e)
        return {}
    failed: dict[int, BaseException | str] = {}
    for m in messages:
        if ctx.is_cancelled():
            return None
        try:
            h.call(m, ctx)
        except Exception as e:
            failed[m.id] = e
    return failed


class Consumer(SyncRunner):
    """Runs handlers of topic subscriptions, for sync code: an
    :class:`AsyncConsumer` with the same options, run on an event loop of
    its own::

        consumer = drover.Consumer("http://127.0.0.1:8080", token)

        @consumer.subscription("orders", "billing", concurrency=4)
        def bill(msg: drover.Delivery) -> None: ...

        consumer.run()   # until SIGTERM or SIGINT

    ``run()`` blocks (in the main thread, SIGTERM and SIGINT stop it
    gracefully) and raises the error that stopped it, if one did;
    ``start()`` runs it in a background thread until ``stop()``."""

    def __init__(self, url: str | None = None, token: str | None = None, /, **options: Unpack[ConsumerOptions]) -> None:
        super().__init__()
        self._consumer = AsyncConsumer(url, token, **options)
        self._core = self._consumer
        self.subscribe = self._consumer.subscribe
        self.subscription = self._consumer.subscription

    @property
    def consumer_id(self) -> str:
        return self._consumer.consumer_id

    @property
    def subscriptions(self) -> list[str]:
        return self._consumer.subscriptions
