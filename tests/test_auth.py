"""Agent keys (Bearer / X-API-Key) and sliding-window rate limits."""

from __future__ import annotations

import threading

import pytest

from ask_engine.config import Settings
from ask_engine.server.auth import Agent, AuthError, RateLimiter, authenticate, key_id

KEYS = {"sk-live-alpha-0123456789": "Alpha Agent", "sk-live-beta-9876543210": "Beta Agent"}


class Clock:
    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def settings() -> Settings:
    return Settings(agent_keys=KEYS)


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


def test_thirty_per_minute_then_limited_until_the_window_slides() -> None:
    clock = Clock()
    limiter = RateLimiter(30, 300, clock=clock)
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


def test_a_refusal_names_the_window_that_refused_it() -> None:
    clock = Clock()
    per_minute = RateLimiter(1, 100, clock=clock)
    assert per_minute.check_window("a") is None
    assert per_minute.check_window("a") == (60.0, 60.0)
    per_hour = RateLimiter(100, 2, clock=clock)
    assert per_hour.check_window("a") is None
    assert per_hour.check_window("a") is None
    assert per_hour.check_window("a") == (3600.0, 3600.0)


def test_limited_requests_do_not_count() -> None:
    clock = Clock()
    limiter = RateLimiter(2, 100, clock=clock)
    assert limiter.check("a") is None
    assert limiter.check("a") is None
    for _ in range(50):
        assert limiter.check("a") is not None
    clock.now += 60
    assert limiter.check("a") is None


def test_hour_limit_applies_across_minutes() -> None:
    clock = Clock()
    limiter = RateLimiter(30, 300, clock=clock)
    start = clock.now
    for _minute in range(10):
        for _ in range(30):
            assert limiter.check("agent") is None
        clock.now += 60
    # 300 requests in the first 10 minutes; minute window is clear, hour window is full
    assert limiter.check("agent") == 3000  # the first request, at `start`, leaves the hour window at start + 3600
    clock.now = start + 3600
    assert limiter.check("agent") is None


def test_keys_are_limited_independently() -> None:
    clock = Clock()
    limiter = RateLimiter(3, 300, clock=clock)
    for _ in range(3):
        assert limiter.check("a") is None
    assert limiter.check("a") is not None
    assert limiter.check("b") is None


def test_zero_disables_a_window() -> None:
    limiter = RateLimiter(0, 0, clock=Clock())
    assert all(limiter.check("a") is None for _ in range(1000))


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
