"""Tests of the parts that need no server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import drover
from drover._args import decode_args
from drover._runtime import Backoff as _Backoff
from drover._runtime import Inbox
from drover.errors import error_for_status
from drover.models import Job, format_time, parse_time
from drover.worker import JobContext, Worker, _Held, compact_results


def test_error_classes() -> None:
    cases = {400: drover.ValidationError, 415: drover.ValidationError, 401: drover.UnauthorizedError,
             403: drover.ForbiddenError, 404: drover.NotFoundError, 409: drover.ConflictError,
             413: drover.PayloadTooLargeError, 429: drover.RateLimitedError, 503: drover.UnavailableError,
             500: drover.ServerError}
    for status, cls in cases.items():
        e = error_for_status(status, "jobs[0].kind: bad", "/v1/jobs")
        assert type(e) is cls and isinstance(e, drover.DroverError)
        assert e.retryable == (status in (429, 500, 503))
        assert "jobs[0].kind: bad" in str(e)


def test_parse_time_nanoseconds() -> None:
    t = parse_time("2026-11-22T03:50:01.123456789Z")
    assert t == datetime(2026, 11, 22, 3, 50, 1, 123456, tzinfo=timezone.utc)
    assert parse_time("2026-11-22T03:50:01+01:00") is not None
    assert parse_time(None) is None


def test_format_time_writes_utc() -> None:
    # Naive means UTC; an aware time is converted, so that an offset with
    # seconds (which RFC 3339 lacks) never reaches the server.
    assert format_time(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05+00:00"
    odd = timezone(timedelta(hours=5, minutes=30, seconds=15))
    assert format_time(datetime(2026, 1, 2, 8, 34, 20, 7, tzinfo=odd)) == "2026-01-02T03:04:05.000007+00:00"


@dataclass
class Inner:
    x: int


@dataclass
class Outer:
    inner: Inner
    items: list[Inner]
    maybe: Inner | None = None


def test_decode_args() -> None:
    got = decode_args(Outer, {"inner": {"x": 1}, "items": [{"x": 2}], "maybe": None, "new_field": 3})
    assert got == Outer(Inner(1), [Inner(2)])
    assert decode_args(dict[str, Any], {"a": 1}) == {"a": 1}
    assert decode_args(None, [1, 2]) == [1, 2]
    with pytest.raises(TypeError):
        decode_args(Outer, {"items": []})


def test_backoff_grows_with_jitter_and_caps() -> None:
    b = _Backoff(base=0.1, cap=2.0)
    delays = [b.next() for _ in range(12)]
    assert 0.05 <= delays[0] <= 0.1
    assert all(d <= 2.0 for d in delays)
    assert delays[-1] >= 1.0
    b.reset()
    assert b.next() <= 0.1


def test_set_result_checks_size() -> None:
    ctx = JobContext(drover.Job(id=1, state="running", queue="q", kind="k", args={}), "w")
    with pytest.raises(ValueError, match="over the limit"):
        ctx.set_result("x" * 70000)
    with pytest.raises(ValueError, match="JSON"):
        ctx.set_result(object())
    ctx.set_result({"ok": True})


class FakeServer:
    """Answers the worker protocol from memory, recording the requests, so
    that the lease token's round trip can be checked before the real
    server sends one."""

    def __init__(self, heartbeat_reply: dict[str, Any] | None = None, compact: str = "ignore") -> None:
        # compact: what the server does with a claim's "compact": ignore it
        # (answer the full form), answer in the compact form, or refuse it
        # as a server that predates the field does.
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.claimed = False
        self.heartbeat_reply = heartbeat_reply or {"lost": [], "cancel_requested": []}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append((self.path, body, dict(self.headers)))
                out: dict[str, Any]
                status = 200
                if self.path == "/v1/claim" and body.get("compact") and compact == "refuse":
                    status, out = 400, {"error": 'request body: unknown field "compact"', "status": 400}
                elif self.path == "/v1/claim":
                    jobs = []
                    if not fake.claimed:
                        fake.claimed = True
                        jobs = [{"id": 7, "state": "running", "queue": "default", "kind": "k", "args": {},
                                 "attempt": 1, "max_attempts": 3, "lease_token": "tok-7", "future_field": 1}]
                    out = {"jobs": jobs}
                    if body.get("compact") and compact == "answer":
                        shared = {k: v for k, v in jobs[0].items() if k not in ("id", "args")} if jobs else {}
                        out = {"shared": shared, "jobs": [{k: j[k] for k in ("id", "args")} for j in jobs]}
                elif self.path == "/v1/heartbeat":
                    out = fake.heartbeat_reply
                else:
                    out = {"accepted": [r["id"] for r in body["results"]], "rejected": []}
                data = json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def _run_until_finished(worker: Worker, fake: FakeServer) -> None:
    """Runs the worker until it sent a /v1/finish (5 s at most), then stops
    it and the fake server."""
    worker.start()
    try:
        for _ in range(100):
            if any(p == "/v1/finish" for p, _, _ in fake.requests):
                break
            threading.Event().wait(0.05)
    finally:
        worker.stop()
        fake.httpd.shutdown()


def test_lease_token_is_echoed_and_headers_sent() -> None:
    fake = FakeServer()
    finished = threading.Event()
    worker = Worker(fake.url, "drv_t", lease=1.0, poll_wait=0.2)

    @worker.task("k")
    def k(_args: dict[str, Any]) -> None:
        # Long enough for a heartbeat (every third of the 1 s lease).
        finished.wait(0.6)
        raise ValueError("x")

    _run_until_finished(worker, fake)
    beats = [b for p, b, _ in fake.requests if p == "/v1/heartbeat"]
    assert beats and beats[0]["attempts"] == [{"id": 7, "attempt": 1, "lease_token": "tok-7"}]
    (result,) = next(b for p, b, _ in fake.requests if p == "/v1/finish")["results"]
    assert result["lease_token"] == "tok-7"
    assert result["outcome"] == "failed" and result["max_attempts"] == 3
    for _, _, headers in fake.requests:
        assert headers["Content-Type"] == "application/json"
        assert headers["Authorization"] == "Bearer drv_t"


@pytest.mark.parametrize("compact", ["answer", "refuse", "ignore"])
def test_compact_claim_and_finish(compact: str) -> None:
    # A server that answers the compact form gets a compact finish; one
    # that refuses the field gets full-form claims from then on; one that
    # ignores it (answers the full form) gets a full-form finish.
    fake = FakeServer(compact=compact)
    seen: list[tuple[int, str | None, str]] = []
    worker = Worker(fake.url, "drv_t", poll_wait=0.2)

    @worker.task("k")
    def k(_args: dict[str, Any], ctx: JobContext) -> None:
        seen.append((ctx.job.id, ctx.job.lease_token, ctx.queue))

    _run_until_finished(worker, fake)
    assert seen == [(7, "tok-7", "default")]
    claims = [b for p, b, _ in fake.requests if p == "/v1/claim"]
    assert claims[0]["compact"] is True
    if compact == "refuse":
        assert all("compact" not in c for c in claims[1:]) and len(claims) > 1
    finish = next(b for p, b, _ in fake.requests if p == "/v1/finish")
    if compact == "answer":
        assert finish == {"shared": {"attempt": 1, "lease_token": "tok-7", "outcome": "completed"},
                          "results": [{"id": 7}]}
    else:
        assert finish == {"results": [{"id": 7, "attempt": 1, "lease_token": "tok-7", "outcome": "completed"}]}


def test_job_from_claim_reads_the_compact_form_as_the_full_one() -> None:
    full: list[dict[str, Any]] = [
        {"id": i, "state": "running", "queue": "q", "kind": "k" if i < 3 else "k2", "args": {"n": i}, "tags": [],
             "errors": [], "attempt": 1, "max_attempts": 25, "created_at": "2026-11-29T09:33:33.5Z",
             "lease_expires_at": "2026-11-29T09:34:03Z", "lease_owner": "w", "lease_token": "ab" * 16,
             **({"key": "x"} if i == 2 else {})} for i in (1, 2, 3)]
    shared = {k: v for k, v in full[0].items() if k in ("state", "queue", "attempt", "max_attempts", "created_at",
                                                        "lease_expires_at", "lease_owner", "lease_token")}
    entries = [{k: v for k, v in j.items() if k not in shared} for j in full]
    entries[0]["attempt"] = 1  # a field an entry repeats: its own value wins
    jobs = Job.from_claim({"shared": shared, "jobs": entries})
    assert jobs == [Job.from_json(j) for j in full]
    assert [j.raw for j in jobs] == full
    assert jobs[1].key == "x" and jobs[0].key == "" and jobs[2].kind == "k2"
    assert Job.from_claim({"jobs": full}) == jobs
    assert Job.from_claim({"shared": {}, "jobs": []}) == []


def test_compact_results_send_what_results_share_once() -> None:
    batch = [{"id": 1, "attempt": 1, "lease_token": "a", "outcome": "completed"},
             {"id": 2, "attempt": 1, "lease_token": "b", "outcome": "failed", "error": "x"},
             {"id": 3, "attempt": 1, "lease_token": "a", "outcome": "completed", "result": {"ok": 1}}]
    assert compact_results(batch) == {
        "shared": {"attempt": 1, "lease_token": "a", "outcome": "completed"},
        "results": [{"id": 1}, {"id": 2, "lease_token": "b", "outcome": "failed", "error": "x"},
                    {"id": 3, "result": {"ok": 1}}]}
    # A field one result lacks is not shared: the server would give it shared's.
    assert compact_results([{"id": 1, "attempt": 1, "outcome": "completed"},
                            {"id": 2, "attempt": 1, "lease_token": "a", "outcome": "completed"}])["shared"] == {
        "attempt": 1, "outcome": "completed"}


def test_refs_without_lease_token() -> None:
    job = drover.Job(id=3, state="running", queue="q", kind="k", args={}, attempt=2)
    assert _Held(job=job, ctx=JobContext(job, "w")).ref == {"id": 3, "attempt": 2}


def test_lost_lease_stops_the_handler_and_drops_its_result() -> None:
    fake = FakeServer(heartbeat_reply={"lost": [7], "cancel_requested": []})
    reasons: list[str | None] = []
    ended = threading.Event()
    worker = Worker(fake.url, "drv_t", lease=1.0, poll_wait=0.2)

    @worker.task("k")
    def k(_args: dict[str, Any], ctx: JobContext) -> str:
        ctx.cancelled.wait(5)
        reasons.append(ctx.cancel_reason)
        ended.set()
        return "too late"

    worker.start()
    try:
        assert ended.wait(5)
    finally:
        worker.stop()
        fake.httpd.shutdown()
    assert reasons == ["lease_lost"]
    assert [p for p, _, _ in fake.requests if p == "/v1/finish"] == []


def test_job_from_json_sets_every_field() -> None:
    # from_json fills the frozen dataclass's __dict__ directly: a field it
    # forgets would be missing from the object, not defaulted.
    job = Job.from_json({"id": 7, "kind": "k", "args": {"a": 1}, "lease_token": "ab" * 16,
                         "attempted_at": "2026-11-29T09:33:33.123456789Z", "batch_id": 3, "depends_on": [1, 2]})
    assert set(vars(job)) == {f.name for f in dataclasses.fields(Job)}
    assert job == Job.from_json(dict(job.raw))
    assert (job.id, job.kind, job.args, job.batch_id, job.depends_on) == (7, "k", {"a": 1}, 3, [1, 2])
    assert job.attempted_at == datetime(2026, 11, 29, 9, 33, 33, 123456, tzinfo=timezone.utc)
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.id = 8  # type: ignore[misc]


def test_inbox_runs_every_call_in_order_on_the_loop() -> None:
    async def main() -> tuple[list[int], set[int]]:
        loop = asyncio.get_running_loop()
        inbox = Inbox(loop)
        seen: list[int] = []
        threads: set[int] = set()
        done = asyncio.Event()

        def record(i: int) -> None:
            seen.append(i)
            threads.add(threading.get_ident())
            if len(seen) == 2000:
                done.set()

        def put(lo: int) -> None:
            for i in range(lo, lo + 1000):
                inbox.put(record, i)

        workers = [threading.Thread(target=put, args=(lo,)) for lo in (0, 1000)]
        for t in workers:
            t.start()
        await asyncio.wait_for(done.wait(), 10)
        for t in workers:
            t.join()
        return seen, threads

    seen, threads = asyncio.run(main())
    assert sorted(seen) == list(range(2000))
    # Each thread's calls keep their order, and all ran on the loop's thread.
    assert [i for i in seen if i < 1000] == list(range(1000))
    assert [i for i in seen if i >= 1000] == list(range(1000, 2000))
    assert threads == {threading.get_ident()}


def test_job_context_event_is_made_on_first_use() -> None:
    job = Job.from_json({"id": 1, "kind": "k", "args": {}})
    idle = JobContext(job, "w")
    assert not idle.is_cancelled() and idle.cancel_reason is None
    # Interrupted before the handler looked: the event it then reads is set.
    idle._cancel("timeout")
    assert idle.cancelled.is_set() and idle.is_cancelled() and idle.cancel_reason == "timeout"
    # Looked at first (a handler waiting on it): the same event is set later.
    watched = JobContext(job, "w")
    event = watched.cancelled
    assert not event.is_set()
    watched._cancel("cancel_requested")
    assert event.is_set() and watched.cancelled is event and watched.cancel_reason == "cancel_requested"
