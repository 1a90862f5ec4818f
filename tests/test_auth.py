"""Agent keys (Bearer / X-API-Key) and sliding-window rate limits: one contract kit run on the in-memory limiter
and on the Redis one (where a Redis answers), through `admit` as the server calls it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ask_engine.config import Settings
from ask_engine.server.auth import Agent, AuthError, RateLimiter, authenticate, key_id
from ask_engine.server.redis_limits import RedisRateLimiter

KEYS = {"sk-live-alpha-0123456789": "Alpha Agent", "sk-live-beta-9876543210": "Beta Agent"}


class Clock:
    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def settings() -> Settings:
    return Settings(agent_keys=KEYS)


class Admitting:
    """A limiter driven the way the server drives it (`await admit`), from a test's plain code."""

    def __init__(self, limiter: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.limiter = limiter
        self._loop = loop

    def check_window(self, key: str) -> tuple[float, float] | None:
        result: tuple[float, float] | None = self._loop.run_until_complete(self.limiter.admit(key))
        return result

    def check(self, key: str) -> float | None:
        refused = self.check_window(key)
        return None if refused is None else refused[0]


@pytest.fixture(params=["memory", "redis"])
def make_limiter(request: pytest.FixtureRequest) -> Iterator[Callable[..., Admitting]]:
    """Builds limiters of one kind; the Redis ones share one fresh key prefix, as replicas of one deployment do."""
    loop = asyncio.new_event_loop()
    made: list[Any] = []
    place: dict[str, str] = {}
    if request.param == "redis":
        place = {"url": request.getfixturevalue("redis_url"), "prefix": request.getfixturevalue("redis_prefix")}

    def make(per_minute: int, per_hour: int, *, clock: Callable[[], float]) -> Admitting:
        if request.param == "memory":
            limiter: Any = RateLimiter(per_minute, per_hour, clock=clock)
        else:
            limiter = RedisRateLimiter(place["url"], per_minute, per_hour, prefix=place["prefix"], clock=clock)
        made.append(limiter)
        return Admitting(limiter, loop)

    yield make
    for limiter in made:
        if hasattr(limiter, "aclose"):
            with contextlib.suppress(Exception):
                loop.run_until_complete(limiter.aclose())
    loop.close()


# --- authentication -------------------------------------------------------------------------------------


def test_bearer_key_identifies_the_agent(settings: Settings) -> None:
    agent = authenticate({"Authorization": "Bearer sk-live-alpha-0123456789"}, settings)
    assert agent == Agent(key_id("sk-live-alpha-0123456789"), "Alpha Agent")


def test_x_api_key_identifies_the_agent(settings: Settings) -> None:
    agent = authenticate({"X-API-Key": "sk-live-beta-9876543210"}, settings)
    assert agent.name == "Beta Agent"


@pytest.mark.parametrize(
    "headers",
    [
        {"authorization": "bearer sk-live-alpha-0123456789"},
        {"AUTHORIZATION": "BEARER   sk-live-alpha-0123456789  "},
        {"x-api-key": "sk-live-alpha-0123456789"},
        {"X-Api-Key": "sk-live-alpha-0123456789"},
        {"Authorization": "Basic dXNlcjpwdw==", "x-api-key": "sk-live-alpha-0123456789"},
    ],
)
def test_header_names_and_scheme_are_case_insensitive(settings: Settings, headers: dict[str, str]) -> None:
    assert authenticate(headers, settings).name == "Alpha Agent"


def test_key_id_is_short_stable_and_does_not_contain_the_key(settings: Settings) -> None:
    agent = authenticate({"X-API-Key": "sk-live-alpha-0123456789"}, settings)
    assert agent.key_id == key_id("sk-live-alpha-0123456789")
    assert "alpha" not in agent.key_id and "0123456789" not in agent.key_id
    assert len(agent.key_id) <= 24
    assert agent.key_id != authenticate({"X-API-Key": "sk-live-beta-9876543210"}, settings).key_id


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer sk-live-alpha-012345678"},  # one character short
        {"Authorization": "Bearer sk-live-alpha-01234567890"},
        {"X-API-Key": "Alpha Agent"},  # a name is not a key
        {"Authorization": "Bearer " + "x" * 100_000},
    ],
)
def test_wrong_key_is_refused_as_invalid(settings: Settings, headers: dict[str, str]) -> None:
    with pytest.raises(AuthError) as info:
        authenticate(headers, settings)
    assert info.value.www_authenticate == 'Bearer realm="ucp", error="invalid_token"'
    assert "sk-live" not in str(info.value)


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer "}, {"Authorization": "Basic dXNlcjpwdw=="}, {"X-API-Key": "  "}],
)
def test_missing_key_gets_the_bare_challenge(settings: Settings, headers: dict[str, str]) -> None:
    with pytest.raises(AuthError) as info:
        authenticate(headers, settings)
    assert info.value.www_authenticate == 'Bearer realm="ucp"'


def test_no_configured_keys_means_everyone_is_anonymous() -> None:
    anonymous = Agent("anonymous", "anonymous")
    assert authenticate({}, Settings()) == anonymous
    assert authenticate({"Authorization": "Bearer whatever"}, Settings()) == anonymous


