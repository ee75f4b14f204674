from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

import drover
from conftest import Server, states, wait_for

if TYPE_CHECKING:
    from typing_extensions import Unpack


class Ledger:
    """Every handler run, by job id, with the most handlers seen at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: Counter[int] = Counter()
        self.now = 0
        self.peak = 0

    def enter(self, job_id: int) -> None:
        with self.lock:
            self.runs[job_id] += 1
            self.now += 1
            self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


def make_worker(server: Server, queue: str, **kw: Unpack[drover.WorkerOptions]) -> drover.Worker:
    opts: drover.WorkerOptions = {"concurrency": 4, "poll_wait": 1.0, "lease": 5.0, "queues": [queue]}
    opts.update(kw)
    return drover.Worker(server.url, server.work_token, **opts)


def test_each_job_runs_once_with_results_and_concurrency(server: Server, client: drover.Client, queue: str) -> None:
    ledger = Ledger()
    worker = make_worker(server, queue, concurrency=8)

    @worker.task("square")
    def square(args: dict[str, int], ctx: drover.JobContext) -> dict[str, int]:
        ledger.enter(ctx.id)
        try:
            time.sleep(0.03)
            return {"sq": args["n"] ** 2}
        finally:
            ledger.leave()

    ids = client.insert_many([drover.JobSpec("square", {"n": i}, queue=queue) for i in range(120)])
    worker.start()
    try:
        wait_for(lambda: set(states(client, queue).values()) == {"completed"}, what="all jobs completed")
    finally:
        worker.stop()
    assert ledger.runs == Counter({i: 1 for i in ids})
    assert ledger.peak == 8
    for n, job_id in enumerate(ids[:10]):
        assert client.job_result(job_id).result == {"sq": n * n}
    # The store, read by the CLI, agrees.
    rows = server.jobs_list_cli("--queue", queue)
    assert len(rows) == 120 and all(r["state"] == "completed" and r["attempt"] == 1 for r in rows)


def test_failure_records_traceback_and_retries(server: Server, client: drover.Client, queue: str) -> None:
    worker = make_worker(server, queue)

    def flaky_inner(n: int) -> None:
        raise ValueError(f"boom {n}")

    @worker.task("flaky")
    def flaky(args: dict[str, int], ctx: drover.JobContext) -> str:
        if ctx.attempt == 1:
            flaky_inner(args["n"])
        return "ok"

    job_id = client.insert("flaky", {"n": 7}, queue=queue, max_attempts=3)
    worker.start()
    try:
        wait_for(lambda: client.get_job(job_id).state == "completed", what="retry to complete")
    finally:
        worker.stop()
    job = client.get_job(job_id)
    assert job.attempt == 2
    assert len(job.errors) == 1
    err = job.errors[0]
    assert err.attempt == 1
    assert err.error == "ValueError: boom 7"
    assert "Traceback (most recent call last)" in err.trace and "flaky_inner" in err.trace
    assert client.job_result(job_id).result == "ok"


def test_last_failure_discards_and_cancel_exception(server: Server, client: drover.Client, queue: str) -> None:
    worker = make_worker(server, queue)

    @worker.task("doomed")
    def doomed(_args: dict[str, object]) -> None:
        raise RuntimeError("never works")

    @worker.task("refuse")
    def refuse(_args: dict[str, object]) -> None:
        raise drover.Cancel("not wanted")

    d = client.insert("doomed", {}, queue=queue, max_attempts=1)
    r = client.insert("refuse", {}, queue=queue)
    unknown = client.insert("nobody-handles-this", {}, queue=queue, max_attempts=1)
    worker.start()
    try:
        wait_for(lambda: states(client, queue) == {d: "discarded", r: "cancelled", unknown: "discarded"},
                 what="outcomes")
    finally:
        worker.stop()
    assert "no handler for kind" in client.get_job(unknown).errors[0].error


def test_a_result_the_store_refuses_fails_only_its_job(
    server: Server, client: drover.Client, queue: str, caplog: pytest.LogCaptureFixture
) -> None:
    # SQLite's JSON functions hold no nesting past 1,000 levels; PostgreSQL's
    # jsonb refuses a number past numeric's range, which Python's json
    # cannot write within the result's 64 KiB, so the test runs on SQLite.
    if server.schema is not None:
        pytest.skip("no result Python can encode that PostgreSQL refuses")
    deep: list[Any] = []
    for _ in range(1500):
        deep = [deep]
    worker = make_worker(server, queue)

    @worker.task("answer")
    def answer(args: dict[str, bool]) -> Any:
        return {"deep": deep} if args["poison"] else {"ok": True}

    ids = client.insert_many([drover.JobSpec("answer", {"poison": i == 1}, queue=queue) for i in range(3)])
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # json.dumps recurses once a level
    try:
        with caplog.at_level(logging.WARNING, logger="drover"):
            worker.start()
            try:
                wait_for(lambda: states(client, queue) == {ids[0]: "completed", ids[1]: "discarded",
                                                           ids[2]: "completed"}, what="outcomes")
            finally:
                worker.stop()
    finally:
        sys.setrecursionlimit(limit)
    errors = client.get_job(ids[1]).errors
    assert len(errors) == 1 and "the store refused" in errors[0].error
    refused = [r for r in caplog.records if f"job {ids[1]} " in r.getMessage()]
    assert [r.levelno for r in refused] == [logging.ERROR], [r.getMessage() for r in caplog.records]
    message = refused[0].getMessage()
    assert "refused by the store" in message and "recorded as a failed attempt" in message
    assert not [r for r in caplog.records if f"job {ids[0]} " in r.getMessage() or f"job {ids[2]} " in r.getMessage()]


@dataclass
class Address:
    city: str


@dataclass
class Order:
    id: int
    lines: list[str]
    ship_to: Address
    note: str | None = None
    extra: dict[str, int] = field(default_factory=dict)


def test_typed_dataclass_args_and_async_handlers(server: Server, client: drover.Client, queue: str) -> None:
    seen: list[Order] = []
    worker = make_worker(server, queue)

    @worker.task("order")
    def order(args: Order, ctx: drover.JobContext) -> None:
        seen.append(args)
        ctx.set_result({"city": args.ship_to.city})

    @worker.task("async-order")
    async def async_order(args: Order, ctx: drover.JobContext) -> dict[str, object]:
        await asyncio.sleep(0.05)
        return {"id": args.id, "loop": asyncio.get_running_loop() is not None, "attempt": ctx.attempt}

    a = client.insert("order", Order(1, ["x"], Address("Oslo"), extra={"k": 1}), queue=queue)
    b = client.insert("async-order", {"id": 2, "lines": [], "ship_to": {"city": "Rome"}, "unknown": 1}, queue=queue)
    many = client.insert_many([drover.JobSpec("async-order", Order(i, [], Address("c")), queue=queue)
                               for i in range(10, 30)])
    worker.start()
    try:
        wait_for(lambda: set(states(client, queue).values()) == {"completed"}, what="completed")
    finally:
        worker.stop()
    assert seen == [Order(1, ["x"], Address("Oslo"), extra={"k": 1})]
    assert isinstance(seen[0].ship_to, Address)
    assert client.job_result(a).result == {"city": "Oslo"}
    assert client.job_result(b).result == {"id": 2, "loop": True, "attempt": 1}
    assert client.job_result(many[5]).result["id"] == 15


def test_cancellation_reaches_sync_and_async_handlers(server: Server, client: drover.Client, queue: str) -> None:
    started: dict[str, threading.Event] = {"sync": threading.Event(), "async": threading.Event()}
    reasons: dict[str, str | None] = {}
    worker = make_worker(server, queue, lease=3.0)  # heartbeats every second

    @worker.task("long-sync")
    def long_sync(_args: dict[str, object], ctx: drover.JobContext) -> None:
        started["sync"].set()
        if not ctx.cancelled.wait(30):
            raise AssertionError("never cancelled")
        reasons["sync"] = ctx.cancel_reason
        raise drover.Cancel("stopped on request")

    @worker.task("long-async")
    async def long_async(_args: dict[str, object], ctx: drover.JobContext) -> None:
        started["async"].set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            reasons["async"] = ctx.cancel_reason
            raise

    s = client.insert("long-sync", {}, queue=queue)
    a = client.insert("long-async", {}, queue=queue)
    worker.start()
    try:
        assert started["sync"].wait(10) and started["async"].wait(10)
        client.cancel(s)
        client.cancel(a)
        wait_for(lambda: states(client, queue) == {s: "cancelled", a: "cancelled"}, timeout=15,
                 what="cancelled")
    finally:
        worker.stop()
    assert reasons == {"sync": "cancel_requested", "async": "cancel_requested"}


def test_timeout_fails_the_attempt(server: Server, client: drover.Client, queue: str) -> None:
    worker = make_worker(server, queue)

    @worker.task("slow")
    async def slow(_args: dict[str, object]) -> None:
        await asyncio.sleep(30)

    job_id = client.insert("slow", {}, queue=queue, timeout_ms=200, max_attempts=1)
    worker.start()
    try:
        wait_for(lambda: client.get_job(job_id).state == "discarded", what="timed out")
    finally:
        worker.stop()
    assert client.get_job(job_id).errors[0].error.startswith("timed out after 0.2s")


def test_graceful_stop_lets_running_handlers_finish(server: Server, client: drover.Client, queue: str) -> None:
    started = threading.Event()
    worker = make_worker(server, queue, concurrency=2, shutdown_timeout=10)

    @worker.task("slowish")
    def slowish(_args: dict[str, object]) -> str:
        started.set()
        time.sleep(1.0)
        return "done"

    ids = client.insert_many([drover.JobSpec("slowish", {}, queue=queue) for _ in range(5)])
    worker.start()
    assert started.wait(10)
    t0 = time.monotonic()
    worker.stop()
    assert time.monotonic() - t0 < 5
    st = states(client, queue)
    # The two running when the stop came finished and were reported; no other
    # job was claimed.
    assert sorted(st.values()) == ["available"] * 3 + ["completed"] * 2
    assert all(client.job_result(i).result == "done" for i in ids if st[i] == "completed")


def test_registration_errors(server: Server) -> None:
    worker = drover.Worker(server.url, server.work_token)

    @worker.task("a")
    def a(_args: dict[str, object]) -> None: ...

    with pytest.raises(ValueError, match="registered already"):
        worker.register("a", a)
    with pytest.raises(ValueError, match="concurrency"):
        drover.Worker(concurrency=0)


def test_bad_token_stops_the_worker(server: Server, queue: str) -> None:
    worker = drover.Worker(server.url, "drv_nope", queues=[queue], poll_wait=1)

    @worker.task("a")
    def a(_args: dict[str, object]) -> None: ...

    with pytest.raises(drover.UnauthorizedError):
        worker.run()


def test_several_queues_and_retry_exception(server: Server, client: drover.Client, queue: str) -> None:
    other = queue + "-b"
    worker = drover.Worker(server.url, server.work_token, queues=[queue, other], concurrency=3, poll_wait=1)

    @worker.task("later")
    def later(_args: dict[str, object], ctx: drover.JobContext) -> int:
        if ctx.attempt == 1:
            raise drover.Retry("not yet", delay=0.1)
        return ctx.attempt

    a = client.insert("later", {}, queue=queue)
    b = client.insert("later", {}, queue=other)
    worker.start()
    try:
        wait_for(lambda: client.get_job(a).state == client.get_job(b).state == "completed", what="both queues")
    finally:
        worker.stop()
    assert client.job_result(a).result == client.job_result(b).result == 2
    assert client.get_job(b).errors[0].error == "Retry: not yet"


def test_pydantic_args_and_results(server: Server, client: drover.Client, queue: str) -> None:
    pydantic = pytest.importorskip("pydantic")

    class Invoice(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        number: int
        total: float

    worker = make_worker(server, queue)
    seen: list[object] = []

    def bill(args: Invoice) -> Invoice:
        seen.append(args)
        return Invoice(number=args.number, total=args.total * 2)

    worker.register("bill", bill)
    job_id = client.insert("bill", Invoice(number=3, total=1.5), queue=queue)
    worker.start()
    try:
        wait_for(lambda: client.get_job(job_id).state == "completed", what="completed")
    finally:
        worker.stop()
    assert seen == [Invoice(number=3, total=1.5)]
    assert client.job_result(job_id).result == {"number": 3, "total": 3.0}


def test_idle_queue_holds_one_slot(server: Server, client: drover.Client, queue: str) -> None:
    ledger = Ledger()
    worker = drover.Worker(server.url, server.work_token, queues=[queue, queue + "-idle"], concurrency=4,
                           poll_wait=2)

    @worker.task("busy")
    def busy(_args: dict[str, object], ctx: drover.JobContext) -> None:
        ledger.enter(ctx.id)
        time.sleep(0.1)
        ledger.leave()

    worker.start()
    try:
        time.sleep(0.5)  # both claimers are waiting on empty queues now
        client.insert_many([drover.JobSpec("busy", {}, queue=queue) for _ in range(30)])
        wait_for(lambda: set(states(client, queue).values()) == {"completed"}, what="completed")
    finally:
        worker.stop()
    # The idle queue's long poll holds one slot (none in the moment between
    # two of its polls); the busy queue gets the rest, not half.
    assert ledger.peak >= 3


def test_shutdown_timeout_reports_unfinished_handlers(server: Server, client: drover.Client, queue: str) -> None:
    started = threading.Event()
    worker = make_worker(server, queue, concurrency=2, shutdown_timeout=0.3)
    reasons: list[str | None] = []

    @worker.task("stubborn")
    def stubborn(_args: dict[str, object]) -> None:
        started.set()
        time.sleep(3)  # ignores ctx.cancelled

    @worker.task("polite")
    async def polite(_args: dict[str, object], ctx: drover.JobContext) -> None:
        try:
            await asyncio.sleep(30)
        finally:
            reasons.append(ctx.cancel_reason)

    s = client.insert("stubborn", {}, queue=queue)
    p = client.insert("polite", {}, queue=queue)
    worker.start()
    assert started.wait(10)
    wait_for(lambda: client.get_job(p).state == "running", what="both running")
    t0 = time.monotonic()
    worker.stop()
    assert time.monotonic() - t0 < 2.5
    assert reasons == ["shutdown"]
    for job_id in (s, p):
        job = client.get_job(job_id)
        # Released: available again at once rather than after its lease,
        # its attempt undone, no error recorded (not retryable).
        assert job.state == "available" and job.attempt == 0, (job.state, job.attempt)
        assert job.errors == []

    # Another worker then runs both, as their first attempt.
    attempts: list[int] = []
    other = make_worker(server, queue, concurrency=2)

    @other.task("stubborn")
    def quick(_args: dict[str, object], ctx: drover.JobContext) -> str:
        attempts.append(ctx.attempt)
        return "done"

    other.register("polite", quick)
    other.start()
    try:
        wait_for(lambda: set(states(client, queue).values()) == {"completed"}, what="completed elsewhere")
    finally:
        other.stop()
    assert sorted(attempts) == [1, 1]
    for job_id in (s, p):
        job = client.get_job(job_id)
        assert job.attempt == 1 and job.errors == []
        assert client.job_result(job_id).result == "done"


def test_snooze_reruns_after_the_delay_with_the_same_attempt(
    server: Server, client: drover.Client, queue: str
) -> None:
    runs: list[tuple[int, float]] = []
    worker = make_worker(server, queue)

    @worker.task("sleepy")
    def sleepy(_args: dict[str, object], ctx: drover.JobContext) -> str:
        runs.append((ctx.attempt, time.monotonic()))
        if len(runs) == 1:
            raise drover.Snooze(0.3)
        return "awake"

    job_id = client.insert("sleepy", {}, queue=queue, max_attempts=1)
    worker.start()
    try:
        wait_for(lambda: client.get_job(job_id).state == "completed", what="completed after the snooze")
        time.sleep(0.8)  # room for a wrong third run
    finally:
        worker.stop()
    # Ran exactly twice, both times as attempt 1 (max_attempts=1 would have
    # discarded it had the snooze used the attempt), the second after the delay.
    assert [a for a, _ in runs] == [1, 1]
    assert runs[1][1] - runs[0][1] >= 0.3
    job = client.get_job(job_id)
    assert job.attempt == 1 and job.errors == []
    assert client.job_result(job_id).result == "awake"


def test_snooze_rejects_a_negative_delay() -> None:
    with pytest.raises(ValueError):
        drover.Snooze(-1)


def test_routing_by_type_name_and_labels(server: Server, client: drover.Client, queue: str) -> None:
    """Workers say what they are on their claims; a job routed to them runs
    only there, a job no live worker can take says so, and labels changed at
    run time take effect on the next claims."""
    ran: dict[int, str] = {}
    lock = threading.Lock()

    def worker_of(name: str, **kw: Unpack[drover.WorkerOptions]) -> drover.Worker:
        w = make_worker(server, queue, **kw)
        w.configure(worker_id=f"{name}-proc")

        @w.task("route")
        def route(args: dict[str, int], ctx: drover.JobContext) -> None:
            with lock:
                ran[ctx.id] = name

        return w

    gpu = worker_of("gpu", worker_type="gpu", worker_labels={"vram": "48g"})
    plain = worker_of("plain")
    by_type = client.insert("route", {}, queue=queue, worker_type="gpu")
    by_label = client.insert("route", {}, queue=queue, worker_labels={"vram": "48g"})
    by_name = client.insert("route", {}, queue=queue, worker_names=["gpu-proc"])
    anyone = client.insert("route", {}, queue=queue)
    later = client.insert("route", {}, queue=queue, worker_labels={"vram": "80g"},
                          worker_type="gpu", worker_names=["gpu-proc"], on_worker_absent="fail",
                          worker_absent_after_ms=600000)
    gpu.start()
    plain.start()
    try:
        wait_for(lambda: len(ran) == 4, what="the four routable jobs to run")
        assert ran[by_type] == ran[by_label] == ran[by_name] == "gpu"
        assert ran[anyone] in ("gpu", "plain")
        job = client.get_job(later)
        assert job.state == "available" and job.unroutable
        assert job.routing["worker_labels"] == {"vram": "80g"} and job.routing["on_worker_absent"] == "fail"
        gpu.set_worker_labels({"vram": "80g"})
        wait_for(lambda: later in ran, what="the job to run once the labels changed")
        assert ran[later] == "gpu"
    finally:
        gpu.stop()
        plain.stop()


def test_async_worker_on_the_callers_loop(server: Server, queue: str) -> None:
    """AsyncWorker runs on the loop that awaits it, its async handlers as
    tasks of that loop and its sync handlers on threads beside it."""
    seen: dict[int, str] = {}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        worker = drover.AsyncWorker(server.url, server.work_token, queues=[queue], concurrency=4, poll_wait=1)

        @worker.task("on-loop")
        async def on_loop(args: dict[str, int], ctx: drover.JobContext) -> int:
            assert asyncio.get_running_loop() is loop
            seen[ctx.id] = "loop"
            return args["n"] * 2

        @worker.task("on-thread")
        def on_thread(args: dict[str, int], ctx: drover.JobContext) -> int:
            seen[ctx.id] = threading.current_thread().name
            return args["n"] + 1

        async with drover.AsyncClient(server.url, server.token) as c:
            ids = await c.insert_many([drover.JobSpec("on-loop" if i % 2 else "on-thread", {"n": i}, queue=queue)
                                       for i in range(10)])
            run = asyncio.create_task(worker.run(handle_signals=False))
            while {j.state async for j in c.iter_jobs(queue=queue)} != {"completed"}:
                assert not run.done(), run
                await asyncio.sleep(0.05)
            worker.request_stop()
            await run
            results = [(await c.job_result(i)).result for i in ids]
        assert results == [i * 2 if i % 2 else i + 1 for i in range(10)]
        assert len(seen) == 10
        for i, where in seen.items():
            assert where == "loop" if ids.index(i) % 2 else where.startswith("drover-handler"), (i, where)

    asyncio.run(main())
