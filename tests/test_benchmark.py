"""bench/ (benchmark, synthetic shop): the generator writes valid, deterministic shop folders, and the benchmark
functions return every figure `make bench` reports (no timing assertions: speed is what the benchmark measures)."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ask_engine.bench import (
    CATEGORIES,
    SAMPLE_QUESTIONS,
    bench_server,
    percentiles,
    print_tables,
    product_questions,
    run_benchmark,
    synthetic_product,
    synthetic_questions,
    touch_products,
    write_synthetic_shop,
)
from ask_engine.bench.peer import peer_unavailable
from ask_engine.chunking import passages
from ask_engine.sources import alias_key, alias_keys, load_documents


@pytest.fixture
def one_torch_thread(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keep the end-to-end runs quick on a busy machine, where torch's intra-op threads stall each other; the
    figures' shape, not their size, is under test. Child processes get the same through the environment."""
    import torch

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _products(folder: Path) -> list[dict[str, Any]]:
    products: list[dict[str, Any]] = json.loads((folder / "products.json").read_text("utf-8"))["products"]
    return products


# --------------------------------------------------------------------------------------------------- the generator


def test_synthetic_shop_is_a_valid_shop_with_products_policies_faq_and_disclosures(tmp_path: Path) -> None:
    folder = write_synthetic_shop(tmp_path / "shop", 60, seed=3)

    shop, documents = load_documents(folder)

    kinds = Counter(d.kind for d in documents)
    assert kinds["product"] == 60
    assert kinds["policy"] == 2
    assert kinds["faq"] >= 5
    assert {d.link_type for d in documents if d.kind == "policy"} == {"refund_policy", "shipping_policy"}
    products = [d for d in documents if d.kind == "product"]
    assert len({d.handle for d in products}) == 60
    skus = [v.sku for d in products for v in d.variants]
    assert None not in skus and len(skus) == len(set(skus))
    assert len({d.product_type for d in products}) >= len(CATEGORIES) // 2
    assert any(d.disclosures for d in products) and not all(d.disclosures for d in products)
    assert all({"material", "weight", "country_of_origin"} <= {f.key for f in d.facts} for d in products)
    assert any(len(d.variants) > 1 for d in products) and all(d.body for d in products)
    assert all(passages(d, shop) for d in documents)


def test_synthetic_shop_is_deterministic_per_seed_and_product_i_does_not_depend_on_the_size(tmp_path: Path) -> None:
    first = write_synthetic_shop(tmp_path / "a", 30, seed=1)
    again = write_synthetic_shop(tmp_path / "b", 30, seed=1)
    other = write_synthetic_shop(tmp_path / "c", 30, seed=2)
    bigger = write_synthetic_shop(tmp_path / "d", 45, seed=1)

    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files and all((first / f).read_bytes() == (again / f).read_bytes() for f in files)
    assert (first / "products.json").read_bytes() != (other / "products.json").read_bytes()
    assert _products(bigger)[:30] == _products(first)
    assert synthetic_product(7, seed=1) == _products(first)[7]


def test_synthetic_shop_with_no_products_still_loads_and_negative_sizes_are_refused(tmp_path: Path) -> None:
    folder = write_synthetic_shop(tmp_path / "empty", 0)

    _, documents = load_documents(folder)

    assert _products(folder) == []
    assert documents and all(d.kind != "product" for d in documents)
    with pytest.raises(ValueError, match="n_products"):
        write_synthetic_shop(tmp_path / "bad", -1)


def test_synthetic_questions_ask_about_products_the_shop_holds(tmp_path: Path) -> None:
    folder = write_synthetic_shop(tmp_path / "shop", 40, seed=5)
    _, documents = load_documents(folder)
    keys = {key for d in documents for key in alias_keys(d)}
    titles = {d.title for d in documents if d.kind == "product"}

    questions = synthetic_questions(40, seed=5, count=30)

    assert len(questions) == 30 and all(q["query"].strip() for q in questions)
    ids = [i for q in questions for i in q.get("ids", [])]
    assert ids and all(alias_key(i) in keys for i in ids)
    assert sum(any(t in q["query"] for t in titles) for q in questions) >= 5
    assert any("context" in q for q in questions)
    assert len({q["query"] for q in questions if "ids" not in q}) == sum("ids" not in q for q in questions)


# --------------------------------------------------------------------------------------------------- helpers


def test_touch_products_changes_the_description_of_one_percent_of_products_and_nothing_else(tmp_path: Path) -> None:
    folder = write_synthetic_shop(tmp_path / "shop", 300, seed=4)
    before = _products(folder)

    changed = touch_products(folder, 0.01)

    after = _products(folder)
    differing = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == 3 and len(differing) == 3
    assert all({k for k in before[i] if before[i][k] != after[i][k]} == {"body_html"} for i in differing)
    assert touch_products(folder, 0.0001) == 1


def test_touch_products_names_the_missing_products_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"products\.json"):
        touch_products(tmp_path, 0.01)


def test_percentiles_of_known_values() -> None:
    stats = percentiles([float(v) for v in range(1, 101)])

    assert stats["n"] == 100
    assert (stats["p50"], stats["p95"], stats["p99"]) == (50.5, 95.05, 99.01)
    assert (stats["min"], stats["max"], stats["mean"]) == (1.0, 100.0, 50.5)
    assert percentiles([]) == {"n": 0}


def test_product_questions_stay_distinct_while_titles_and_templates_last(tmp_path: Path) -> None:
    folder = write_synthetic_shop(tmp_path / "shop", 10, seed=6)

    questions = product_questions(folder, 80)
    more = product_questions(folder, 81)

    assert len({q["query"] for q in questions}) == 80
    assert more[80] == more[0]


