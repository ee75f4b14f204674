"""The typed objects the client returns and takes.

Each ``from_json`` reads the fields it knows and keeps the whole object in
``raw``, so that fields a newer server adds reach the caller without an SDK
upgrade, and a field an older server lacks does not break decoding.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

__all__ = [
    "AttemptError",
    "Batch",
    "BatchCounts",
    "BatchPage",
    "BulkAction",
    "BulkTask",
    "Delivery",
    "InsertedBatch",
    "Job",
    "JobCount",
    "JobPage",
    "JobResult",
    "JobSpec",
    "JobState",
    "Message",
    "PeriodicJob",
    "Queue",
    "ReceivedBatch",
    "ResultPage",
    "SearchOrder",
    "Step",
    "SubscriptionLag",
    "SubscriptionLane",
    "Topic",
    "UnroutableJobs",
    "WorkerInfo",
    "Workflow",
    "WorkflowEdge",
    "WorkflowGraph",
    "WorkflowJob",
    "encode_args",
    "parse_time",
]

JobState = Literal[
    "pending", "blocked", "scheduled", "available", "retryable", "running", "completed", "cancelled", "discarded"
]

#: The order of a job search: "asc" lists the oldest (lowest id) first,
#: "desc" the newest.
SearchOrder = Literal["asc", "desc"]

#: What a bulk action does to each job it matches: retry (available now),
#: cancel (a running one is asked to stop), discard, or delete (jobs that
#: are not running; waiting ones are cancelled first).
BulkAction = Literal["retry", "cancel", "discard", "delete"]


def parse_time(v: Any) -> datetime | None:
    """Parses an RFC 3339 time as the server writes it (Go's layout, with up
    to nine fractional digits, which datetime.fromisoformat rejects before
    Python 3.11)."""
    if not isinstance(v, str) or not v:
        return None
    try:
        # Python 3.11 and later parse the server's layout as it is, in C:
        # a claim parses several times per job, the parse below is slower.
        return datetime.fromisoformat(v)
    except ValueError:
        pass
    s = v.replace("Z", "+00:00")
    head, dot, rest = s.partition(".")
    if dot:
        digits = ""
        i = 0
        while i < len(rest) and rest[i].isdigit():
            digits += rest[i]
            i += 1
        s = f"{head}.{(digits + '000000')[:6]}{rest[i:]}"
    return datetime.fromisoformat(s)


def format_time(t: datetime) -> str:
    """Formats t for the server in UTC; a naive datetime is taken as UTC.
    (Converting to UTC also keeps an offset with seconds, which
    ``isoformat`` writes and RFC 3339 lacks, out of the request.)"""
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).isoformat()


def encode_args(args: Any) -> Any:
    """Turns job args or a result into JSON-ready data: a dataclass becomes a
    dict, a pydantic model its JSON form, anything else passes as is."""
    if dataclasses.is_dataclass(args) and not isinstance(args, type):
        return dataclasses.asdict(args)
    dump = getattr(args, "model_dump", None)
    if callable(dump) and not isinstance(args, type):
        return dump(mode="json")
    return args


@dataclass(frozen=True)
class AttemptError:
    """The error of one failed attempt, with its traceback when the worker
    sent one."""

    attempt: int
    at: datetime | None
    error: str
    trace: str = ""
    # Set when the attempt was interrupted because its client stopped: it
    # did not count against max_attempts.
    released: bool = False

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> AttemptError:
        return cls(attempt=int(d.get("attempt", 0)), at=parse_time(d.get("at")), error=str(d.get("error", "")),
                   trace=str(d.get("trace") or ""), released=bool(d.get("released", False)))


@dataclass(frozen=True)
class Job:
    """One job as the server stores it."""

    id: int
    state: str
    queue: str
    kind: str
    args: Any
    priority: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    attempt: int = 0
    max_attempts: int = 0
    errors: list[AttemptError] = field(default_factory=list)
    #: How many attempts failed; ``errors`` holds the last of them.
    error_count: int = 0
    timeout_ms: int = 0
    created_at: datetime | None = None
    run_at: datetime | None = None
    attempted_at: datetime | None = None
    finalized_at: datetime | None = None
    lease_owner: str = ""
    lease_expires_at: datetime | None = None
    cancel_requested: bool = False
    batch_id: int | None = None
    key: str = ""
    #: The fencing token of a claimed attempt, when the server sends one.
    lease_token: str | None = None
    #: For a claimed job inserted to wait for other jobs: their ids, in id
    #: order (empty for a job that depends on none, and on jobs not claimed).
    depends_on: list[int] = field(default_factory=list)
    #: The state and result of each job in ``depends_on``, in the same order.
    parent_results: list[JobResult] = field(default_factory=list)
    #: Where the job may run (worker_type, worker_names, worker_labels, …),
    #: empty for a plain job; set on jobs read, not on jobs claimed.
    routing: dict[str, Any] = field(default_factory=dict)
    #: True for a waiting routed job that no live worker can take.
    unroutable: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Job:
        token = d.get("lease_token")
        # The fields are set in one step rather than through the frozen
        # dataclass's __init__, which sets each of them by a call of its
        # own: a claim builds a Job per job, and that was most of a noop
        # job's cost in a worker. Every field is set here
        # (test_unit.py holds it to the dataclass).
        job = object.__new__(cls)
        job.__dict__.update(
            id=int(d["id"]),
            state=str(d.get("state", "")),
            queue=str(d.get("queue", "")),
            kind=str(d.get("kind", "")),
            args=d.get("args"),
            priority=int(d.get("priority") or 0),
            metadata=dict(d.get("metadata") or {}),
            tags=list(d.get("tags") or []),
            attempt=int(d.get("attempt") or 0),
            max_attempts=int(d.get("max_attempts") or 0),
            errors=[AttemptError.from_json(e) for e in d.get("errors") or []],
            error_count=int(d.get("error_count") or 0),
            timeout_ms=int(d.get("timeout_ms") or 0),
            created_at=parse_time(d.get("created_at")),
            run_at=parse_time(d.get("run_at")),
            attempted_at=parse_time(d.get("attempted_at")),
            finalized_at=parse_time(d.get("finalized_at")),
            lease_owner=str(d.get("lease_owner") or ""),
            lease_expires_at=parse_time(d.get("lease_expires_at")),
            cancel_requested=bool(d.get("cancel_requested")),
            batch_id=int(d["batch_id"]) if d.get("batch_id") else None,
            key=str(d.get("key") or ""),
            lease_token=str(token) if token else None,
            depends_on=[int(i) for i in d.get("depends_on") or []],
            parent_results=[JobResult.from_json(r) for r in d.get("parent_results") or []],
            routing=dict(d.get("routing") or {}),
            unroutable=bool(d.get("unroutable")),
            raw=d,
        )
        return job

    @classmethod
    def from_claim(cls, answer: dict[str, Any]) -> list[Job]:
        """The jobs of a claim's answer. In the compact form (``shared``
        present) each job is its entry with the fields it lacks taken from
        ``shared``; those are scalars (the server shares no list or
        object), read once for the claim rather than once per job."""
        entries = answer.get("jobs") or []
        shared = answer.get("shared")
        if shared is None:
            return [cls.from_json(d) for d in entries]
        base = cls.from_json({**shared, "id": 0}).__dict__
        overlay = {k: base[k] for k in shared if k in base and k != "raw"}
        jobs = []
        for e in entries:
            job = cls.from_json(e)
            both = overlay.keys() & e.keys()  # a field an entry repeats: the entry's wins
            job.__dict__.update(overlay if not both else {k: v for k, v in overlay.items() if k not in both})
            job.__dict__["raw"] = {**shared, **e}
            jobs.append(job)
        return jobs


@dataclass(frozen=True)
class JobCount:
    """How many jobs match a search: exact while each jobs table (waiting
    and running; finished) holds at most 50,000 jobs, otherwise an
    estimate from samples of the table (``exact`` False)."""

    value: int
    exact: bool

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> JobCount:
        return cls(value=int(d.get("value") or 0), exact=bool(d.get("exact")))


@dataclass(frozen=True)
class JobPage:
    """A keyset page of jobs; pass ``next_after`` as ``after`` for the next
    page (None on the last). A page may hold fewer than ``limit`` jobs, even
    none, and still have a ``next_after``: the server bounds the jobs one
    page examines, so follow ``next_after`` until it is None rather than
    stopping at a short page."""

    jobs: list[Job]
    next_after: int | None
    #: How many jobs match the filter (after and limit aside), when the
    #: page was asked for with ``count=True``; None otherwise.
    count: JobCount | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> JobPage:
        nxt = d.get("next_after")
        count = d.get("count")
        return cls(jobs=[Job.from_json(j) for j in d.get("jobs") or []],
                   next_after=int(nxt) if nxt is not None else None,
                   count=JobCount.from_json(count) if isinstance(count, dict) else None)


@dataclass(frozen=True)
class JobResult:
    """A job's state and the result its worker set (None unless completed
    with one)."""

    id: int
    state: str
    kind: str
    result: Any

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> JobResult:
        return cls(id=int(d["id"]), state=str(d.get("state", "")), kind=str(d.get("kind", "")),
                   result=d.get("result"))


@dataclass(frozen=True)
class ResultPage:
    """A page of a batch's ended members with their results."""

    results: list[JobResult]
    next_after: int | None


