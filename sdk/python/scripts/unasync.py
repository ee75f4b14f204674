"""Writes src/drover/client.py, the synchronous Client, from
src/drover/_async_client.py, the AsyncClient, so that the two have the same
methods with the same signatures and documentation.

With --check it writes nothing and fails when client.py differs from what
it would write (CI runs it, as TypeScript's check-generated).

The transformation is textual: coroutines become functions, awaits go,
async iterators become iterators, the asyncio transport becomes the
threaded one. The few sentences that differ between the two (how each is
shared and closed) are replaced whole; a sentence the script expects and
does not find fails it, so that an edit of the source cannot silently
leave the sync docs describing asyncio.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "src" / "drover"
SOURCE = PKG / "_async_client.py"
TARGET = PKG / "client.py"

# Whole passages of the source and what the sync client says instead.
PASSAGES = [
    (
        '''"""The asyncio client: insert jobs, batches and workflows; inspect, cancel,
retry and discard them; operate queues; publish to topics and manage
subscriptions.

This file is the source of both clients: ``scripts/unasync.py`` writes
``client.py`` (the synchronous :class:`drover.Client`) from it, and CI
checks that the two agree, so that both have the same methods.
"""''',
        '''"""The client: insert jobs, batches and workflows; inspect, cancel, retry
and discard them; operate queues; publish to topics and manage
subscriptions.

Generated from _async_client.py (the AsyncClient) by scripts/unasync.py:
edit that file and run the script.
"""''',
    ),
    ("from collections.abc import AsyncIterator, Iterable, Mapping, Sequence",
     "from collections.abc import Iterable, Iterator, Mapping, Sequence"),
    ('''    """A client of one ``drover serve``, for asyncio code.''', '''    """A client of one ``drover serve``.'''),
    (
        '''    Use it from one event loop, as an async context manager or with
    :meth:`aclose`; it keeps a pool of keep-alive connections, one per
    request under way."""''',
        '''    It is safe to share between threads (one keep-alive connection per
    thread); use it as a context manager or call :meth:`close`. For asyncio
    code, :class:`drover.AsyncClient` has the same methods."""''',
    ),
]

# Words of the source and their sync forms, replaced where they stand as
# whole words, after the passages.
WORDS = [
    (r"async def ", "def "),
    (r"async for ", "for "),
    (r"async with ", "with "),
    (r"await ", ""),
    (r"\bimport asyncio\b", "import time"),
    (r"\basyncio\.sleep\b", "time.sleep"),
    (r"\bAsyncIterator\b", "Iterator"),
    (r"\bAsyncClient\b", "Client"),
    (r"\bAsyncTransport\b", "Transport"),
    (r"\b_aio_http\b", "_http"),
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
    (r"\baclose\b", "close"),
]


def generate() -> str:
    text = SOURCE.read_text()
    # Each passage stands aside as a placeholder while the words are
    # replaced, so that the sync text keeps what it says of AsyncClient.
    for i, (old, _) in enumerate(PASSAGES):
        if old not in text:
            raise SystemExit(f"unasync: {SOURCE.name} no longer has the passage:\n{old}\n(update scripts/unasync.py)")
        text = text.replace(old, f"@@passage{i}@@")
    for pattern, repl in WORDS:
        text = re.sub(pattern, repl, text)
    for i, (_, new) in enumerate(PASSAGES):
        text = text.replace(f"@@passage{i}@@", new)
    return text


def main(argv: list[str]) -> int:
    text = generate()
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text() != text:
            print("src/drover/client.py is out of date with _async_client.py: run `python scripts/unasync.py`",
                  file=sys.stderr)
            return 1
        print("src/drover/client.py matches _async_client.py")
        return 0
    TARGET.write_text(text)
    print("wrote src/drover/client.py")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
