"""The worker: claims jobs over the HTTP API, runs their handlers, keeps
their leases and reports their results.

The moving parts, each a thread with one job:

- a *claimer* per queue long-polls ``/v1/claim`` for at most as many jobs as
  there are free slots (it reserves the slots first), so that every claimed
  job starts at once and none waits in a buffer;
- sync handlers run on a pool of at most concurrency threads, started as
  needed and reused (starting a thread per job made the claimer wait for
  each new thread to be scheduled, which capped a worker at a few thousand
  jobs a second), async handlers as tasks of one asyncio loop running in a
  thread;
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
import inspect
import json
import logging
import os
import queue
import random
import secrets
import signal
import socket
import threading
import time
import traceback
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from types import FrameType
from typing import Any

from ._args import decode_args
from ._http import Transport
from .errors import DroverError, NotFoundError, PayloadTooLargeError, ValidationError
from .models import Job, JobResult, encode_args, format_time

__all__ = ["Cancel", "JobContext", "Retry", "Snooze", "Worker"]

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
        self.cancelled = threading.Event()
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

    def is_cancelled(self) -> bool:
        return self.cancelled.is_set()

    def set_result(self, value: Any) -> None:
        """Records value (JSON-encodable, a dataclass or a pydantic model) as
        the job's result, stored when the attempt completes. A handler's
        non-None return value takes precedence. Raises ValueError when the
        result is not JSON or over the server's 64 KiB."""
        _encode_result(value)
        self._result, self._has_result = value, True

    def _cancel(self, reason: str) -> None:
        if not self.cancelled.is_set():
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


def _truncate(s: str, limit: int, keep_tail: bool = False) -> str:
    b = s.encode()
    if len(b) <= limit:
        return s
    if keep_tail:
        return "…" + b[-(limit - 8):].decode(errors="ignore")
    return b[: limit - 8].decode(errors="ignore") + "…"


@dataclass
class _Handler:
    kind: str
    fn: Callable[..., Any]
    is_async: bool
    arg_type: Any
    nparams: int
    timeout: float | None

    def call(self, args: Any, ctx: JobContext) -> Any:
        if self.nparams == 0:
            return self.fn()
        if self.nparams == 1:
            return self.fn(args)
        return self.fn(args, ctx)


def _handler(kind: str, fn: Callable[..., Any], timeout: float | None) -> _Handler:
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    arg_type: Any = None
    if params:
        try:
            hints = typing.get_type_hints(fn, localns=_closure_vars(fn))
        except Exception as e:
            log.warning("handler of %s: cannot resolve its annotations (%s); it gets args as JSON values", kind, e)
            hints = {}
        arg_type = hints.get(params[0].name)
    return _Handler(kind=kind, fn=fn, is_async=inspect.iscoroutinefunction(fn), arg_type=arg_type,
                    nparams=min(len(params), 2), timeout=timeout)


def _closure_vars(fn: Callable[..., Any]) -> dict[str, Any]:
    """The variables a nested function closes over, so that a string
    annotation naming a class defined in the enclosing function (with
    ``from __future__ import annotations``) still resolves."""
    code = getattr(fn, "__code__", None)
    closure = getattr(fn, "__closure__", None) or ()
    out: dict[str, Any] = {}
    if code is not None:
        for name, cell in zip(code.co_freevars, closure, strict=False):
            with contextlib.suppress(ValueError):  # a cell not yet assigned
                out[name] = cell.cell_contents
    return out


@dataclass
class _Held:
    """One attempt the worker holds, from its claim until the server
    answered its result."""

    job: Job
    ctx: JobContext
    lost: bool = False
    #: The result to send, once the handler ended.
    result: dict[str, Any] | None = None
    #: The handler ended (or was abandoned at shutdown); later ends are ignored.
    ended: bool = False
    task: asyncio.Task[None] | None = None
    timer: threading.Timer | None = None

    @property
    def ref(self) -> dict[str, Any]:
        ref: dict[str, Any] = {"id": self.job.id, "attempt": self.job.attempt}
        if self.job.lease_token:
            ref["lease_token"] = self.job.lease_token
        return ref


