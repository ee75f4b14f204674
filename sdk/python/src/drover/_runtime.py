"""What the worker and the consumer share: one asyncio loop runs their
requests (claims, heartbeats, results; receives, extends, acks), sync
handlers run on a pool of threads beside it, and the sync Worker and
Consumer run that loop in a thread of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import queue
import random
import signal
import threading
import traceback
import typing
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

log = logging.getLogger("drover")


class Backoff:
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


class Changed:
    """Wakes the loops that wait for a change of state (a slot freed, a
    result queued): ``await changed.wait(timeout)`` returns at the next
    ``notify()`` or after the timeout."""

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] = []

    async def wait(self, timeout: float | None = None) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(fut)

    def notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)


class ThreadPool:
    """Runs sync handlers on daemon threads, started as needed and reused, and
    hands each result back to the loop.

    Daemon threads, not a ThreadPoolExecutor: the executor's threads are
    joined at interpreter exit, so one handler stuck past the shutdown
    timeout would keep the process from exiting. A thread counts as idle
    before the result it hands back frees its slot, so that the work
    claimed for that slot finds it and the pool never outgrows the
    concurrency."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._items: queue.SimpleQueue[tuple[Callable[[], Any], Callable[[Any], None]] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._size = 0

    def submit(self, fn: Callable[[], Any], done: Callable[[Any], None]) -> None:
        """Runs fn() on a pool thread and then done(its value) on that thread;
        fn must not raise."""
        with self._lock:
            if self._idle > 0:
                self._idle -= 1
                self._items.put((fn, done))
                return
            self._size += 1
            n = self._size
        threading.Thread(target=self._thread, args=(fn, done), name=f"{self._name}-{n}", daemon=True).start()

    def _thread(self, fn: Callable[[], Any], done: Callable[[Any], None]) -> None:
        while True:
            value = fn()
            with self._lock:
                self._idle += 1
            done(value)
            item = self._items.get()
            if item is None:
                return
            fn, done = item

    def close(self) -> None:
        """Idle threads exit now; one still in an abandoned handler takes its
        None when that handler returns."""
        with self._lock:
            for _ in range(self._size):
                self._items.put(None)
            self._idle = self._size = 0


def to_loop(loop: asyncio.AbstractEventLoop, fn: Callable[..., None], *args: Any) -> None:
    """Calls fn(*args) on the loop from another thread; nothing once the
    loop is closed (a handler that outlived its worker)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(fn, *args)


class Inbox:
    """Calls functions on a loop from other threads, as to_loop does, but
    wakes the loop once for all the calls that arrive before it runs them:
    each wake-up is a write to the loop's self-pipe and a turn of its
    selector, which a noop handler's result would otherwise pay alone."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._calls: list[tuple[Callable[..., None], tuple[Any, ...]]] = []

    def put(self, fn: Callable[..., None], *args: Any) -> None:
        """Queues fn(*args) for the loop; nothing once the loop is closed."""
        with self._lock:
            self._calls.append((fn, args))
            if len(self._calls) > 1:
                return  # the loop is woken already and has not drained yet
        to_loop(self._loop, self._drain)

    def _drain(self) -> None:
        with self._lock:
            calls, self._calls = self._calls, []
        for fn, args in calls:
            fn(*args)


class Runnable(Protocol):
    """An async worker or consumer, as a SyncRunner drives it."""

    async def run(self, *, handle_signals: bool = True) -> None: ...

    def request_stop(self) -> None: ...


