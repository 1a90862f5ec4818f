"""Per-agent rate limits counted in Redis, exact across every replica: `RateLimiter`'s sliding windows, one Lua
script per request (redis.asyncio, on the server's event loop)."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ask_engine.errors import StoreError

if TYPE_CHECKING:
    import redis.asyncio

# One sorted set per window (member: a request's id, score: its time), trimmed to the window, in one atomic step.
# KEYS: the windows' sets; ARGV[1] now ('' → the Redis server's clock, shared by every replica), ARGV[2] the
# request's id, then span and limit of each window. Returns nil when allowed (and counted), else {wait, span}.
# A request already counted (the client resent the script after losing its reply) is allowed without counting it
# again, so resending is safe and the count stays exact.
_ADMIT = """
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return false end
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) + tonumber(t[2]) / 1000000
else
  now = tonumber(ARGV[1])
end
local wait, window = 0, 0
for i, key in ipairs(KEYS) do
  local span, limit = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - span)
  local n = redis.call('ZCARD', key)
  if n >= limit then
    -- free again once the oldest request that still counts leaves the window
    local oldest = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
    local free_in = tonumber(oldest[2]) + span - now
    if free_in > wait then wait, window = free_in, span end
  end
end
if wait > 0 then return {tostring(wait), tostring(window)} end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[2])
  redis.call('PEXPIRE', key, math.ceil(tonumber(ARGV[1 + 2 * i]) * 1000))
end
return false
"""


class RedisRateLimiter:
    """At most `per_minute` requests in any 60 s and `per_hour` in any 3600 s per key, summed over every replica
    that shares the Redis and `prefix`. A limit of 0 or less turns that window off; only allowed requests count.

    Redis unreachable: `admit` raises StoreError, and the server fails closed (503 with Retry-After).
    """

    def __init__(
        self,
        url: str,
        per_minute: int,
        per_hour: int,
        *,
        prefix: str = "ask-engine:rate",
        clock: Callable[[], float] | None = None,
        client: redis.asyncio.Redis | None = None,
    ) -> None:
        from ask_engine.redis_store import connection_options, redis_module

        redis_module()  # a clear ConfigError when redis-py is missing
        import redis.asyncio as aioredis

        self._windows = tuple((span, limit) for span, limit in ((60, per_minute), (3600, per_hour)) if limit > 0)
        self._prefix = prefix
        self._clock = clock  # None: the Redis server's clock
        # One resend (the script is idempotent per request id): a connection Redis dropped while idle (a restart)
        # costs no refusal once Redis is back.
        self._client = client or aioredis.Redis.from_url(url, **connection_options(retries=1, asyncio=True))
        self._admit = self._client.register_script(_ADMIT)

    async def admit(self, key_id: str) -> tuple[float, float] | None:
        """None when the request is allowed (and counted); else (seconds to wait, whole and at least 1, span)."""
        import redis

        if not self._windows:
            return None
        keys = [f"{self._prefix}:{{{key_id}}}:{span}" for span, _ in self._windows]
        args: list[Any] = ["" if self._clock is None else repr(self._clock()), uuid.uuid4().hex]
        for span, limit in self._windows:
            args += [span, limit]
        try:
            reply = await self._admit(keys=keys, args=args)
        except redis.RedisError as exc:
            raise StoreError(f"rate limits (Redis) failed: {exc}") from exc
        if not reply:
            return None
        wait, window = float(reply[0]), float(reply[1])
        return float(max(1, math.ceil(wait))), window

    async def aclose(self) -> None:
        await self._client.aclose()
