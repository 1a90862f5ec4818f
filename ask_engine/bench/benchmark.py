"""`make bench`: ask latency against raw query embedding, indexing against raw encoding, incremental reindex,
the LlamaIndex peer (retrieval only, same passages and model), synthetic catalogue sizes (each in a fresh process)
and served requests/second, written to JSON and printed.

    python -m ask_engine.bench --out bench/results.json [--sizes 1000,10000] [--quick] [--no-peer]

Every figure is paired with a reference measured in the same run on the same machine (the embedding model alone),
because on a shared machine the ratios say more than the absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ask_engine.bench.indexing import _size_in_subprocess, bench_indexing, bench_size
from ask_engine.bench.latency import (
    SAMPLE_QUESTIONS,
    _bench_ask_cached,
    _embed_threads_probe,
    _embedder,
    _opened,
    _torch_embedder,
    bench_ask,
    product_questions,
)
from ask_engine.bench.measure import _load_average, _log, machine_info
from ask_engine.bench.peer import bench_peer
from ask_engine.bench.question_log import bench_question_log
from ask_engine.bench.served import CONCURRENCY, REPLICAS, bench_replicas, bench_server, redis_unreachable

if TYPE_CHECKING:
    from ask_engine.config import Settings

SAMPLE_SHOP = Path(__file__).resolve().parents[2] / "eval" / "shops" / "fjord-fell"
DEFAULT_SIZES = (1000, 10000)
WORKERS = (1, 2)  # served figures: one process, then `serve --workers 2`
LOCAL_REDIS = "redis://127.0.0.1:6379/0"  # the replica figures' store unless settings name one (store_url)
NOTE = (
    "Measured on a shared machine (other jobs were running: see load_average); absolute figures move with the load, "
    "the ratios against the embedding model measured in the same run are the figures to compare."
)


def run_benchmark(
    sizes: Sequence[int] | None = None,
    *,
    quick: bool = False,
    shop: str | Path = SAMPLE_SHOP,
    workdir: str | Path | None = None,
    server: bool | None = None,
    requests: int = 200,
    settings: Settings | None = None,
    replicas: Sequence[int] = REPLICAS,
    peer: bool = True,
    workers: Sequence[int] = WORKERS,
) -> dict[str, Any]:
    """Every benchmark; returns the results `--out` writes. `quick`: fewer questions, sizes [200], no server.

    `peer`: the LlamaIndex retrieval-only figures (recorded as skipped, with the reason, when it is not installed).
    `workers`: besides the one-process server, `serve --workers N` for each N > 1 (needs Redis, as replicas do).
    """
    from ask_engine.config import Settings

    settings = settings or Settings.load()
    sizes = list(sizes) if sizes is not None else ([200] if quick else list(DEFAULT_SIZES))
    server = (not quick) if server is None else server
    questions = list(SAMPLE_QUESTIONS[:12] if quick else SAMPLE_QUESTIONS)
    shop = Path(shop)
    load_start = _load_average()
    started = time.perf_counter()
    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "quick": quick,
        "note": NOTE,
        "machine": machine_info(),
        "shop": str(shop),
    }
    results["versions"] = results["machine"].pop("versions")
    with _workdir(workdir) as work:
        embedder = _embedder(settings)
        results["model"] = embedder.name
        results["settings"] = {
            "embedding_batch_size": embedder.batch_size,
            "generator": settings.generator,
            "retrieval_k": settings.retrieval_k,
            "hnsw_threshold": settings.hnsw_threshold,
        }

        _log("indexing the sample shop")
        indexing, incremental, index = bench_indexing(
            shop, work / "sample", embedder=embedder, settings=settings, repeats=1 if quick else 2
        )
        results["indexing"] = indexing
        results["incremental"] = incremental

        _log(f"asking {len(questions)} questions in-process")
        with _opened(index, embedder, settings) as engine:
            # the engine's embedder (default onnx) and, apart from it, raw PyTorch's: issue 11's reference
            reference = None if settings.embedder == "sentence-transformers" else _torch_embedder(settings)
            results["ask"] = bench_ask(
                engine, embedder, questions, rounds=1 if quick else 2, warmup=4 if quick else 10, reference=reference
            )
            _log("asking them with and without the question log")
            results["question_log"] = bench_question_log(engine, questions, work, rounds=1 if quick else 2)
            results["peer"] = {"skipped": "--no-peer"}
            if peer:
                _log("the LlamaIndex peer: the same passages and model, retrieval only")
                results["peer"] = bench_peer(engine, questions, rounds=1 if quick else 2, warmup=4 if quick else 10)
        results["ask"]["embed_query_p50_by_threads"] = _embed_threads_probe(reference or embedder, questions[:16])
        if not quick:
            with _opened(index, _embedder(settings, cached=True), settings) as engine:
                results["ask"]["ask_cached_ms"] = _bench_ask_cached(engine, questions)

        results["synthetic"] = []
        for n in sizes:
            _log(f"synthetic catalogue of {n} products (fresh process)")
            results["synthetic"].append(
                _size_in_subprocess(n, work / f"size-{n}", questions=10 if quick else 30, peer=peer)
            )

        results["server"] = None
        if server:
            _log("serving the sample index")
            needed = 8 + requests * len(CONCURRENCY)
            results["server"] = bench_server(index, product_questions(shop, needed), requests=requests)
        results["server_workers"] = None
        several = [n for n in workers if n > 1]
        if server and several:
            store_url = settings.store_url or LOCAL_REDIS
            skipped = redis_unreachable(store_url)
            results["server_workers"] = {"skipped": skipped} if skipped else {"runs": []}
            for n in several if skipped is None else []:
                _log(f"serving the sample index from {n} worker processes")
                needed = 8 + requests * len(CONCURRENCY)
                run = bench_server(
                    index, product_questions(shop, needed), requests=requests, workers=n, store_url=store_url
                )
                results["server_workers"]["runs"].append(run)
        results["replicas"] = None
        if server and replicas:
            store_url = settings.store_url or LOCAL_REDIS
            skipped = redis_unreachable(store_url)
            if skipped is None:
                _log(f"serving the sample index from {', '.join(map(str, replicas))} replica(s)")
                per_run = max(24, requests // 2)
                needed = sum(4 * n + per_run for n in replicas)
                questions_for = product_questions(shop, needed)
                results["replicas"] = bench_replicas(index, questions_for, store_url, counts=replicas, requests=per_run)
            else:
                results["replicas"] = {"skipped": skipped}
    results["load_average"] = {"start": load_start, "end": _load_average()}
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    return results


@contextmanager
def _workdir(workdir: str | Path | None) -> Iterator[Path]:
    """`workdir` (kept), or a temporary folder removed afterwards."""
    if workdir is not None:
        path = Path(workdir)
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="ask-engine-bench-") as tmp:
        yield Path(tmp)


def _ms(stats: dict[str, Any], key: str) -> str:
    value = stats.get(key)
    return f"{value:,.1f}" if isinstance(value, int | float) else "–"


def _x(value: Any) -> str:
    return f"{value:.2f}×" if isinstance(value, int | float) else "–"


def _load(load: dict[str, Any] | None) -> str:
    """'start 1.2 / 1.0 / 0.9, end ...' (1, 5 and 15 minutes), or '–' where the platform has none."""

    def one(value: Any) -> str:
        return " / ".join(f"{x:g}" for x in value) if value else "–"

    return f"start {one((load or {}).get('start'))}, end {one((load or {}).get('end'))}"


def print_tables(results: dict[str, Any], console: Any = None) -> None:
    """The results as rich tables."""
    from rich.console import Console
    from rich.table import Table

    # Piped output (make bench | tee) would otherwise be cut to 80 columns.
    console = console or Console(width=None if sys.stdout.isatty() else 120)
    machine = results["machine"]
    console.print(
        f"[bold]ask-engine benchmark[/] {results['date']} · {machine['cpu_count']} × {machine['cpu_model']} · "
        f"{machine['memory_gb']} GB · torch threads {machine['torch_threads']} · "
        f"load average (1/5/15 min) {_load(results.get('load_average'))}"
    )
    ask = results["ask"]
    table = Table(title=f"In-process ask, sample shop ({ask['questions']} questions × {ask['rounds']})")
    for column in ("", "p50 ms", "p95 ms", "p99 ms"):
        table.add_column(column, justify="right" if column else "left")
    table.add_row("ask (query cache off)", *(_ms(ask["ask_ms"], k) for k in ("p50", "p95", "p99")))
    table.add_row(
        f"raw query embedding ({ask.get('embedder', 'engine')})",
        *(_ms(ask["embed_query_ms"], k) for k in ("p50", "p95", "p99")),
    )
    if "torch_embed_query_ms" in ask and ask["torch_embed_query_ms"] is not ask["embed_query_ms"]:
        table.add_row(
            "raw query embedding (PyTorch)", *(_ms(ask["torch_embed_query_ms"], k) for k in ("p50", "p95", "p99"))
        )
    if "ask_cached_ms" in ask:
        table.add_row("ask (repeat questions)", *(_ms(ask["ask_cached_ms"], k) for k in ("p50", "p95", "p99")))
    table.add_row("ask p50 / embedding p50", _x(ask["ask_over_embed_p50"]), "", "")
    if "ask_over_torch_embed_p50" in ask:
        table.add_row("ask p50 / PyTorch embedding p50", _x(ask["ask_over_torch_embed_p50"]), "", "")
        table.add_row("ask p95 / PyTorch embedding p50", _x(ask["ask_p95_over_torch_embed_p50"]), "", "")
    for threads, p50 in ask.get("embed_query_p50_by_threads", {}).items():
        table.add_row(f"raw query embedding, torch {threads.replace('_', ' ')}", _ms({"p50": p50}, "p50"), "", "")
    for stage, ms in ask["stages_p50_ms"].items():
        table.add_row(f"  stage {stage}", f"{ms:,.1f}", "", "")
    if ask.get("texts_embedded_per_ask") is not None:
        table.add_row("texts embedded per ask (besides the query)", f"{ask['texts_embedded_per_ask']:,.2f}", "", "")
    console.print(table)
    print_peer(results.get("peer"), console)

    qlog = results.get("question_log")
    if qlog:
        table = Table(
            title=f"Question log: the same questions with and without it ({qlog['questions']} × {qlog['rounds']})"
        )
        for column in ("", "p50 ms", "p95 ms"):
            table.add_column(column, justify="right" if column else "left")
        table.add_row("ask, log off", *(_ms(qlog["ask_without_log_ms"], k) for k in ("p50", "p95")))
        table.add_row("ask, log on", *(_ms(qlog["ask_with_log_ms"], k) for k in ("p50", "p95")))
        table.add_row("paired difference (on - off), p50", f"{qlog['paired_difference_p50_ms']:+.3f}", "")
        table.add_row(
            "observe + record on the answer's path (µs), p50",
            f"{qlog['observe_us']['p50'] + qlog['record_call_us']['p50']:,.1f}",
            "",
        )
        table.add_row("writer thread, ms per row (scrub + insert)", f"{qlog['writer_ms_per_row']:,.3f}", "")
        table.add_row(f"budget: at most {qlog['budget_p50_ms']:g} ms at p50", "", "")
        console.print(table)

    idx, inc = results["indexing"], results["incremental"]
    table = Table(title=f"Indexing, sample shop ({idx['documents']} documents, {idx['passages']} passages)")
    table.add_column("")
    table.add_column("value", justify="right")
    table.add_row("build throughput (passages/s)", f"{idx['build_passages_per_s']:,.1f}")
    table.add_row("raw encode throughput (passages/s)", f"{idx['encode_passages_per_s']:,.1f}")
    table.add_row("build / encode", _x(idx["build_over_encode"]))
    table.add_row(
        f"incremental, {inc['changed_products']} product(s) changed (s)",
        f"{inc['incremental_seconds']:.2f} ({inc['incremental_embedded_passages']} passages embedded)",
    )
    table.add_row("full build of the same (s)", f"{inc['full_seconds']:.2f} ({inc['full_embedded_passages']} embedded)")
    table.add_row("incremental / full", _x(inc["incremental_over_full"]))
    console.print(table)

    if results["synthetic"]:
        table = Table(
            title="Synthetic catalogues (each in a fresh process; ms, s, MB; peer: LlamaIndex top-5 retrieve)"
        )
        columns = ["products", "passages", "build s", "pass./s", "ask p50", "ask p95", "ask/emb"]
        columns += ["peer p50", "ask/peer", "1% reindex", "peak RSS"]
        for column in columns:
            table.add_column(column, justify="right")
        for row in results["synthetic"]:
            table.add_row(
                f"{row['products']:,}",
                f"{row['passages']:,}",
                f"{row['build_seconds']:,.1f}",
                f"{row['build_passages_per_s']:,.1f}",
                _ms(row["ask_ms"], "p50"),
                _ms(row["ask_ms"], "p95"),
                _x(row["ask_over_embed_p50"]),
                _ms(row.get("peer", {}).get("retrieve_ms", {}), "p50"),
                _x(row.get("peer", {}).get("ask_over_retrieve_p50")),
                f"{row['incremental_seconds']:,.1f}",
                f"{row['peak_rss_mb']:,.0f}",
            )
        console.print(table)

    several = results.get("server_workers") or {}
    if "skipped" in several:
        console.print(f"Served by several worker processes: skipped ({several['skipped']})")
    for served in [results.get("server"), *several.get("runs", [])]:
        if not served:
            continue
        workers = served.get("workers", 1)
        title = f"Served REST asks, {workers} worker process{'es' if workers > 1 else ''}"
        table = Table(title=f"{title} ({served['requests_per_level']} distinct questions per level)")
        for column in ("concurrency", "req/s", "p50 ms", "p95 ms", "non-200"):
            table.add_column(column, justify="right")
        for level in served["levels"]:
            table.add_row(
                str(level["concurrency"]),
                f"{level['requests_per_s']:,.2f}",
                _ms(level["latency_ms"], "p50"),
                _ms(level["latency_ms"], "p95"),
                str(level["requests"] - level["ok"]),
            )
        console.print(table)
    print_replicas(results.get("replicas"), console)
    console.print(f"[dim]{results['note']}[/]")


def print_peer(peer: dict[str, Any] | None, console: Any) -> None:
    """The LlamaIndex peer as a table (or why it was skipped)."""
    from rich.table import Table

    if not peer:
        return
    if "skipped" in peer:
        console.print(f"LlamaIndex peer: skipped ({peer['skipped']})", markup=False)  # the reason names '.[bench]'
        return
    table = Table(
        title=f"LlamaIndex peer: VectorStoreIndex over the same {peer['passages']} passages, same model, top-"
        f"{peer['top_k']} retrieval only ({peer['questions']} questions × {peer['rounds']}, interleaved with ask)"
    )
    for column in ("", "p50 ms", "p95 ms", "p99 ms"):
        table.add_column(column, justify="right" if column else "left")
    table.add_row("LlamaIndex retrieve", *(_ms(peer["retrieve_ms"], k) for k in ("p50", "p95", "p99")))
    table.add_row("ask (query cache off)", *(_ms(peer["ask_ms"], k) for k in ("p50", "p95", "p99")))
    table.add_row("[bold]ask p50 / LlamaIndex retrieve p50[/]", _x(peer["ask_over_retrieve_p50"]), "", "")
    embedded = "embedding every passage" if peer["build_embedded"] else "from the index's stored vectors"
    table.add_row(f"LlamaIndex build, {embedded} (s)", f"{peer['build_seconds']:,.2f}", "", "")
    table.add_row(
        f"top-{peer['top_k']} same as the engine's dense search", f"{peer['top_k_same_as_dense']:.0%}", "", ""
    )
    console.print(table)


def print_replicas(replicas: dict[str, Any] | None, console: Any) -> None:
    """The replica figures as a table (or why they were skipped)."""
    from rich.table import Table

    if not replicas:
        return
    if "skipped" in replicas:
        console.print(f"Replicas sharing Redis: skipped ({replicas['skipped']})")
        return
    table = Table(
        title=f"Replicas sharing one Redis ({replicas['requests_per_run']} requests, {replicas['cpu_count']} cores)"
    )
    for column in ("replicas", "concurrency", "req/s", "p50 ms", "p95 ms", "non-200"):
        table.add_column(column, justify="right")
    for run in replicas["runs"]:
        table.add_row(
            str(run["replicas"]),
            str(run["concurrency"]),
            f"{run['requests_per_s']:,.2f}",
            _ms(run["latency_ms"], "p50"),
            _ms(run["latency_ms"], "p95"),
            str(run["requests"] - run["ok"]),
        )
    console.print(table)


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated counts, got {text!r}") from None
    if not sizes or any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError("counts must be positive")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ask_engine.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write the results as JSON here (e.g. bench/results.json)")
    parser.add_argument("--sizes", type=_sizes, help=f"synthetic catalogue sizes (default {DEFAULT_SIZES})")
    parser.add_argument("--quick", action="store_true", help="a reduced run for smoke tests: sizes 200, no server")
    parser.add_argument("--shop", type=Path, default=SAMPLE_SHOP, help="shop folder for the in-process figures")
    parser.add_argument("--requests", type=int, default=200, help="served requests per concurrency level")
    parser.add_argument("--no-server", action="store_true", help="skip the served requests/second figures")
    parser.add_argument("--no-peer", action="store_true", help="skip the LlamaIndex peer (the `bench` extra)")
    parser.add_argument(
        "--replicas",
        type=_sizes,
        default=REPLICAS,
        help="replica counts sharing one Redis (store_url, else the local Redis) for the served figures (default 1,3)",
    )
    parser.add_argument(
        "--workers",
        type=_sizes,
        default=WORKERS,
        help="worker-process counts for the served figures; counts above 1 run `serve --workers N` sharing one Redis "
        "(default 1,2; skipped, saying why, when no Redis answers)",
    )
    parser.add_argument("--workdir", type=Path, help="keep indexes and shops here (default: a temporary folder)")
    parser.add_argument(
        "--threads",
        type=int,
        help="CPU threads of torch and of the onnx embedder (embedding_threads), for this process and every one it "
        "starts (default: torch's own choice, and the onnx embedder's default of half the cores)",
    )
    parser.add_argument("--one-size", type=int, help=argparse.SUPPRESS)  # internal: one size, JSON on stdout
    parser.add_argument("--questions", type=int, default=30, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.threads:
        # Before torch is imported, and inherited by the size and server processes.
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(args.threads)
        # the engine's own embedder reads its threads from the settings, not from OMP_NUM_THREADS
        os.environ["ASK_ENGINE_EMBEDDING_THREADS"] = str(args.threads)

    if args.one_size is not None:
        if args.workdir is None:
            parser.error("--one-size needs --workdir")
        print(json.dumps(bench_size(args.one_size, args.workdir, questions=args.questions, peer=not args.no_peer)))
        return 0

    results = run_benchmark(
        args.sizes,
        quick=args.quick,
        shop=args.shop,
        workdir=args.workdir,
        server=False if args.no_server else None,
        requests=args.requests,
        replicas=args.replicas,
        peer=not args.no_peer,
        workers=args.workers,
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print_tables(results)
    if args.out:
        print(f"results written to {args.out}")
    return 0
