"""The HTTP transport: JSON over http.client, one keep-alive connection per
thread.

A worker talks to the server from a few long-lived threads (the claimer, the
heartbeat, the finisher), each with requests in sequence, so a connection per
thread gives keep-alive without a pool and without locks around a socket.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
import urllib.parse
import weakref
from typing import Any

from ._version import __version__
from .errors import DroverConnectionError, DroverError, error_for_status

# Errors after which the connection is unusable: the server restarted, closed
# the socket, or the network failed.
_CONNECTION_ERRORS = (OSError, http.client.HTTPException)
# Errors that, on a connection already used for an earlier request, most
# likely mean the server closed it while idle, before reading this request.
_STALE_ERRORS = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


class Transport:
    """Sends JSON requests to one Drover server with a bearer token."""

    def __init__(self, url: str, token: str, timeout: float = 30.0) -> None:
        self._https, self._host, self._port, self._base = parse_url(url, token)
        self._token = token
        self.timeout = timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        # Weak, so that the connection of a thread that ended is closed
        # when its thread-local slot goes, rather than kept here forever.
        self._all: weakref.WeakSet[http.client.HTTPConnection] = weakref.WeakSet()
        self._closed = False

    def _conn(self, timeout: float) -> tuple[http.client.HTTPConnection, bool]:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            return conn, True
        if self._https:
            conn = http.client.HTTPSConnection(
                self._host, self._port, timeout=timeout, context=ssl.create_default_context()
            )
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        self._local.conn = conn
        with self._lock:
            if self._closed:
                raise DroverConnectionError("client is closed")
            self._all.add(conn)
        return conn, False

    def _drop(self) -> None:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            with self._lock:
                self._all.discard(conn)

    def interrupt(self) -> None:
        """Breaks every open connection, so that a thread blocked in a long
        poll returns at once (with a DroverConnectionError)."""
        with self._lock:
            conns = list(self._all)
        for conn in conns:
            sock = conn.sock
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self.interrupt()
        with self._lock:
            conns = list(self._all)
            self._all.clear()
        for conn in conns:
            conn.close()

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: dict[str, str] | None = None,
        timeout: float | None = None,
        idempotent: bool = True,
    ) -> Any:
        """Sends one request and returns the decoded JSON answer.

        Raises a DroverError subclass for an error answer and
        DroverConnectionError when no answer arrived. A request on a reused
        connection that the server had closed is sent once more on a fresh
        one when it is idempotent (reads, and claims, heartbeats and results,
        which the server fences)."""
        target = request_target(self._base, path, query)
        headers = request_headers(self._token)
        data = encode_body(body)
        if data is not None:
            headers["Content-Type"] = "application/json"
        t = self.timeout if timeout is None else timeout
        for tries in (1, 2):
            if self._closed:
                raise DroverConnectionError("client is closed", path=path)
            conn, reused = self._conn(t)
            try:
                conn.request(method, target, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                status = resp.status
            except _CONNECTION_ERRORS as e:
                self._drop()
                if tries == 1 and reused and idempotent and isinstance(e, _STALE_ERRORS):
                    continue
                raise DroverConnectionError(f"{type(e).__name__}: {e}", path=path) from e
            if resp.will_close:
                self._drop()
            return decode_answer(status, raw, path)
        raise AssertionError("unreachable")


def parse_url(url: str, token: str) -> tuple[bool, str, int | None, str]:
    """Checks a server URL and token; returns (https, host, port, base
    path)."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ValueError(f"url {url!r}: want http://host:port or https://host:port")
    if not token:
        raise ValueError("token: required (make one with: drover serve token)")
    return parsed.scheme == "https", parsed.hostname, parsed.port, parsed.path.rstrip("/")


def request_target(base: str, path: str, query: dict[str, str] | None) -> str:
    target = base + path
    if query:
        target += "?" + urllib.parse.urlencode(query)
    return target


def request_headers(token: str) -> dict[str, str]:
    return {
        "Authorization": "Bearer " + token,
        "Accept": "application/json",
        "User-Agent": f"drover-python/{__version__}",
    }


def encode_body(body: Any) -> bytes | None:
    """The JSON text of a request body, None for a request without one."""
    if body is None:
        return None
    return json.dumps(body, separators=(",", ":")).encode()


def decode_answer(status: int, raw: bytes, path: str) -> Any:
    try:
        payload = json.loads(raw) if raw else None
    except ValueError:
        payload = None
    if 200 <= status < 300:
        if payload is None and raw:
            raise DroverError(f"answer is not JSON: {raw[:200]!r}", status=status, path=path)
        return payload
    msg = ""
    if isinstance(payload, dict) and isinstance(payload.get("error"), str):
        msg = payload["error"]
    if not msg:
        msg = raw[:500].decode(errors="replace").strip() or http.client.responses.get(status, "error")
    raise error_for_status(status, msg, path)
