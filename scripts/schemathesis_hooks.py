"""Schemathesis hooks for scripts/schemathesis.sh.

They drop generated request bodies that break rules openapi.json states in
prose because OpenAPI 3.0's JSON Schema cannot: such a body is valid to the
schema and rightly refused by the server, so without these hooks the
positive-data check would report the refusal. Every other body, valid or
invalid, still goes to the server and through every check.

- unique_states must list every unfinished state (OpenAPI 3.0 has no
  `contains`);
- the attempts of one heartbeat or release and the results of one finish
  name each job once (uniqueness by a member, not by the whole item);
- a snoozed result carries exactly one of retry_at and snooze_ms, and no
  error or trace; snooze_ms goes with no other outcome;
- depends_on names stored jobs (a reference to a job that does not exist
  is refused with 400, which random IDs nearly always are);
- a claim's wait_ms is capped by the server's --max-wait, which the script
  lowers to 1 s so that long polls do not take the run's time;
- a periodic job's schedule must parse as a cron expression that fires
  (map_body swaps a generated one the schema allows for one that does, so
  that creates and updates get past validation to the store);
- the keys of worker_labels (a job's routing, a claiming worker's labels)
  are 1-63 letters, digits, '_', '.', '/' or '-' starting with a letter or
  digit (OpenAPI 3.0 has no propertyNames);
- on_worker_absent and worker_absent_after_ms go with worker_names, and
  the "fallback" policy with a worker_type;
- a topic message's key, metadata and JSON payload, like a job's args, are text the
  store can hold;
- a subscription's rewind gives exactly one of earliest (true) and since,
  and a since that is not in the future;
- no string anywhere inside args, metadata or a result may hold NUL or a
  lone surrogate: the store cannot hold them (PostgreSQL's jsonb refuses
  \u0000), so the server answers 400, and a schema cannot say "no NUL in
  any nested string" of free-form JSON.
"""

import re
from datetime import datetime, timezone

import schemathesis

UNFINISHED = {"pending", "blocked", "scheduled", "available", "retryable", "running"}
MAX_WAIT_MS = 1000


def _jobs(body):
    if not isinstance(body, dict):
        return []
    jobs = body.get("jobs", body.get("steps"))
    out = list(jobs) if isinstance(jobs, list) else []
    if isinstance(body.get("callback"), dict):
        out.append(body["callback"])
    return [j for j in out if isinstance(j, dict)]


def _unique_ids(items):
    if not isinstance(items, list):
        return True
    ids = [i.get("id") for i in items if isinstance(i, dict) and "id" in i]
    hashable = [i for i in ids if isinstance(i, (int, float, str, bool))]
    return len(hashable) == len(set(hashable))


LABEL_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]{0,62}")


def _labels_ok(labels):
    if not isinstance(labels, dict):
        return True
    return all(LABEL_KEY.fullmatch(k) for k in labels)


def _absent_ok(job):
    if job.get("on_worker_absent") or job.get("worker_absent_after_ms"):
        if not job.get("worker_names"):
            return False
    return job.get("on_worker_absent") != "fallback" or bool(job.get("worker_type"))


def _storable(value):
    """Whether every string (and key) in value is text the store can hold."""
    if isinstance(value, str):
        if "\x00" in value:
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate
            return False
        return True
    if isinstance(value, dict):
        return all(_storable(k) and _storable(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_storable(v) for v in value)
    return True


def _snooze_ok(result):
    if result.get("outcome") != "snoozed":
        return "snooze_ms" not in result
    if ("retry_at" in result) == ("snooze_ms" in result):
        return False
    return "error" not in result and "trace" not in result


@schemathesis.hook
def filter_body(ctx, body):
    path = ctx.operation.path if ctx.operation is not None else ""
    if path in ("/v1/jobs", "/v1/batches", "/v1/workflows"):
        for job in _jobs(body):
            if not _storable(job.get("args")) or not _storable(job.get("metadata")):
                return False
            if not _labels_ok(job.get("worker_labels")) or not _absent_ok(job):
                return False
            deps = job.get("depends_on")
            if isinstance(deps, list) and deps:
                return False
            states = job.get("unique_states")
            if isinstance(states, list) and all(isinstance(s, str) for s in states) and not UNFINISHED <= set(states):
                return False
    elif path in ("/v1/heartbeat", "/v1/release") and isinstance(body, dict):
        return _unique_ids(body.get("attempts"))
    elif path == "/v1/finish" and isinstance(body, dict):
        results = body.get("results")
        if isinstance(results, list) and not all(_storable(r.get("result")) for r in results if isinstance(r, dict)):
            return False
        if isinstance(results, list) and not all(_snooze_ok(r) for r in results if isinstance(r, dict)):
            return False
        return _unique_ids(results)
    elif path == "/v1/topics/{topic}/publish" and isinstance(body, dict):
        msgs = body.get("messages")
        if isinstance(msgs, list):
            for m in msgs:
                if isinstance(m, dict) and not all(_storable(m.get(f)) for f in ("key", "metadata", "payload")):
                    return False
    elif path == "/v1/topics/{topic}/subscriptions/{name}/rewind" and isinstance(body, dict):
        since = body.get("since")
        if (body.get("earliest") is True) == (since is not None):
            return False
        if isinstance(since, str) and not _past(since):
            return False
    elif path == "/v1/claim" and isinstance(body, dict):
        if not _labels_ok(body.get("worker_labels")):
            return False
        wait = body.get("wait_ms")
        if isinstance(wait, int) and not isinstance(wait, bool) and wait > MAX_WAIT_MS:
            return False
    return True


def _past(stamp):
    """Whether stamp, an RFC 3339 time, is one the server takes: it parses
    (a leap second, which the schema's date-time allows, does not in Go
    either) and is not in the future."""
    try:
        t = datetime.fromisoformat(stamp.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return t.tzinfo is not None and t <= datetime.now(timezone.utc)


SCHEDULES = ("@hourly", "@daily", "@every 1h", "*/5 * * * *", "0 3 * * 1-5")


@schemathesis.hook
def map_body(ctx, body):
    path = ctx.operation.path if ctx.operation is not None else ""
    if path.startswith("/v1/periodic") and isinstance(body, dict):
        sched = body.get("schedule")
        # Only a schedule the schema allows (a string of 1 to 255
        # characters) is swapped: one it forbids must still reach the
        # server and be refused.
        if isinstance(sched, str) and 1 <= len(sched) <= 255:
            body = dict(body)
            body["schedule"] = SCHEDULES[len(sched) % len(SCHEDULES)]
    return body
