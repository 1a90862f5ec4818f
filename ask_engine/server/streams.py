"""Reading a byte stream whole, refused past a size cap without reading the rest (request bodies, profiles)."""

from __future__ import annotations

from collections.abc import AsyncIterable


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