@dataclass(frozen=True)
class BatchCounts:
    pending: int = 0
    running: int = 0
    failed: int = 0
    completed: int = 0
    cancelled: int = 0
    discarded: int = 0


@dataclass(frozen=True)
class Batch:
    """A batch's progress, from its counters."""

    id: int
    total: int
    counts: BatchCounts
    callback_job_id: int | None
    created_at: datetime | None
    finished_at: datetime | None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Batch:
        c = d.get("counts") or {}
        counts = BatchCounts(**{f.name: int(c.get(f.name) or 0) for f in dataclasses.fields(BatchCounts)})
        return cls(id=int(d["id"]), total=int(d.get("total") or 0), counts=counts,
                   callback_job_id=int(d["callback_job_id"]) if d.get("callback_job_id") else None,
                   created_at=parse_time(d.get("created_at")), finished_at=parse_time(d.get("finished_at")),
                   raw=d)


@dataclass(frozen=True)
class InsertedBatch:
    """What inserting a batch returned: its id, its jobs' ids in the order
    given, and the callback job's id (None without one)."""

    id: int
    job_ids: list[int]
    callback_job_id: int | None


@dataclass
class JobSpec:
    """One job to insert with :meth:`drover.Client.insert_many` or as a
    batch member. ``args`` may be a dict, a dataclass or a pydantic model.

    ``run_at`` is a datetime (naive means UTC); ``timeout_ms`` bounds one
    attempt; ``depends_on`` names stored jobs this one waits for; ``key``,
    ``key_limit``, ``key_rate`` and ``key_rate_period_ms`` order and limit
    jobs of a key; ``unique_key`` and ``unique_states`` deduplicate (a
    skipped duplicate gets id 0). ``worker_type``, ``worker_names`` and
    ``worker_labels`` route the job to the workers that match them all;
    ``on_worker_absent`` ("wait", "fallback" or "fail") and
    ``worker_absent_after_ms`` say what happens when none of its named
    workers is seen for that long (see docs/routing.md)."""

    kind: str
    args: Any = field(default_factory=dict)
    queue: str | None = None
    priority: int | None = None
    run_at: datetime | None = None
    max_attempts: int | None = None
    tags: Sequence[str] | None = None
    metadata: dict[str, Any] | None = None
    timeout_ms: int | None = None
    depends_on: Sequence[int] | None = None
    key: str | None = None
    key_limit: int | None = None
    key_rate: int | None = None
    key_rate_period_ms: int | None = None
    unique_key: str | None = None
    unique_states: Sequence[str] | None = None
    unique_by_queue: bool | None = None
    worker_type: str | None = None
    worker_names: Sequence[str] | None = None
    worker_labels: dict[str, str] | None = None
    on_worker_absent: str | None = None
    worker_absent_after_ms: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The job as the server's EnqueueJob; unset options are left out so
        that the server's defaults apply."""
        out: dict[str, Any] = {"kind": self.kind, "args": encode_args(self.args)}
        for f in dataclasses.fields(self):
            if f.name in ("kind", "args"):
                continue
            v = getattr(self, f.name)
            if v is None:
                continue
            if isinstance(v, datetime):
                v = format_time(v)
            elif isinstance(v, (list, tuple)):
                v = list(v)
            out[f.name] = v
        return out


