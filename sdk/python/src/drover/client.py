"""The client: insert jobs, batches and workflows; inspect, cancel, retry
and discard them."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ._http import Transport
from .models import (
    Batch,
    InsertedBatch,
    Job,
    JobPage,
    JobResult,
    JobSpec,
    PeriodicJob,
    ResultPage,
    SearchOrder,
    encode_args,
    format_time,
)

__all__ = ["Client", "Step", "Workflow"]


class Client:
    """A client of one ``drover serve``.

    Inserting needs a token with the ``enqueue`` scope; cancel, retry,
    discard and stats need ``admin``. Methods raise a
    :class:`drover.DroverError` subclass; the client never retries an
    insert on its own (a connection error leaves it unknown whether the
    job was stored; use ``unique_key`` to make a retry safe).

    The client is safe to share between threads; use it as a context
    manager or call :meth:`close`."""

    def __init__(self, url: str, token: str, timeout: float = 30.0) -> None:
        self._t = Transport(url, token, timeout=timeout)

    def close(self) -> None:
        self._t.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Inserting.

    def insert(
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
                       unique_states=unique_states, worker_type=worker_type, worker_names=worker_names,
                       worker_labels=worker_labels, on_worker_absent=on_worker_absent,
                       worker_absent_after_ms=worker_absent_after_ms)
        return self.insert_many([spec])[0]

    def insert_many(self, jobs: Iterable[JobSpec]) -> list[int]:
        """Inserts jobs in one request, all or none, and returns their ids
        in the order given (0 for a skipped unique duplicate)."""
        body = {"jobs": [j.to_json() for j in jobs]}
        out = self._t.request("POST", "/v1/jobs", body, idempotent=False)
        return [int(i) for i in out["ids"]]

    def insert_batch(self, jobs: Iterable[JobSpec], callback: JobSpec | None = None) -> InsertedBatch:
        """Inserts jobs as one batch, all or none, with an optional callback
        job that becomes available once every member has ended."""
        body: dict[str, Any] = {"jobs": [j.to_json() for j in jobs]}
        if callback is not None:
            body["callback"] = callback.to_json()
        out = self._t.request("POST", "/v1/batches", body, idempotent=False)
        cb = out.get("callback_job_id")
        return InsertedBatch(id=int(out["id"]), job_ids=[int(i) for i in out["ids"]],
                             callback_job_id=int(cb) if cb else None)

    def insert_workflow(self, workflow: Workflow) -> dict[str, int]:
        """Inserts a workflow's steps in one request, all or none, and
        returns the job id of every step by name.

        Each step waits, as pending, until the steps it comes after (and the
        stored jobs of its ``depends_on``) have completed; the server stores
        them through the same path as Go's ``Client.InsertWorkflow``."""
        steps = []
        for st in workflow.steps:
            body = st.spec.to_json()
            body["ref"] = st.name
            if st.after:
                body["after"] = [d.name for d in st.after]
            if st.release_on_parent_failure:
                body["release_on_parent_failure"] = True
            steps.append(body)
        out = self._t.request("POST", "/v1/workflows", {"steps": steps}, idempotent=False)
        return {str(k): int(v) for k, v in out["refs"].items()}

    # Inspecting.

    def get_job(self, job_id: int) -> Job:
        """Returns one job, waiting, running or finished, with its errors."""
        return Job.from_json(self._t.request("GET", f"/v1/jobs/{int(job_id)}"))

    def list_jobs(
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
        q = _search_query(state=state, queue=queue, kind=kind, tags=tags, args=args, metadata=metadata,
                          created_since=created_since, created_until=created_until,
                          scheduled_since=scheduled_since, scheduled_until=scheduled_until,
                          attempted_since=attempted_since, attempted_until=attempted_until,
                          finished_since=finished_since, finished_until=finished_until, order=order)
        if count:
            q["count"] = "true"
        return self._job_page(q, after, limit)

    def _job_page(self, search: dict[str, str], after: int | None, limit: int | None) -> JobPage:
        """Reads one page of the search, whose query _search_query wrote."""
        q = dict(search)
        if after is not None:
            q["after"] = str(after)
        if limit is not None:
            q["limit"] = str(limit)
        return JobPage.from_json(self._t.request("GET", "/v1/jobs", query=q))

    def iter_jobs(
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
    ) -> Iterator[Job]:
        """Yields every job of the search (the filters of :meth:`list_jobs`)
        in ``order``, a page of at most ``page_size`` at a time, following
        ``next_after`` over short and empty pages until the last."""
        q = _search_query(state=state, queue=queue, kind=kind, tags=tags, args=args, metadata=metadata,
                          created_since=created_since, created_until=created_until,
                          scheduled_since=scheduled_since, scheduled_until=scheduled_until,
                          attempted_since=attempted_since, attempted_until=attempted_until,
                          finished_since=finished_since, finished_until=finished_until, order=order)
        after: int | None = None
        while True:
            page = self._job_page(q, after, page_size)
            yield from page.jobs
            if page.next_after is None:
                return
            after = page.next_after

    def job_result(self, job_id: int) -> JobResult:
        """Returns a job's state and result (None unless it completed with
        one)."""
        return JobResult.from_json(self._t.request("GET", f"/v1/jobs/{int(job_id)}/result"))

    def get_batch(self, batch_id: int) -> Batch:
        return Batch.from_json(self._t.request("GET", f"/v1/batches/{int(batch_id)}"))

    def batch_results(self, batch_id: int, *, after: int | None = None, limit: int | None = None) -> ResultPage:
        """Returns one page of a batch's ended members with their results."""
        q: dict[str, str] = {}
        if after is not None:
            q["after"] = str(after)
        if limit is not None:
            q["limit"] = str(limit)
        out = self._t.request("GET", f"/v1/batches/{int(batch_id)}/results", query=q)
        nxt = out.get("next_after")
        return ResultPage(results=[JobResult.from_json(r) for r in out["results"]],
                          next_after=int(nxt) if nxt else None)

    def iter_batch_results(self, batch_id: int, page_size: int = 500) -> Iterator[JobResult]:
        after: int | None = None
        while True:
            page = self.batch_results(batch_id, after=after, limit=page_size)
            yield from page.results
            if page.next_after is None:
                return
            after = page.next_after

    def stats(self, queue: str | None = None) -> dict[str, int]:
        """Returns the number of jobs by state (admin scope)."""
        out = self._t.request("GET", "/v1/stats", query={"queue": queue} if queue else None)
        return {k: int(v) for k, v in out["counts"].items()}

    # Acting on one job (admin scope).

    def cancel(self, job_id: int) -> Job:
        """Cancels a waiting job, or asks the worker running it to stop (its
        handler sees the request at the next heartbeat)."""
        return Job.from_json(self._t.request("POST", f"/v1/jobs/{int(job_id)}/cancel"))

    def retry(self, job_id: int) -> Job:
        """Makes a finished or waiting job available now."""
        return Job.from_json(self._t.request("POST", f"/v1/jobs/{int(job_id)}/retry"))

    def discard(self, job_id: int) -> Job:
        return Job.from_json(self._t.request("POST", f"/v1/jobs/{int(job_id)}/discard"))

    # Periodic (cron) jobs: reads need enqueue or admin, changes admin.

    def list_periodic(self) -> list[PeriodicJob]:
        """Returns every periodic job, stored or Go-configured, by name, with
        its next and last run."""
        out = self._t.request("GET", "/v1/periodic")
        return [PeriodicJob.from_json(p) for p in out["periodic_jobs"]]

    def get_periodic(self, name: str) -> PeriodicJob:
        return PeriodicJob.from_json(self._t.request("GET", _periodic_path(name)))

    def create_periodic(
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
        body = _periodic_body(schedule, kind, args, queue=queue, priority=priority, max_attempts=max_attempts,
                              tags=tags)
        body["name"] = name
        return PeriodicJob.from_json(self._t.request("POST", "/v1/periodic", body, idempotent=False))

    def update_periodic(
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
        body = _periodic_body(schedule, kind, args, queue=queue, priority=priority, max_attempts=max_attempts,
                              tags=tags)
        return PeriodicJob.from_json(self._t.request("PUT", _periodic_path(name), body))

    def delete_periodic(self, name: str) -> None:
        self._t.request("DELETE", _periodic_path(name))

    def pause_periodic(self, name: str) -> PeriodicJob:
        """Stops a periodic job from inserting jobs until resumed."""
        return PeriodicJob.from_json(self._t.request("POST", _periodic_path(name) + "/pause"))

    def resume_periodic(self, name: str) -> PeriodicJob:
        """Lets a paused periodic job insert again from its next tick."""
        return PeriodicJob.from_json(self._t.request("POST", _periodic_path(name) + "/resume"))

    def trigger_periodic(self, name: str) -> Job:
        """Inserts one job of a periodic job now, outside its schedule, and
        returns it."""
        return Job.from_json(self._t.request("POST", _periodic_path(name) + "/trigger", idempotent=False))


def _search_query(
    *,
    state: str | Sequence[str] | None,
    queue: str | None,
    kind: str | None,
    tags: Sequence[str] | None,
    args: Mapping[str, Any] | None,
    metadata: Mapping[str, Any] | None,
    order: str | None,
    **times: datetime | None,
) -> dict[str, str]:
    """Writes a search filter as the query of ``GET /v1/jobs``; ``times``
    are the ``*_since``/``*_until`` bounds by their parameter names. Filters
    not given are left out, so that the server's defaults apply."""
    q: dict[str, str] = {}
    if state:
        q["state"] = state if isinstance(state, str) else ",".join(state)
    if queue:
        q["queue"] = queue
    if kind:
        q["kind"] = kind
    if tags:
        # The parameter is comma-separated, and tags are stored without
        # commas: a tag with one could only be split into two others.
        tag_list = [tags] if isinstance(tags, str) else list(tags)
        for tag in tag_list:
            if not tag or "," in tag:
                raise ValueError(f"tags: {tag!r} is not a tag (tags are 1-255 characters without commas)")
        q["tags"] = ",".join(tag_list)
    for name, obj in (("args", args), ("metadata", metadata)):
        if obj is not None:
            # Compact JSON keeps the URL short; the server checks that it is
            # an object and names the parameter when it is not.
            q[name] = json.dumps(obj, separators=(",", ":"))
    for name, bound in times.items():
        if bound is not None:
            q[name] = format_time(bound)
    if order:
        q["order"] = order
    return q


def _periodic_path(name: str) -> str:
    return "/v1/periodic/" + urllib.parse.quote(name, safe="")


def _periodic_body(schedule: str, kind: str, args: Any, *, queue: str | None, priority: int, max_attempts: int,
                   tags: Sequence[str]) -> dict[str, Any]:
    body: dict[str, Any] = {"schedule": schedule, "kind": kind, "args": encode_args(args) if args is not None else {}}
    if queue:
        body["queue"] = queue
    if priority:
        body["priority"] = priority
    if max_attempts:
        body["max_attempts"] = max_attempts
    if tags:
        body["tags"] = list(tags)
    return body


@dataclass(frozen=True)
class Step:
    """A step of a :class:`Workflow`."""

    name: str
    spec: JobSpec
    after: tuple[Step, ...] = ()
    #: Run the step when a job it waits for is cancelled or discarded,
    #: instead of cancelling it too.
    release_on_parent_failure: bool = False


@dataclass
class Workflow:
    """Jobs with dependencies between them, inserted with
    :meth:`Client.insert_workflow`::

        wf = Workflow()
        fetch = wf.add("fetch", "fetch", {"url": u})
        thumb = wf.add("thumb", "thumbnail", {}, after=[fetch])
        wf.add("notify", "notify", {}, after=[fetch, thumb])

    A step runs once every step it comes after has completed."""

    steps: list[Step] = field(default_factory=list)

    def add(self, name: str, kind: str, args: Any = None, *, after: Sequence[Step] = (),
            release_on_parent_failure: bool = False, **options: Any) -> Step:
        """Adds a step named ``name`` that runs after the steps in ``after``;
        ``options`` are those of :class:`JobSpec` (``depends_on`` names
        stored jobs to wait for as well)."""
        if any(s.name == name for s in self.steps):
            raise ValueError(f"workflow: step name {name!r} is used twice")
        step = Step(name=name, spec=JobSpec(kind=kind, args={} if args is None else args, **options),
                    after=tuple(after), release_on_parent_failure=release_on_parent_failure)
        self.steps.append(step)
        return step
