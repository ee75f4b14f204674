"""The SDK against the server's OpenAPI document (internal/app/server/openapi.json),
without a server:

- every operation of the document is in the table of docs/python.md, either
  covered (by the Client methods, or the Worker or Consumer, it names) or
  listed as deliberately not covered with the reason;
- each Client method the table names sends a request of its operation whose
  query and body the document accepts, and decodes the document's answer;
- the models' fields are the schemas' properties, but for those listed here
  as renamed or left out, with the reason.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import drover
from drover import consumer, worker
from openapi import Operation, errors, operations, sample, schema

DOCS = Path(__file__).resolve().parents[3] / "docs" / "python.md"
NOW = datetime(2030, 1, 2, tzinfo=timezone.utc)

# One call of each Client method, with every option it has where it sends
# them, so that the body checked against the document is as full as a
# caller can make it.
CALLS: dict[str, Callable[[drover.Client], Any]] = {
    "insert": lambda c: c.insert(
        "k", {"a": 1}, queue="q", priority=1, run_at=NOW, max_attempts=3, tags=["t"], metadata={"m": 1},
        timeout_ms=1000, depends_on=[1], key="key", key_limit=1, key_rate=1, key_rate_period_ms=1000,
        unique_key="u", unique_states=["available"], unique_by_queue=True, worker_type="gpu",
        worker_names=["w"], worker_labels={"l": "v"}, on_worker_absent="fallback", worker_absent_after_ms=1000),
    "insert_many": lambda c: c.insert_many([drover.JobSpec("k", {}, queue="q")]),
    "insert_batch": lambda c: c.insert_batch([drover.JobSpec("k", {})], callback=drover.JobSpec("cb", {})),
    "insert_workflow": lambda c: c.insert_workflow(_workflow()),
    "get_job": lambda c: c.get_job(1),
    "list_jobs": lambda c: c.list_jobs(
        state=["available", "running"], queue="q", kind="k", tags=["t"], args={"a": 1}, metadata={"m": 1},
        created_since=NOW, created_until=NOW, scheduled_since=NOW, scheduled_until=NOW, attempted_since=NOW,
        attempted_until=NOW, finished_since=NOW, finished_until=NOW, order="desc", count=True, after=1, limit=10),
    "iter_jobs": lambda c: next(c.iter_jobs(queue="q", page_size=10)),
    "job_result": lambda c: c.job_result(1),
    "workflow_graph": lambda c: c.workflow_graph(1),
    "get_batch": lambda c: c.get_batch(1),
    "list_batches": lambda c: c.list_batches(before=5, limit=10),
    "batch_results": lambda c: c.batch_results(1, after=1, limit=10),
    "iter_batch_results": lambda c: next(c.iter_batch_results(1)),
    "stats": lambda c: c.stats("q"),
    "cancel": lambda c: c.cancel(1),
    "retry": lambda c: c.retry(1),
    "discard": lambda c: c.discard(1),
    "bulk": lambda c: c.bulk("retry", state="discarded", queue="q", kind="k"),
    "bulk_by_ids": lambda c: c.bulk_by_ids("delete", [1, 2]),
    "get_bulk": lambda c: c.get_bulk(1),
    "wait_bulk": lambda c: c.wait_bulk(1),
    "list_queues": lambda c: c.list_queues(),
    "get_queue": lambda c: c.get_queue("q"),
    "pause_queue": lambda c: c.pause_queue("q", kind="k"),
    "resume_queue": lambda c: c.resume_queue("q", kind="k"),
    "set_strict_order": lambda c: c.set_strict_order("q", 2),
    "list_workers": lambda c: c.list_workers(),
    "list_unroutable": lambda c: c.list_unroutable(),
    "list_periodic": lambda c: c.list_periodic(),
    "get_periodic": lambda c: c.get_periodic("p"),
    "create_periodic": lambda c: c.create_periodic("p", "@hourly", "k", {"a": 1}, queue="q", priority=1,
                                                   max_attempts=2, tags=["t"]),
    "update_periodic": lambda c: c.update_periodic("p", "@daily", "k", {}, queue="q", priority=1, max_attempts=2,
                                                   tags=["t"]),
    "delete_periodic": lambda c: c.delete_periodic("p"),
    "pause_periodic": lambda c: c.pause_periodic("p"),
    "resume_periodic": lambda c: c.resume_periodic("p"),
    "trigger_periodic": lambda c: c.trigger_periodic("p"),
    "create_topic": lambda c: c.create_topic("t", lanes=4, retention_ms=-1),
    "list_topics": lambda c: c.list_topics(),
    "get_topic": lambda c: c.get_topic("t"),
    "delete_topic": lambda c: c.delete_topic("t"),
    "publish": lambda c: c.publish("t", [drover.Message({"a": 1}, key="k", metadata={"m": 1}),
                                         drover.Message(b"\x00\x01")]),
    "publish_many": lambda c: c.publish_many([drover.Message("x", topic="t", key="k"),
                                              drover.Message(b"\xff", topic="u")]),
    "create_subscription": lambda c: c.create_subscription("t", "s", from_earliest=True, max_attempts=5),
    "delete_subscription": lambda c: c.delete_subscription("t", "s"),
    "subscription_lag": lambda c: c.subscription_lag("t"),
    "receive": lambda c: c.receive("t", "s", worker="w", max_batches=2, batch_size=10, lease_ms=5000,
                                   wait_ms=100),
    "ack": lambda c: c.ack("t", "s", [("r1", {1: "why"}), ("r2", None)]),
    "nack": lambda c: c.nack("t", "s", ["r1"], "why"),
    "extend_batches": lambda c: c.extend_batches("t", "s", ["r1", "r2"], lease_ms=60_000),
    "release_batches": lambda c: c.release_batches("t", "s", ["r1"]),
    "subscription_lanes": lambda c: c.subscription_lanes("t", "s"),
    "release_lane": lambda c: c.release_lane("t", "s", 3),
    "rewind_subscription": lambda c: c.rewind_subscription("t", "s", earliest=True),
}


def _workflow() -> drover.Workflow:
    wf = drover.Workflow()
    a = wf.add("a", "k", {}, queue="q")
    wf.add("b", "k", {}, after=[a], release_on_parent_failure=True, depends_on=[1])
    return wf


class Recorder:
    """Stands for the client's transport: checks each request against the
    document and answers with a sample of the operation's answer."""

    timeout = 30.0

    def __init__(self) -> None:
        self.seen: list[Operation] = []

    def request(self, method: str, path: str, body: Any = None, *, query: dict[str, str] | None = None,
                timeout: float | None = None, idempotent: bool = True) -> Any:
        ops = [op for op in operations() if op.matches(method, path)]
        assert ops, f"{method} {path}: no operation of the document"
        op = ops[0]
        self.seen.append(op)
        unknown = set(query or {}) - op.query_params
        assert not unknown, f"{op.id}: query parameters {unknown} are not the operation's"
        s = op.body_schema
        if s is None:
            assert body is None, f"{op.id} takes no body, sent {body!r}"
        else:
            problems = errors(body, s)
            assert not problems, f"{op.id}: the body {body!r} is not the document's:\n" + "\n".join(problems)
        answer = op.answer_schema
        out: Any = sample(answer) if answer else None
        if op.id == "getBulk":
            out["status"] = "done"  # so that wait_bulk ends
        if op.id in ("listJobs", "getBatchResults"):
            out["next_after"] = None  # so that the iterators end
        return out


