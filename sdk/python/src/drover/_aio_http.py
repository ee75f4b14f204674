"""The asyncio HTTP transport: JSON over HTTP/1.1 on asyncio streams, with a
pool of keep-alive connections.

The SDK has no runtime dependencies, and the standard library has no
asyncio HTTP client, so this is the small part of HTTP/1.1 the server
speaks: one request at a time per connection, answers sized by
Content-Length or chunked. Each request takes an idle connection (the most
recently used, whose socket is likeliest still open) or opens one, so that
concurrent requests (a long-polling claim beside a heartbeat) each have
their own, and gives it back when the answer said keep-alive.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from ._http import decode_answer, encode_body, parse_url, request_headers, request_target
from .errors import DroverConnectionError

# The longest line of an answer's head read at once (asyncio's default is
# 64 KiB; a chunk-size line or a header is far shorter).
_LINE_LIMIT = 1 << 20
# Idle connections kept for reuse; more are closed once their request ends.
_MAX_IDLE = 32


class _StaleConnectionError(Exception):
    """A reused connection broke before any byte of the answer arrived: most
    likely the server closed it while it was idle."""


class _Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def close(self) -> None:
        self.writer.close()


class AsyncTransport:
    """Sends JSON requests to one Drover server with a bearer token, from
    the event loop it is first used on."""

    def __init__(self, url: str, token: str, timeout: float = 30.0) -> None:
        self._https, self._host, port, self._base = parse_url(url, token)
        self._port = port or (443 if self._https else 80)
        self._hostport = self._host if port is None else f"{self._host}:{port}"
        self._token = token
        self.timeout = timeout
        self._idle: list[_Conn] = []
        self._busy: set[_Conn] = set()
        self._closed = False
        self._ssl: ssl.SSLContext | None = ssl.create_default_context() if self._https else None

    async def _open(self) -> _Conn:
        reader, writer = await asyncio.open_connection(self._host, self._port, ssl=self._ssl, limit=_LINE_LIMIT)
        return _Conn(reader, writer)

    async def close(self) -> None:
        """Closes every connection; requests under way fail with a
        DroverConnectionError. (To stop one request, cancel its task.)"""
        self._closed = True
        for conn in list(self._busy):
            conn.writer.transport.abort()
        for conn in self._idle:
            conn.close()
        self._idle.clear()

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: dict[str, str] | None = None,
        timeout: float | None = None,
        idempotent: bool = True,
    ) -> Any:
        """Sends one request and returns the decoded JSON answer, as
        Transport.request does: a DroverError subclass for an error answer,
        DroverConnectionError when no answer arrived, and an idempotent
        request sent once more on a fresh connection when a reused one had
        been closed by the server."""
        data = encode_body(body)
        head = [f"{method} {request_target(self._base, path, query)} HTTP/1.1", f"Host: {self._hostport}"]
        head += [f"{k}: {v}" for k, v in request_headers(self._token).items()]
        if data is not None:
            head.append("Content-Type: application/json")
        if data is not None or method in ("POST", "PUT", "PATCH"):
            head.append(f"Content-Length: {len(data or b'')}")
        message = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (data or b"")
        t = self.timeout if timeout is None else timeout
        for tries in (1, 2):
            if self._closed:
                raise DroverConnectionError("client is closed", path=path)
            reused = bool(self._idle)
            try:
                conn = self._idle.pop() if reused else await asyncio.wait_for(self._open(), t)
            except (OSError, asyncio.TimeoutError) as e:
                raise DroverConnectionError(_describe(e), path=path) from e
            self._busy.add(conn)
            keep = False
            try:
                status, raw, keep = await asyncio.wait_for(self._exchange(conn, message, method, reused), t)
            except _StaleConnectionError as e:
                if tries == 1 and idempotent:
                    continue
                raise DroverConnectionError("connection closed by the server", path=path) from e
            except (OSError, EOFError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
                raise DroverConnectionError(_describe(e), path=path) from e
            finally:
                self._busy.discard(conn)
                if keep and not self._closed and len(self._idle) < _MAX_IDLE:
                    self._idle.append(conn)
                else:
                    conn.close()
            return decode_answer(status, raw, path)
        raise AssertionError("unreachable")

    async def _exchange(self, conn: _Conn, message: bytes, method: str, reused: bool) -> tuple[int, bytes, bool]:
        """Writes the request and reads its answer: (status, body, whether
        the connection may be reused)."""
        r = conn.reader
        try:
            conn.writer.write(message)
            await conn.writer.drain()
            line = await r.readline()
        except (ConnectionResetError, BrokenPipeError) as e:
            if reused:
                raise _StaleConnectionError from e
            raise
        if not line:
            if reused:
                raise _StaleConnectionError
            raise EOFError("connection closed before an answer")
        version, _, rest = line.decode("latin-1").partition(" ")
        status = int(rest.split(" ", 1)[0])
        headers: dict[str, str] = {}
        while True:
            h = await r.readline()
            if h in (b"\r\n", b"\n"):
                break
            if not h:
                raise EOFError("connection closed in the answer's head")
            k, _, v = h.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return status, b"", keep
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks = []
            while True:
                size = int((await r.readline()).split(b";", 1)[0].strip(), 16)
                if size == 0:
                    break
                chunks.append(await r.readexactly(size))
                await r.readexactly(2)
            while (await r.readline()) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return status, b"".join(chunks), keep
        if "content-length" in headers:
            return status, await r.readexactly(int(headers["content-length"])), keep
        return status, await r.read(), False


def _describe(e: BaseException) -> str:
    if isinstance(e, asyncio.TimeoutError):
        return "timed out"
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