@dataclass(frozen=True)
class PeriodicJob:
    """A periodic (cron) job as the server lists it: stored through the API
    (``source == "api"``) or a Go entry of ``Config.PeriodicJobs`` that its
    leader registered (``source == "config"``; its kind, args and options
    are those its constructor returned then)."""

    name: str
    schedule: str
    kind: str
    args: dict[str, Any] = field(default_factory=dict)
    queue: str = "default"
    priority: int = 0
    #: 0: the inserting client's default.
    max_attempts: int = 0
    tags: list[str] = field(default_factory=list)
    source: str = "api"
    #: A paused periodic job inserts nothing until resumed.
    paused: bool = False
    #: The schedule's next tick; None while paused.
    next_run_at: datetime | None = None
    #: The tick of the last job inserted for it; None before the first.
    last_run_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PeriodicJob:
        return cls(
            name=str(d["name"]),
            schedule=str(d.get("schedule", "")),
            kind=str(d.get("kind", "")),
            args=dict(d.get("args") or {}),
            queue=str(d.get("queue") or "default"),
            priority=int(d.get("priority") or 0),
            max_attempts=int(d.get("max_attempts") or 0),
            tags=list(d.get("tags") or []),
            source=str(d.get("source", "")),
            paused=bool(d.get("paused")),
            next_run_at=parse_time(d.get("next_run_at")),
            last_run_at=parse_time(d.get("last_run_at")),
            created_at=parse_time(d.get("created_at")),
            updated_at=parse_time(d.get("updated_at")),
            raw=d,
        )