def coverage() -> dict[str, tuple[str, list[str], str]]:
    """The table of docs/python.md: operation id → (HTTP, what covers it,
    the reason it is not covered)."""
    text = DOCS.read_text()
    m = re.search(r"<!-- openapi-operations -->(.*?)<!-- /openapi-operations -->", text, re.S)
    assert m, "docs/python.md: the operations table is missing"
    rows: dict[str, tuple[str, list[str], str]] = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        op_id, http, covered = cells[0].strip("`"), cells[1].strip("`"), cells[2]
        assert op_id not in rows, f"docs/python.md: {op_id} is listed twice"
        if covered.startswith("not covered:"):
            reason = covered.removeprefix("not covered:").strip()
            assert reason, f"docs/python.md: {op_id}: say why it is not covered"
            rows[op_id] = (http, [], reason)
        else:
            rows[op_id] = (http, re.findall(r"`([A-Za-z]+(?:\.[a-z_]+)?)`", covered), "")
    return rows


def test_every_operation_is_covered_or_listed_with_a_reason() -> None:
    rows = coverage()
    ops = {op.id: op for op in operations()}
    assert set(rows) == set(ops), (f"docs/python.md's table lacks {sorted(set(ops) - set(rows))} "
                                   f"and lists unknown {sorted(set(rows) - set(ops))}")
    for op_id, (http, names, reason) in rows.items():
        op = ops[op_id]
        assert http == f"{op.method} {op.path}", f"{op_id}: the table says {http}"
        assert names or reason, f"{op_id}: neither covered nor explained"


