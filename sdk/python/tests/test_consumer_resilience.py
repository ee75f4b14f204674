"""Consumer processes against a real ``drover serve``, on every store: one
is killed (SIGKILL) in the middle of a batch and its batch is delivered
again, nothing lost; several share a subscription and each key's messages
are handled in publish order; SIGTERM lets a running batch finish."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import drover
from conftest import Server, wait_for

CONSUMER = '''
import os, sys, time
import drover

def note(line):
    fd = os.open(os.environ["LEDGER"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, (line + "\\n").encode())
    os.close(fd)

consumer = drover.Consumer(os.environ["DROVER_URL"], os.environ["DROVER_TOKEN"], lease=float(os.environ["LEASE"]),
                           poll_wait=1, shutdown_timeout=10)
hang_on = int(os.environ.get("HANG_ON_BATCH", "0"))
batches = 0

@consumer.subscription(os.environ["TOPIC"], "s", batch=True, concurrency=int(os.environ["CONCURRENCY"]),
                       batch_size=int(os.environ["BATCH"]))
def handle(batch, ctx):
    global batches
    batches += 1
    ids = " ".join(f"{m.id}:{m.key}:{m.payload['seq']}:{m.attempt}" for m in batch)
    note(f"start {os.getpid()} {ids}")
    if batches == hang_on:
        time.sleep(float(os.environ["HANG"]))
    for m in batch:
        note(f"msg {os.getpid()} {m.id}:{m.key}:{m.payload['seq']}:{m.attempt}")
        time.sleep(float(os.environ.get("PER_MESSAGE", "0")))
    note(f"done {os.getpid()}")

note(f"ready {os.getpid()}")
consumer.run()
'''


def spawn(server: Server, tmp_path: Path, topic: str, **env: str) -> subprocess.Popen[bytes]:
    script = tmp_path / "consumer.py"
    script.write_text(CONSUMER)
    full = {**os.environ, "DROVER_URL": server.url, "DROVER_TOKEN": server.work_token, "TOPIC": topic,
            "LEDGER": str(tmp_path / "ledger"), "LEASE": "2", "CONCURRENCY": "1", "BATCH": "10", **env}
    return subprocess.Popen([sys.executable, str(script)], env=full, cwd=tmp_path)


def ledger(tmp_path: Path) -> list[list[str]]:
    p = tmp_path / "ledger"
    return [line.split() for line in p.read_text().splitlines()] if p.exists() else []


def handled(tmp_path: Path) -> list[tuple[int, int, str, int, int]]:
    """(pid, id, key, seq, attempt) of every message handled, in order."""
    out = []
    for entry in ledger(tmp_path):
        if entry[0] == "msg":
            i, key, seq, attempt = entry[2].split(":")
            out.append((int(entry[1]), int(i), key, int(seq), int(attempt)))
    return out


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def make_topic(client: drover.Client, lanes: int) -> str:
    topic = "t-" + uuid.uuid4().hex[:12]
    client.create_topic(topic, lanes=lanes)
    client.create_subscription(topic, "s")
    return topic


def test_killed_consumer_batch_is_delivered_again(server: Server, client: drover.Client, tmp_path: Path) -> None:
    topic = make_topic(client, lanes=2)
    ids = client.publish(topic, [drover.Message({"seq": i}, key=f"k{i % 2}") for i in range(40)])
    # The first process handles its first batch, then hangs in its second
    # and is killed there, holding that batch's lease.
    first = spawn(server, tmp_path, topic, HANG_ON_BATCH="2", HANG="60")
    try:
        wait_for(lambda: sum(e[0] == "start" for e in ledger(tmp_path)) == 2, what="the second batch to start")
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        first.kill()
    starts = [e for e in ledger(tmp_path) if e[0] == "start"]
    in_flight = {int(m.split(":")[0]) for m in starts[1][2:]}
    assert len(in_flight) == 10

    second = spawn(server, tmp_path, topic, CONCURRENCY="2")
    try:
        wait_for(lambda: {i for pid, i, *_ in handled(tmp_path) if pid == second.pid} >= in_flight,
                 what="the killed batch delivered again after its lease")
        wait_for(lambda: client.subscription_lag(topic)[0].pending == 0, what="every message acknowledged")
    finally:
        stop([second])
    # Nothing lost: every message was handled, the killed batch's by the
    # second process; only messages of batches the first never acked ran twice.
    done = handled(tmp_path)
    assert {i for _, i, *_ in done} == set(ids)
    assert {i for pid, i, *_ in done if pid == first.pid} & in_flight == set()
    acked_by_first = {i for pid, i, *_ in done if pid == first.pid}
    assert {i for pid, i, *_ in done if pid == second.pid} == set(ids) - acked_by_first


def test_key_order_with_several_consumer_processes(server: Server, client: drover.Client, tmp_path: Path) -> None:
    topic = make_topic(client, lanes=4)
    procs = [spawn(server, tmp_path, topic, CONCURRENCY="2", BATCH="5", PER_MESSAGE="0.005") for _ in range(3)]
    try:
        # Every process is up (and receiving) before the messages come.
        wait_for(lambda: sum(e[0] == "ready" for e in ledger(tmp_path)) == 3, what="three consumers ready")
        seq = 0
        for _ in range(6):  # publishes while the consumers run
            client.publish(topic, [drover.Message({"seq": seq + i}, key=f"k{(seq + i) % 8}") for i in range(50)])
            seq += 50
        wait_for(lambda: len(handled(tmp_path)) >= seq, timeout=60, what="every message handled")
        wait_for(lambda: client.subscription_lag(topic)[0].pending == 0, what="every message acknowledged")
    finally:
        stop(procs)
    done = handled(tmp_path)
    assert sorted(s for _, _, _, s, _ in done) == list(range(seq)), "a message lost or handled twice"
    for key in {k for _, _, k, _, _ in done}:
        seqs = [s for _, _, k, s, _ in done if k == key]
        assert seqs == sorted(seqs), f"key {key} handled out of order: {seqs}"
    # The lanes were shared: a process holds two lanes at most, the topic has four.
    assert len({pid for pid, *_ in done}) >= 2
    assert all(p.returncode == 0 for p in procs)


def test_sigterm_lets_a_running_batch_finish(server: Server, client: drover.Client, tmp_path: Path) -> None:
    topic = make_topic(client, lanes=1)
    client.publish(topic, [drover.Message({"seq": i}) for i in range(5)])
    proc = spawn(server, tmp_path, topic, HANG_ON_BATCH="1", HANG="1")
    try:
        wait_for(lambda: any(e[0] == "start" for e in ledger(tmp_path)), what="the batch to start")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        proc.kill()
    assert [e[0] for e in ledger(tmp_path) if e[0] != "ready"] == ["start"] + ["msg"] * 5 + ["done"]
    assert client.subscription_lag(topic)[0].pending == 0