@dataclass(frozen=True)
class BatchPage:
    """A page of batches, newest first; pass ``next_before`` as ``before``
    for the next page (None on the last)."""

    batches: list[Batch]
    next_before: int | None


@dataclass(frozen=True)
class WorkflowEdge:
    """An edge of a workflow: ``child`` waits for ``parent``."""

    parent: int
    child: int


@dataclass(frozen=True)
class WorkflowJob(JobResult):
    """A job of a workflow's graph with its state and result.
    ``result_omitted`` says that the server left the result out (None) to
    keep its answer within its byte budget: read it with
    :meth:`drover.Client.job_result`."""

    result_omitted: bool = False

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WorkflowJob:
        return cls(id=int(d["id"]), state=str(d.get("state", "")), kind=str(d.get("kind", "")),
                   result=d.get("result"), result_omitted=bool(d.get("result_omitted")))


@dataclass(frozen=True)
class WorkflowGraph:
    """The jobs of a job's workflow with their states and results, the job
    asked about first, and the edges between them; ``truncated`` when the
    workflow has more than the server returns (those nearest the job)."""

    jobs: list[WorkflowJob]
    edges: list[WorkflowEdge]
    truncated: bool

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WorkflowGraph:
        return cls(jobs=[WorkflowJob.from_json(j) for j in d.get("jobs") or []],
                   edges=[WorkflowEdge(parent=int(e["parent"]), child=int(e["child"])) for e in d.get("edges") or []],
                   truncated=bool(d.get("truncated")))


