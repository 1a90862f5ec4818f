"""What the question log costs an answer: warm `ask` latency with and without the log, in the same run, paired."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ask_engine.bench.measure import percentiles

if TYPE_CHECKING:
    from ask_engine.engine import Engine

WRITES = 200  # rows queued at once to time the writer thread
BUDGET_P50_MS = 1.0  # the bar: log writes never slow an answer by more than this at p50


def bench_question_log(
    engine: Engine, questions: Sequence[dict[str, Any]], workdir: str | Path, *, rounds: int = 2
) -> dict[str, Any]:
    """Each question asked twice in a row, once with the question log on and once off (the order alternating), after
    one warm-up pass over all of them: the p50s of both, the p50 of the paired differences, and the cost of the
    two steps the log adds to the answer's path (`observe`, `QuestionLog.record`; the write itself runs in its own
    thread, whose time per row is measured too)."""
    from ask_engine.insights.log import QuestionLog, observe, read_log

    saved = engine.question_log
    log = QuestionLog(Path(workdir) / "bench.questions.sqlite3")
    off_ms: list[float] = []
    on_ms: list[float] = []
    paired: list[float] = []
    try:
        engine.question_log = None
        for request in questions:  # warm every cache a repeated question would hit (vectors, units)
            engine.ask(request)
        _, trace = engine.ask_traced(questions[0])
        resolution, draft = trace.resolution, trace.draft
        for round_ in range(rounds):
            for n, request in enumerate(questions):
                took: dict[bool, float] = {}
                for logged in (False, True) if (n + round_) % 2 == 0 else (True, False):
                    engine.question_log = log if logged else None
                    start = time.perf_counter()
                    engine.ask(request)
                    took[logged] = (time.perf_counter() - start) * 1000
                off_ms.append(took[False])
                on_ms.append(took[True])
                paired.append(took[True] - took[False])
        engine.question_log = None
        observe_us = []
        for _ in range(WRITES):
            start = time.perf_counter()
            sample = observe(
                query=str(questions[0]["query"]),
                index=engine.index,
                resolution=resolution,
                draft=draft,
                operation=False,
                unavailable=False,
                language=None,
                country=None,
            )
            observe_us.append((time.perf_counter() - start) * 1e6)
        log.flush()
        record_us = []
        began = time.perf_counter()
        for _ in range(WRITES):
            start = time.perf_counter()
            log.record(sample)
            record_us.append((time.perf_counter() - start) * 1e6)
        log.flush()
        # the writer thread's time per row (scrub + insert, in batches): what it can take from an answer running
        # beside it on a busy core
        writer_ms = (time.perf_counter() - began) * 1000 / WRITES
        written = len(read_log(log.path))
    finally:
        engine.question_log = saved
        log.close()
    without, with_log = percentiles(off_ms), percentiles(on_ms)
    added = round(statistics.median(paired), 3) if paired else None
    return {
        "questions": len(questions),
        "rounds": rounds,
        "ask_without_log_ms": without,
        "ask_with_log_ms": with_log,
        "p50_difference_ms": round(with_log["p50"] - without["p50"], 3) if paired else None,
        "paired_difference_p50_ms": added,
        "observe_us": percentiles(observe_us),
        "record_call_us": percentiles(record_us),
        "writer_ms_per_row": round(writer_ms, 4),
        "budget_p50_ms": BUDGET_P50_MS,
        "rows_written": written,
        "dropped": log.dropped,
    }
