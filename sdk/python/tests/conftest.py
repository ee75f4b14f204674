"""Fixtures that run a real ``drover serve``.

The binary comes from $DROVER_BIN, or is built from the repository this SDK
lives in (sdk/python/../..). Each server gets a token file made with
``drover serve token``, a free loopback port and a fresh store: a temporary
SQLite file, and PostgreSQL too when $DROVER_TEST_DATABASE_URL is set (in a
schema of its own, dropped by nobody: name it after a throwaway database).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import drover

REPO = Path(__file__).resolve().parents[3]
#: The queue the servers' restricted tokens may use (and, through its retry
#: queue, the topic of the same name).
RESTRICTED_QUEUE = "restricted"


@pytest.fixture(scope="session")
def drover_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    env = os.environ.get("DROVER_BIN")
    if env:
        return env
    out = tmp_path_factory.mktemp("bin") / "drover"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/drover"], cwd=REPO, check=True)
    return str(out)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One ``drover serve`` process, restartable on the same store and port."""

    def __init__(self, binary: str, workdir: Path, database_url: str, schema: str | None = None) -> None:
        self.binary = binary
        self.workdir = workdir
        self.database_url = database_url
        self.schema = schema
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        tokens = workdir / "tokens"
        self.token = self._make_token(tokens, "admin", "admin")
        self.enqueue_token = self._make_token(tokens, "enqueuer", "enqueue")
        self.work_token = self._make_token(tokens, "worker", "work")
        # Tokens restricted to one queue: it and the topic whose retry
        # queue it is not.
        self.restricted_token = self._make_token(tokens, "r-enqueue", "enqueue", "--queue", RESTRICTED_QUEUE)
        self.tokens_file = tokens
        self.log = open(workdir / "serve.log", "ab")  # noqa: SIM115 (closed in close())

    def store_args(self) -> list[str]:
        args = ["--database-url", self.database_url]
        if self.schema:
            args += ["--schema", self.schema]
        return args

    def _make_token(self, tokens: Path, name: str, scope: str, *extra: str) -> str:
        p = subprocess.run([self.binary, "serve", "token", "--name", name, "--scope", scope, *extra],
                           capture_output=True, text=True, check=True)
        with tokens.open("a") as f:
            f.write(p.stdout)
        m = re.search(r"(drv_\S+)", p.stderr)
        assert m, p.stderr
        return m.group(1)

    def start(self) -> None:
        assert self.proc is None
        cmd = [self.binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--tokens", str(self.tokens_file),
               "--max-wait", "10s", *self.store_args()]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        self.wait_ready()

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        req = urllib.request.Request(self.url + "/readyz", headers={"Authorization": "Bearer " + self.token})
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"drover serve exited {self.proc.returncode}: see {self.workdir}/serve.log")
            try:
                with urllib.request.urlopen(req, timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("drover serve did not become ready")
            time.sleep(0.05)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is None:
            return
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def close(self) -> None:
        self.stop()
        self.log.close()

    def client(self, token: str | None = None) -> drover.Client:
        return drover.Client(self.url, token or self.token)

    def jobs_list_cli(self, *args: str) -> list[dict[str, Any]]:
        """Runs ``drover jobs list --json`` against the same store."""
        p = subprocess.run([self.binary, "jobs", "list", "--json", "--limit", "10000", *self.store_args(), *args],
                           capture_output=True, text=True, check=True)
        out: list[dict[str, Any]] = json.loads(p.stdout)
        return out


def _backends() -> list[str]:
    return ["sqlite", "postgres"] if os.environ.get("DROVER_TEST_DATABASE_URL") else ["sqlite"]


def make_server(binary: str, workdir: Path, backend: str) -> Server:
    if backend == "sqlite":
        return Server(binary, workdir, f"sqlite://{workdir}/drover.db")
    url = os.environ["DROVER_TEST_DATABASE_URL"]
    schema = "pysdk_" + secrets.token_hex(4)
    srv = Server(binary, workdir, url, schema)
    subprocess.run([binary, "migrate", *srv.store_args()], check=True, capture_output=True)
    return srv


@pytest.fixture(scope="session", params=_backends())
def server(
    request: pytest.FixtureRequest, drover_bin: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A server shared by the tests of a session; tests keep apart by using
    queues of their own (see ``queue``)."""
    srv = make_server(drover_bin, tmp_path_factory.mktemp(f"serve-{request.param}"), request.param)
    srv.start()
    yield srv
    srv.close()


@pytest.fixture
def fresh_server(drover_bin: str, tmp_path: Path) -> Iterator[Server]:
    """A server of the test's own, for tests that stop it."""
    srv = make_server(drover_bin, tmp_path, "sqlite")
    srv.start()
    yield srv
    srv.close()


@pytest.fixture
def queue() -> str:
    return "q-" + uuid.uuid4().hex[:12]


@pytest.fixture
def client(server: Server) -> Iterator[drover.Client]:
    with server.client() as c:
        yield c


def wait_for(cond: Callable[[], bool], timeout: float = 30, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def states(client: drover.Client, queue: str) -> dict[int, str]:
    return {j.id: j.state for j in client.iter_jobs(queue=queue)}


def run_python(code: str, env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], env={**os.environ, **env}, cwd=cwd)
