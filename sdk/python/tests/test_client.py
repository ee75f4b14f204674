from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

import drover
from conftest import RESTRICTED_QUEUE, Server, free_port, states, wait_for


@dataclass
class Email:
    to: str
    subject: str = ""


def test_insert_and_get_with_options(client: drover.Client, queue: str) -> None:
    run_at = datetime.now(timezone.utc) + timedelta(hours=1)
    job_id = client.insert("email", Email(to="ada@example.com", subject="hi"), queue=queue, priority=3,
                           run_at=run_at, max_attempts=7, tags=["a", "b"], metadata={"tenant": "t1"},
                           key="k1")
    job = client.get_job(job_id)
    assert job.id == job_id
    assert job.kind == "email"
    assert job.queue == queue
    assert job.args == {"to": "ada@example.com", "subject": "hi"}
    assert job.priority == 3
    assert job.max_attempts == 7
    assert job.tags == ["a", "b"]
    assert job.metadata == {"tenant": "t1"}
    assert job.state == "scheduled"
    assert job.run_at is not None and abs((job.run_at - run_at).total_seconds()) < 1
    assert job.created_at is not None
    assert client.job_result(job_id).result is None


def test_unique_key_skips_duplicates(client: drover.Client, queue: str) -> None:
    first = client.insert("report", {"day": 1}, queue=queue, unique_key="report-1")
    again = client.insert("report", {"day": 1}, queue=queue, unique_key="report-1")
    assert first > 0
    assert again == 0


def test_unique_by_queue_with_a_restricted_token(server: Server, client: drover.Client, queue: str) -> None:
    """A token restricted to queues inserts unique jobs only with their key
    held per queue (unique_by_queue), which the SDK sends."""
    key = "report-" + queue
    with server.client(server.restricted_token) as restricted:
        with pytest.raises(drover.ForbiddenError, match="unique_by_queue"):
            restricted.insert("report", {}, queue=RESTRICTED_QUEUE, unique_key=key)
        first = restricted.insert("report", {}, queue=RESTRICTED_QUEUE, unique_key=key, unique_by_queue=True)
        again = restricted.insert_many([drover.JobSpec("report", {}, queue=RESTRICTED_QUEUE, unique_key=key,
                                                       unique_by_queue=True)])
    assert first > 0 and again == [0]
    # Held in its queue only: the same key in another queue is free.
    assert client.insert("report", {}, queue=queue, unique_key=key, unique_by_queue=True) > 0
    assert client.get_job(first).queue == RESTRICTED_QUEUE


def test_insert_many_and_paging(client: drover.Client, queue: str) -> None:
    ids = client.insert_many([drover.JobSpec("n", {"i": i}, queue=queue) for i in range(25)])
    assert len(ids) == 25 and ids == sorted(ids)
    page = client.list_jobs(queue=queue, limit=10)
    assert [j.id for j in page.jobs] == ids[:10]
    assert page.next_after == ids[9]
    page2 = client.list_jobs(queue=queue, limit=10, after=page.next_after)
    assert [j.id for j in page2.jobs] == ids[10:20]
    assert [j.id for j in client.iter_jobs(queue=queue, page_size=7)] == ids
    assert [j.id for j in client.iter_jobs(queue=queue, state=["available"], kind="n")] == ids
    assert list(client.iter_jobs(queue=queue, state="completed")) == []


def test_cancel_retry_discard(client: drover.Client, queue: str) -> None:
    a, b = client.insert_many([drover.JobSpec("x", {}, queue=queue), drover.JobSpec("x", {}, queue=queue)])
    assert client.cancel(a).state == "cancelled"
    assert client.retry(a).state == "available"
    assert client.discard(b).state == "discarded"
    assert client.get_job(b).state == "discarded"


def test_errors(server: Server, client: drover.Client, queue: str) -> None:
    with pytest.raises(drover.ValidationError) as e:
        client.insert("bad kind!", {}, queue=queue)
    assert "kind" in e.value.message
    assert e.value.status == 400
    with pytest.raises(drover.ValidationError) as e:
        client.insert("ok", {}, queue=queue, priority=10**6)
    assert "priorit" in e.value.message
    with pytest.raises(drover.NotFoundError):
        client.get_job(10**12)
    with drover.Client(server.url, "drv_wrong") as bad, pytest.raises(drover.UnauthorizedError):
        bad.insert("x", {})
    job_id = client.insert("x", {}, queue=queue)
    with server.client(server.enqueue_token) as enq, pytest.raises(drover.ForbiddenError) as fe:
        enq.cancel(job_id)
    assert isinstance(fe.value, drover.AuthError)
    with drover.Client(f"http://127.0.0.1:{free_port()}", "drv_x") as down, \
            pytest.raises(drover.DroverConnectionError) as ce:
        down.get_job(1)
    assert ce.value.retryable


def test_retry_conflict_for_job_with_dependants(client: drover.Client, queue: str) -> None:
    parent = client.insert("p", {}, queue=queue)
    client.insert("c", {}, queue=queue, depends_on=[parent])
    client.cancel(parent)
    with pytest.raises(drover.ConflictError):
        client.retry(parent)


