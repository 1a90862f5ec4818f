"""The circuit breaker: opens after N failures within the window, skips the backend for the cool-down, then lets one
probe through whose outcome closes or reopens it."""

from __future__ import annotations

from ask_engine.breaker import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _breaker(clock: Clock, failures: int = 3, window_s: float = 60.0, cooldown_s: float = 30.0) -> CircuitBreaker:
    return CircuitBreaker(failures, window_s, cooldown_s, clock=clock)


def test_n_failures_within_the_window_open_the_breaker_and_calls_are_skipped() -> None:
    clock = Clock()
    breaker = _breaker(clock)
    for _ in range(2):
        assert breaker.allow()
        breaker.failure()
    assert breaker.state == "up"
    assert breaker.allow()
    breaker.failure()
    assert breaker.state == "breaker_open"
    assert [breaker.allow() for _ in range(5)] == [False] * 5
    snapshot = breaker.snapshot()
    assert snapshot["state"] == "breaker_open"
    assert snapshot["bypassed"] == 5 and snapshot["failures"] == 3 and snapshot["opened"] == 1
    assert snapshot["retry_in_s"] == 30.0


def test_failures_spread_wider_than_the_window_do_not_open_it() -> None:
    clock = Clock()
    breaker = _breaker(clock, failures=3, window_s=10.0)
    for _ in range(6):
        breaker.failure()
        clock.now += 6.0  # at most two failures inside any 10 s window
    assert breaker.state == "up"
    assert breaker.allow()


def test_after_the_cool_down_exactly_one_probe_goes_through_and_its_success_closes_the_breaker() -> None:
    clock = Clock()
    breaker = _breaker(clock)
    for _ in range(3):
        breaker.failure()
    clock.now += 29.0
    assert not breaker.allow()
    clock.now += 1.0
    assert breaker.allow()  # the probe
    assert breaker.state == "probing"
    assert not breaker.allow()  # everyone else still skips while the probe is out
    breaker.success()
    assert breaker.state == "up"
    assert all(breaker.allow() for _ in range(5))
    assert breaker.snapshot()["recent_failures"] == 0


def test_a_failed_probe_opens_the_breaker_for_another_cool_down() -> None:
    clock = Clock()
    breaker = _breaker(clock)
    for _ in range(3):
        breaker.failure()
    clock.now += 30.0
    assert breaker.allow()
    breaker.failure()
    assert breaker.state == "breaker_open"
    clock.now += 29.0
    assert not breaker.allow()
    clock.now += 1.0
    assert breaker.allow()


def test_a_probe_that_never_reports_back_is_replaced_after_another_cool_down() -> None:
    clock = Clock()
    breaker = _breaker(clock)
    for _ in range(3):
        breaker.failure()
    clock.now += 30.0
    assert breaker.allow()  # this probe's caller dies without reporting
    clock.now += 29.0
    assert not breaker.allow()
    clock.now += 1.0
    assert breaker.allow()


def test_zero_failures_turns_the_breaker_off() -> None:
    clock = Clock()
    breaker = _breaker(clock, failures=0)
    for _ in range(50):
        breaker.failure()
    assert breaker.allow()
    assert breaker.snapshot() == {
        "state": "up",
        "breaker": "off",
        "recent_failures": 0,
        "failures": 0,
        "bypassed": 0,
        "opened": 0,
    }
