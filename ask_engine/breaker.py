"""A circuit breaker for a backend that may hang or fail: after repeated failures callers skip it for a cool-down.

Closed (normal): every call goes through; `failures` failures within `window_s` open the breaker. Open: no call
goes through until `cooldown_s` has passed. Then one call at a time is let through as a probe ("probing"): a
success closes the breaker, a failure opens it for another cool-down. A probe that never reports back (its caller
died) is replaced by a new one after another cool-down, so the breaker cannot stay stuck open.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Literal

log = logging.getLogger(__name__)

State = Literal["up", "breaker_open", "probing"]


class CircuitBreaker:
    """Thread-safe. `failures` = 0 turns it off (every call goes through, nothing is counted)."""

    def __init__(
        self,
        failures: int,
        window_s: float,
        cooldown_s: float,
        *,
        name: str = "backend",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failures = max(0, failures)
        self.window_s = max(0.0, window_s)
        self.cooldown_s = max(0.0, cooldown_s)
        self.name = name
        self._clock = clock
        self._lock = threading.Lock()
        self._recent: deque[float] = deque()  # times of the failures inside the window (closed state)
        self._opened_at: float | None = None  # None: closed
        self._probe_at: float | None = None  # when the probe in flight was let through
        self._opened = 0  # how many times the breaker opened
        self._failed = 0  # failures counted since start
        self._bypassed = 0  # calls skipped while open

    def allow(self) -> bool:
        """True: make the call, then report it with `success()` or `failure()`. False: skip the backend."""
        if not self.failures:
            return True
        with self._lock:
            if self._opened_at is None:
                return True
            now = self._clock()
            if now - self._opened_at >= self.cooldown_s and (
                self._probe_at is None or now - self._probe_at >= self.cooldown_s
            ):
                self._probe_at = now
                return True
            self._bypassed += 1
            return False

    def success(self) -> None:
        """The backend answered (whatever it said): a probe's success closes the breaker."""
        if not self.failures:
            return
        with self._lock:
            if self._opened_at is not None and self._probe_at is not None:
                log.warning("%s answered again: circuit breaker closed", self.name)
                self._opened_at = None
                self._probe_at = None
                self._recent.clear()

    def failure(self) -> None:
        """The backend failed or timed out."""
        if not self.failures:
            return
        with self._lock:
            now = self._clock()
            self._failed += 1
            if self._opened_at is not None:
                if self._probe_at is not None:  # the probe failed: another cool-down
                    self._opened_at = now
                    self._probe_at = None
                return
            self._recent.append(now)
            while self._recent and now - self._recent[0] > self.window_s:
                self._recent.popleft()
            if len(self._recent) >= self.failures:
                self._opened_at = now
                self._probe_at = None
                self._opened += 1
                self._recent.clear()
                log.warning(
                    "%s failed %d times within %.0f s: circuit breaker open, skipping it for %.0f s",
                    self.name,
                    self.failures,
                    self.window_s,
                    self.cooldown_s,
                )

    @property
    def state(self) -> State:
        with self._lock:
            return self._state()

    def _state(self) -> State:
        if self._opened_at is None:
            return "up"
        return "probing" if self._probe_at is not None else "breaker_open"

    def snapshot(self) -> dict[str, Any]:
        """What an operator needs to see: state, recent failures, when the next probe may go, totals."""
        with self._lock:
            now = self._clock()
            out: dict[str, Any] = {"state": self._state(), "breaker": "on" if self.failures else "off"}
            if self._opened_at is None:
                out["recent_failures"] = sum(1 for t in self._recent if now - t <= self.window_s)
            else:
                out["retry_in_s"] = round(max(0.0, self._opened_at + self.cooldown_s - now), 1)
            out.update(failures=self._failed, bypassed=self._bypassed, opened=self._opened)
            return out