def test_batch_and_workflow(server: Server, client: drover.Client, queue: str) -> None:
    batch = client.insert_batch([drover.JobSpec("resize", {"n": i}, queue=queue) for i in range(3)],
                                callback=drover.JobSpec("resized", {}, queue=queue))
    assert len(batch.job_ids) == 3 and batch.callback_job_id is not None

    wf = drover.Workflow()
    fetch = wf.add("fetch", "fetch", {"url": "u"}, queue=queue)
    thumb = wf.add("thumb", "thumb", {}, queue=queue, after=[fetch])
    wf.add("notify", "notify", {}, queue=queue, after=[fetch, thumb])
    ids = client.insert_workflow(wf)
    assert client.get_job(ids["thumb"]).state == "pending"

    order: list[str] = []
    lock = threading.Lock()
    worker = drover.Worker(server.url, server.work_token, queues=[queue], concurrency=4, poll_wait=1)

    @worker.task("resize")
    def resize(args: dict[str, int]) -> dict[str, int]:
        return {"bytes": args["n"] * 10}

    for kind in ("resized", "fetch", "thumb", "notify"):
        def record(_args: object, ctx: drover.JobContext) -> None:
            with lock:
                order.append(ctx.kind)
        worker.register(kind, record)

    worker.start()
    try:
        wait_for(lambda: client.get_batch(batch.id).finished and client.get_job(ids["notify"]).state == "completed",
                 what="batch and workflow to finish")
    finally:
        worker.stop()
    b = client.get_batch(batch.id)
    assert b.counts.completed == 3 and b.total == 3
    results = sorted(r.result["bytes"] for r in client.iter_batch_results(batch.id, page_size=2))
    assert results == [0, 10, 20]
    wait_for(lambda: client.get_job(batch.callback_job_id or 0).state == "completed", what="callback")
    assert order.index("fetch") < order.index("thumb") < order.index("notify")


def test_workflow_in_one_request_hands_parent_results(server: Server, client: drover.Client, queue: str) -> None:
    setup = client.insert("setup", {}, queue=queue)
    wf = drover.Workflow()
    a = wf.add("a", "produce", {"n": 2}, queue=queue, depends_on=[setup])
    b = wf.add("b", "produce", {"n": 3}, queue=queue)
    wf.add("sum", "sum", {}, queue=queue, after=[a, b])
    ids = client.insert_workflow(wf)
    assert set(ids) == {"a", "b", "sum"}
    assert client.get_job(ids["sum"]).state == "pending"

    seen: dict[str, object] = {}
    worker = drover.Worker(server.url, server.work_token, queues=[queue], concurrency=2, poll_wait=1)

    @worker.task("setup")
    def do_setup(_args: dict[str, int]) -> dict[str, int]:
        return {"n": 1}

    @worker.task("produce")
    def produce(args: dict[str, int], ctx: drover.JobContext) -> dict[str, int]:
        return {"n": args["n"] + sum(r.result["n"] for r in ctx.parent_results)}

    @worker.task("sum")
    def total(_args: dict[str, int], ctx: drover.JobContext) -> dict[str, int]:
        seen["depends_on"] = ctx.depends_on
        seen["states"] = [r.state for r in ctx.parent_results]
        return {"total": sum(r.result["n"] for r in ctx.parent_results)}

    worker.start()
    try:
        wait_for(lambda: client.get_job(ids["sum"]).state == "completed", what="the workflow to finish")
    finally:
        worker.stop()
    assert client.job_result(ids["sum"]).result == {"total": 6}  # a: 2 + setup's 1, b: 3
    assert seen == {"depends_on": sorted([ids["a"], ids["b"]]), "states": ["completed", "completed"]}


def test_workflow_is_all_or_none(client: drover.Client, queue: str) -> None:
    wf = drover.Workflow()
    first = wf.add("first", "fine", {}, queue=queue)
    wf.add("second", "not a kind", {}, queue=queue, after=[first])
    with pytest.raises(drover.ValidationError, match="not a kind"):
        client.insert_workflow(wf)
    assert states(client, queue) == {}


def test_args_that_are_not_an_object_are_refused_by_name(client: drover.Client, queue: str) -> None:
    with pytest.raises(drover.ValidationError, match=r"jobs\[1\]\.args: must be a JSON object, got an array"):
        client.insert_many([drover.JobSpec("k", {}, queue=queue), drover.JobSpec("k", [1, 2], queue=queue)])
    assert states(client, queue) == {}


def test_periodic_jobs(client: drover.Client, queue: str) -> None:
    # A definition of its own per run: the server is shared by the session.
    name = f"tick-{queue}"
    created = client.create_periodic(name, "@every 1s", "tick", {"n": 1}, queue=queue, tags=["cron"])
    assert created.name == name and created.source == "api" and not created.paused
    assert created.next_run_at is not None and created.last_run_at is None
    with pytest.raises(drover.ConflictError):
        client.create_periodic(name, "@hourly", "tick")
    assert name in [p.name for p in client.list_periodic()]

    # The server's leader inserts its jobs at each tick.
    wait_for(lambda: len(client.list_jobs(queue=queue, kind="tick").jobs) >= 2, what="two ticks")
    job = client.list_jobs(queue=queue, kind="tick").jobs[0]
    assert job.args == {"n": 1} and job.tags == ["cron"] and job.metadata["periodic"] == name

    paused = client.pause_periodic(name)
    assert paused.paused and paused.next_run_at is None
    triggered = client.trigger_periodic(name)
    assert triggered.kind == "tick" and triggered.queue == queue and triggered.metadata["triggered"] is True
    assert client.get_periodic(name).last_run_at is not None

    updated = client.update_periodic(name, "@daily", "tick", {"n": 2}, queue=queue)
    assert updated.schedule == "@daily" and updated.args == {"n": 2} and updated.paused
    assert not client.resume_periodic(name).paused
    client.delete_periodic(name)
    with pytest.raises(drover.NotFoundError):
        client.get_periodic(name)
    with pytest.raises(drover.ValidationError) as e:
        client.create_periodic(name, "61 * * * *", "tick")
    assert "schedule" in e.value.message
