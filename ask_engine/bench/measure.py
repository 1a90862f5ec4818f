"""Benchmark measurements: percentiles, ratios, process memory, folder sizes and the machine the run is on."""

from __future__ import annotations

import os
import platform
import resource
import sys
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

_started = time.perf_counter()


def _log(message: str) -> None:
    print(f"[bench {time.perf_counter() - _started:7.1f}s] {message}", file=sys.stderr, flush=True)


def percentiles(values_ms: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99, mean, min and max (milliseconds, rounded) and the sample count n."""
    import numpy as np

    if not values_ms:
        return {"n": 0}
    data = np.asarray(values_ms, dtype=np.float64)
    p50, p95, p99 = np.percentile(data, [50, 95, 99])
    return {
        "n": len(values_ms),
        "p50": round(float(p50), 2),
        "p95": round(float(p95), 2),
        "p99": round(float(p99), 2),
        "mean": round(float(data.mean()), 2),
        "min": round(float(data.min()), 2),
        "max": round(float(data.max()), 2),
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports kilobytes, macOS bytes.
    return round(peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024, 1)


def _rss_mb() -> float:
    """Resident memory now (Linux); elsewhere the peak so far, the closest figure the platform gives."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError):
        pass
    return _peak_rss_mb()


def _folder_mb(folder: Path) -> float:
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6, 2)


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def _load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine_info() -> dict[str, Any]:
    """The machine and library versions the figures come from."""
    import torch

    return {
        "os": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_gb": _memory_gb(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "versions": {
            name: _version(name)
            for name in (
                "ask-engine",
                "torch",
                "faiss-cpu",
                "sentence-transformers",
                "transformers",
                "bm25s",
                "numpy",
                "llama-index-core",  # the bench extra's peer: None where it is not installed
                "llama-index-embeddings-huggingface",
            )
        },
    }