class StopControl:
    """How an async worker or consumer learns to stop, from its own loop, a
    signal handler or another thread: ``request_stop()`` is safe from any of
    them. A second request (a second SIGTERM) hurries the shutdown: it stops
    waiting for handlers."""

    def __init__(self) -> None:
        self._asked = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self.stop = asyncio.Event()
        self.hurry = asyncio.Event()

    def bind(self) -> None:
        """Called by run() on its loop: the events belong to it from now on,
        and a request made before it (stop() right after start()) holds."""
        self.stop = asyncio.Event()
        self.hurry = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        if self._asked:
            self.stop.set()
        if self._asked > 1:
            self.hurry.set()

    async def run(self, enabled: bool, what: str, start: Callable[[], Awaitable[None]],
                  shutdown: Callable[[], Awaitable[None]]) -> None:
        """The life of a worker or consumer: start, wait for a stop request
        (or, enabled on the main thread, SIGTERM or SIGINT), shut down, on
        the running loop."""
        self.bind()
        with self.signals(enabled, what):
            try:
                await start()
                await self.stop.wait()
            finally:
                await shutdown()

    def request_stop(self) -> None:
        self._asked += 1
        loop = self._loop
        if loop is not None:
            to_loop(loop, self._apply)

    def _apply(self) -> None:
        if self.stop.is_set():
            self.hurry.set()
        self.stop.set()

    @contextlib.contextmanager
    def signals(self, enabled: bool, what: str) -> Iterator[None]:
        """Turns SIGTERM and SIGINT into stop requests while the block runs
        (when enabled and on the main thread), restoring the handlers
        before it after."""
        if not enabled or threading.current_thread() is not threading.main_thread():
            yield
            return

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            name = signal.Signals(signum).name
            if self._asked:
                log.warning("second %s: %s stops waiting for running handlers", name, what)
            else:
                log.info("%s: stopping %s", name, what)
            self.request_stop()

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class SyncRunner:
    """Runs an async worker or consumer from sync code: ``run()`` in the
    calling thread (until SIGTERM or SIGINT when that is the main thread),
    or ``start()`` in a thread of its own and ``stop()``."""

    _core: Runnable

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def run(self) -> None:
        """Runs until stop(), SIGTERM or SIGINT, then shuts down gracefully;
        raises the error that stopped it, if one did."""
        asyncio.run(self._core.run(handle_signals=True))

    def start(self) -> None:
        """Runs in a background thread; stop it with stop()."""
        if self._thread is not None:
            raise RuntimeError("started already")
        self._thread = threading.Thread(target=self._run_quietly, name=f"drover-{type(self).__name__.lower()}",
                                        daemon=True)
        self._thread.start()

    def _run_quietly(self) -> None:
        try:
            asyncio.run(self._core.run(handle_signals=False))
        except BaseException as e:
            self._error = e
            log.error("%s stopped: %s", type(self).__name__, e)

    def stop(self, wait: bool = True) -> None:
        """Asks for a graceful shutdown; with wait, returns once it is done."""
        self._core.request_stop()
        if wait and self._thread is not None:
            self._thread.join()


class Handler:
    """A user's handler as the worker or consumer calls it: with (value),
    (value, ctx) or no argument, as its signature says, and whether it is a
    coroutine function. ``arg_type`` is the annotation of its first
    parameter (None without one), for decoding a job's args into it."""

    def __init__(self, what: str, fn: Callable[..., Any]) -> None:
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.arg_type: Any = None
        if params:
            try:
                hints = typing.get_type_hints(fn, localns=_closure_vars(fn))
            except Exception as e:
                log.warning("handler of %s: cannot resolve its annotations (%s); it gets JSON values", what, e)
                hints = {}
            self.arg_type = hints.get(params[0].name)
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.nparams = min(len(params), 2)

    def call(self, value: Any, ctx: Any) -> Any:
        if self.nparams == 0:
            return self.fn()
        if self.nparams == 1:
            return self.fn(value)
        return self.fn(value, ctx)


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


def truncate(s: str, limit: int, keep_tail: bool = False) -> str:
    """Cuts s to at most limit bytes of UTF-8, marking the cut with '…'."""
    b = s.encode()
    if len(b) <= limit:
        return s
    if keep_tail:
        return "…" + b[-(limit - 8):].decode(errors="ignore")
    return b[: limit - 8].decode(errors="ignore") + "…"


def describe(e: BaseException) -> str:
    """An exception as a handler's error: "Type: message", or "Type"."""
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def format_trace(e: BaseException) -> str:
    return "".join(traceback.format_exception(type(e), e, e.__traceback__))


async def in_thread(pool: ThreadPool, fn: Callable[[], T]) -> T:
    """Runs fn on a pool thread and returns its value (or raises its
    exception) on the loop. Cancelling the caller leaves fn running: a
    thread cannot be stopped, only told to (through the handler's context)."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[T] = loop.create_future()

    def call() -> tuple[bool, Any]:
        try:
            return True, fn()
        except BaseException as e:
            return False, e

    def settle(outcome: tuple[bool, Any]) -> None:
        if fut.done():
            return
        ok, value = outcome
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)

    pool.submit(call, lambda outcome: to_loop(loop, settle, outcome))
    return await fut