@dataclass(frozen=True)
class Queue:
    """A queue's settings as every claim applies them, by Go clients and
    HTTP workers alike: paused (the whole queue, or ``paused_kinds`` within
    it), the fleet-wide limits (``global_max_workers``; ``rate_limit`` jobs
    per ``rate_period_ms``; 0 for none) and strict order (``strict_order``
    jobs at most, started strictly in priority then insert order; 0 when
    off). ``updated_at`` is None for a queue without stored settings."""

    name: str
    paused: bool = False
    paused_kinds: list[str] = field(default_factory=list)
    global_max_workers: int = 0
    rate_limit: int = 0
    rate_period_ms: int = 0
    strict_order: int = 0
    updated_at: datetime | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Queue:
        return cls(name=str(d["name"]), paused=bool(d.get("paused")), paused_kinds=list(d.get("paused_kinds") or []),
                   global_max_workers=int(d.get("global_max_workers") or 0), rate_limit=int(d.get("rate_limit") or 0),
                   rate_period_ms=int(d.get("rate_period_ms") or 0), strict_order=int(d.get("strict_order") or 0),
                   updated_at=parse_time(d.get("updated_at")), raw=d)


@dataclass(frozen=True)
class WorkerInfo:
    """A worker of the server's registry: a Go client (registered at each
    heartbeat) or an HTTP worker such as this SDK's (registered when it
    claims), with what it said of itself (``type``, ``labels``; ``plain``
    when it said nothing and takes plain jobs only)."""

    name: str
    plain: bool
    type: str
    labels: dict[str, str]
    queues: list[str]
    #: The lease owner of the jobs it holds (a worker's worker_id).
    owner: str
    #: "go" or "http".
    source: str
    started_at: datetime | None
    last_seen: datetime | None
    jobs_held: int
    #: Seen within the last minute, or holding a lease that has not expired.
    live: bool
    #: The kinds it runs, sorted; None for an HTTP worker that named none
    #: in its claims (it claims every kind).
    kinds: list[str] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WorkerInfo:
        return cls(name=str(d["name"]), plain=bool(d.get("plain")), type=str(d.get("type") or ""),
                   labels=dict(d.get("labels") or {}), queues=list(d.get("queues") or []),
                   owner=str(d.get("owner") or ""), source=str(d.get("source") or ""),
                   started_at=parse_time(d.get("started_at")), last_seen=parse_time(d.get("last_seen")),
                   jobs_held=int(d.get("jobs_held") or 0), live=bool(d.get("live")),
                   kinds=None if d.get("kinds") is None else list(d["kinds"]), raw=d)


@dataclass(frozen=True)
class UnroutableJobs:
    """Waiting routed jobs of one queue and routing that no live worker can
    take: how many, the oldest's run time and the lowest id."""

    queue: str
    routing: dict[str, Any]
    jobs: int
    oldest_run_at: datetime | None
    first_id: int
    kind: str = ""

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> UnroutableJobs:
        return cls(queue=str(d["queue"]), routing=dict(d.get("routing") or {}), jobs=int(d.get("jobs") or 0),
                   oldest_run_at=parse_time(d.get("oldest_run_at")), first_id=int(d.get("first_id") or 0),
                   kind=str(d.get("kind") or ""))


@dataclass(frozen=True)
class BulkTask:
    """A bulk action running in the server's background, or done: the jobs
    it read so far (``matched``) and those it changed (``changed``)."""

    id: int
    action: str
    #: "running", "done" or "failed" (then ``error`` says why).
    status: str
    matched: int
    changed: int
    started_at: datetime | None
    queue: str = ""
    kind: str = ""
    state: str = ""
    #: How many job ids a task over a list of ids was given; 0 for a filter.
    selected: int = 0
    error: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def done(self) -> bool:
        return self.status != "running"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BulkTask:
        return cls(id=int(d["id"]), action=str(d.get("action", "")), status=str(d.get("status", "")),
                   matched=int(d.get("matched") or 0), changed=int(d.get("changed") or 0),
                   started_at=parse_time(d.get("started_at")), queue=str(d.get("queue") or ""),
                   kind=str(d.get("kind") or ""), state=str(d.get("state") or ""),
                   selected=int(d.get("selected") or 0), error=str(d.get("error") or ""), raw=d)