def test_sample_questions_are_valid_ask_requests() -> None:
    from ask_engine.models import AskRequest

    assert len(SAMPLE_QUESTIONS) >= 60
    parsed = [AskRequest.parse(q) for q in SAMPLE_QUESTIONS]
    assert sum(bool(p.ids) for p in parsed) >= 8 and sum(p.context is not None for p in parsed) >= 2


# --------------------------------------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_quick_benchmark_returns_every_figure_and_prints_them(tmp_path: Path, one_torch_thread: None) -> None:
    shop = write_synthetic_shop(tmp_path / "shop", 8, seed=2)

    results = run_benchmark(sizes=[12], quick=True, shop=shop, workdir=tmp_path / "work")

    assert {"date", "machine", "versions", "model", "note", "ask", "indexing", "incremental", "synthetic"} <= set(
        results
    )
    assert results["server"] is None and results["replicas"] is None
    assert results["machine"]["cpu_count"] and results["versions"]["torch"]
    ask = results["ask"]
    assert ask["ask_ms"]["n"] == ask["embed_query_ms"]["n"] == 12
    assert ask["ask_over_embed_p50"] > 0 and {"retrieve", "resolve"} <= set(ask["stages_p50_ms"])
    # issue 11's reference: the raw PyTorch query embedding, timed on the same questions
    assert ask["torch_embed_query_ms"]["n"] == 12 and ask["ask_over_torch_embed_p50"] > 0
    qlog = results["question_log"]
    assert qlog["ask_with_log_ms"]["n"] == qlog["ask_without_log_ms"]["n"] == 12
    assert qlog["rows_written"] == 12 + 200 and qlog["dropped"] == 0 and qlog["writer_ms_per_row"] > 0
    assert qlog["paired_difference_p50_ms"] is not None and qlog["record_call_us"]["p50"] > 0
    indexing = results["indexing"]
    assert indexing["passages"] == sum(len(passages(d, s)) for s, ds in [load_documents(shop)] for d in ds)
    assert indexing["build_passages_per_s"] > 0 and indexing["encode_passages_per_s"] > 0
    incremental = results["incremental"]
    assert incremental["changed_products"] == 1 and incremental["changed_documents"] == 1
    assert 0 < incremental["incremental_embedded_passages"] < incremental["full_embedded_passages"]
    (size,) = results["synthetic"]
    assert size["products"] == 12 and size["passages"] >= 12
    assert size["ask_ms"]["n"] == 10 and size["peak_rss_mb"] >= size["rss_after_model_mb"] > 0
    assert 0 < size["incremental_embedded_passages"] < size["passages"]
    missing = peer_unavailable()  # the LlamaIndex peer is the optional `bench` extra: figures or the reason
    for peer in (results["peer"], size["peer"]):
        if missing:
            assert peer == {"skipped": missing}
        else:
            assert peer["retrieve_ms"]["n"] == peer["ask_ms"]["n"] == peer["questions"] * peer["rounds"] > 0
            assert peer["ask_over_retrieve_p50"] > 0 and peer["vectors_max_abs_diff"] < 1e-4
    assert results["peer"].get("build_embedded", True) and not size["peer"].get("build_embedded", False)
    assert results["load_average"]["start"] and results["load_average"]["end"]
    json.dumps(results)

    out = io.StringIO()
    from rich.console import Console

    print_tables(results, Console(file=out, width=140))
    printed = out.getvalue()
    assert "ask p50 / embedding p50" in printed and "Synthetic catalogues" in printed and "build / encode" in printed
    assert "Question log: the same questions with and without it" in printed
    assert "LlamaIndex peer" in printed and "load average (1/5/15 min) start " in printed


@pytest.mark.slow
def test_served_benchmark_gets_an_answer_for_every_request_at_each_concurrency(
    tmp_path: Path, one_torch_thread: None, embedder: Any
) -> None:
    from ask_engine.indexer import build_index

    shop = write_synthetic_shop(tmp_path / "shop", 8, seed=9)
    build_index(shop, tmp_path / "index", embedder=embedder, progress=False)
    questions = product_questions(shop, 2 + 3 * 2)

    served = bench_server(tmp_path / "index", questions, requests=3, concurrency=(1, 2), warmup=2)

    assert served["health_status"] == "ok" and served["distinct_questions"] == 8
    assert [level["concurrency"] for level in served["levels"]] == [1, 2]
    for level in served["levels"]:
        assert level["statuses"] == {"200": 3} and level["ok"] == 3
        assert level["requests_per_s"] > 0 and level["latency_ms"]["n"] == 3


@pytest.mark.slow
def test_replica_benchmark_spreads_the_load_over_replicas_sharing_redis(
    tmp_path: Path, one_torch_thread: None, embedder: Any, redis_url: str
) -> None:
    from ask_engine.bench import bench_replicas
    from ask_engine.indexer import build_index

    shop = write_synthetic_shop(tmp_path / "shop", 8, seed=3)
    build_index(shop, tmp_path / "index", embedder=embedder, progress=False)
    questions = product_questions(shop, 2 * 2 + 6)

    result = bench_replicas(tmp_path / "index", questions, redis_url, counts=(2,), requests=6, concurrency=2, warmup=2)

    (run,) = result["runs"]
    assert run["replicas"] == 2 and run["store"] == ["ok"]  # both replicas on the Redis, and it answered
    assert run["statuses"] == {"200": 6} and run["ok"] == 6
    assert run["requests_per_s"] > 0 and run["latency_ms"]["n"] == 6

    from rich.console import Console

    from ask_engine.bench.benchmark import print_replicas

    out = io.StringIO()
    print_replicas(result, Console(file=out, width=140))
    assert "Replicas sharing one Redis" in out.getvalue()
