"""Index build throughput against raw encoding, incremental reindex, and one synthetic catalogue size per process."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ask_engine.bench.latency import _embedder, _opened, bench_ask, touch_products
from ask_engine.bench.measure import _folder_mb, _log, _peak_rss_mb, _ratio, _rss_mb
from ask_engine.bench.peer import bench_peer

if TYPE_CHECKING:
    from ask_engine.config import Settings
    from ask_engine.embedders import SentenceTransformerEmbedder


def _passage_texts(shop_dir: Path) -> list[str]:
    from ask_engine.chunking import passages
    from ask_engine.sources import load_documents

    shop, documents = load_documents(shop_dir)
    return [p.text for doc in documents for p in passages(doc, shop)]


def _encode_seconds(embedder: SentenceTransformerEmbedder, texts: Sequence[str]) -> float:
    """Seconds for the bare sentence-transformers model to encode `texts` in one call (the lower bound)."""
    from ask_engine.embedders import _load_model

    model = _load_model(embedder.model_path, embedder.device)  # the very model object the embedder uses
    start = time.perf_counter()
    model.encode(
        list(texts),
        batch_size=embedder.batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return time.perf_counter() - start


def bench_indexing(
    shop_dir: Path,
    work: Path,
    *,
    embedder: SentenceTransformerEmbedder,
    settings: Settings,
    repeats: int = 2,
    fraction: float = 0.01,
) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """Build throughput against raw encoding of the same passages, and an incremental reindex of `fraction` changed
    products against a full build. Returns (indexing, incremental, path of the first full index)."""
    from ask_engine.indexer import build_index

    shop = work / "shop"
    shutil.copytree(shop_dir, shop)
    texts = _passage_texts(shop)
    build_s: list[float] = []
    encode_s: list[float] = []

    encode_s.append(_encode_seconds(embedder, texts))
    index = work / "index"
    first = build_index(shop, index, settings, embedder=embedder, full=True, progress=False)
    build_s.append(first.seconds)
    _log(f"full build: {first.passages} passages in {first.seconds:.1f} s")

    edited = work / "index-incremental"
    shutil.copytree(index, edited)
    changed = touch_products(shop, fraction)
    incremental = build_index(shop, edited, settings, embedder=embedder, progress=False)
    _log(f"incremental: {changed} products changed, {incremental.embedded_passages} passages embedded")
    full = first  # with one repeat, the reference is the first build (1% less changed text, same size)
    for _ in range(repeats - 1):
        # The changed content rebuilt from scratch: the reference for the incremental run, and a throughput repeat.
        full = build_index(shop, edited, settings, embedder=embedder, full=True, progress=False)
        build_s.append(full.seconds)
        encode_s.append(_encode_seconds(embedder, texts))

    build_rate = first.passages / min(build_s)
    encode_rate = len(texts) / min(encode_s)
    indexing = {
        "documents": first.documents,
        "passages": first.passages,
        "build_seconds": [round(s, 3) for s in build_s],
        "encode_seconds": [round(s, 3) for s in encode_s],
        "build_passages_per_s": round(build_rate, 2),
        "encode_passages_per_s": round(encode_rate, 2),
        "build_over_encode": _ratio(build_rate, encode_rate),
        "index_mb": _folder_mb(first.path),
    }
    incremental_result = {
        "fraction": fraction,
        "changed_products": changed,
        "changed_documents": incremental.changed,
        "incremental_seconds": round(incremental.seconds, 3),
        "incremental_embedded_passages": incremental.embedded_passages,
        "full_seconds": round(full.seconds, 3),
        "full_embedded_passages": full.embedded_passages,
        "incremental_over_full": _ratio(incremental.seconds, full.seconds),
    }
    return indexing, incremental_result, index


def bench_size(
    n_products: int,
    work: Path,
    *,
    questions: int = 30,
    seed: int = 0,
    settings: Settings | None = None,
    peer: bool = True,
) -> dict[str, Any]:
    """One synthetic catalogue size, in this process: generate, build, ask, reindex 1%, peak memory; then (`peer`)
    the LlamaIndex peer over the reindexed index's stored vectors, after the peak RSS was read, so that figure stays
    the engine's own.

    Meant to run alone in a fresh process (`--one-size`), so the peak RSS is this size's own.
    """
    from ask_engine.bench.synthetic_shop import synthetic_questions, write_synthetic_shop
    from ask_engine.config import Settings
    from ask_engine.indexer import build_index

    settings = settings or Settings.load()
    start = time.perf_counter()
    shop = write_synthetic_shop(work / "shop", n_products, seed=seed)
    generate_s = time.perf_counter() - start
    embedder = _embedder(settings)
    rss_model = _rss_mb()

    report = build_index(shop, work / "index", settings, embedder=embedder, progress=False)
    _log(f"{n_products} products: built {report.passages} passages in {report.seconds:.1f} s")
    start = time.perf_counter()
    with _opened(work / "index", embedder, settings) as engine:
        open_s = time.perf_counter() - start
        asks = synthetic_questions(n_products, seed=seed, count=questions)
        ask = bench_ask(engine, embedder, asks, rounds=1, warmup=5) if asks else {}
    changed = touch_products(shop, 0.01)
    incremental = build_index(shop, work / "index", settings, embedder=embedder, progress=False)
    result = {
        "products": n_products,
        "documents": report.documents,
        "passages": report.passages,
        "products_json_mb": round((shop / "products.json").stat().st_size / 1e6, 2),
        "generate_seconds": round(generate_s, 3),
        "build_seconds": round(report.seconds, 3),
        "build_passages_per_s": round(report.passages / report.seconds, 2) if report.seconds else None,
        "index_mb": _folder_mb(report.path),
        "open_seconds": round(open_s, 3),
        "ask_ms": ask.get("ask_ms", {}),
        "embed_query_ms": ask.get("embed_query_ms", {}),
        "ask_over_embed_p50": ask.get("ask_over_embed_p50"),
        "stages_p50_ms": ask.get("stages_p50_ms", {}),
        "texts_embedded_per_ask": ask.get("texts_embedded_per_ask"),
        "unit_texts": report.unit_texts,
        "incremental_changed_products": changed,
        "incremental_embedded_passages": incremental.embedded_passages,
        "incremental_embedded_units": incremental.embedded_units,
        "incremental_seconds": round(incremental.seconds, 3),
        "incremental_over_full": _ratio(incremental.seconds, report.seconds),
        "rss_after_model_mb": rss_model,
        "peak_rss_mb": _peak_rss_mb(),
        "peer": {"skipped": "--no-peer"},
    }
    if peer:
        _log(f"{n_products} products: the LlamaIndex peer over the same passages and vectors")
        with _opened(work / "index", embedder, settings) as engine:
            result["peer"] = bench_peer(engine, asks, warmup=5, reuse_vectors=True)
    return result


def _size_in_subprocess(n_products: int, work: Path, *, questions: int, peer: bool = True) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "ask_engine.bench",
        "--one-size",
        str(n_products),
        "--workdir",
        str(work),
        "--questions",
        str(questions),
        *(() if peer else ("--no-peer",)),
    ]
    # stderr (progress) goes straight through; stdout carries the JSON result.
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"the {n_products}-product benchmark process failed (exit {proc.returncode})")
    result: dict[str, Any] = json.loads(lines[-1])
    return result
