"""Agent authentication (API keys) and per-agent rate limits."""

from __future__ import annotations

import hashlib
import hmac
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from ask_engine.config import Settings
from ask_engine.errors import AuthError

ANONYMOUS = "anonymous"
_MAX_KEY_CHARS = 4096


@dataclass(frozen=True)
class Agent:
    """An authenticated caller. `key_id` is a short digest of its key: safe to log and to scope data by."""

    key_id: str
    name: str


def key_id(key: str) -> str:
    """A short, stable, non-reversible id for an agent key."""
    return "key_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _presented_key(headers: Mapping[str, str]) -> str | None:
    authorization = api_key = None
    for name, value in headers.items():  # header names are case-insensitive, whatever the mapping does
        lower = name.lower()
        if lower == "authorization" and authorization is None:
            authorization = value
        elif lower == "x-api-key" and api_key is None:
            api_key = value
    if authorization is not None:
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    if api_key is not None and api_key.strip():
        return api_key.strip()
    return None


def authenticate(headers: Mapping[str, str], settings: Settings) -> Agent:
    """The agent presenting `Authorization: Bearer <key>` or `X-API-Key: <key>`; raises AuthError.

    With no keys configured, authentication is off and every caller is the anonymous agent.
    """
    if not settings.agent_keys:
        return Agent(ANONYMOUS, ANONYMOUS)
    presented = _presented_key(headers)
    if presented is None:
        raise AuthError("An agent key is required: send Authorization: Bearer <key> or X-API-Key: <key>.")
    # Compare digests so neither the length nor the content of a configured key leaks through timing, and
    # check every key without stopping early.
    digest = hashlib.sha256(presented[:_MAX_KEY_CHARS].encode("utf-8")).digest()
    match: tuple[str, str] | None = None
    for key, name in settings.agent_keys.items():
        if hmac.compare_digest(digest, hashlib.sha256(key.encode("utf-8")).digest()) and match is None:
            match = (key, name)
    if match is None or len(presented) > _MAX_KEY_CHARS:
        raise AuthError("The agent key is not valid.", invalid=True)
    return Agent(key_id(match[0]), match[1])


class Limiter(Protocol):
    """What the server asks of a rate limiter: `RateLimiter` (one process) or `RedisRateLimiter` (every replica)."""

    async def admit(self, key_id: str) -> tuple[float, float] | None:
        """None when the request is allowed (and counted); else (seconds to wait, the refusing window's span)."""
        ...


class RateLimiter:
    """Sliding-window limits per key: at most `per_minute` requests in any 60 s and `per_hour` in any 3600 s.

    A limit of 0 or less turns that window off. Only allowed requests count. Memory stays bounded: keys with
    nothing left in their windows are dropped, and beyond `max_keys` the least recently seen key goes.
    """

    def __init__(
        self, per_minute: int, per_hour: int, *, clock: Callable[[], float] = time.monotonic, max_keys: int = 10_000
    ) -> None:
        self._windows = tuple((span, limit) for span, limit in ((60.0, per_minute), (3600.0, per_hour)) if limit > 0)
        self._clock = clock
        self._max_keys = max_keys
        self._lock = threading.Lock()
        # key → one deque of allowed-request times per window
        self._log: OrderedDict[str, tuple[deque[float], ...]] = OrderedDict()

    def check(self, key_id: str) -> float | None:
        """None when the request is allowed (and counted); else the seconds to wait (whole, at least 1)."""
        refused = self.check_window(key_id)
        return None if refused is None else refused[0]

    def check_window(self, key_id: str) -> tuple[float, float] | None:
        """Like `check`, but a refusal also says which window refused it: (seconds to wait, window span in s)."""
        if not self._windows:
            return None
        now = self._clock()
        with self._lock:
            logs = self._log.get(key_id)
            if logs is None:
                logs = tuple(deque() for _ in self._windows)
                self._log[key_id] = logs
            self._log.move_to_end(key_id)
            wait = 0.0
            window = 0.0
            for (span, limit), log in zip(self._windows, logs, strict=True):
                while log and log[0] <= now - span:
                    log.popleft()
                if len(log) >= limit:
                    # free again once the oldest request that still counts leaves the window
                    free_in = log[-limit] + span - now
                    if free_in > wait:
                        wait, window = free_in, span
            if wait > 0:
                return float(max(1, math.ceil(wait))), window
            for log in logs:
                log.append(now)
            self._evict(now)
            return None

    async def admit(self, key_id: str) -> tuple[float, float] | None:
        """`check_window`, as the server calls every `Limiter` (it never blocks: an in-memory step)."""
        return self.check_window(key_id)

    def __len__(self) -> int:
        """How many keys are tracked."""
        with self._lock:
            return len(self._log)

    def _evict(self, now: float) -> None:
        longest = max(span for span, _ in self._windows)
        # The least recently seen keys are at the front; drop those whose windows have emptied.
        while self._log:
            logs = next(iter(self._log.values()))
            idle = all(not log or log[-1] <= now - longest for log in logs)
            if idle or len(self._log) > self._max_keys:
                self._log.popitem(last=False)
            else:
                break
