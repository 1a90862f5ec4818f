"""`python -m ask_engine.bench.embedding`: query-embedding latency of each embedder backend, and its vectors beside
PyTorch's, in one process on the same questions.

Backends: `torch` (sentence-transformers on PyTorch), `onnx` (fp32, ONNX Runtime through sentence-transformers'
`backend="onnx"`) and `onnx-int8` (its dynamic int8 export). A backend that cannot run here (no ONNX backend
installed) is reported as unavailable with the reason, not skipped silently.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ask_engine.bench.latency import SAMPLE_QUESTIONS
from ask_engine.bench.measure import _load_average, _version, percentiles

BACKENDS = ("torch", "onnx", "onnx-int8")


def _make(backend: str, threads: int | None, cache_dir: str | None) -> Any:
    from ask_engine.embedders import OnnxEmbedder, SentenceTransformerEmbedder

    if backend == "torch":
        return SentenceTransformerEmbedder(threads=threads, query_cache_size=0)
    return OnnxEmbedder(threads=threads, cache_dir=cache_dir, int8=backend == "onnx-int8", query_cache_size=0)


def _effective_threads(embedder: Any) -> int:
    if embedder.threads:
        return int(embedder.threads)
    if embedder.backend == "torch":
        import torch

        return int(torch.get_num_threads())
    from ask_engine.embedders import default_threads

    return default_threads()


def bench_backends(
    backends: Sequence[str] = BACKENDS,
    *,
    rounds: int = 5,
    threads: int | None = None,
    cache_dir: str | None = None,
) -> dict[str, Any]:
    """p50/p95 of `embed_query` over the bench's questions (`rounds` passes, cache off) and cosine to PyTorch."""
    import numpy as np

    from ask_engine.errors import BackendError

    questions = sorted({q["query"] for q in SAMPLE_QUESTIONS})
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "load_average_before": _load_average(),
        "cpus": os.cpu_count(),
        "questions": len(questions),
        "rounds": rounds,
        "versions": {p: _version(p) for p in ("sentence-transformers", "transformers", "torch", "onnxruntime")},
        "backends": {},
    }
    reference: Any = None
    for backend in backends:
        try:
            embedder = _make(backend, threads, cache_dir)
            loading = time.perf_counter()
            embedder.load()
            load_s = time.perf_counter() - loading
        except BackendError as exc:
            results["backends"][backend] = {"unavailable": str(exc)}
            continue
        for text in questions[:10]:  # warm-up: first calls allocate
            embedder.embed_query(text)
        times = []
        for _ in range(rounds):
            for text in questions:
                start = time.perf_counter()
                embedder.embed_query(text)
                times.append((time.perf_counter() - start) * 1000)
        vectors = np.stack([embedder.embed_query(text) for text in questions])
        entry: dict[str, Any] = {
            "name": embedder.name,
            "threads": _effective_threads(embedder),
            "load_s": round(load_s, 2),
            "embed_query_ms": percentiles(times),
        }
        if backend == "torch":
            reference = vectors
        elif reference is not None:
            cosines = (vectors * reference).sum(axis=1)
            entry["cosine_to_torch"] = {"min": float(cosines.min()), "mean": float(cosines.mean())}
            entry["top1_self_agreement"] = float(
                np.mean(np.argmax(vectors @ reference.T, axis=1) == np.arange(len(questions)))
            )
        results["backends"][backend] = entry
    results["load_average_after"] = _load_average()
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ask_engine.bench.embedding", description=__doc__)
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated, from: " + ", ".join(BACKENDS))
    parser.add_argument("--rounds", type=int, default=5, help="timed passes over the questions")
    parser.add_argument("--threads", type=int, help="intra-op threads (default: each backend's own default)")
    parser.add_argument("--cache-dir", help="ONNX export cache (default: the onnx_cache_dir default)")
    parser.add_argument("--out", help="write the figures as JSON to this file")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = sorted(set(backends) - set(BACKENDS))
    if unknown:
        parser.error(f"unknown backend(s): {', '.join(unknown)}")
    results = bench_backends(backends, rounds=args.rounds, threads=args.threads, cache_dir=args.cache_dir)
    text = json.dumps(results, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