@pytest.mark.parametrize("op_id", sorted(coverage()))
def test_covered_operations_are_what_the_sdk_sends(op_id: str) -> None:
    _, names, _ = coverage()[op_id]
    op = next(o for o in operations() if o.id == op_id)
    for name in names:
        if name in ("Worker", "Consumer"):
            # Their requests are sent by their loops: the module names the path.
            source = inspect.getsource(worker if name == "Worker" else consumer)
            last = op.path.rsplit("/", 1)[-1]
            assert f'"{op.path}"' in source or f'"{last}"' in source, f"{name} does not send {op_id}"
            continue
        cls, _, method = name.partition(".")
        assert cls == "Client" and hasattr(drover.Client, method) and hasattr(drover.AsyncClient, method), name
        client = drover.Client("http://127.0.0.1:1", "drv_x")
        rec = Recorder()
        client._t = rec  # type: ignore[assignment]
        CALLS[method](client)
        assert op in rec.seen, f"Client.{method} sent {[o.id for o in rec.seen]}, not {op_id}"


def test_every_client_method_is_in_the_table() -> None:
    named = {n.split(".", 1)[1] for _, names, _ in coverage().values() for n in names if "." in n}
    methods = {n for n, _ in inspect.getmembers(drover.Client, inspect.isfunction) if not n.startswith("_")}
    assert methods - {"close"} == named
    assert set(CALLS) == named


# Each model and the schema it reads or writes, with the properties it
# names otherwise or leaves out, and why.
MODELS: list[tuple[type, str, dict[str, str], dict[str, str]]] = [
    # (model, schema, {property: field it is read into}, {property or field: why it is not mapped})
    (drover.Job, "Job", {}, {"depends_on": "a ClaimedJob property, empty on jobs read",
                             "parent_results": "a ClaimedJob property, empty on jobs read"}),
    (drover.Job, "ClaimedJob", {}, {"routing": "a Job property: claims do not send it",
                                    "unroutable": "a Job property: claims do not send it"}),
    (drover.JobResult, "JobResult", {}, {}),
    (drover.AttemptError, "AttemptError", {}, {}),
    (drover.Batch, "Batch", {}, {}),
    (drover.PeriodicJob, "PeriodicJob", {}, {}),
    (drover.JobSpec, "EnqueueJob", {}, {}),
    (drover.Queue, "Queue", {}, {}),
    (drover.WorkerInfo, "Worker", {}, {}),
    (drover.UnroutableJobs, "UnroutableJobs", {}, {}),
    (drover.BulkTask, "BulkTask", {}, {}),
    (drover.Topic, "Topic", {}, {}),
    (drover.WorkflowGraph, "WorkflowGraph", {}, {}),
    (drover.WorkflowJob, "WorkflowJob", {}, {}),
    (drover.Delivery, "Delivery", {"payload_base64": "data"},
     {"topic": "the topic of the receive, which the URL names", "is_json": "whether payload is set",
      "subscription": "the subscription of the receive, which the URL names"}),
    (drover.ReceivedBatch, "ReceivedBatch", {}, {}),
    (drover.SubscriptionLane, "SubscriptionLane", {}, {}),
    (drover.SubscriptionRewind, "SubscriptionRewind", {}, {}),
]
# Fields of every model that are the SDK's own: the answer as it came.
SDK_FIELDS = {"raw"}