class _Backoff:
    """Exponential backoff with jitter: each delay is drawn from the upper
    half of a window that doubles after every failure, up to cap."""

    def __init__(self, base: float = 0.1, cap: float = 10.0) -> None:
        self.base, self.cap, self.failures = base, cap, 0

    def next(self) -> float:
        window = min(self.cap, self.base * (2 ** min(self.failures, 30)))
        self.failures += 1
        return random.uniform(window / 2, window)

    def reset(self) -> None:
        self.failures = 0


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


class Worker:
    """Runs handlers registered by kind::

        worker = drover.Worker("http://127.0.0.1:8080", token, queues=["default"], concurrency=20)

        @worker.task("email")
        def send(args: Email, ctx: drover.JobContext) -> None: ...

        worker.run()   # until SIGTERM or SIGINT

    ``url`` and ``token`` default to $DROVER_URL and $DROVER_TOKEN when the
    worker starts. ``lease`` is the lease asked for each attempt (seconds,
    at least 1; heartbeats extend it every third); ``poll_wait`` the longest
    long poll of a claim (at most the server's --max-wait);
    ``shutdown_timeout`` how long running handlers get to finish after
    SIGTERM; ``max_backoff`` the longest wait between tries when the server
    is unreachable."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        queues: Sequence[str] | str = ("default",),
        concurrency: int = 10,
        lease: float = 30.0,
        poll_wait: float = 30.0,
        shutdown_timeout: float = 30.0,
        max_backoff: float = 10.0,
        worker_id: str | None = None,
        worker_name: str | None = None,
        worker_type: str | None = None,
        worker_labels: dict[str, str] | None = None,
    ) -> None:
        self._cfg = _Config(url=url, token=token, queues=[], concurrency=0, lease=0, poll_wait=0,
                            shutdown_timeout=0, max_backoff=0)
        self.configure(queues=queues, concurrency=concurrency, lease=lease, poll_wait=poll_wait,
                       shutdown_timeout=shutdown_timeout, max_backoff=max_backoff, worker_id=worker_id,
                       worker_name=worker_name, worker_type=worker_type, worker_labels=worker_labels)
        self._handlers: dict[str, _Handler] = {}
        self._lock = threading.Condition()
        self._held: dict[tuple[int, int], _Held] = {}
        self._free = 0
        self._running = 0
        self._reserving = 0
        self._pending: dict[tuple[int, int], dict[str, Any]] = {}
        self._stop_requested = threading.Event()
        self._stopping = False
        self._finisher_stop = False
        self._hb_stop = threading.Event()
        self._hurry = threading.Event()
        self._fatal: BaseException | None = None
        self._threads: list[threading.Thread] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._claim_t: Transport | None = None
        self._t: Transport | None = None
        self._runner: threading.Thread | None = None
        self._done = threading.Event()
        # The sync handlers' thread pool: _pool_idle threads wait on _jobs
        # (None tells one to exit); _pool_size counts them all.
        self._jobs: queue.SimpleQueue[tuple[_Held, _Handler] | None] = queue.SimpleQueue()
        self._pool_lock = threading.Lock()
        self._pool_idle = 0
        self._pool_size = 0

    # Configuration and registration.

    def configure(
        self,
        *,
        url: str | None = None,
        token: str | None = None,
        queues: Sequence[str] | str | None = None,
        concurrency: int | None = None,
        lease: float | None = None,
        poll_wait: float | None = None,
        shutdown_timeout: float | None = None,
        max_backoff: float | None = None,
        worker_id: str | None = None,
        worker_name: str | None = None,
        worker_type: str | None = None,
        worker_labels: dict[str, str] | None = None,
    ) -> None:
        """Changes options before the worker starts (drover-worker uses it
        to apply its command line to a worker defined in a module).

        ``worker_name``, ``worker_type`` and ``worker_labels`` say what the
        worker is, on every claim: with any of them it also takes the routed
        jobs it matches (its name defaults to ``worker_id``); with none, plain
        jobs only. :meth:`set_worker_labels` changes the labels while it
        runs. See docs/routing.md."""
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
            c.worker_id = worker_id or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"[:255]
        if worker_name is not None:
            c.worker_name = worker_name
        if worker_type is not None:
            c.worker_type = worker_type
        if worker_labels is not None:
            c.worker_labels = dict(worker_labels)

    def set_worker_labels(self, labels: dict[str, str]) -> None:
        """Replaces the worker's labels while it runs: its next claims take
        the routed jobs the new labels match."""
        with self._lock:
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
        with self._lock:
            if c.worker_labels:
                out["worker_labels"] = dict(c.worker_labels)
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
        if kind in self._handlers:
            raise ValueError(f"kind {kind!r}: a handler is registered already")
        self._handlers[kind] = _handler(kind, fn, timeout)

    @property
    def kinds(self) -> list[str]:
        return sorted(self._handlers)

    # Running.

    def run(self) -> None:
        """Runs until stop(), SIGTERM or SIGINT, then shuts down gracefully:
        stops claiming, gives running handlers shutdown_timeout to finish,
        and reports their results; the jobs of handlers still running then
        are released (available again at once, their attempts undone). A second signal stops waiting for the
        handlers. Raises the error that stopped the worker, if one did (an
        unknown token, a queue name the server refuses)."""
        main = threading.current_thread() is threading.main_thread()
        previous: dict[int, Any] = {}
        if main:
            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, self._on_signal)
        try:
            self._start()
            while not self._stop_requested.wait(0.5):
                pass
            self._shutdown()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            self._done.set()
        if self._fatal is not None:
            raise self._fatal

    def start(self) -> None:
        """Runs the worker in a background thread; stop it with stop()."""
        if self._runner is not None:
            raise RuntimeError("worker: started already")
        self._runner = threading.Thread(target=self._run_quietly, name="drover-worker", daemon=True)
        self._runner.start()

    def _run_quietly(self) -> None:
        try:
            self.run()
        except BaseException as e:
            log.error("worker stopped: %s", e)

    def stop(self, wait: bool = True) -> None:
        """Asks the worker to shut down gracefully; with wait, returns once
        it has (the runner thread of start(), or run() in another thread)."""
        self._stop_requested.set()
        if wait:
            self._done.wait()
            if self._runner is not None:
                self._runner.join()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self._stop_requested.is_set():
            log.warning("second %s: not waiting for running handlers", signal.Signals(signum).name)
            self._hurry.set()
            return
        log.info("%s: stopping (no new jobs; running handlers get %.0fs)", signal.Signals(signum).name,
                 self._cfg.shutdown_timeout)
        self._stop_requested.set()

    def _start(self) -> None:
        c = self._cfg
        url = c.url or os.environ.get("DROVER_URL")
        token = c.token or os.environ.get("DROVER_TOKEN")
        if not url or not token:
            raise ValueError("worker: give url and token (or set DROVER_URL and DROVER_TOKEN)")
        if not self._handlers:
            raise ValueError("worker: no handlers registered (use @worker.task(kind))")
        # The claimers get a transport of their own, so that breaking their
        # long polls at shutdown leaves heartbeats and results alone.
        self._claim_t = Transport(url, token, timeout=c.poll_wait + 30)
        self._t = Transport(url, token, timeout=max(30.0, c.lease))
        self._free = c.concurrency
        if any(h.is_async for h in self._handlers.values()):
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._spawn("drover-asyncio", loop.run_forever)
        self._spawn("drover-heartbeat", self._heartbeat_loop)
        self._spawn("drover-finisher", self._finish_loop)
        for q in c.queues:
            self._spawn(f"drover-claim-{q}", self._claim_loop, q)
        log.info("worker %s: queues %s, concurrency %d, kinds %s", c.worker_id, ",".join(c.queues),
                 c.concurrency, ",".join(self.kinds))

    def _spawn(self, name: str, target: Callable[..., None], *args: Any) -> None:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        t.start()
        self._threads.append(t)

    def _fail(self, e: BaseException) -> None:
        if self._fatal is None:
            self._fatal = e
        self._stop_requested.set()

    # Claiming.

    def _reserve(self, limit: int) -> int:
        """Waits for free slots and reserves up to limit of them, split
        evenly between the claimers waiting at the same time. Returns 0 when
        the worker stops."""
        with self._lock:
            self._reserving += 1
            try:
                while not self._stopping and self._free <= 0:
                    self._lock.wait()
                if self._stopping:
                    return 0
                n = max(1, self._free // self._reserving)
                n = min(n, limit, 1000)
                self._free -= n
                return n
            finally:
                self._reserving -= 1

    def _release_slots(self, n: int) -> None:
        if n > 0:
            with self._lock:
                self._free += n
                self._lock.notify_all()

    def _claim_loop(self, queue: str) -> None:
        c = self._cfg
        assert self._claim_t is not None
        backoff = _Backoff(cap=c.max_backoff)
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
            n = self._reserve(1 if idle and shared else 1000)
            if n == 0:
                return
            if self._stopping:
                self._release_slots(n)
                return
            try:
                out = self._claim_t.request("POST", "/v1/claim", {**body, **self._routing(), "max": n})
            except DroverError as e:
                self._release_slots(n)
                if self._stopping:
                    return
                if not e.retryable:
                    log.error("claim from queue %s: %s", queue, e)
                    self._fail(e)
                    return
                delay = backoff.next()
                log.warning("claim from queue %s: %s; retrying in %.1fs", queue, e, delay)
                if self._stop_requested.wait(delay):
                    return
                continue
            backoff.reset()
            jobs = [Job.from_json(j) for j in out.get("jobs") or []]
            idle = not jobs
            self._release_slots(n - len(jobs))
            for job in jobs:
                self._begin(job)

    # Running handlers.

    def _begin(self, job: Job) -> None:
        ctx = JobContext(job, self._cfg.worker_id)
        held = _Held(job=job, ctx=ctx)
        with self._lock:
            self._held[(job.id, job.attempt)] = held
            self._running += 1
        h = self._handlers.get(job.kind)
        if h is None:
            self._end(held, self._failure(job, f"no handler for kind {job.kind!r} in worker "
                                               f"{self._cfg.worker_id} (it handles {', '.join(self.kinds)})", ""))
            return
        timeout = job.timeout_ms / 1000 if job.timeout_ms else h.timeout
        if timeout:
            held.timer = threading.Timer(timeout, self._interrupt, args=(held, "timeout"))
            held.timer.daemon = True
            held.timer.start()
        if h.is_async:
            assert self._loop is not None
            asyncio.run_coroutine_threadsafe(self._run_async(held, h), self._loop)
        else:
            self._submit(held, h)

    def _submit(self, held: _Held, h: _Handler) -> None:
        """Hands a sync handler to an idle pool thread, or to a new one when
        none is idle (at most concurrency run at once, so the pool never
        grows beyond that)."""
        with self._pool_lock:
            if self._pool_idle > 0:
                self._pool_idle -= 1
                self._jobs.put((held, h))
                return
            self._pool_size += 1
            n = self._pool_size
        threading.Thread(target=self._pool_thread, args=(held, h), name=f"drover-handler-{n}",
                         daemon=True).start()

    def _pool_thread(self, held: _Held, h: _Handler) -> None:
        while True:
            result = self._call_sync(held, h)
            # Idle before the slot is freed (in _end): the job claimed for
            # that slot then finds this thread, so the pool never outgrows
            # concurrency.
            with self._pool_lock:
                self._pool_idle += 1
            self._end(held, result)
            item = self._jobs.get()
            if item is None:
                return
            held, h = item

    def _call_sync(self, held: _Held, h: _Handler) -> dict[str, Any]:
        try:
            value = h.call(decode_args(h.arg_type, held.job.args), held.ctx)
        except BaseException as e:
            return self._outcome_of(held, e)
        return self._completed(held, value)

    async def _run_async(self, held: _Held, h: _Handler) -> None:
        held.task = asyncio.current_task()
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
        task, loop = held.task, self._loop
        if task is not None and loop is not None:
            loop.call_soon_threadsafe(task.cancel)

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
        r["error"] = _truncate(message or "failed without a message", MAX_ERROR_BYTES)
        if trace:
            r["trace"] = _truncate(trace, MAX_ERROR_BYTES, keep_tail=True)
        # The server still requires the job's max_attempts with a failure;
        # a newer server ignores it and decides retry or discard itself.
        r["max_attempts"] = max(1, job.max_attempts)
        if retry_at is not None:
            r["retry_at"] = format_time(retry_at)
        return r

    def _outcome_of(self, held: _Held, e: BaseException) -> dict[str, Any]:
        job, ctx = held.job, held.ctx
        trace = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        message = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        if isinstance(e, Cancel) or (ctx.cancel_reason == "cancel_requested"):
            r = self._base(job, "cancelled")
            r["error"] = _truncate(str(e) or "cancelled", MAX_ERROR_BYTES)
            if not isinstance(e, (Cancel, asyncio.CancelledError)):
                r["trace"] = _truncate(trace, MAX_ERROR_BYTES, keep_tail=True)
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
            limit = job.timeout_ms / 1000 if job.timeout_ms else (self._handlers[job.kind].timeout or 0)
            return self._failure(job, f"timed out after {limit:g}s: {message}", trace)
        return self._failure(job, message, trace)

    def _end(self, held: _Held, result: dict[str, Any]) -> None:
        """Frees the attempt's slot and queues its result, unless its lease
        was lost (the server would reject it) or it was abandoned."""
        if held.timer is not None:
            held.timer.cancel()
        key = (held.job.id, held.job.attempt)
        with self._lock:
            if held.ended:
                return
            held.ended = True
            self._running -= 1
            self._free += 1
            if held.lost:
                self._held.pop(key, None)
                log.info("job %d attempt %d ended after its lease was lost; result dropped", *key)
            else:
                held.result = result
                self._pending[key] = result
            self._lock.notify_all()
        if result["outcome"] == "failed" and not held.lost:
            log.warning("job %d (%s) attempt %d failed: %s", held.job.id, held.job.kind, held.job.attempt,
                        result.get("error"))
        elif result["outcome"] == _RELEASED and not held.lost:
            log.info("job %d (%s) attempt %d: handler unfinished at shutdown; releasing the job",
                     held.job.id, held.job.kind, held.job.attempt)

    # Leases.

    def _heartbeat_loop(self) -> None:
        c = self._cfg
        assert self._t is not None
        backoff = _Backoff(cap=min(c.max_backoff, c.lease / 3))
        delay = c.lease / 3
        while not self._hb_stop.wait(delay):
            delay = c.lease / 3
            with self._lock:
                held = [h for h in self._held.values() if not h.lost]
            for i in range(0, len(held), _MAX_PER_REQUEST):
                chunk = held[i : i + _MAX_PER_REQUEST]
                try:
                    # A heartbeat that takes half the lease is as good as lost.
                    out = self._t.request("POST", "/v1/heartbeat",
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
        key = (h.job.id, h.job.attempt)
        with self._lock:
            h.lost = True
            ended = h.ended
            if ended:
                self._pending.pop(key, None)
                self._held.pop(key, None)
                self._lock.notify_all()
        if ended:
            # Most often its result landed while this heartbeat was on its way.
            log.debug("job %d attempt %d: no longer held by the server; its result is not sent again", *key)
            return
        log.warning("job %d attempt %d: lease lost while running (the job runs again elsewhere); stopping it", *key)
        self._interrupt(h, "lease_lost")

    # Results.

    def _finish_loop(self) -> None:
        assert self._t is not None
        backoff = _Backoff(cap=self._cfg.max_backoff)
        # After the server refused a batch (a rejected request stores
        # nothing), its results are sent one at a time to find the bad one.
        suspects: set[tuple[int, int]] = set()
        while True:
            with self._lock:
                while not self._pending and not self._finisher_stop:
                    self._lock.wait()
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
                    out = self._t.request("POST", "/v1/release", {"attempts": attempts})
                else:
                    out = self._t.request("POST", "/v1/finish", {"results": batch})
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
                    with self._lock:
                        for k in keys:
                            held = self._held.get(k)
                            if k in self._pending and held is not None:
                                self._pending[k] = self._failure(
                                    held.job, "worker shut down before the handler finished", "", retry_at=now)
                    continue
                if self._hurry.is_set() and self._finisher_stop:
                    log.error("could not report %d results: %s (their jobs run again after their leases)",
                              len(self._pending), e)
                    return
                delay = backoff.next()
                log.warning("reporting %d results: %s; retrying in %.1fs", len(batch), e, delay)
                if self._hurry.is_set():
                    time.sleep(delay)
                else:
                    self._hurry.wait(delay)
                continue
            backoff.reset()
            rejected = {int(i) for i in out.get("rejected") or []}
            for job_id, attempt in keys:
                if job_id in rejected:
                    log.warning("%s of job %d attempt %d rejected: the server no longer holds that "
                                "attempt (lease lost, or already reported)", "release" if release else "result",
                                job_id, attempt)
            self._settle(keys)

    def _next_batch(self) -> list[tuple[int, int]]:
        """The keys of the next request: pending results or releases, of the
        kind of the oldest pending one, at most _MAX_PER_REQUEST. Called
        with the lock held."""
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
        with self._lock:
            for k in keys:
                self._pending.pop(k, None)
                self._held.pop(k, None)
            self._lock.notify_all()

    # Shutting down.

    def _shutdown(self) -> None:
        c = self._cfg
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        if self._claim_t is not None:
            self._claim_t.close()  # breaks the long polls; no claim starts after
        for t in self._threads:
            if t.name.startswith("drover-claim-"):
                t.join()
        deadline = time.monotonic() + c.shutdown_timeout
        with self._lock:
            while self._running > 0 and not self._hurry.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(min(left, 0.2))
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
            grace = time.monotonic() + 1.0
            with self._lock:
                while self._running > 0 and time.monotonic() < grace:
                    self._lock.wait(0.05)
            for h in running:
                self._end(h, self._base(h.job, _RELEASED))
        with self._lock:
            self._finisher_stop = True
            self._lock.notify_all()
        finisher = next(t for t in self._threads if t.name == "drover-finisher")
        finisher.join(timeout=max(10.0, c.max_backoff * 2))
        if finisher.is_alive():
            self._hurry.set()
            finisher.join(timeout=c.lease)
        self._hb_stop.set()
        with self._pool_lock:
            # Idle pool threads exit now; one still in an abandoned handler
            # takes its None when that handler returns.
            for _ in range(self._pool_size):
                self._jobs.put(None)
            self._pool_idle = self._pool_size = 0
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        for t in self._threads:
            t.join(timeout=5)
        if self._loop is not None and not self._loop.is_running():
            self._loop.close()
        for tr in (self._claim_t, self._t):
            if tr is not None:
                tr.close()
        log.info("worker %s stopped", c.worker_id)