# --- rate limits ----------------------------------------------------------------------------------------


def test_thirty_per_minute_then_limited_until_the_window_slides(make_limiter: Callable[..., Admitting]) -> None:
    clock = Clock()
    limiter = make_limiter(30, 300, clock=clock)
    for i in range(30):
        assert limiter.check("agent") is None, i
        clock.now += 1  # requests at t = 0 .. 29
    wait = limiter.check("agent")  # t = 30: the request at t = 0 leaves the window at t = 60
    assert wait == 30
    clock.now += 29.5
    assert limiter.check("agent") == 1  # 0.5 s left, rounded up to a whole second
    clock.now += 0.5
    assert limiter.check("agent") is None
    assert limiter.check("agent") == 1  # the request at t = 1 leaves at t = 61


def test_a_refusal_names_the_window_that_refused_it(make_limiter: Callable[..., Admitting]) -> None:
    clock = Clock()
    per_minute = make_limiter(1, 100, clock=clock)
    assert per_minute.check_window("a") is None
    assert per_minute.check_window("a") == (60.0, 60.0)
    per_hour = make_limiter(100, 2, clock=clock)
    assert per_hour.check_window("b") is None
    assert per_hour.check_window("b") is None
    assert per_hour.check_window("b") == (3600.0, 3600.0)


def test_limited_requests_do_not_count(make_limiter: Callable[..., Admitting]) -> None:
    clock = Clock()
    limiter = make_limiter(2, 100, clock=clock)
    assert limiter.check("a") is None
    assert limiter.check("a") is None
    for _ in range(50):
        assert limiter.check("a") is not None
    clock.now += 60
    assert limiter.check("a") is None


def test_hour_limit_applies_across_minutes(make_limiter: Callable[..., Admitting]) -> None:
    clock = Clock()
    limiter = make_limiter(30, 300, clock=clock)
    start = clock.now
    for _minute in range(10):
        for _ in range(30):
            assert limiter.check("agent") is None
        clock.now += 60
    # 300 requests in the first 10 minutes; minute window is clear, hour window is full
    assert limiter.check("agent") == 3000  # the first request, at `start`, leaves the hour window at start + 3600
    clock.now = start + 3600
    assert limiter.check("agent") is None


def test_keys_are_limited_independently(make_limiter: Callable[..., Admitting]) -> None:
    clock = Clock()
    limiter = make_limiter(3, 300, clock=clock)
    for _ in range(3):
        assert limiter.check("a") is None
    assert limiter.check("a") is not None
    assert limiter.check("b") is None


def test_zero_disables_a_window(make_limiter: Callable[..., Admitting]) -> None:
    limiter = make_limiter(0, 0, clock=Clock())
    assert all(limiter.check("a") is None for _ in range(1000))
    minute_only = make_limiter(2, 0, clock=Clock())
    assert [minute_only.check("m") is None for _ in range(3)] == [True, True, False]


def test_memory_is_bounded_by_evicting_idle_and_least_recent_keys() -> None:
    clock = Clock()
    limiter = RateLimiter(5, 50, clock=clock, max_keys=100)
    for _ in range(5):
        limiter.check("first")
    assert limiter.check("first") is not None
    for i in range(1000):
        for _ in range(5):
            limiter.check(f"k{i}")
    assert len(limiter) == 100
    assert limiter.check("k999") is not None  # recent keys keep their history
    assert limiter.check("first") is None  # the least recent key was dropped and starts afresh
    clock.now += 3601
    limiter.check("fresh")
    assert len(limiter) == 1  # everything else went idle


def test_limiter_counts_exactly_under_threads() -> None:
    limiter = RateLimiter(1000, 1000, clock=Clock())
    allowed: list[bool] = []
    lock = threading.Lock()

    def hammer() -> None:
        for _ in range(100):
            ok = limiter.check("shared") is None
            with lock:
                allowed.append(ok)

    threads = [threading.Thread(target=hammer) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert allowed.count(True) == 1000
    assert allowed.count(False) == 600


def test_redis_limits_count_exactly_across_replicas_and_concurrent_requests(redis_url: str, redis_prefix: str) -> None:
    async def run() -> list[bool]:
        # Three limiters sharing one prefix are three replicas; the Redis server's clock is the one they share.
        replicas = [RedisRateLimiter(redis_url, 50, 1000, prefix=redis_prefix) for _ in range(3)]
        try:
            refusals = await asyncio.gather(*(replicas[i % 3].admit("shared") for i in range(200)))
        finally:
            for replica in replicas:
                await replica.aclose()
        return [r is None for r in refusals]

    allowed = asyncio.run(run())
    assert allowed.count(True) == 50
    assert allowed.count(False) == 150


def test_redis_limiter_with_nobody_listening_fails_closed() -> None:
    from ask_engine.errors import StoreError
    from tests.server_helpers import free_port

    async def run() -> None:
        limiter = RedisRateLimiter(f"redis://127.0.0.1:{free_port()}/0", 5, 50)
        try:
            with pytest.raises(StoreError):
                await limiter.admit("a")
        finally:
            await limiter.aclose()

    asyncio.run(run())
