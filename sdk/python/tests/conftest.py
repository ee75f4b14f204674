"""Fixtures that run a real ``drover serve``.

The binary comes from $DROVER_BIN, or is built from the repository this SDK
lives in (sdk/python/../..). Each server gets a token file made with
``drover serve token``, a free loopback port and a fresh store: a temporary
SQLite file, and PostgreSQL too when $DROVER_TEST_DATABASE_URL is set (in a
schema of its own, dropped by nobody: name it after a throwaway database).
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections import Counter
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


class DelayProxy:
    """An HTTP proxy in front of a server that holds the requests whose path
    matches ``slow`` for ``delay`` seconds before forwarding them: a server
    that answers those slowly, as a loaded one does. It counts the answered
    requests by path. Use it as a context manager."""

    def __init__(self, upstream: str, delay: float, slow: str) -> None:
        u = urllib.parse.urlsplit(upstream)
        self._upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self._delay = delay
        self._slow = re.compile(slow)
        self._lock = threading.Lock()
        self._answered: Counter[str] = Counter()
        proxy = self

        class Forward(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's transports expect

            def do_GET(self) -> None:
                proxy._forward(self)

            do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Forward)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="delay-proxy", daemon=True)
        self._thread.start()

    def _forward(self, req: http.server.BaseHTTPRequestHandler) -> None:
        body = req.rfile.read(int(req.headers.get("Content-Length") or 0))
        if self._slow.search(req.path):
            time.sleep(self._delay)  # the slow server this proxy plays
        headers = {k: v for k in ("Authorization", "Content-Type", "Accept") if (v := req.headers.get(k))}
        conn = http.client.HTTPConnection(*self._upstream, timeout=120)
        try:
            conn.request(req.command, req.path, body=body or None, headers=headers)
            answer = conn.getresponse()
            status, ctype, data = answer.status, answer.getheader("Content-Type"), answer.read()
        except OSError as e:
            status, ctype, data = 502, "text/plain", str(e).encode()
        finally:
            conn.close()
        with self._lock:
            self._answered[req.path] += 1
        req.send_response(status)
        req.send_header("Content-Type", ctype or "application/json")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    def count(self, suffix: str) -> int:
        """Answered requests whose path ends with suffix."""
        with self._lock:
            return sum(n for path, n in self._answered.items() if path.endswith(suffix))

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> DelayProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
