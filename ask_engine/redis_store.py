"""Conversation history and idempotency records in Redis, shared by every replica that names the same server and
key prefix (`store_url`, `store_prefix`); the same contract as `SqliteStore`, failing closed on any Redis error.

Keys under `<prefix>:`, all with a Redis expiry (so nothing outlives its TTL even if no one purges):
    conv:{<id>}          hash: owner (digest), created_at, expires_at
    conv:{<id>}:turns    list of turn JSON, the most recent `max_turns`
    idem:<owner>:<key>   hash: payload (hash), state (pending|done), response, status, lease_until, expires_at
Every step that reads and writes runs as one Lua script, so it is atomic across replicas. Times are the store's
clock (`time.time` unless a test passes one); the Redis expiry is only the upper bound that collects garbage.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ask_engine.conversations import (
    CONVERSATION_PREFIX,
    IdempotencyResult,
    claim_or_wait,
    owner_digest,
    rfc3339,
)
from ask_engine.errors import ConfigError, StoreError
from ask_engine.types import Turn

if TYPE_CHECKING:
    import redis

_ID_BYTES = 24  # as SqliteStore: 192 random bits
_OUR_ID = re.compile(re.escape(CONVERSATION_PREFIX) + r"[A-Za-z0-9_-]{16,64}")  # anything else cannot be ours
SOCKET_TIMEOUT_S = 2.0  # a Redis that does not answer within this fails the request (503) instead of hanging it
_SCAN_COUNT = 500

# KEYS[1] conversation hash, KEYS[2] its turns; ARGV owner digest, turn JSON, max turns, expires_at, ttl ms.
_APPEND = """
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner or owner ~= ARGV[1] then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1)
redis.call('HSET', KEYS[1], 'expires_at', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1
"""

# KEYS[1] the record; ARGV now, payload hash, lease_until, expires_at, ttl ms.
# A record past its TTL, or a reservation whose holder vanished (lease over), no longer binds the key.
_RESERVE = """
local now = tonumber(ARGV[1])
local r = redis.call('HMGET', KEYS[1], 'payload', 'state', 'response', 'status', 'lease_until', 'expires_at')
if r[1] and (tonumber(r[6]) <= now or (r[2] == 'pending' and tonumber(r[5]) <= now)) then
  redis.call('DEL', KEYS[1])
  r[1] = false
end
if not r[1] then
  redis.call('HSET', KEYS[1], 'payload', ARGV[2], 'state', 'pending', 'lease_until', ARGV[3], 'expires_at', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return {'new'}
end
return {'held', r[1], r[2], r[3] or false, r[4] or false}
"""

# KEYS[1] the record; ARGV response JSON, status, expires_at, ttl ms. A record that is gone stays gone.
_FINISH = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'state', 'done', 'response', ARGV[1], 'status', ARGV[2], 'expires_at', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
"""

_ABANDON = """
if redis.call('HGET', KEYS[1], 'state') == 'pending' then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS[1] a record or conversation hash, KEYS[2] its turns (conversations); ARGV now. 1 when it was expired.
_PURGE_ONE = """
local r = redis.call('HMGET', KEYS[1], 'expires_at', 'state', 'lease_until')
local now = tonumber(ARGV[1])
if not r[1] then return 0 end
if tonumber(r[1]) <= now or (r[2] == 'pending' and tonumber(r[3]) <= now) then
  redis.call('DEL', KEYS[1])
  if KEYS[2] then redis.call('DEL', KEYS[2]) end
  return 1
end
return 0
"""


def redis_module() -> Any:
    """redis-py, or a ConfigError saying how to install it (it is the optional extra `redis`)."""
    try:
        import redis
    except ImportError:  # pragma: no cover - the dev extra installs it
        raise ConfigError("store_url names Redis, which needs redis-py: pip install 'ask-engine[redis]'") from None
    return redis


def connection_options(*, retries: int = 0, asyncio: bool = False) -> dict[str, Any]:
    """Client options shared by the store and the rate limiter: fail fast, and resend a command only where that is
    safe (`retries`): the store never resends, as a script that appended a turn before its reply was lost would
    record it twice. `asyncio`: for a redis.asyncio client, which needs its own Retry class."""
    from redis.backoff import NoBackoff

    if asyncio:
        from redis.asyncio.retry import Retry as AsyncRetry

        retry: Any = AsyncRetry(NoBackoff(), retries)
    else:
        from redis.retry import Retry

        retry = Retry(NoBackoff(), retries)
    return {
        "socket_timeout": SOCKET_TIMEOUT_S,
        "socket_connect_timeout": SOCKET_TIMEOUT_S,
        "retry": retry,
        "decode_responses": True,
    }


class RedisStore:
    """Conversations and idempotency records in Redis: `SqliteStore`'s contract, shared by every replica.

    Thread-safe (redis-py's connection pool); every Redis error is raised as `StoreError`, so callers fail closed,
    and the next call after Redis is back simply works (the pool reconnects).
    """

    backend = "redis"

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "ask-engine",
        conversation_ttl_s: int = 86400,
        idempotency_ttl_s: int = 86400,
        clock: Callable[[], float] = time.time,
        max_turns: int = 50,
        pending_lease_s: float = 120.0,
        client: redis.Redis | None = None,
    ) -> None:
        if conversation_ttl_s <= 0 or idempotency_ttl_s <= 0 or max_turns <= 0 or pending_lease_s <= 0:
            raise ValueError("TTLs, max_turns and pending_lease_s must be positive")
        if not prefix or any(c in prefix for c in "{}*?[]"):
            raise ValueError("the key prefix must be non-empty, without braces or glob characters")
        redis_py = redis_module()
        self._prefix = prefix
        self._conversation_ttl_s = conversation_ttl_s
        self._idempotency_ttl_s = idempotency_ttl_s
        self._clock = clock
        self._max_turns = max_turns
        self._pending_lease_s = pending_lease_s
        try:
            self._client: redis.Redis | None = client or redis_py.Redis.from_url(url, **connection_options())
        except ValueError as exc:  # a malformed URL
            raise ConfigError(f"store_url {url!r} is not a Redis URL: {exc}") from None
        assert self._client is not None
        self._append = self._client.register_script(_APPEND)
        self._reserve_script = self._client.register_script(_RESERVE)
        self._finish = self._client.register_script(_FINISH)
        self._abandon = self._client.register_script(_ABANDON)
        self._purge_one = self._client.register_script(_PURGE_ONE)
        self._lock = threading.Lock()

    # --- plumbing ---------------------------------------------------------------------------------------

    @contextmanager
    def _redis(self) -> Iterator[redis.Redis]:
        """The client; every Redis error (connection refused, timeout, a bad reply) → StoreError."""
        import redis

        client = self._client
        if client is None:
            raise StoreError("the conversation store is closed")
        try:
            yield client
        except redis.RedisError as exc:
            raise StoreError(f"conversation store (Redis) failed: {exc}") from exc

    def _conv_keys(self, conversation_id: str) -> list[str]:
        # The id in braces: a Redis Cluster hash tag, so a conversation's two keys share a slot (one script).
        key = f"{self._prefix}:conv:{{{conversation_id}}}"
        return [key, f"{key}:turns"]

    def _idem_key(self, owner: str, key: str) -> str:
        return f"{self._prefix}:idem:{owner_digest(owner)}:{key}"

    def ping(self) -> bool:
        """True when Redis answers (for /healthz)."""
        try:
            with self._redis() as client:
                return bool(client.ping())
        except StoreError:
            return False

    # --- conversations ----------------------------------------------------------------------------------

    def create(self, owner: str) -> tuple[str, str]:
        """Start a conversation owned by `owner`; returns (id, expires_at)."""
        now = self._clock()
        conversation_id = CONVERSATION_PREFIX + secrets.token_urlsafe(_ID_BYTES)
        expires = now + self._conversation_ttl_s
        key = self._conv_keys(conversation_id)[0]
        with self._redis() as client:
            pipe = client.pipeline(transaction=True)
            pipe.hset(key, mapping={"owner": owner_digest(owner), "created_at": repr(now), "expires_at": repr(expires)})
            pipe.pexpire(key, self._conversation_ttl_s * 1000)
            pipe.execute()
        return conversation_id, rfc3339(expires)

    def history(self, conversation_id: str, owner: str) -> list[Turn] | None:
        """Earlier turns, oldest first; None when the id is unknown, expired or someone else's (indistinguishably)."""
        with self._redis() as client:
            if not isinstance(conversation_id, str) or not _OUR_ID.fullmatch(conversation_id):
                return None  # not an id this store hands out: a miss like any other, without a round trip
            key, turns_key = self._conv_keys(conversation_id)
            pipe = client.pipeline(transaction=True)
            pipe.hmget(key, ["owner", "expires_at"])
            pipe.lrange(turns_key, 0, -1)
            (stored_owner, expires), rows = pipe.execute()
        if stored_owner is None or not hmac.compare_digest(str(stored_owner), owner_digest(owner)):
            return None
        try:
            if float(expires) <= self._clock():
                return None
            return [Turn.from_dict(json.loads(row)) for row in rows]
        except (ValueError, TypeError) as exc:
            raise StoreError(f"conversation store holds an unreadable conversation: {exc}") from exc

    def append(self, conversation_id: str, owner: str, turn: Turn) -> str:
        """Record a turn and slide the expiry; returns the new expires_at. LookupError for an id the owner lacks."""
        if not isinstance(conversation_id, str) or not _OUR_ID.fullmatch(conversation_id):
            raise LookupError("no such conversation for this owner")
        now = self._clock()
        if not turn.created_at:
            turn = replace(turn, created_at=rfc3339(now))
        blob = json.dumps(turn.to_dict(), ensure_ascii=False)
        expires = now + self._conversation_ttl_s
        args: list[str | int] = [
            owner_digest(owner),
            blob,
            self._max_turns,
            repr(expires),
            self._conversation_ttl_s * 1000,
        ]
        with self._redis():
            appended = self._append(keys=self._conv_keys(conversation_id), args=args)
        if not appended:
            raise LookupError("no such conversation for this owner")
        return rfc3339(expires)

    # --- idempotency ------------------------------------------------------------------------------------

    def _reserve(self, record: str, payload_h: str) -> tuple[str, str | None, int | None]:
        now = self._clock()
        args: list[str | int] = [
            repr(now),
            payload_h,
            repr(now + self._pending_lease_s),
            repr(now + self._idempotency_ttl_s),
            self._idempotency_ttl_s * 1000,
        ]
        with self._redis():
            reply = self._reserve_script(keys=[record], args=args)
        if reply[0] == "new":
            return "new", None, None
        _, stored_hash, state, response, status = (*reply, None, None, None)[:5]
        if not hmac.compare_digest(str(stored_hash), payload_h):
            return "conflict", None, None
        try:
            return str(state), response, int(status) if status is not None else None
        except ValueError as exc:
            raise StoreError(f"idempotency store holds an unreadable status: {exc}") from exc

    def begin(self, key: str, owner: str, payload_hash: str, *, wait_s: float = 30.0) -> IdempotencyResult:
        """Reserve an idempotency key for this owner, or find what an earlier request with it left.

        Atomic across every replica sharing the Redis: exactly one caller gets "new"; the others with the same
        payload wait (polling, up to `wait_s`) and get its stored response ("replay"); another payload: "conflict".
        """
        record = self._idem_key(owner, key)
        return claim_or_wait(lambda: self._reserve(record, payload_hash), wait_s)

    def finish(self, key: str, owner: str, response: dict[str, Any], status: int = 200) -> None:
        """Store the response of a request that `begin` reserved; it is replayed for the idempotency TTL."""
        blob = json.dumps(response, ensure_ascii=False, separators=(",", ":"))
        expires = self._clock() + self._idempotency_ttl_s
        with self._redis():
            self._finish(
                keys=[self._idem_key(owner, key)], args=[blob, status, repr(expires), self._idempotency_ttl_s * 1000]
            )

    def abandon(self, key: str, owner: str) -> None:
        """Release a reservation whose request failed before a response, so a retry can run."""
        with self._redis():
            self._abandon(keys=[self._idem_key(owner, key)])

    # --- housekeeping -----------------------------------------------------------------------------------

    def purge_expired(self) -> int:
        """Delete expired conversations (with their turns) and idempotency records; returns how many went.

        Redis expires keys on its own; this sweep only matters for records whose TTL is judged by another clock.
        """
        now = repr(self._clock())
        removed = 0
        with self._redis() as client:
            for key in client.scan_iter(match=f"{self._prefix}:conv:*", count=_SCAN_COUNT):
                if not key.endswith(":turns"):
                    removed += int(self._purge_one(keys=[key, f"{key}:turns"], args=[now]))
            for key in client.scan_iter(match=f"{self._prefix}:idem:*", count=_SCAN_COUNT):
                removed += int(self._purge_one(keys=[key], args=[now]))
        return removed

    def close(self) -> None:
        """Close the connections; later calls raise StoreError."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> RedisStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