@dataclass(frozen=True)
class Topic:
    """A stored topic: its lanes (a subscription's parallelism, and the keys
    it works in parallel), its retention (0: until every subscription has
    passed a message) and its subscriptions' names."""

    name: str
    lanes: int
    retention_ms: int
    created_at: datetime | None
    subscriptions: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Topic:
        return cls(name=str(d["name"]), lanes=int(d.get("lanes") or 0), retention_ms=int(d.get("retention_ms") or 0),
                   created_at=parse_time(d.get("created_at")), subscriptions=list(d.get("subscriptions") or []), raw=d)


@dataclass(frozen=True)
class SubscriptionLag:
    """How far a subscription is behind its topic: the messages it has not
    acknowledged, when the oldest was published, and how many retention
    dropped before it read them."""

    subscription: str
    pending: int
    dropped: int
    oldest_pending: datetime | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SubscriptionLag:
        return cls(subscription=str(d["subscription"]), pending=int(d.get("pending") or 0),
                   dropped=int(d.get("dropped") or 0), oldest_pending=parse_time(d.get("oldest_pending")))


@dataclass(frozen=True)
class SubscriptionLane:
    """One lane of a subscription: the id of the last message it
    acknowledged (``cursor``, 0 when none), the messages past it (``lag``),
    the consumer holding its lease and when that lease ends (``holder`` ""
    and ``lease_expires_at`` None when the lane is free), and the deliveries
    of its next message so far (``attempt``)."""

    lane: int
    cursor: int
    lag: int
    attempt: int
    holder: str = ""
    lease_expires_at: datetime | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SubscriptionLane:
        return cls(lane=int(d["lane"]), cursor=int(d.get("cursor") or 0), lag=int(d.get("lag") or 0),
                   attempt=int(d.get("attempt") or 0), holder=str(d.get("holder") or ""),
                   lease_expires_at=parse_time(d.get("lease_expires_at")))


@dataclass(frozen=True)
class SubscriptionRewind:
    """What a rewind did (:meth:`drover.Client.rewind_subscription`): the
    lanes it moved back (``lanes``; a lane at or before the point stays),
    the batches that were out (``released``: their acks are refused and
    their messages delivered again), the messages the subscription has to
    deliver now (``pending``) and when the oldest of them was published
    (``oldest_pending``: later than the time asked for when retention
    removed the messages between, None when none is pending)."""

    lanes: int
    released: int
    pending: int
    oldest_pending: datetime | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SubscriptionRewind:
        return cls(lanes=int(d["lanes"]), released=int(d["released"]), pending=int(d["pending"]),
                   oldest_pending=parse_time(d.get("oldest_pending")))


@dataclass(frozen=True)
class Message:
    """A message to publish. ``payload`` is bytes (delivered as they are) or
    any JSON value (a dict, list, str, number, …; a dataclass or a pydantic
    model is encoded as its JSON form); ``key`` keeps the messages of one key
    in publish order for every subscription; ``metadata`` is a JSON object.
    ``topic`` names the topic for :meth:`drover.Client.publish_many` and is
    left out for :meth:`drover.Client.publish`."""

    payload: Any = None
    key: str | None = None
    metadata: dict[str, Any] | None = None
    topic: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.topic is not None:
            out["topic"] = self.topic
        if self.key:
            out["key"] = self.key
        if isinstance(self.payload, (bytes, bytearray, memoryview)):
            out["payload_base64"] = base64.b64encode(bytes(self.payload)).decode("ascii")
        else:
            out["payload"] = encode_args(self.payload)
        if self.metadata is not None:
            out["metadata"] = self.metadata
        return out


