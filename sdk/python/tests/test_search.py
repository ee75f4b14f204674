"""Job search through ``list_jobs`` and ``iter_jobs`` against a real
``drover serve``: each test inserts jobs into a queue of its own and asserts
exactly which ids every filter returns."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

import drover


def ids_of(jobs: list[drover.Job]) -> list[int]:
    return [j.id for j in jobs]


def search(client: drover.Client, queue: str, **filters: Any) -> list[int]:
    """Every job of the queue that matches, paging to the end."""
    return [j.id for j in client.iter_jobs(queue=queue, **filters)]


def test_search_by_args_metadata_and_tags(client: drover.Client, queue: str) -> None:
    ada, bob, sms, items = client.insert_many([
        drover.JobSpec("email", {"to": "ada@example.com", "lang": "en"}, queue=queue, tags=["vip", "eu"],
                       metadata={"tenant": "acme"}),
        drover.JobSpec("email", {"to": "bob@example.com", "lang": "en"}, queue=queue, tags=["eu"],
                       metadata={"tenant": "acme", "plan": "pro"}),
        drover.JobSpec("sms", {"to": "ada@example.com", "route": {"carrier": "x", "hops": 2}}, queue=queue,
                       tags=["vip"], metadata={"tenant": "globex"}),
        drover.JobSpec("email", {"to": "cy@example.com", "items": [1, 2, 3], "n": 1}, queue=queue),
    ])

    # args: containment of a key, of nested objects, of array elements in
    # any order, numbers by value, combined with kind.
    assert search(client, queue, args={"to": "ada@example.com"}) == [ada, sms]
    assert search(client, queue, args={"route": {"hops": 2}}) == [sms]
    assert search(client, queue, args={"items": [3, 1]}) == [items]
    assert search(client, queue, args={"n": 1.0}) == [items]
    assert search(client, queue, args={"lang": "en"}, kind="email") == [ada, bob]
    assert search(client, queue, args={"to": "ada@example.com", "lang": "fr"}) == []
    assert search(client, queue, args={}) == [ada, bob, sms, items]

    # metadata alike.
    assert search(client, queue, metadata={"tenant": "acme"}) == [ada, bob]
    assert search(client, queue, metadata={"tenant": "acme", "plan": "pro"}) == [bob]
    assert search(client, queue, metadata={"tenant": "initech"}) == []

    # tags: the jobs that carry every one given; a lone string is one tag.
    assert search(client, queue, tags=["vip"]) == [ada, sms]
    assert search(client, queue, tags="eu") == [ada, bob]
    assert search(client, queue, tags=["vip", "eu"]) == [ada]
    assert search(client, queue, tags=["eu"], metadata={"plan": "pro"}, state="available") == [bob]
    assert search(client, queue, tags=["eu"], state=["completed", "discarded"]) == []

    # The same through one page of list_jobs, newest first.
    page = client.list_jobs(queue=queue, args={"to": "ada@example.com"}, order="desc")
    assert ids_of(page.jobs) == [sms, ada]
    assert page.next_after is None
    assert page.count is None


def test_search_by_time_ranges(client: drover.Client, queue: str) -> None:
    before = datetime.now(timezone.utc)
    first = client.insert_many([drover.JobSpec("t", {"i": i}, queue=queue) for i in range(3)])
    second = client.insert_many([drover.JobSpec("t", {"i": i}, queue=queue) for i in range(3, 5)])
    later = datetime.now(timezone.utc) + timedelta(hours=2)
    scheduled = client.insert("t", {"i": 5}, queue=queue, run_at=later)
    after = datetime.now(timezone.utc)
    everyone = [*first, *second, scheduled]

    # Created: a range around now holds them all, one in the future none.
    assert search(client, queue, created_since=before - timedelta(minutes=1),
                  created_until=after + timedelta(minutes=1)) == everyone
    assert search(client, queue, created_since=after + timedelta(hours=1)) == []
    assert search(client, queue, created_until=before - timedelta(minutes=1)) == []
    # A naive datetime is UTC: an hour ahead of now in UTC is still future.
    naive_future = (datetime.now(timezone.utc) + timedelta(hours=1)).replace(tzinfo=None)
    assert search(client, queue, created_since=naive_future) == []

    # Split the two inserts at the middle of the gap between them, with a
    # time in another zone: [since, until) on each side.
    t1 = client.get_job(first[-1]).created_at
    t2 = client.get_job(second[0]).created_at
    assert t1 is not None and t2 is not None and t2 - t1 > timedelta(microseconds=10)
    mid = (t1 + (t2 - t1) / 2).astimezone(timezone(timedelta(hours=-5)))
    assert search(client, queue, created_until=mid) == first
    assert search(client, queue, created_since=mid, kind="t") == [*second, scheduled]

    # Scheduled (run_at): only the job due in two hours lies past one hour.
    hour = datetime.now(timezone.utc) + timedelta(hours=1)
    assert search(client, queue, scheduled_since=hour) == [scheduled]
    assert search(client, queue, scheduled_until=hour) == [*first, *second]

    # Finished and attempted: a bound on a time a job has not set excludes
    # it; cancelling a waiting job finishes it.
    assert client.cancel(second[1]).state == "cancelled"
    assert search(client, queue, finished_since=before - timedelta(minutes=1)) == [second[1]]
    assert search(client, queue, finished_until=datetime.now(timezone.utc) + timedelta(minutes=1)) == [second[1]]
    assert search(client, queue, finished_since=datetime.now(timezone.utc) + timedelta(minutes=1)) == []
    assert search(client, queue, attempted_since=datetime(2000, 1, 1, tzinfo=timezone.utc)) == []
    assert search(client, queue, attempted_until=datetime.now(timezone.utc) + timedelta(days=1)) == []


def test_search_order_count_and_paging(client: drover.Client, queue: str) -> None:
    ids = client.insert_many([
        drover.JobSpec("p", {"i": i, "pick": i % 3 == 0}, queue=queue, tags=["pick"] if i % 3 == 0 else ["skip"],
                       metadata={"n": i})
        for i in range(40)
    ])
    picked = [ids[i] for i in range(0, 40, 3)]
    assert len(picked) == 14

    # Newest first.
    assert search(client, queue, order="desc") == ids[::-1]
    assert ids_of(client.list_jobs(queue=queue, order="desc", limit=3).jobs) == ids[:-4:-1]

    # count=True: the exact count of the filter, whatever the page's limit.
    page = client.list_jobs(queue=queue, tags=["pick"], count=True, limit=1)
    assert page.count == drover.JobCount(value=14, exact=True)
    assert ids_of(page.jobs) == picked[:1]
    assert page.next_after == picked[0]
    assert client.list_jobs(queue=queue, args={"pick": False}, count=True).count == drover.JobCount(26, True)
    assert client.list_jobs(queue=queue, metadata={"n": 99}, count=True).count == drover.JobCount(0, True)
    assert client.list_jobs(queue=queue, tags=["pick"]).count is None

    # Paging with after over a filtered search visits each match once, in
    # either order.
    orders: list[tuple[drover.SearchOrder, list[int]]] = [("asc", picked), ("desc", picked[::-1])]
    for order, want in orders:
        seen: list[int] = []
        after: int | None = None
        pages = 0
        while True:
            p = client.list_jobs(queue=queue, tags=["pick"], order=order, after=after, limit=4)
            seen.extend(ids_of(p.jobs))
            pages += 1
            if p.next_after is None:
                break
            after = p.next_after
        assert seen == want, order
        assert pages >= 4
    assert search(client, queue, args={"pick": True}, page_size=3) == picked
    assert search(client, queue, args={"pick": True}, order="desc", page_size=5) == picked[::-1]


def test_search_errors_name_the_parameter(client: drover.Client, queue: str) -> None:
    job_id = client.insert("e", {"a": 1}, queue=queue)
    with pytest.raises(drover.ValidationError) as e:
        client.list_jobs(queue=queue, args=[1, 2])  # type: ignore[arg-type]
    assert e.value.status == 400
    assert e.value.message.startswith('args filter "[1,2]": must be a JSON object')
    with pytest.raises(drover.ValidationError) as e:
        client.list_jobs(queue=queue, metadata="tenant")  # type: ignore[arg-type]
    assert e.value.message.startswith("metadata filter")
    assert "must be a JSON object" in e.value.message
    with pytest.raises(drover.ValidationError) as e:
        now = datetime.now(timezone.utc)
        client.list_jobs(queue=queue, created_since=now, created_until=now - timedelta(hours=1))
    assert "created" in e.value.message
    with pytest.raises(drover.ValidationError) as e:
        client.list_jobs(queue=queue, order="sideways")  # type: ignore[arg-type]
    assert e.value.message.startswith('order "sideways"')
    # A tag with a comma cannot be written as the parameter: refused before
    # any request.
    with pytest.raises(ValueError, match="tags: 'a,b' is not a tag"):
        client.list_jobs(queue=queue, tags=["a,b"])
    # Nothing was changed by the refused searches.
    assert search(client, queue) == [job_id]
    assert client.get_job(job_id).state == "available"
