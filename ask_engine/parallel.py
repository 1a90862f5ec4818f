"""A large index build's per-document work spread over processes, with the same result as one process.

Reading a product into a document (HTML to text, values, ids) and making its answer texts (every sentence through
the answerer's guards) take about 10 ms a product on one core: most of a 100,000-product build that is not
embedding. Both are pure functions of one item, so `mapped` runs them in forked worker processes, each given a
contiguous span of the items, and joins the results in order.

Forking copies the parent as it is, so the items and the function reach the workers without being pickled; only the
results come back pickled. It is used only where it is safe and pays:
- at least `MIN_ITEMS` items and more than one process asked for;
- the platform can fork, and the calling process runs no other thread (a fork copies only the calling thread, so a
  lock held by another one would stay held in the child: a server reindexing in place stays on one process), except
  tqdm's monitor, which only sleeps and adjusts progress bars;
- anything going wrong in a worker (an input error, a worker killed for memory) re-runs the whole map in this
  process, so an error is raised exactly as one process would raise it, first bad item first.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

__all__ = ["MIN_ITEMS", "default_processes", "mapped"]

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 2000  # below this a pool's start-up (tens of ms a worker) outweighs what it saves
MAX_PROCESSES = 16

# The job the forked workers read: set just before the pool starts, cleared when it is done.
_JOB: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def default_processes() -> int:
    """The cores this process may run on, at most `MAX_PROCESSES`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_PROCESSES))


def _span(bounds: tuple[int, int]) -> list[Any]:
    if _JOB is None:  # pragma: no cover - only a worker forked by `mapped` is given spans
        raise RuntimeError("no parallel job in this process")
    fn, items = _JOB
    return [fn(item) for item in items[bounds[0] : bounds[1]]]


# tqdm's monitor thread: a daemon every progress bar starts (disabled ones too, embedding's among them) that only
# sleeps and adjusts bars; the workers never touch a bar, so it does not make forking unsafe.
_HARMLESS_THREADS = frozenset({"tqdm_monitor"})


def _can_fork() -> bool:
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    me = threading.current_thread()
    return all(t is me or (t.daemon and t.name in _HARMLESS_THREADS) for t in threading.enumerate())


def mapped(fn: Callable[[T], R], items: Sequence[T], processes: int) -> list[R]:
    """`[fn(item) for item in items]`, over up to `processes` forked processes when that is safe and pays."""
    global _JOB
    n = len(items)
    if processes <= 1 or n < MIN_ITEMS or _JOB is not None or not _can_fork():
        return [fn(item) for item in items]
    size = -(-n // (processes * 4))  # four spans a process: a slow span does not hold up the rest for long
    spans = [(start, min(n, start + size)) for start in range(0, n, size)]
    _JOB = (fn, items)
    try:
        with ProcessPoolExecutor(min(processes, len(spans)), mp_context=multiprocessing.get_context("fork")) as pool:
            out: list[R] = []
            for part in pool.map(_span, spans):
                out.extend(part)
            return out
    except Exception:  # the serial run below raises the real error, or succeeds
        pass
    finally:
        _JOB = None
    return [fn(item) for item in items]