@pytest.mark.parametrize(("model", "name", "renamed", "unmapped"), MODELS,
                         ids=[f"{m.__name__}-{n}" for m, n, _, _ in MODELS])
def test_models_match_the_schemas(model: type, name: str, renamed: dict[str, str], unmapped: dict[str, str]) -> None:
    props = set(schema(name).get("properties", {}))
    fields = {f.name for f in dataclasses.fields(model)} - SDK_FIELDS
    mapped = {renamed.get(p, p) for p in props}
    assert not (props - set(renamed) - fields - set(unmapped)), f"{name} properties missing from {model.__name__}"
    assert not (fields - mapped - set(unmapped)), f"{model.__name__} fields that {name} does not have"


@pytest.mark.parametrize(("model", "name"), [(drover.Job, "Job"), (drover.Job, "ClaimedJob"),
                                             (drover.PeriodicJob, "PeriodicJob"), (drover.Batch, "Batch"),
                                             (drover.Queue, "Queue"), (drover.WorkerInfo, "Worker"),
                                             (drover.BulkTask, "BulkTask"), (drover.Topic, "Topic"),
                                             (drover.SubscriptionLane, "SubscriptionLane"),
                                             (drover.SubscriptionRewind, "SubscriptionRewind")])
def test_models_decode_a_full_answer(model: Any, name: str) -> None:
    """Each property of a full answer lands in its field, keeping its type."""
    value = sample(schema(name))
    decoded = model.from_json(value)
    for f in dataclasses.fields(model):
        if f.name in value and f.name not in SDK_FIELDS:
            got = getattr(decoded, f.name)
            want = value[f.name]
            if isinstance(got, datetime):
                assert want == "2026-01-02T03:04:05Z", f.name
            elif isinstance(got, list) and got and dataclasses.is_dataclass(got[0]):
                assert len(got) == len(want), f.name
            elif not dataclasses.is_dataclass(got):
                assert got == want, f"{name}.{f.name}: {got!r} != {want!r}"


def test_delivery_decodes_json_and_bytes_payloads() -> None:
    as_json = drover.Delivery.from_json({"id": 1, "payload": {"a": 1}, "published_at": "2026-01-02T03:04:05Z"},
                                        "t", "s")
    assert (as_json.is_json, as_json.payload, as_json.data) == (True, {"a": 1}, b'{"a":1}')
    as_bytes = drover.Delivery.from_json({"id": 2, "payload_base64": "/wA=", "attempt": 3}, "t", "s")
    assert (as_bytes.is_json, as_bytes.payload, as_bytes.data, as_bytes.attempt) == (False, None, b"\xff\x00", 3)
    # An older server sent both; payload says it is JSON.
    both = drover.Delivery.from_json({"id": 3, "payload": "x", "payload_base64": "Ingi"}, "t", "s")
    assert (both.is_json, both.payload, both.data) == (True, "x", b'"x"')
    retried = drover.Delivery.from_retry_args({"topic": "t", "subscription": "s", "id": 4, "payload": "bnVsbA==",
                                               "published_at": "2026-01-02T03:04:05Z"}, job_attempt=1)
    assert (retried.is_json, retried.payload, retried.data, retried.attempt) == (True, None, b"null", 2)
    # Delivered three times (leases that expired) before it failed: its retry's first run is the fourth.
    again = drover.Delivery.from_retry_args({"topic": "t", "subscription": "s", "id": 5, "payload": "",
                                             "delivered": 3}, job_attempt=1)
    assert (again.attempt, again.data, again.is_json) == (4, b"", False)