_NOT_JSON = object()


def _payload_of(data: bytes) -> Any:
    """The JSON value of a payload's bytes, or _NOT_JSON: the server's rule
    for whether a delivery carries ``payload``."""
    try:
        return json.loads(data)
    except ValueError:
        return _NOT_JSON


@dataclass(frozen=True)
class Delivery:
    """A message as a subscription's handler receives it.

    ``data`` holds the payload's bytes; ``payload`` its JSON value when the
    payload is JSON (``is_json``), else None. (A JSON payload comes as its
    compact JSON text in ``data``.) ``attempt`` is 1 for the first delivery
    to this subscription and counts the later ones, retries and deliveries
    after a lost lease alike."""

    id: int
    topic: str
    subscription: str
    data: bytes
    is_json: bool
    payload: Any = None
    key: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    published_at: datetime | None = None
    attempt: int = 1
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def text(self) -> str:
        """The payload decoded as UTF-8 (a JSON payload: its JSON text)."""
        return self.data.decode()

    @classmethod
    def from_json(cls, d: dict[str, Any], topic: str, subscription: str) -> Delivery:
        """Reads a delivery of a receive answer, which carries the payload as
        ``payload`` when it is JSON and as ``payload_base64`` otherwise (an
        older server sent both)."""
        if "payload_base64" in d:
            data = base64.b64decode(d["payload_base64"])
        else:
            data = json.dumps(d.get("payload"), separators=(",", ":"), ensure_ascii=False).encode()
        # The server sends payload only for a payload that is JSON text, so
        # one without it is not JSON: decoding its bytes to find out again
        # (an exception per message) was most of a delivery's cost.
        is_json = "payload" in d
        # The fields are set in one step, as Job.from_json's are, rather
        # than through the frozen dataclass's __init__ (test_openapi.py
        # holds it to the dataclass).
        delivery = object.__new__(cls)
        delivery.__dict__.update(
            id=int(d["id"]), topic=topic, subscription=subscription, data=data, is_json=is_json,
            payload=d["payload"] if is_json else None, key=str(d.get("key") or ""),
            metadata=dict(d.get("metadata") or {}), published_at=parse_time(d.get("published_at")),
            attempt=int(d.get("attempt") or 1), raw=d)
        return delivery

    @classmethod
    def from_retry_args(cls, a: dict[str, Any], job_attempt: int) -> Delivery:
        """Reads the args of a retry job (kind ``drover.topic``) in its
        attempt ``job_attempt``: a failed message as the server stored it for
        its subscription, the payload's bytes in base64, and how often it was
        delivered before it failed (``delivered``; 1 when absent), which its
        attempt counts on from, as a Go consumer's does."""
        attempt = job_attempt + max(int(a.get("delivered") or 1), 1)
        data = base64.b64decode(a.get("payload") or "")
        value = _payload_of(data)
        is_json = value is not _NOT_JSON
        return cls(id=int(a["id"]), topic=str(a["topic"]), subscription=str(a["subscription"]), data=data,
                   is_json=is_json, payload=value if is_json else None, key=str(a.get("key") or ""),
                   metadata=dict(a.get("metadata") or {}), published_at=parse_time(a.get("published_at")),
                   attempt=attempt, raw=a)


@dataclass(frozen=True)
class ReceivedBatch:
    """A batch of one lane of a subscription, in order, with the receipt
    that acknowledges it (:meth:`drover.Client.ack`) before its lease ends.
    ``dropped`` counts messages of the lane that retention removed before
    the subscription read them."""

    receipt: str
    messages: list[Delivery]
    dropped: int = 0

    @classmethod
    def from_json(cls, d: dict[str, Any], topic: str, subscription: str) -> ReceivedBatch:
        return cls(receipt=str(d["receipt"]), dropped=int(d.get("dropped") or 0),
                   messages=[Delivery.from_json(m, topic, subscription) for m in d.get("messages") or []])


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
    :meth:`drover.Client.insert_workflow`::

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
