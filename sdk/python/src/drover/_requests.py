"""What the sync and the async client send: request paths, queries and
bodies, written once for both."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from .models import Message, Workflow, encode_args, format_time


def search_query(
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


def page_query(**params: int | None) -> dict[str, str]:
    """The paging parameters given (after, before, limit), as a query."""
    return {k: str(v) for k, v in params.items() if v is not None}


def segment(name: str) -> str:
    """A name as one segment of a path, escaped."""
    return urllib.parse.quote(name, safe="")


def periodic_path(name: str) -> str:
    return "/v1/periodic/" + segment(name)


def periodic_body(schedule: str, kind: str, args: Any, *, queue: str | None, priority: int, max_attempts: int,
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


def workflow_body(workflow: Workflow) -> dict[str, Any]:
    steps = []
    for st in workflow.steps:
        body = st.spec.to_json()
        body["ref"] = st.name
        if st.after:
            body["after"] = [d.name for d in st.after]
        if st.release_on_parent_failure:
            body["release_on_parent_failure"] = True
        steps.append(body)
    return {"steps": steps}


def queue_path(name: str, action: str = "") -> str:
    return "/v1/queues/" + segment(name) + (f"/{action}" if action else "")


def kind_query(kind: str | None) -> dict[str, str] | None:
    return {"kind": kind} if kind else None


def topic_path(topic: str, rest: str = "") -> str:
    return "/v1/topics/" + segment(topic) + rest


def subscription_path(topic: str, name: str, action: str = "") -> str:
    return topic_path(topic, "/subscriptions/" + segment(name) + (f"/{action}" if action else ""))


def messages_body(messages: Iterable[Message], *, with_topic: bool) -> dict[str, Any]:
    """The body of a publish. With with_topic (``POST /v1/messages``) every
    message names its topic; without, none may (the path names it)."""
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Message):
            raise TypeError(f"messages[{i}]: want a drover.Message, got {type(m).__name__}")
        if with_topic and not m.topic:
            raise ValueError(f"messages[{i}]: topic: required by publish_many (each message names its topic)")
        if not with_topic and m.topic is not None:
            raise ValueError(f"messages[{i}]: topic: publish names the topic; leave Message.topic unset")
        out.append(m.to_json())
    return {"messages": out}


def acks_body(acks: Iterable[tuple[str, Mapping[int, str] | None]]) -> dict[str, Any]:
    """The body of an ack: each receipt with the failed messages of its
    batch, by ID, with their errors."""
    out = []
    for receipt, failed in acks:
        a: dict[str, Any] = {"receipt": receipt}
        if failed:
            a["failed"] = {str(int(k)): str(v) for k, v in failed.items()}
        out.append(a)
    return {"acks": out}
