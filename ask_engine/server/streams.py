"""Reading a byte stream whole, refused past a size cap without reading the rest (request bodies, profiles), and
handing a body already read on to the next ASGI app."""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable
from typing import Any


async def read_capped(
    chunks: AsyncIterable[bytes], declared_length: str | None, limit: int, too_big: Exception
) -> bytes:
    """All of `chunks`, or `too_big` raised as soon as the declared length or the bytes read pass `limit`."""
    declared = declared_length or ""
    if declared.isdigit() and int(declared) > limit:
        raise too_big
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise too_big
        parts.append(chunk)
    return b"".join(parts)


def replaying(body: bytes, receive: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    """An ASGI `receive` that first hands on `body` (already read, to check it) whole, then defers to `receive`
    (a disconnect)."""
    replayed = False

    async def replay() -> Any:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
