"""A worker dies, the server restarts: no job is lost or run twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

import drover
from conftest import Server, states, wait_for

MODULE = '''
import os, time
import drover

worker = drover.Worker()

def note(line):
    fd = os.open(os.environ["LEDGER"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, (line + "\\n").encode())
    os.close(fd)

@worker.task("hang")
def hang(args, ctx):
    note(f"start {ctx.id} {ctx.attempt}")
    time.sleep(float(os.environ["HANG"]))
    note(f"done {ctx.id} {ctx.attempt}")
    return {"by": "subprocess"}
'''


def spawn_worker(server: Server, tmp_path: Path, queue: str, hang: float, concurrency: int) -> subprocess.Popen[bytes]:
    (tmp_path / "jobsmod.py").write_text(MODULE)
    script = Path(sys.executable).parent / "drover-worker"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "drover.cli"]
    cmd += ["--url", server.url, "--token", server.work_token, "--queue", queue, "--concurrency", str(concurrency),
            "--lease", "2", "--poll-wait", "1", "--shutdown-timeout", "10", "jobsmod:worker"]
    env = {**os.environ, "LEDGER": str(tmp_path / "ledger"), "HANG": str(hang)}
    return subprocess.Popen(cmd, cwd=tmp_path, env=env)


def ledger(tmp_path: Path) -> list[tuple[str, int, int]]:
    p = tmp_path / "ledger"
    if not p.exists():
        return []
    out = []
    for line in p.read_text().splitlines():
        what, job_id, attempt = line.split()
        out.append((what, int(job_id), int(attempt)))
    return out


def test_killed_worker_jobs_come_back_and_complete(server: Server, client: drover.Client, queue: str,
                                                  tmp_path: Path) -> None:
    ids = client.insert_many([drover.JobSpec("hang", {"i": i}, queue=queue) for i in range(10)])
    proc = spawn_worker(server, tmp_path, queue, hang=60, concurrency=5)
    try:
        wait_for(lambda: len(ledger(tmp_path)) == 5, what="five jobs started in the subprocess")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        proc.kill()
    killed = {job_id for _, job_id, _ in ledger(tmp_path)}
    assert all(client.get_job(i).state == "running" for i in killed)

    runs: Counter[int] = Counter()
    lock = threading.Lock()
    worker = drover.Worker(server.url, server.work_token, queues=[queue], concurrency=5, poll_wait=1)

    @worker.task("hang")
    def hang(_args: dict[str, int], ctx: drover.JobContext) -> dict[str, str]:
        with lock:
            runs[ctx.id] += 1
        return {"by": "second"}

    worker.start()
    try:
        wait_for(lambda: set(states(client, queue).values()) == {"completed"}, timeout=40,
                 what="every job completed after the leases expired")
    finally:
        worker.stop()
    assert runs == Counter({i: 1 for i in ids})
    for i in ids:
        job = client.get_job(i)
        assert client.job_result(i).result == {"by": "second"}
        if i in killed:
            assert job.attempt == 2
            assert "lease" in job.errors[0].error
        else:
            assert job.attempt == 1


def test_sigterm_lets_running_jobs_finish(server: Server, client: drover.Client, queue: str, tmp_path: Path) -> None:
    client.insert_many([drover.JobSpec("hang", {}, queue=queue) for _ in range(4)])
    proc = spawn_worker(server, tmp_path, queue, hang=1.0, concurrency=2)
    try:
        wait_for(lambda: len(ledger(tmp_path)) == 2, what="two jobs started")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        proc.kill()
    assert [w for w, _, _ in ledger(tmp_path)] == ["start", "start", "done", "done"]
    assert sorted(states(client, queue).values()) == ["available", "available", "completed", "completed"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["graceful", "crash"])
def test_server_restart_loses_nothing(fresh_server: Server, queue: str, sig: signal.Signals) -> None:
    server = fresh_server
    client = server.client()
    ids = client.insert_many([drover.JobSpec("step", {"i": i}, queue=queue) for i in range(300)])
    runs: Counter[int] = Counter()
    lock = threading.Lock()
    worker = drover.Worker(server.url, server.work_token, queues=[queue], concurrency=10, poll_wait=1,
                           lease=5, max_backoff=0.5)

    @worker.task("step")
    def step(args: dict[str, int], ctx: drover.JobContext) -> int:
        with lock:
            runs[ctx.id] += 1
        time.sleep(0.03)
        return args["i"]

    worker.start()
    try:
        wait_for(lambda: sum(runs.values()) >= 60, what="a fifth of the jobs to run")
        server.stop(sig)
        time.sleep(1.0)  # the worker keeps running handlers and holds their results
        server.start()
        wait_for(lambda: set(states(client, queue).values()) == {"completed"}, timeout=40,
                 what="every job completed after the restart")
    finally:
        worker.stop()
        client.close()
    assert runs == Counter({i: 1 for i in ids})
    assert [r["state"] for r in server.jobs_list_cli("--queue", queue)] == ["completed"] * 300
    with server.client() as c:
        assert [c.job_result(i).result for i in ids[::50]] == list(range(0, 300, 50))
