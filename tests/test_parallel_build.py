"""A large build's per-document work over several processes (`ask_engine.parallel`): the same index, the same
errors, and one process whenever forking is unsafe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ask_engine import parallel
from ask_engine.bench.synthetic_shop import write_synthetic_shop
from ask_engine.errors import SourceError
from ask_engine.sources import load_documents

pytestmark = pytest.mark.skipif(
    "fork" not in __import__("multiprocessing").get_all_start_methods(), reason="this platform cannot fork"
)


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spread work from 8 items, so that a small shop takes the parallel path."""
    monkeypatch.setattr(parallel, "MIN_ITEMS", 8)


def _pid_of(_: int) -> int:
    return os.getpid()


def _in_a_fresh_process(code: str) -> object:
    """Run `code` (which sets `result`) in a new Python process, where no other thread runs (pytest's may have
    threads that tests left behind, and `mapped` rightly stays in one process then); its JSON result."""
    program = f"import json\nfrom ask_engine import parallel\nparallel.MIN_ITEMS = 8\n{code}\nprint(json.dumps(result))"
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_mapped_keeps_order_and_runs_in_other_processes() -> None:
    squares, pids, me = _in_a_fresh_process(
        "import os\n"
        "def pid(_): return os.getpid()\n"
        "result = [parallel.mapped(lambda x: x * x, list(range(100)), 3), parallel.mapped(pid, list(range(100)), 3),"
        " os.getpid()]"
    )
    assert squares == [x * x for x in range(100)]
    assert set(pids) - {me}, "no item ran in a worker process"


def test_mapped_stays_in_this_process_below_the_threshold_or_for_one_process(small_threshold: None) -> None:
    assert set(parallel.mapped(_pid_of, list(range(5)), 4)) == {os.getpid()}
    assert set(parallel.mapped(_pid_of, list(range(50)), 1)) == {os.getpid()}


def test_mapped_stays_in_this_process_while_another_thread_runs(small_threshold: None) -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert set(parallel.mapped(_pid_of, list(range(50)), 4)) == {os.getpid()}
    finally:
        release.set()
        other.join()


def test_an_error_in_a_worker_is_raised_as_one_process_raises_it() -> None:
    raised = _in_a_fresh_process(
        "def check(x):\n"
        "    if x in (37, 81):\n"
        "        raise ValueError(f'bad item {x}')\n"
        "    return x\n"
        "try:\n"
        "    parallel.mapped(check, list(range(100)), 4)\n"
        "    result = None\n"
        "except ValueError as exc:\n"
        "    result = str(exc)"
    )
    assert raised == "bad item 37"


def test_default_processes_is_at_least_one_and_at_most_the_cap() -> None:
    assert 1 <= parallel.default_processes() <= parallel.MAX_PROCESSES


def test_products_read_over_processes_are_the_documents_read_by_one(tmp_path: Path) -> None:
    shop = write_synthetic_shop(tmp_path / "shop", 60, seed=3)
    same, count, forked = _in_a_fresh_process(
        "from ask_engine.sources import load_documents\n"
        "forked = []\n"
        "can_fork = parallel._can_fork\n"
        "parallel._can_fork = lambda: forked.append(can_fork()) or forked[-1]\n"
        f"one = load_documents({str(shop)!r}, processes=1)\n"
        f"many = load_documents({str(shop)!r}, processes=3)\n"
        "result = [one == many, len(one[1]), sum(forked)]"
    )
    assert same is True
    assert count == 70  # 60 products, a refund and a shipping policy, 8 FAQ entries
    assert forked == 1


def test_a_bad_product_stops_the_read_with_the_same_error(tmp_path: Path) -> None:
    shop = write_synthetic_shop(tmp_path / "shop", 60, seed=3)
    path = shop / "products.json"
    data = json.loads(path.read_text("utf-8"))
    data["products"][41]["variants"] = "not a list"
    data["products"][52]["title"] = 7
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(SourceError) as one:
        load_documents(shop, processes=1)
    many = _in_a_fresh_process(
        "from ask_engine.sources import load_documents\n"
        "try:\n"
        f"    load_documents({str(shop)!r}, processes=3)\n"
        "    result = None\n"
        "except Exception as exc:\n"
        "    result = [type(exc).__name__, str(exc)]"
    )
    assert many == ["SourceError", str(one.value)]
    assert "[41]" in str(one.value)


def test_an_index_built_over_processes_is_the_index_built_by_one(tmp_path: Path) -> None:
    shop = write_synthetic_shop(tmp_path / "shop", 60, seed=5)
    folders = _in_a_fresh_process(
        "from ask_engine.config import Settings\n"
        "from ask_engine.indexer import build_index\n"
        "from ask_engine.testing import HashEmbedder\n"
        "forked = []\n"
        "can_fork = parallel._can_fork\n"
        "parallel._can_fork = lambda: forked.append(can_fork()) or forked[-1]\n"
        "result = []\n"
        "for n in (1, 3):\n"
        f"    r = build_index({str(shop)!r}, {str(tmp_path)!r} + f'/index-{{n}}', Settings(embedder='hash', build_processes=n),"
        " embedder=HashEmbedder(), progress=False)\n"
        "    result.append(str(r.path))\n"
        "result.append(sum(forked))\n"
    )
    assert isinstance(folders, list)
    one, many, forks = Path(folders[0]), Path(folders[1]), folders[2]
    assert forks >= 4, "the build with 3 processes did not fork for products, hashes, texts and lines"
    for name in ("documents.jsonl", "passages.jsonl", "unit_texts.json", "unit_sources.json", "aliases.json"):
        assert (one / name).read_bytes() == (many / name).read_bytes(), name
    for name in ("embeddings.npy", "unit_vectors.npy"):
        assert (one / name).read_bytes() == (many / name).read_bytes(), name
