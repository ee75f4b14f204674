"""Operations for admin tokens against a real ``drover serve``: queue pause
and resume (whole and by kind), strict order, the worker registry and
unroutable jobs, bulk actions, batch listing and workflow graphs; and the
AsyncClient, which has every method of the Client."""

from __future__ import annotations

import asyncio
import inspect
import threading

import pytest

import drover
from conftest import Server, states, wait_for


def test_pause_and_resume_by_queue_and_kind(server: Server, client: drover.Client, queue: str) -> None:
    # A queue the store does not know (a typo) is refused rather than paused.
    with pytest.raises(drover.NotFoundError, match="not found"):
        client.get_queue(queue)
    with pytest.raises(drover.NotFoundError, match="not found"):
        client.pause_queue(queue)
    ja = client.insert("a", {}, queue=queue)
    jb = client.insert("b", {}, queue=queue)
    assert client.get_queue(queue) == drover.Queue(name=queue)  # no stored settings yet
    q = client.pause_queue(queue)
    assert q.paused and q.paused_kinds == [] and q.updated_at is not None
    ran: list[str] = []
    lock = threading.Lock()
    worker = drover.Worker(server.url, server.work_token, queues=[queue], poll_wait=0.5, concurrency=2)

    @worker.task("a")
    def a(_args: dict[str, object], ctx: drover.JobContext) -> None:
        with lock:
            ran.append(ctx.kind)

    worker.register("b", a)
    worker.start()
    try:
        # Paused: nothing runs. Resumed with kind b paused: only a runs.
        assert client.pause_queue(queue, kind="b").paused_kinds == ["b"]
        assert client.list_queues() and queue in {x.name for x in client.list_queues()}
        resumed = client.resume_queue(queue)
        assert not resumed.paused and resumed.paused_kinds == ["b"]
        wait_for(lambda: client.get_job(ja).state == "completed", what="kind a to run")
        assert client.get_job(jb).state == "available"
        assert client.resume_queue(queue, kind="b").paused_kinds == []
        wait_for(lambda: client.get_job(jb).state == "completed", what="kind b to run once resumed")
    finally:
        worker.stop()
    assert ran == ["a", "b"]
    # The worker registry lists the SDK's worker, which claimed from the queue.
    workers = {w.owner: w for w in client.list_workers()}
    me = workers[worker.worker_id]
    assert me.source == "http" and queue in me.queues and me.plain


def test_strict_order_and_unroutable(client: drover.Client, queue: str) -> None:
    job_id = client.insert("gpu", {}, queue=queue, worker_names=["nobody-" + queue], on_worker_absent="wait")
    q = client.set_strict_order(queue, 2)
    assert q.strict_order == 2
    assert client.set_strict_order(queue, 0).strict_order == 0
    with pytest.raises(drover.ValidationError, match="strict order -1"):
        client.set_strict_order(queue, -1)
    groups = [u for u in client.list_unroutable() if u.queue == queue]
    assert len(groups) == 1
    assert groups[0].jobs == 1 and groups[0].first_id == job_id
    assert groups[0].routing["worker_names"] == ["nobody-" + queue]


def test_bulk_actions(client: drover.Client, queue: str) -> None:
    ids = client.insert_many([drover.JobSpec("bulk", {"i": i}, queue=queue) for i in range(6)])
    task = client.wait_bulk(client.bulk("cancel", queue=queue, state="available").id, timeout=30)
    assert (task.status, task.action, task.matched, task.changed) == ("done", "cancel", 6, 6)
    assert set(states(client, queue).values()) == {"cancelled"}
    task = client.wait_bulk(client.bulk_by_ids("retry", ids[:2]).id, timeout=30)
    assert task.selected == 2 and task.changed == 2
    assert [states(client, queue)[i] for i in ids] == ["available"] * 2 + ["cancelled"] * 4
    task = client.wait_bulk(client.bulk("delete", queue=queue, kind="bulk", state="cancelled").id, timeout=30)
    assert task.changed == 4 and sorted(states(client, queue)) == ids[:2]
    assert client.get_bulk(task.id).done
    with pytest.raises(drover.ValidationError):
        client.bulk("explode", queue=queue)  # type: ignore[arg-type]


def test_batches_and_workflow_graph(client: drover.Client, queue: str) -> None:
    b1 = client.insert_batch([drover.JobSpec("m", {}, queue=queue)])
    b2 = client.insert_batch([drover.JobSpec("m", {}, queue=queue)] * 2)
    page = client.list_batches(limit=1)
    assert [b.id for b in page.batches] == [b2.id] and page.next_before is not None
    assert client.list_batches(before=page.next_before, limit=1).batches[0].id == b1.id

    wf = drover.Workflow()
    a = wf.add("a", "step", {}, queue=queue)
    wf.add("b", "step", {}, queue=queue, after=[a])
    refs = client.insert_workflow(wf)
    graph = client.workflow_graph(refs["b"])
    assert graph.jobs[0].id == refs["b"] and {j.id for j in graph.jobs} == set(refs.values())
    assert graph.edges == [drover.WorkflowEdge(parent=refs["a"], child=refs["b"])] and not graph.truncated


def test_admin_operations_need_admin(server: Server, queue: str) -> None:
    with server.client(server.enqueue_token) as enq:
        for call in (lambda: enq.pause_queue(queue), enq.list_queues, lambda: enq.bulk("retry")):
            with pytest.raises(drover.ForbiddenError):
                call()


def test_async_client_has_every_method_of_the_client() -> None:
    def public(cls: type) -> dict[str, inspect.Signature]:
        return {n: inspect.signature(f) for n, f in inspect.getmembers(cls, inspect.isfunction)
                if not n.startswith("_")}

    sync, aio = public(drover.Client), public(drover.AsyncClient)
    assert {"aclose" if n == "close" else n for n in sync} == set(aio)
    for name, sig in sync.items():
        other = aio["aclose" if name == "close" else name]
        assert list(sig.parameters) == list(other.parameters), name


def test_async_client_against_the_server(server: Server, queue: str) -> None:
    async def main() -> None:
        async with drover.AsyncClient(server.url, server.token) as c:
            # Requests run concurrently, each on a connection of its own.
            ids = await asyncio.gather(*(c.insert("x", {"i": i}, queue=queue) for i in range(20)))
            assert len(set(ids)) == 20
            assert sorted([j.id async for j in c.iter_jobs(queue=queue, page_size=7)]) == sorted(ids)
            assert (await c.stats(queue))["available"] == 20
            assert (await c.cancel(ids[0])).state == "cancelled"
            with pytest.raises(drover.NotFoundError):
                await c.get_job(10**12)
            # A large answer comes chunked.
            page = await c.list_jobs(queue=queue, limit=1000)
            assert len(page.jobs) == 20
            assert (await c.pause_queue(queue)).paused
        with pytest.raises(drover.DroverConnectionError, match="closed"):
            await c.get_job(ids[0])

    asyncio.run(main())
