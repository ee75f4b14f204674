"""The asyncio client: insert jobs, batches and workflows; inspect, cancel,
retry and discard them; operate queues; publish to topics and manage
subscriptions.

This file is the source of both clients: ``scripts/unasync.py`` writes
``client.py`` (the synchronous :class:`drover.Client`) from it, and CI
checks that the two agree, so that both have the same methods.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ._aio_http import AsyncTransport
from ._requests import (
    acks_body,
    kind_query,
    messages_body,
    page_query,
    periodic_body,
    periodic_path,
    queue_path,
    search_query,
    subscription_path,
    topic_path,
    workflow_body,
)
from .models import (
    Batch,
    BatchPage,
    BulkAction,
    BulkTask,
    InsertedBatch,
    Job,
    JobPage,
    JobResult,
    JobSpec,
    Message,
    PeriodicJob,
    Queue,
    ReceivedBatch,
    ResultPage,
    SearchOrder,
    SubscriptionLag,
    SubscriptionLane,
    SubscriptionRewind,
    Topic,
    UnroutableJobs,
    WorkerInfo,
    Workflow,
    WorkflowGraph,
    format_time,
)

__all__ = ["AsyncClient"]


class AsyncClient:
    """A client of one ``drover serve``, for asyncio code.

    Inserting and publishing need a token with the ``enqueue`` scope;
    receiving ``work``; cancel, retry, discard, stats, queue operations,
    bulk actions, topic and subscription management need ``admin``.
    Methods raise a :class:`drover.DroverError` subclass; the client never
    retries an insert or a publish on its own (a connection error leaves it
    unknown whether the job was stored; use ``unique_key`` to make a retry
    safe).

    Use it from one event loop, as an async context manager or with
    :meth:`aclose`; it keeps a pool of keep-alive connections, one per
    request under way."""

    def __init__(self, url: str, token: str, timeout: float = 30.0) -> None:
        self._t = AsyncTransport(url, token, timeout=timeout)

    async def aclose(self) -> None:
        await self._t.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # Inserting.

    async def insert(
        self,
        kind: str,
        args: Any = None,
        *,
        queue: str | None = None,
        priority: int | None = None,
        run_at: datetime | None = None,
        max_attempts: int | None = None,
        tags: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        timeout_ms: int | None = None,
        depends_on: Sequence[int] | None = None,
        key: str | None = None,
        key_limit: int | None = None,
        key_rate: int | None = None,
        key_rate_period_ms: int | None = None,
        unique_key: str | None = None,
        unique_states: Sequence[str] | None = None,
        unique_by_queue: bool | None = None,
        worker_type: str | None = None,
        worker_names: Sequence[str] | None = None,
        worker_labels: dict[str, str] | None = None,
        on_worker_absent: str | None = None,
        worker_absent_after_ms: int | None = None,
    ) -> int:
        """Inserts one job and returns its id (0 when ``unique_key`` made it
        a skipped duplicate). ``args`` may be a dict, a dataclass or a
        pydantic model; None means ``{}``. The ``worker_*`` options route it
        to the workers that match them (see :class:`JobSpec`)."""
        spec = JobSpec(kind=kind, args={} if args is None else args, queue=queue, priority=priority,
                       run_at=run_at, max_attempts=max_attempts, tags=tags, metadata=metadata,
                       timeout_ms=timeout_ms, depends_on=depends_on, key=key, key_limit=key_limit,
                       key_rate=key_rate, key_rate_period_ms=key_rate_period_ms, unique_key=unique_key,
                       unique_states=unique_states, unique_by_queue=unique_by_queue, worker_type=worker_type,
                       worker_names=worker_names, worker_labels=worker_labels, on_worker_absent=on_worker_absent,
                       worker_absent_after_ms=worker_absent_after_ms)
        return (await self.insert_many([spec]))[0]

    async def insert_many(self, jobs: Iterable[JobSpec]) -> list[int]:
        """Inserts jobs in one request, all or none, and returns their ids
        in the order given (0 for a skipped unique duplicate)."""
        body = {"jobs": [j.to_json() for j in jobs]}
        out = await self._t.request("POST", "/v1/jobs", body, idempotent=False)
        return [int(i) for i in out["ids"]]

    async def insert_batch(self, jobs: Iterable[JobSpec], callback: JobSpec | None = None) -> InsertedBatch:
        """Inserts jobs as one batch, all or none, with an optional callback
        job that becomes available once every member has ended."""
        body: dict[str, Any] = {"jobs": [j.to_json() for j in jobs]}
        if callback is not None:
            body["callback"] = callback.to_json()
        out = await self._t.request("POST", "/v1/batches", body, idempotent=False)
        cb = out.get("callback_job_id")
        return InsertedBatch(id=int(out["id"]), job_ids=[int(i) for i in out["ids"]],
                             callback_job_id=int(cb) if cb else None)

    async def insert_workflow(self, workflow: Workflow) -> dict[str, int]:
        """Inserts a workflow's steps in one request, all or none, and
        returns the job id of every step by name.

        Each step waits, as pending, until the steps it comes after (and the
        stored jobs of its ``depends_on``) have completed; the server stores
        them through the same path as Go's ``Client.InsertWorkflow``."""
        out = await self._t.request("POST", "/v1/workflows", workflow_body(workflow), idempotent=False)
        return {str(k): int(v) for k, v in out["refs"].items()}

    # Inspecting.

    async def get_job(self, job_id: int) -> Job:
        """Returns one job, waiting, running or finished, with its errors."""
        return Job.from_json(await self._t.request("GET", f"/v1/jobs/{int(job_id)}"))

    async def list_jobs(
        self,
        *,
        state: str | Sequence[str] | None = None,
        queue: str | None = None,
        kind: str | None = None,
        tags: Sequence[str] | None = None,
        args: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        created_since: datetime | None = None,
        created_until: datetime | None = None,
        scheduled_since: datetime | None = None,
        scheduled_until: datetime | None = None,
        attempted_since: datetime | None = None,
        attempted_until: datetime | None = None,
        finished_since: datetime | None = None,
        finished_until: datetime | None = None,
        order: SearchOrder | None = None,
        count: bool = False,
        after: int | None = None,
        limit: int | None = None,
    ) -> JobPage:
        """Searches jobs and returns one keyset page of those that match
        every filter given, oldest first (``order="desc"``: newest first).

        ``state`` is one state or several; ``tags`` keeps the jobs that carry
        every one of them; ``args`` and ``metadata`` keep the jobs whose
        args or metadata contain that JSON object (PostgreSQL's ``jsonb @>``
        on both stores: the keys given with those values, others allowed,
        nested objects alike, an array matching an array that holds at
        least its elements). Each ``*_since``/``*_until`` pair bounds a time
        of the job, ``[since, until)``: created, scheduled (``run_at``),
        last attempted and finished; a bound on a time the job has not set
        (never attempted, not finished) excludes it. A naive datetime is
        taken as UTC, as ``run_at`` is when inserting.

        ``count=True`` also asks how many jobs match (``JobPage.count``).
        Pass the page's ``next_after`` as ``after`` for the next page, in
        the same order: a page may come back short, even empty, with a
        ``next_after`` (the server bounds the jobs one page examines), so
        page on until it is None, or use :meth:`iter_jobs`. ``limit`` is at
        most 1,000 (the server's default 100)."""
        q = search_query(state=state, queue=queue, kind=kind, tags=tags, args=args, metadata=metadata,
                         created_since=created_since, created_until=created_until,
                         scheduled_since=scheduled_since, scheduled_until=scheduled_until,
                         attempted_since=attempted_since, attempted_until=attempted_until,
                         finished_since=finished_since, finished_until=finished_until, order=order)
        if count:
            q["count"] = "true"
        return await self._job_page(q, after, limit)

    async def _job_page(self, search: dict[str, str], after: int | None, limit: int | None) -> JobPage:
        """Reads one page of the search, whose query search_query wrote."""
        q = {**search, **page_query(after=after, limit=limit)}
        return JobPage.from_json(await self._t.request("GET", "/v1/jobs", query=q))

    async def iter_jobs(
        self,
        *,
        state: str | Sequence[str] | None = None,
        queue: str | None = None,
        kind: str | None = None,
        tags: Sequence[str] | None = None,
        args: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        created_since: datetime | None = None,
        created_until: datetime | None = None,
        scheduled_since: datetime | None = None,
        scheduled_until: datetime | None = None,
        attempted_since: datetime | None = None,
        attempted_until: datetime | None = None,
        finished_since: datetime | None = None,
        finished_until: datetime | None = None,
        order: SearchOrder | None = None,
        page_size: int = 500,
    ) -> AsyncIterator[Job]:
        """Yields every job of the search (the filters of :meth:`list_jobs`)
        in ``order``, a page of at most ``page_size`` at a time, following
        ``next_after`` over short and empty pages until the last."""
        q = search_query(state=state, queue=queue, kind=kind, tags=tags, args=args, metadata=metadata,
                         created_since=created_since, created_until=created_until,
                         scheduled_since=scheduled_since, scheduled_until=scheduled_until,
                         attempted_since=attempted_since, attempted_until=attempted_until,
                         finished_since=finished_since, finished_until=finished_until, order=order)
        after: int | None = None
        while True:
            page = await self._job_page(q, after, page_size)
            for job in page.jobs:
                yield job
            if page.next_after is None:
                return
            after = page.next_after

    async def job_result(self, job_id: int) -> JobResult:
        """Returns a job's state and result (None unless it completed with
        one)."""
        return JobResult.from_json(await self._t.request("GET", f"/v1/jobs/{int(job_id)}/result"))

    async def workflow_graph(self, job_id: int) -> WorkflowGraph:
        """Returns the workflow a job belongs to: its jobs with their states
        and results (the job asked about first) and the edges between them."""
        return WorkflowGraph.from_json(await self._t.request("GET", f"/v1/jobs/{int(job_id)}/workflow"))

    async def get_batch(self, batch_id: int) -> Batch:
        return Batch.from_json(await self._t.request("GET", f"/v1/batches/{int(batch_id)}"))

    async def list_batches(self, *, before: int | None = None, limit: int | None = None) -> BatchPage:
        """Returns one page of batches, newest first (``limit`` at most
        1,000, the server's default 50); pass its ``next_before`` as
        ``before`` for the next."""
        out = await self._t.request("GET", "/v1/batches", query=page_query(before=before, limit=limit))
        nxt = out.get("next_before")
        return BatchPage(batches=[Batch.from_json(b) for b in out.get("batches") or []],
                         next_before=int(nxt) if nxt is not None else None)

    async def batch_results(self, batch_id: int, *, after: int | None = None, limit: int | None = None) -> ResultPage:
        """Returns one page of a batch's ended members with their results."""
        out = await self._t.request("GET", f"/v1/batches/{int(batch_id)}/results",
                                    query=page_query(after=after, limit=limit))
        nxt = out.get("next_after")
        return ResultPage(results=[JobResult.from_json(r) for r in out["results"]],
                          next_after=int(nxt) if nxt else None)

    async def iter_batch_results(self, batch_id: int, page_size: int = 500) -> AsyncIterator[JobResult]:
        after: int | None = None
        while True:
            page = await self.batch_results(batch_id, after=after, limit=page_size)
            for r in page.results:
                yield r
            if page.next_after is None:
                return
            after = page.next_after

    async def stats(self, queue: str | None = None) -> dict[str, int]:
        """Returns the number of jobs by state (admin scope)."""
        out = await self._t.request("GET", "/v1/stats", query={"queue": queue} if queue else None)
        return {k: int(v) for k, v in out["counts"].items()}

    # Acting on one job (admin scope).

    async def cancel(self, job_id: int) -> Job:
        """Cancels a waiting job, or asks the worker running it to stop (its
        handler sees the request at the next heartbeat)."""
        return Job.from_json(await self._t.request("POST", f"/v1/jobs/{int(job_id)}/cancel"))

    async def retry(self, job_id: int) -> Job:
        """Makes a finished or waiting job available now."""
        return Job.from_json(await self._t.request("POST", f"/v1/jobs/{int(job_id)}/retry"))

    async def discard(self, job_id: int) -> Job:
        return Job.from_json(await self._t.request("POST", f"/v1/jobs/{int(job_id)}/discard"))

    # Acting on many jobs (admin scope): the server runs a bulk action in
    # the background, a page at a time; its task reports the progress.

    async def bulk(
        self,
        action: BulkAction,
        *,
        state: str | None = None,
        queue: str | None = None,
        kind: str | None = None,
    ) -> BulkTask:
        """Starts ``action`` ("retry", "cancel", "discard" or "delete") on
        every job of the filter (each of state, queue and kind when given;
        none given: every job) and returns its task; follow it with
        :meth:`get_bulk` or :meth:`wait_bulk`."""
        body: dict[str, Any] = {"action": action}
        for name, value in (("state", state), ("queue", queue), ("kind", kind)):
            if value:
                body[name] = value
        return BulkTask.from_json(await self._t.request("POST", "/v1/bulk", body, idempotent=False))

    async def bulk_by_ids(self, action: BulkAction, ids: Sequence[int]) -> BulkTask:
        """Starts ``action`` on the jobs ``ids`` names (at most 10,000;
        unknown ids are read and not changed) and returns its task."""
        body = {"action": action, "ids": [int(i) for i in ids]}
        return BulkTask.from_json(await self._t.request("POST", "/v1/bulk-selection", body, idempotent=False))

    async def get_bulk(self, task_id: int) -> BulkTask:
        """Returns a bulk task's progress (the server keeps the last 50 since
        it started)."""
        return BulkTask.from_json(await self._t.request("GET", f"/v1/bulk/{int(task_id)}"))

    async def wait_bulk(self, task_id: int, *, poll: float = 0.2, timeout: float | None = None) -> BulkTask:
        """Reads a bulk task every ``poll`` seconds until it is done (or
        failed) and returns it; raises TimeoutError after ``timeout``
        seconds."""
        waited = 0.0
        while True:
            task = await self.get_bulk(task_id)
            if task.done:
                return task
            if timeout is not None and waited >= timeout:
                raise TimeoutError(f"bulk task {task_id}: still running after {timeout:g}s")
            await asyncio.sleep(poll)
            waited += poll

    # Queues (admin scope): settings every claim applies, fleet-wide.

    async def list_queues(self) -> list[Queue]:
        """Returns every queue with stored settings or waiting or running
        jobs, by name, with its settings."""
        out = await self._t.request("GET", "/v1/queues")
        return [Queue.from_json(q) for q in out["queues"]]

    async def get_queue(self, name: str) -> Queue:
        """Returns one queue's settings (a queue without any is unpaused
        and unlimited). A queue the store does not know (no jobs, no stored
        settings, no worker) raises :class:`drover.NotFoundError`, here and
        in the calls that change settings, so that a typo changes nothing."""
        return Queue.from_json(await self._t.request("GET", queue_path(name)))

    async def pause_queue(self, name: str, *, kind: str | None = None) -> Queue:
        """Pauses a queue across the fleet, or with ``kind`` that kind within
        it: no worker starts its jobs until resumed (running jobs finish,
        inserts still succeed). Every process sees it within a second."""
        return Queue.from_json(await self._t.request("POST", queue_path(name, "pause"), query=kind_query(kind)))

    async def resume_queue(self, name: str, *, kind: str | None = None) -> Queue:
        """Resumes a paused queue, or with ``kind`` a kind paused within it."""
        return Queue.from_json(await self._t.request("POST", queue_path(name, "resume"), query=kind_query(kind)))

    async def set_strict_order(self, name: str, max_running: int = 1) -> Queue:
        """Puts a queue in strict order: its jobs start strictly in priority
        then insert order across the fleet, at most ``max_running`` at once,
        a failed job keeping its place at the head; 0 takes it out."""
        body = {"max_running": int(max_running)}
        return Queue.from_json(await self._t.request("POST", queue_path(name, "strict"), body))

    async def list_workers(self) -> list[WorkerInfo]:
        """Returns the worker registry: every Go client and HTTP worker that
        registered, with its type, labels, queues, last heartbeat, jobs held
        and whether it is live."""
        out = await self._t.request("GET", "/v1/workers")
        return [WorkerInfo.from_json(w) for w in out["workers"]]

    async def list_unroutable(self) -> list[UnroutableJobs]:
        """Returns the waiting routed jobs no live worker can take, grouped
        by queue and routing."""
        out = await self._t.request("GET", "/v1/unroutable")
        return [UnroutableJobs.from_json(u) for u in out["unroutable"]]

    # Periodic (cron) jobs: reads need enqueue or admin, changes admin.

    async def list_periodic(self) -> list[PeriodicJob]:
        """Returns every periodic job, stored or Go-configured, by name, with
        its next and last run."""
        out = await self._t.request("GET", "/v1/periodic")
        return [PeriodicJob.from_json(p) for p in out["periodic_jobs"]]

    async def get_periodic(self, name: str) -> PeriodicJob:
        return PeriodicJob.from_json(await self._t.request("GET", periodic_path(name)))

    async def create_periodic(
        self,
        name: str,
        schedule: str,
        kind: str,
        args: Any = None,
        *,
        queue: str | None = None,
        priority: int = 0,
        max_attempts: int = 0,
        tags: Sequence[str] = (),
    ) -> PeriodicJob:
        """Stores a periodic job: at each tick of ``schedule`` (a cron
        expression such as ``"*/5 * * * *"`` or ``"@every 1h"``) the server's
        leader inserts a job of ``kind`` with ``args``. Raises
        :class:`drover.ConflictError` when the name is taken."""
        body = periodic_body(schedule, kind, args, queue=queue, priority=priority, max_attempts=max_attempts,
                             tags=tags)
        body["name"] = name
        return PeriodicJob.from_json(await self._t.request("POST", "/v1/periodic", body, idempotent=False))

    async def update_periodic(
        self,
        name: str,
        schedule: str,
        kind: str,
        args: Any = None,
        *,
        queue: str | None = None,
        priority: int = 0,
        max_attempts: int = 0,
        tags: Sequence[str] = (),
    ) -> PeriodicJob:
        """Replaces the schedule, job and options of a stored periodic job,
        keeping whether it is paused. A Go-configured one raises
        :class:`drover.ConflictError`."""
        body = periodic_body(schedule, kind, args, queue=queue, priority=priority, max_attempts=max_attempts,
                             tags=tags)
        return PeriodicJob.from_json(await self._t.request("PUT", periodic_path(name), body))

    async def delete_periodic(self, name: str) -> None:
        await self._t.request("DELETE", periodic_path(name))

    async def pause_periodic(self, name: str) -> PeriodicJob:
        """Stops a periodic job from inserting jobs until resumed."""
        return PeriodicJob.from_json(await self._t.request("POST", periodic_path(name) + "/pause"))

    async def resume_periodic(self, name: str) -> PeriodicJob:
        """Lets a paused periodic job insert again from its next tick."""
        return PeriodicJob.from_json(await self._t.request("POST", periodic_path(name) + "/resume"))

    async def trigger_periodic(self, name: str) -> Job:
        """Inserts one job of a periodic job now, outside its schedule, and
        returns it."""
        return Job.from_json(await self._t.request("POST", periodic_path(name) + "/trigger", idempotent=False))

    # Topics: publishing needs enqueue, creating and deleting admin. A token
    # restricted to queues may use a topic when it may use the topic's retry
    # queue, "topic:<topic>".

    async def create_topic(self, name: str, *, lanes: int | None = None, retention_ms: int | None = None) -> Topic:
        """Stores a topic, or returns the stored one of that name when its
        options are the same (:class:`drover.ConflictError` when they are
        not). ``lanes``
        (default 16, fixed at creation) bounds how many batches of one
        subscription run at once and how many keys in parallel;
        ``retention_ms`` is how long a message is kept for subscriptions
        that have not read it (default 7 days; -1: until every subscription
        has passed it)."""
        body: dict[str, Any] = {"name": name}
        if lanes is not None:
            body["lanes"] = lanes
        if retention_ms is not None:
            body["retention_ms"] = retention_ms
        return Topic.from_json(await self._t.request("POST", "/v1/topics", body))

    async def get_topic(self, name: str) -> Topic:
        """Returns a topic with its options and subscriptions
        (:class:`drover.NotFoundError` when there is none of that name)."""
        return Topic.from_json(await self._t.request("GET", topic_path(name)))

    async def delete_topic(self, name: str) -> None:
        """Deletes a topic with its subscriptions, their positions and every
        message of the topic, at once (admin scope); the jobs of its retry
        queue stay. Raises :class:`drover.NotFoundError` when there is none."""
        await self._t.request("DELETE", topic_path(name))

    async def list_topics(self) -> list[Topic]:
        """Returns every topic the token may use, with its subscriptions."""
        out = await self._t.request("GET", "/v1/topics")
        return [Topic.from_json(t) for t in out["topics"]]

    async def publish(self, topic: str, messages: Iterable[Message]) -> list[int]:
        """Publishes messages to a topic in one request, all or none, and
        returns their ids in order. Every subscription of the topic receives
        each of them; messages of one key in publish order."""
        body = messages_body(messages, with_topic=False)
        out = await self._t.request("POST", topic_path(topic, "/publish"), body, idempotent=False)
        return [int(i) for i in out["ids"]]

    async def publish_many(self, messages: Iterable[Message]) -> list[int]:
        """Publishes messages of several topics, each naming its own
        (``Message.topic``), in one request, all or none, and returns their
        ids in order."""
        out = await self._t.request("POST", "/v1/messages", messages_body(messages, with_topic=True),
                                    idempotent=False)
        return [int(i) for i in out["ids"]]

    async def create_subscription(
        self, topic: str, name: str, *, from_earliest: bool = False, max_attempts: int | None = None
    ) -> bool:
        """Stores a subscription of a topic and returns whether it was
        created (False: it existed). It receives the messages published from
        now on, or with ``from_earliest`` every message the topic keeps; a
        failed message is delivered at most ``max_attempts`` times (default
        10, at least 2), its first delivery included, then it is dead (a
        discarded job of the topic's retry queue)."""
        body: dict[str, Any] = {"name": name}
        if from_earliest:
            body["from_earliest"] = True
        if max_attempts is not None:
            body["max_attempts"] = max_attempts
        out = await self._t.request("POST", topic_path(topic, "/subscriptions"), body)
        return bool(out["created"])

    async def delete_subscription(self, topic: str, name: str) -> None:
        """Removes a subscription and its position; raises
        :class:`drover.NotFoundError` when there is none of that name."""
        await self._t.request("DELETE", subscription_path(topic, name))

    async def subscription_lag(self, topic: str) -> list[SubscriptionLag]:
        """Returns, per subscription of a topic, the messages it has not
        acknowledged, when the oldest was published, and how many retention
        dropped before it read them."""
        out = await self._t.request("GET", topic_path(topic, "/lag"))
        return [SubscriptionLag.from_json(s) for s in out["subscriptions"]]

    # Consuming by hand (work scope). drover.Consumer does all of this for
    # handlers: receives, extends leases while they run, acks in batches.

    async def receive(
        self,
        topic: str,
        subscription: str,
        *,
        worker: str,
        max_batches: int = 1,
        batch_size: int = 100,
        lease_ms: int | None = None,
        wait_ms: int = 0,
    ) -> list[ReceivedBatch]:
        """Leases up to ``max_batches`` lanes of a subscription that have
        messages and returns a batch of each (at most ``batch_size``
        messages, in order), waiting up to ``wait_ms`` for a publish when
        none is waiting. ``worker`` names this consumer in the leases.
        Acknowledge each batch with :meth:`ack` before ``lease_ms`` passes,
        or it is delivered again."""
        body: dict[str, Any] = {"worker": worker, "max_batches": max_batches, "batch_size": batch_size,
                                "wait_ms": wait_ms}
        if lease_ms is not None:
            body["lease_ms"] = lease_ms
        out = await self._t.request("POST", subscription_path(topic, subscription, "receive"), body,
                                    timeout=self._t.timeout + wait_ms / 1000)
        return [ReceivedBatch.from_json(b, topic, subscription) for b in out.get("batches") or []]

    async def ack(
        self, topic: str, subscription: str, acks: Iterable[tuple[str, Mapping[int, str] | None]]
    ) -> list[bool]:
        """Acknowledges received batches, each given as (receipt, failed):
        ``failed`` maps the ids of messages of the batch that failed to
        their errors (they become retry jobs; None or empty: all handled).
        Returns, per receipt, whether it was accepted: False when its lease
        had ended (the batch is delivered again, its failures not retried)."""
        out = await self._t.request("POST", subscription_path(topic, subscription, "ack"), acks_body(acks))
        return [bool(a) for a in out["accepted"]]

    async def nack(self, topic: str, subscription: str, receipts: Sequence[str], error: str = "nacked") -> list[bool]:
        """Fails every message of the batches ``receipts`` names with
        ``error`` (they become retry jobs); returns, per receipt, whether it
        was accepted."""
        body = {"receipts": list(receipts), "error": error}
        out = await self._t.request("POST", subscription_path(topic, subscription, "nack"), body)
        return [bool(a) for a in out["accepted"]]

    async def extend_batches(
        self, topic: str, subscription: str, receipts: Sequence[str], *, lease_ms: int | None = None
    ) -> list[bool]:
        """Renews the leases of received batches for ``lease_ms`` from now
        (at most 300000; default the server's receive default) and returns,
        per receipt, whether it was renewed: False when the batch's lease
        was lost (another consumer may have the lane now: stop handling it).
        A receipt goes back to the server exactly as receive gave it."""
        body: dict[str, Any] = {"receipts": list(receipts)}
        if lease_ms is not None:
            body["lease_ms"] = lease_ms
        out = await self._t.request("POST", subscription_path(topic, subscription, "extend"), body)
        return [bool(a) for a in out["extended"]]

    async def release_batches(self, topic: str, subscription: str, receipts: Sequence[str]) -> list[bool]:
        """Hands received batches back unhandled, to be delivered again at
        once (a consumer shutting down); their deliveries do not count as
        attempts. Returns, per receipt, whether it was released (False: its
        lease had ended already)."""
        body = {"receipts": list(receipts)}
        out = await self._t.request("POST", subscription_path(topic, subscription, "release"), body)
        return [bool(a) for a in out["released"]]

    async def subscription_lanes(self, topic: str, subscription: str) -> list[SubscriptionLane]:
        """Returns each lane of a subscription: its position, its lag, and
        the consumer holding it with its lease's end when one does."""
        out = await self._t.request("GET", subscription_path(topic, subscription, "lanes"))
        return [SubscriptionLane.from_json(lane) for lane in out["lanes"]]

    async def release_lane(self, topic: str, subscription: str, lane: int) -> bool:
        """Frees a lane whose holder hangs (admin scope): its batch is
        delivered again to the next receive, and that delivery counts as an
        attempt; the holder's extend, ack and release of it are refused.
        Returns False when the lane was free already."""
        out = await self._t.request("POST", subscription_path(topic, subscription, f"lanes/{int(lane)}/release"))
        return bool(out["released"])

    async def rewind_subscription(
        self, topic: str, subscription: str, *, since: datetime | None = None, earliest: bool = False
    ) -> SubscriptionRewind:
        """Moves a subscription back (admin scope), as a Kafka offset reset
        or a Pub/Sub seek does: with ``earliest`` every message the topic
        keeps is delivered again, with ``since`` (an aware datetime, not in
        the future) each lane delivers again from its first message
        published at or after it. Give exactly one. Batches out are
        delivered again and their acks refused; messages retention removed
        cannot come back (the answer's ``oldest_pending`` says where the
        subscription starts)."""
        if earliest == (since is not None):
            raise ValueError("give one of since and earliest")
        body: dict[str, Any] = {"since": format_time(since)} if since is not None else {"earliest": True}
        out = await self._t.request("POST", subscription_path(topic, subscription, "rewind"), body)
        return SubscriptionRewind.from_json(out)
