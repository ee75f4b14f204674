"""The worker: claims jobs over the HTTP API, runs their handlers, keeps
their leases and reports their results.

:class:`AsyncWorker` does the work on an asyncio loop; :class:`Worker` runs
one in a thread of its own for sync code. Their parts, each a task of the
loop:

- a *claimer* per queue long-polls ``/v1/claim`` for at most as many jobs as
  there are free slots (it reserves the slots first), so that every claimed
  job starts at once and none waits in a buffer;
- async handlers run as tasks of the same loop, sync handlers on a pool of
  at most concurrency threads, started as needed and reused;
- the *heartbeat* extends the leases of every held attempt in one request
  every third of the lease, and delivers ``cancel_requested`` and lost
  leases to the handlers;
- the *finisher* sends the results that piled up since its last request in
  one ``/v1/finish`` request.

An attempt stays *held* from its claim until the server has answered its
result: the heartbeat keeps extending its lease while the result waits for
an unreachable server, and the result is sent again until the server
answers. The server's fencing by (id, attempt) rejects a result whose lease
was lost, so that re-sending can never finish a job twice.

At shutdown, an attempt whose handler did not finish within the shutdown
timeout is *released* (``/v1/release``): its job is available again at once
and its attempt undone, as if it had never been claimed. A release is one
more kind of report the finisher sends, in requests of its own. A handler
that raises :class:`Snooze` reports the outcome ``snoozed``: the job waits
for the delay without using an attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, TypedDict

from ._aio_http import AsyncTransport
from ._args import decode_args
from ._runtime import (
    Backoff,
    Changed,
    Handler,
    Inbox,
    StopControl,
    SyncRunner,
    ThreadPool,
    describe,
    format_trace,
    truncate,
)
from .errors import DroverError, NotFoundError, PayloadTooLargeError, ValidationError
from .models import Job, JobResult, encode_args, format_time

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["AsyncWorker", "Cancel", "JobContext", "Retry", "Snooze", "Worker", "WorkerOptions"]

log = logging.getLogger("drover.worker")

#: The largest result the server stores (bytes of JSON).
MAX_RESULT_BYTES = 65536
#: The largest error message or trace the server stores.
MAX_ERROR_BYTES = 65536
# The most results or attempts sent in one request; the server's default
# limit is 10,000, and smaller requests keep one bad result from delaying
# many others for long.
_MAX_PER_REQUEST = 1000
# The longest snooze the server takes (366 days, in ms).
_MAX_SNOOZE_MS = 31_622_400_000
# The outcome the worker queues for an attempt it gives back; the finisher
# sends those to /v1/release rather than /v1/finish.
_RELEASED = "released"

# The fields of a result a compact /v1/finish request may send once.
_SHARED_RESULT_FIELDS = ("attempt", "lease_token", "outcome")


def compact_results(batch: list[dict[str, Any]]) -> dict[str, Any]:
    """The compact form of a /v1/finish request: each of attempt,
    lease_token and outcome that every result has goes once into
    ``shared``, with the value most of them have, and is left out of the
    results that have that value (the server gives a result that lacks one
    shared's). The results of one claim's noop jobs so become their ids
    alone."""
    shared: dict[str, Any] = {}
    for k in _SHARED_RESULT_FIELDS:
        counts: dict[Any, int] = {}
        for r in batch:
            v = r.get(k)
            if v is None:
                break
            counts[v] = counts.get(v, 0) + 1
        else:
            if counts:
                shared[k] = max(counts, key=counts.__getitem__)
    results = [{k: v for k, v in r.items() if k not in shared or shared[k] != v} for r in batch]
    return {"shared": shared, "results": results}


class Cancel(Exception):
    """Raise from a handler to finish the job as cancelled, without retry
    (as returning ``drover.Cancel(err)`` from a Go worker)."""


class Retry(Exception):
    """Raise from a handler to fail this attempt and retry the job after
    ``delay`` seconds (or at ``at``) instead of the server's backoff. The
    attempt counts against max_attempts."""

    def __init__(self, message: str = "retry requested", *, delay: float | None = None,
                 at: datetime | None = None) -> None:
        super().__init__(message)
        if at is None and delay is not None:
            at = datetime.now(timezone.utc) + timedelta(seconds=delay)
        self.at = at


class Snooze(Exception):
    """Raise from a handler to put the job back to wait ``seconds`` without
    using an attempt and without recording an error: it runs again after the
    delay with the same attempt number (outcome ``snoozed``). For a job that
    cannot run yet (a rate limit upstream, a resource not ready)."""

    def __init__(self, seconds: float) -> None:
        if not seconds >= 0:
            raise ValueError(f"snooze {seconds}: must be at least 0 seconds")
        super().__init__(f"snoozed for {seconds:g}s")
        self.seconds = seconds


# Guards the first use of a JobContext's event, which the handler's thread
# and the loop's may make at once.
_event_lock = threading.Lock()


class JobContext:
    """What a handler knows of its job, and how it learns to stop.

    ``cancelled`` is set when the job should stop: someone cancelled it
    (``cancel_reason == "cancel_requested"``), its lease was lost
    (``"lease_lost"``: its result would be rejected), its timeout passed
    (``"timeout"``), or the worker is shutting down and its grace period
    ran out (``"shutdown"``: unless the handler then returns, or raises
    Cancel or Snooze, the job is released, to run again with the same
    attempt). Sync handlers check ``ctx.cancelled`` (a
    threading.Event); async handlers are also cancelled (CancelledError)."""

    def __init__(self, job: Job, worker_id: str) -> None:
        self.job = job
        self.worker_id = worker_id
        # Made on first use: most jobs never look at it, and an Event (a
        # Condition and its locks) costs more than the rest of a noop job's
        # context.
        self._cancelled: threading.Event | None = None
        self.cancel_reason: str | None = None
        self._result: Any = None
        self._has_result = False

    @property
    def id(self) -> int:
        return self.job.id

    @property
    def kind(self) -> str:
        return self.job.kind

    @property
    def queue(self) -> str:
        return self.job.queue

    @property
    def attempt(self) -> int:
        return self.job.attempt

    @property
    def max_attempts(self) -> int:
        return self.job.max_attempts

    @property
    def metadata(self) -> dict[str, Any]:
        return self.job.metadata

    @property
    def tags(self) -> list[str]:
        return self.job.tags

    @property
    def batch_id(self) -> int | None:
        return self.job.batch_id

    @property
    def depends_on(self) -> list[int]:
        """The ids of the jobs this one waited for (empty if none)."""
        return self.job.depends_on

    @property
    def parent_results(self) -> list[JobResult]:
        """The state and result of each job this one waited for, in id
        order, as the claim delivered them (a Go handler's
        ``Job.ParentResults``)."""
        return self.job.parent_results

    @property
    def cancelled(self) -> threading.Event:
        """Set when the job should stop (see the class's description)."""
        ev = self._cancelled
        if ev is None:
            with _event_lock:
                if self._cancelled is None:
                    self._cancelled = threading.Event()
                ev = self._cancelled
        return ev

    def is_cancelled(self) -> bool:
        ev = self._cancelled
        return ev is not None and ev.is_set()

    def set_result(self, value: Any) -> None:
        """Records value (JSON-encodable, a dataclass or a pydantic model) as
        the job's result, stored when the attempt completes. A handler's
        non-None return value takes precedence. Raises ValueError when the
        result is not JSON or over the server's 64 KiB."""
        _encode_result(value)
        self._result, self._has_result = value, True

    def _cancel(self, reason: str) -> None:
        if not self.is_cancelled():
            self.cancel_reason = reason
            self.cancelled.set()


def _encode_result(value: Any) -> Any:
    data = encode_args(value)
    try:
        size = len(json.dumps(data, separators=(",", ":")).encode())
    except (TypeError, ValueError) as e:
        raise ValueError(f"result: not JSON-encodable: {e}") from e
    if size > MAX_RESULT_BYTES:
        raise ValueError(f"result: {size} bytes is over the limit of {MAX_RESULT_BYTES}")
    return data


class WorkerOptions(TypedDict, total=False):
    """The options of a worker (:class:`AsyncWorker`, :class:`Worker` and
    their ``configure``); None leaves an option as it is.

    ``url`` and ``token`` default to $DROVER_URL and $DROVER_TOKEN when the
    worker starts. ``queues`` (default ["default"]): one claimer each.
    ``concurrency`` (default 10): most handlers running at once. ``lease``
    (seconds, default 30, at least 1): the lease asked for each attempt,
    which heartbeats extend every third. ``poll_wait`` (default 30): the
    longest long poll of a claim (at most the server's --max-wait).
    ``shutdown_timeout`` (default 30): what running handlers get to finish
    after SIGTERM. ``max_backoff`` (default 10): the longest wait between
    tries while the server is unreachable. ``worker_id``: the lease owner
    of its jobs (default hostname-pid-random). ``worker_name``,
    ``worker_type``, ``worker_labels``: what it says of itself on claims
    (routing, docs/routing.md)."""

    url: str | None
    token: str | None
    queues: Sequence[str] | str | None
    concurrency: int | None
    lease: float | None
    poll_wait: float | None
    shutdown_timeout: float | None
    max_backoff: float | None
    worker_id: str | None
    worker_name: str | None
    worker_type: str | None
    worker_labels: dict[str, str] | None


@dataclass
class _Kind:
    """A registered handler of a kind."""

    handler: Handler
    timeout: float | None


@dataclass
class _Held:
    """One attempt the worker holds, from its claim until the server
    answered its result."""

    job: Job
    ctx: JobContext
    lost: bool = False
    #: The handler ended (or was abandoned at shutdown); later ends are ignored.
    ended: bool = False
    task: asyncio.Task[None] | None = None
    timer: asyncio.TimerHandle | None = None

    @property
    def key(self) -> tuple[int, int]:
        return (self.job.id, self.job.attempt)

    @property
    def ref(self) -> dict[str, Any]:
        ref: dict[str, Any] = {"id": self.job.id, "attempt": self.job.attempt}
        if self.job.lease_token:
            ref["lease_token"] = self.job.lease_token
        return ref


@dataclass
class _Config:
    url: str | None
    token: str | None
    queues: list[str]
    concurrency: int
    lease: float
    poll_wait: float
    shutdown_timeout: float
    max_backoff: float
    worker_id: str = field(default="")
    # routing: what the worker says of itself on every claim.
    worker_name: str | None = None
    worker_type: str | None = None
    worker_labels: dict[str, str] | None = None


class AsyncWorker:
    """Runs handlers registered by kind, on the running asyncio loop::

        worker = drover.AsyncWorker("http://127.0.0.1:8080", token, queues=["default"], concurrency=20)

        @worker.task("email")
        async def send(args: Email, ctx: drover.JobContext) -> None: ...

        await worker.run()   # until SIGTERM or SIGINT, or worker.request_stop()

    ``url`` and ``token`` default to $DROVER_URL and $DROVER_TOKEN when the
    worker starts; the other options are those of :class:`WorkerOptions`.
    Sync handlers (``def``) run on threads beside the loop,
    async ones (``async def``) as its tasks; both count against
    ``concurrency``."""

    def __init__(self, url: str | None = None, token: str | None = None, /, **options: Unpack[WorkerOptions]) -> None:
        self._cfg = _Config(url=url, token=token, queues=["default"], concurrency=10, lease=30.0, poll_wait=30.0,
                            shutdown_timeout=30.0, max_backoff=10.0)
        self.configure(**options)
        self._kinds: dict[str, _Kind] = {}
        self._control = StopControl()
        self._started = False
        # The state below belongs to the loop run() runs on.
        self._held: dict[tuple[int, int], _Held] = {}
        self._pending: dict[tuple[int, int], dict[str, Any]] = {}
        self._free = 0
        self._running = 0
        self._reserving = 0
        self._stopping = False
        self._finisher_stop = False
        # Claims ask for the compact form until a server that predates it
        # refuses the field; finishes are compact once a claim was answered
        # in that form.
        self._compact = True
        self._compact_finish = False
        self._fatal: BaseException | None = None
        self._changed = Changed()
        self._claimers: list[asyncio.Task[None]] = []
        self._heartbeat: asyncio.Task[None] | None = None
        self._finisher: asyncio.Task[None] | None = None
        self._claim_t: AsyncTransport | None = None
        self._t: AsyncTransport | None = None
        self._pool = ThreadPool("drover-handler")
        # Results of sync handlers, handed to the loop in batches.
        self._inbox: Inbox | None = None

    # Configuration and registration.

    def configure(self, **options: Unpack[WorkerOptions]) -> None:
        """Changes options before the worker starts (drover-worker uses it
        to apply its command line to a worker defined in a module); an
        option given as None keeps its value.

        ``worker_name``, ``worker_type`` and ``worker_labels`` say what the
        worker is, on every claim: with any of them it also takes the routed
        jobs it matches (its name defaults to ``worker_id``); with none, plain
        jobs only. :meth:`set_worker_labels` changes the labels while it
        runs. See docs/routing.md."""
        unknown = set(options) - set(WorkerOptions.__annotations__)
        if unknown:
            raise TypeError(f"worker: unknown options {', '.join(sorted(unknown))}")
        o = options
        url, token, queues = o.get("url"), o.get("token"), o.get("queues")
        concurrency, lease, poll_wait = o.get("concurrency"), o.get("lease"), o.get("poll_wait")
        shutdown_timeout, max_backoff, worker_id = o.get("shutdown_timeout"), o.get("max_backoff"), o.get("worker_id")
        worker_name, worker_type, worker_labels = o.get("worker_name"), o.get("worker_type"), o.get("worker_labels")
        c = self._cfg
        if url is not None:
            c.url = url
        if token is not None:
            c.token = token
        if queues is not None:
            c.queues = [queues] if isinstance(queues, str) else list(queues)
            if not c.queues:
                raise ValueError("queues: give at least one queue")
        if concurrency is not None:
            if concurrency < 1:
                raise ValueError(f"concurrency {concurrency}: must be at least 1")
            c.concurrency = concurrency
        if lease is not None:
            if lease < 1:
                raise ValueError(f"lease {lease}: must be at least 1 second")
            c.lease = lease
        if poll_wait is not None:
            c.poll_wait = max(0.0, poll_wait)
        if shutdown_timeout is not None:
            c.shutdown_timeout = max(0.0, shutdown_timeout)
        if max_backoff is not None:
            c.max_backoff = max(0.05, max_backoff)
        if worker_id is not None or not c.worker_id:
            c.worker_id = worker_id or default_worker_id()
        if worker_name is not None:
            c.worker_name = worker_name
        if worker_type is not None:
            c.worker_type = worker_type
        if worker_labels is not None:
            c.worker_labels = dict(worker_labels)

    def set_worker_labels(self, labels: dict[str, str]) -> None:
        """Replaces the worker's labels while it runs (from any thread): its
        next claims take the routed jobs the new labels match."""
        self._cfg.worker_labels = dict(labels)

    def _routing(self) -> dict[str, Any]:
        """What the worker says of itself on a claim; empty for a plain
        worker."""
        c = self._cfg
        out: dict[str, Any] = {}
        if c.worker_name:
            out["worker_name"] = c.worker_name
        if c.worker_type:
            out["worker_type"] = c.worker_type
        labels = c.worker_labels
        if labels:
            out["worker_labels"] = dict(labels)
        return out

    @property
    def worker_id(self) -> str:
        return self._cfg.worker_id

    def task(self, kind: str, *, timeout: float | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Registers the decorated function as the handler of kind.

        The handler takes ``(args)`` or ``(args, ctx)``. When ``args`` is
        annotated with a dataclass (or a pydantic model), the job's args
        are decoded into it; otherwise it gets the JSON value. A non-None
        return value becomes the job's result; an exception fails the
        attempt (retried with backoff until max_attempts), :class:`Cancel`
        cancels the job, :class:`Retry` retries it at a chosen time,
        :class:`Snooze` puts it back for a delay without using the attempt.
        ``timeout`` (seconds) bounds an attempt when the job has no
        timeout_ms of its own."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.register(kind, fn, timeout=timeout)
            return fn

        return register

    def register(self, kind: str, fn: Callable[..., Any], *, timeout: float | None = None) -> None:
        if self._started:
            raise RuntimeError("worker: register handlers before it starts")
        if kind in self._kinds:
            raise ValueError(f"kind {kind!r}: a handler is registered already")
        self._kinds[kind] = _Kind(handler=Handler(f"kind {kind}", fn), timeout=timeout)

    @property
    def kinds(self) -> list[str]:
        return sorted(self._kinds)

    # Running.

    async def run(self, *, handle_signals: bool = True) -> None:
        """Runs until :meth:`request_stop` (or, with handle_signals on the
        main thread, SIGTERM or SIGINT), then shuts down gracefully: stops
        claiming, gives running handlers shutdown_timeout to finish, and
        reports their results; the jobs of handlers still running then are
        released (available again at once, their attempts undone). A second
        request stops waiting for the handlers. Raises the error that
        stopped the worker, if one did (an unknown token, a queue name the
        server refuses)."""
        await self._control.run(handle_signals, f"worker {self.worker_id}", self._start, self._shutdown)
        if self._fatal is not None:
            raise self._fatal

    def request_stop(self) -> None:
        """Asks the worker to shut down gracefully; safe from any thread and
        from signal handlers. run() returns once it has."""
        self._control.request_stop()

    async def _start(self) -> None:
        if self._started:
            raise RuntimeError("worker: started already")
        self._started = True
        c = self._cfg
        url = c.url or os.environ.get("DROVER_URL")
        token = c.token or os.environ.get("DROVER_TOKEN")
        if not url or not token:
            raise ValueError("worker: give url and token (or set DROVER_URL and DROVER_TOKEN)")
        if not self._kinds:
            raise ValueError("worker: no handlers registered (use @worker.task(kind))")
        # The claimers get a transport of their own, so that their long
        # polls never hold up a heartbeat or a result for a connection.
        self._claim_t = AsyncTransport(url, token, timeout=c.poll_wait + 30)
        self._t = AsyncTransport(url, token, timeout=max(30.0, c.lease))
        self._free = c.concurrency
        self._inbox = Inbox(asyncio.get_running_loop())
        self._heartbeat = asyncio.create_task(self._heartbeat_loop())
        self._finisher = asyncio.create_task(self._finish_loop())
        self._claimers = [asyncio.create_task(self._claim_loop(q)) for q in c.queues]
        log.info("worker %s: queues %s, concurrency %d, kinds %s", c.worker_id, ",".join(c.queues),
                 c.concurrency, ",".join(self.kinds))

    def _fail(self, e: BaseException) -> None:
        if self._fatal is None:
            self._fatal = e
        self._control.request_stop()

    # Claiming.

    async def _reserve(self, limit: int) -> int:
        """Waits for free slots and reserves up to limit of them, split
        evenly between the claimers waiting at the same time. Returns 0 when
        the worker stops."""
        self._reserving += 1
        try:
            while not self._stopping and self._free <= 0:
                await self._changed.wait()
            if self._stopping:
                return 0
            n = min(max(1, self._free // self._reserving), limit, 1000)
            self._free -= n
            return n
        finally:
            self._reserving -= 1

    def _release_slots(self, n: int) -> None:
        if n > 0:
            self._free += n
            self._changed.notify()

    async def _claim_loop(self, queue: str) -> None:
        c = self._cfg
        assert self._claim_t is not None
        backoff = Backoff(cap=c.max_backoff)
        body = {"queue": queue, "worker": c.worker_id, "lease_ms": int(c.lease * 1000),
                "wait_ms": int(c.poll_wait * 1000)}
        # A long poll holds the slots it reserved until jobs arrive. With
        # several queues, the claimer of a queue that was empty last time
        # asks for one job only, so that an idle queue holds one slot, not
        # a share the busy queues could use; the claim after a non-empty
        # one asks for as many as are free.
        idle = False
        shared = len(c.queues) > 1
        while True:
            n = await self._reserve(1 if idle and shared else 1000)
            if n == 0:
                return
            req = {**body, **self._routing(), "max": n}
            if self._compact:
                req["compact"] = True
            try:
                out = await self._claim_t.request("POST", "/v1/claim", req)
            except asyncio.CancelledError:
                self._release_slots(n)
                raise
            except DroverError as e:
                self._release_slots(n)
                if self._compact and isinstance(e, ValidationError) and '"compact"' in str(e):
                    # A server that predates the compact form: claim in the full one.
                    log.info("claim from queue %s: the server does not know the compact form (%s); "
                             "claiming in the full form", queue, e)
                    self._compact = False
                    continue
                if not e.retryable:
                    log.error("claim from queue %s: %s", queue, e)
                    self._fail(e)
                    return
                delay = backoff.next()
                log.warning("claim from queue %s: %s; retrying in %.1fs", queue, e, delay)
                await asyncio.sleep(delay)
                continue
            backoff.reset()
            jobs = Job.from_claim(out)
            if "shared" in out:
                self._compact_finish = True
            idle = not jobs
            self._release_slots(n - len(jobs))
            for job in jobs:
                self._begin(job)

    # Running handlers.

    def _begin(self, job: Job) -> None:
        held = _Held(job=job, ctx=JobContext(job, self._cfg.worker_id))
        self._held[held.key] = held
        self._running += 1
        k = self._kinds.get(job.kind)
        if k is None:
            self._end(held, self._failure(job, f"no handler for kind {job.kind!r} in worker "
                                               f"{self._cfg.worker_id} (it handles {', '.join(self.kinds)})", ""))
            return
        timeout = job.timeout_ms / 1000 if job.timeout_ms else k.timeout
        loop = asyncio.get_running_loop()
        if timeout:
            held.timer = loop.call_later(timeout, self._interrupt, held, "timeout")
        if k.handler.is_async:
            held.task = asyncio.create_task(self._run_async(held, k.handler))
        else:
            inbox = self._inbox
            assert inbox is not None
            self._pool.submit(lambda: self._call_sync(held, k.handler), lambda r: inbox.put(self._end, held, r))

    def _call_sync(self, held: _Held, h: Handler) -> dict[str, Any]:
        try:
            value = h.call(decode_args(h.arg_type, held.job.args), held.ctx)
        except BaseException as e:
            return self._outcome_of(held, e)
        return self._completed(held, value)

    async def _run_async(self, held: _Held, h: Handler) -> None:
        try:
            if held.ctx.is_cancelled():
                raise asyncio.CancelledError
            value = await h.call(decode_args(h.arg_type, held.job.args), held.ctx)
        except BaseException as e:
            self._end(held, self._outcome_of(held, e))
            return
        self._end(held, self._completed(held, value))

    def _interrupt(self, held: _Held, reason: str) -> None:
        """Tells a running handler to stop: sets its context's event and
        cancels it when it is a task."""
        if held.ended:
            return
        held.ctx._cancel(reason)
        if held.task is not None:
            held.task.cancel()

    def _base(self, job: Job, outcome: str) -> dict[str, Any]:
        r: dict[str, Any] = {"id": job.id, "attempt": job.attempt, "outcome": outcome}
        if job.lease_token:
            r["lease_token"] = job.lease_token
        return r

    def _completed(self, held: _Held, value: Any) -> dict[str, Any]:
        ctx = held.ctx
        if value is None and ctx._has_result:
            value = ctx._result
        r = self._base(held.job, "completed")
        if value is not None:
            try:
                r["result"] = _encode_result(value)
            except ValueError as e:
                return self._failure(held.job, str(e), "")
        return r

    def _failure(self, job: Job, message: str, trace: str, retry_at: datetime | None = None) -> dict[str, Any]:
        r = self._base(job, "failed")
        r["error"] = truncate(message or "failed without a message", MAX_ERROR_BYTES)
        if trace:
            r["trace"] = truncate(trace, MAX_ERROR_BYTES, keep_tail=True)
        # The server still requires the job's max_attempts with a failure;
        # a newer server ignores it and decides retry or discard itself.
        r["max_attempts"] = max(1, job.max_attempts)
        if retry_at is not None:
            r["retry_at"] = format_time(retry_at)
        return r

    def _outcome_of(self, held: _Held, e: BaseException) -> dict[str, Any]:
        job, ctx = held.job, held.ctx
        trace = format_trace(e)
        message = describe(e)
        if isinstance(e, Cancel) or (ctx.cancel_reason == "cancel_requested"):
            r = self._base(job, "cancelled")
            r["error"] = truncate(str(e) or "cancelled", MAX_ERROR_BYTES)
            if not isinstance(e, (Cancel, asyncio.CancelledError)):
                r["trace"] = truncate(trace, MAX_ERROR_BYTES, keep_tail=True)
            return r
        if isinstance(e, Snooze):
            r = self._base(job, "snoozed")
            r["snooze_ms"] = min(_MAX_SNOOZE_MS, max(0, round(e.seconds * 1000)))
            return r
        if ctx.cancel_reason == "shutdown":
            # Interrupted by the shutdown: give the attempt back unused.
            return self._base(job, _RELEASED)
        if isinstance(e, Retry):
            return self._failure(job, message, "", retry_at=e.at)
        if ctx.cancel_reason == "timeout":
            limit = job.timeout_ms / 1000 if job.timeout_ms else (self._kinds[job.kind].timeout or 0)
            return self._failure(job, f"timed out after {limit:g}s: {message}", trace)
        return self._failure(job, message, trace)

    def _end(self, held: _Held, result: dict[str, Any]) -> None:
        """Frees the attempt's slot and queues its result, unless its lease
        was lost (the server would reject it) or it was abandoned."""
        if held.timer is not None:
            held.timer.cancel()
        if held.ended:
            return
        held.ended = True
        self._running -= 1
        self._free += 1
        if held.lost:
            self._held.pop(held.key, None)
            log.info("job %d attempt %d ended after its lease was lost; result dropped", *held.key)
        else:
            self._pending[held.key] = result
        self._changed.notify()
        if held.lost:
            return
        if result["outcome"] == "failed":
            log.warning("job %d (%s) attempt %d failed: %s", held.job.id, held.job.kind, held.job.attempt,
                        result.get("error"))
        elif result["outcome"] == _RELEASED:
            log.info("job %d (%s) attempt %d: handler unfinished at shutdown; releasing the job",
                     held.job.id, held.job.kind, held.job.attempt)

    # Leases.

    async def _heartbeat_loop(self) -> None:
        c = self._cfg
        assert self._t is not None
        backoff = Backoff(cap=min(c.max_backoff, c.lease / 3))
        delay = c.lease / 3
        while True:
            await asyncio.sleep(delay)
            delay = c.lease / 3
            held = [h for h in self._held.values() if not h.lost]
            for i in range(0, len(held), _MAX_PER_REQUEST):
                chunk = held[i : i + _MAX_PER_REQUEST]
                try:
                    # A heartbeat that takes half the lease is as good as lost.
                    out = await self._t.request("POST", "/v1/heartbeat",
                                                {"lease_ms": int(c.lease * 1000), "attempts": [h.ref for h in chunk]},
                                                timeout=max(2.0, c.lease / 2))
                except DroverError as e:
                    delay = backoff.next()
                    log.warning("heartbeat of %d jobs: %s; retrying in %.1fs", len(chunk), e, delay)
                    break
                backoff.reset()
                self._apply_heartbeat(chunk, out)

    def _apply_heartbeat(self, chunk: list[_Held], out: dict[str, Any]) -> None:
        by_id: dict[int, list[_Held]] = {}
        for h in chunk:
            by_id.setdefault(h.job.id, []).append(h)
        for job_id in out.get("lost") or []:
            entries = sorted(by_id.get(int(job_id), []), key=lambda h: h.job.attempt)
            # With two attempts of one job held (an old one rescued and
            # claimed again here), the older one is the lost one.
            for h in entries[:-1] if len(entries) > 1 else entries:
                self._lose(h)
        for job_id in out.get("cancel_requested") or []:
            for h in by_id.get(int(job_id), []):
                log.info("job %d: cancel requested", h.job.id)
                self._interrupt(h, "cancel_requested")

    def _lose(self, h: _Held) -> None:
        h.lost = True
        if h.ended:
            # Most often its result landed while this heartbeat was on its way.
            self._pending.pop(h.key, None)
            self._held.pop(h.key, None)
            self._changed.notify()
            log.debug("job %d attempt %d: no longer held by the server; its result is not sent again", *h.key)
            return
        log.warning("job %d attempt %d: lease lost while running (the job runs again elsewhere); stopping it",
                    *h.key)
        self._interrupt(h, "lease_lost")

    # Results.

    async def _finish_loop(self) -> None:
        assert self._t is not None
        backoff = Backoff(cap=self._cfg.max_backoff)
        # After the server refused a batch (a rejected request stores
        # nothing), its results are sent one at a time to find the bad one.
        suspects: set[tuple[int, int]] = set()
        while True:
            while not self._pending and not self._finisher_stop:
                await self._changed.wait()
            if not self._pending:
                return
            suspects &= self._pending.keys()
            keys = [next(iter(suspects))] if suspects else self._next_batch()
            batch = [self._pending[k] for k in keys]
            # A request holds releases only, or results only.
            release = batch[0]["outcome"] == _RELEASED
            try:
                if release:
                    attempts = [{k: r[k] for k in ("id", "attempt", "lease_token") if k in r} for r in batch]
                    out = await self._t.request("POST", "/v1/release", {"attempts": attempts})
                else:
                    out = await self._t.request("POST", "/v1/finish",
                                                compact_results(batch) if self._compact_finish else {"results": batch})
            except (ValidationError, PayloadTooLargeError) as e:
                if len(batch) > 1:
                    suspects = set(keys)
                    continue
                log.error("result of job %d attempt %d refused: %s; dropped (the job runs again "
                          "after its lease)", *keys[0], e)
                self._settle(keys)
                continue
            except DroverError as e:
                if release and isinstance(e, NotFoundError):
                    # A server older than /v1/release: fail the attempts with
                    # an immediate retry instead, as workers did before.
                    log.warning("releasing %d jobs: %s; reporting them failed instead", len(batch), e)
                    now = datetime.now(timezone.utc)
                    for k in keys:
                        held = self._held.get(k)
                        if k in self._pending and held is not None:
                            self._pending[k] = self._failure(
                                held.job, "worker shut down before the handler finished", "", retry_at=now)
                    continue
                hurry = self._control.hurry
                if hurry.is_set() and self._finisher_stop:
                    log.error("could not report %d results: %s (their jobs run again after their leases)",
                              len(self._pending), e)
                    return
                delay = backoff.next()
                log.warning("reporting %d results: %s; retrying in %.1fs", len(batch), e, delay)
                if hurry.is_set():
                    await asyncio.sleep(delay)
                else:
                    # A second stop request cuts the wait short for one last try.
                    await _first(hurry.wait(), delay)
                continue
            backoff.reset()
            rejected = {int(i) for i in out.get("rejected") or []}
            for job_id, attempt in keys:
                if job_id in rejected:
                    log.warning("%s of job %d attempt %d rejected: the server no longer holds that "
                                "attempt (lease lost, or already reported)", "release" if release else "result",
                                job_id, attempt)
            attempt_of = dict(keys)
            for f in out.get("refused") or []:
                # The store could not hold the result (a value it refuses):
                # the job did not complete. recorded says whether its
                # failed attempt was written in place of the result.
                job_id = int(f["id"])
                log.error("result of job %d attempt %d refused by the store: %s; %s", job_id,
                          attempt_of.get(job_id, 0), f.get("error"),
                          "recorded as a failed attempt" if f.get("recorded") else
                          "not recorded either (the job runs again after its lease)")
            self._settle(keys)

    def _next_batch(self) -> list[tuple[int, int]]:
        """The keys of the next request: pending results or releases, of the
        kind of the oldest pending one, at most _MAX_PER_REQUEST."""
        first = next(iter(self._pending.values()))
        release = first["outcome"] == _RELEASED
        keys: list[tuple[int, int]] = []
        for k, r in self._pending.items():
            if (r["outcome"] == _RELEASED) == release:
                keys.append(k)
                if len(keys) == _MAX_PER_REQUEST:
                    break
        return keys

    def _settle(self, keys: list[tuple[int, int]]) -> None:
        for k in keys:
            self._pending.pop(k, None)
            self._held.pop(k, None)
        self._changed.notify()

    # Shutting down.

    async def _shutdown(self) -> None:
        c = self._cfg
        if self._heartbeat is None or self._finisher is None:
            return  # never started
        self._stopping = True
        self._changed.notify()
        # No claim starts after this; the long polls under way are broken off.
        for t in self._claimers:
            t.cancel()
        await asyncio.gather(*self._claimers, return_exceptions=True)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + c.shutdown_timeout
        while self._running > 0 and not self._control.hurry.is_set():
            left = deadline - loop.time()
            if left <= 0:
                break
            await _first(self._changed.wait(), min(left, 0.2))
        running = [h for h in self._held.values() if not h.ended]
        if running:
            log.warning("%d handlers still running after %.0fs: cancelling them", len(running),
                        c.shutdown_timeout)
            for h in running:
                self._interrupt(h, "shutdown")
            # A moment to react to the cancellation, then the attempts that
            # still run are released: their jobs are available again at
            # once, with their attempts undone, rather than after their
            # leases (the abandoned handlers' later ends are ignored).
            grace = loop.time() + 1.0
            while self._running > 0 and loop.time() < grace:
                await self._changed.wait(0.05)
            for h in running:
                self._end(h, self._base(h.job, _RELEASED))
        self._finisher_stop = True
        self._changed.notify()
        done, _ = await asyncio.wait([self._finisher], timeout=max(10.0, c.max_backoff * 2))
        if not done:
            self._control.request_stop()  # a second request: hurry
            await asyncio.wait([self._finisher], timeout=c.lease)
            self._finisher.cancel()
        self._heartbeat.cancel()
        await asyncio.gather(self._heartbeat, self._finisher, return_exceptions=True)
        self._pool.close()
        for tr in (self._claim_t, self._t):
            if tr is not None:
                await tr.close()
        log.info("worker %s stopped", c.worker_id)


async def _first(aw: Any, timeout: float) -> None:
    """Waits for aw, at most timeout seconds."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(aw, timeout)


def default_worker_id() -> str:
    """hostname-pid-random: unique per process, and readable on the
    dashboard."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"[:255]


class Worker(SyncRunner):
    """Runs handlers registered by kind, for sync code: an
    :class:`AsyncWorker` with the same options, run on an event loop of its
    own::

        worker = drover.Worker("http://127.0.0.1:8080", token, queues=["default"], concurrency=20)

        @worker.task("email")
        def send(args: Email, ctx: drover.JobContext) -> None: ...

        worker.run()   # until SIGTERM or SIGINT

    ``run()`` blocks (in the main thread, SIGTERM and SIGINT stop it
    gracefully; a second one stops waiting for handlers) and raises the
    error that stopped the worker, if one did; ``start()`` runs it in a
    background thread until ``stop()``. Sync handlers run on a pool of at
    most ``concurrency`` threads, async handlers as tasks of the worker's
    loop."""

    def __init__(self, url: str | None = None, token: str | None = None, /, **options: Unpack[WorkerOptions]) -> None:
        super().__init__()
        self._worker = AsyncWorker(url, token, **options)
        self._core = self._worker
        self.configure = self._worker.configure
        self.set_worker_labels = self._worker.set_worker_labels
        self.task = self._worker.task
        self.register = self._worker.register

    @property
    def worker_id(self) -> str:
        return self._worker.worker_id

    @property
    def kinds(self) -> list[str]:
        return self._worker.kinds
