"""bench/peer.py, the LlamaIndex peer: a VectorStoreIndex over exactly the engine's passages and vectors, timed
retrieval-only next to the engine's answer; recorded as skipped, with the reason, where the optional `bench` extra
is not installed. No timing assertions: speed is what the benchmark measures."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from rich.console import Console

from ask_engine.bench import peer as peer_module
from ask_engine.bench import synthetic_questions, write_synthetic_shop
from ask_engine.bench.benchmark import print_peer
from ask_engine.testing import HashEmbedder

NEEDS_EXTRA = "llama-index-core is the optional `bench` extra (pip install -e '.[bench]'); not installed here"
# Decided at collection, so a test needing the extra sets up no fixture (the real-model one builds the sample index).
needs_llama_index = pytest.mark.skipif(not peer_module._installed("llama_index.core"), reason=NEEDS_EXTRA)
needs_hf_embedding = pytest.mark.skipif(
    not peer_module._installed("llama_index.embeddings.huggingface"),
    reason="llama-index-embeddings-huggingface is the optional `bench` extra (pip install -e '.[bench]'); "
    "not installed here",
)


@pytest.fixture(scope="module")
def hash_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """An engine over a 30-product synthetic shop indexed with the hash embedder (no model: quick and exact)."""
    from ask_engine.engine import Engine
    from ask_engine.indexer import build_index

    work = tmp_path_factory.mktemp("peer")
    shop = write_synthetic_shop(work / "shop", 30, seed=11)
    embedder = HashEmbedder()
    build_index(shop, work / "index", embedder=embedder, progress=False)
    engine = Engine.open(work / "index", embedder=embedder)
    yield engine
    engine.close()


def _printed(peer: dict[str, Any]) -> str:
    out = io.StringIO()
    print_peer(peer, Console(file=out, width=160))
    return out.getvalue()


# ------------------------------------------------------------------------------------------- without the extra


def test_without_llama_index_the_peer_is_recorded_as_skipped_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, hash_engine: Any
) -> None:
    monkeypatch.setattr(peer_module, "_installed", lambda module: False)

    result = peer_module.bench_peer(hash_engine, synthetic_questions(30, seed=11, count=4))

    assert set(result) == {"skipped"}
    assert "llama-index-core is not installed" in result["skipped"] and ".[bench]" in result["skipped"]
    assert _printed(result).strip() == f"LlamaIndex peer: skipped ({result['skipped']})"


def test_peer_unavailable_tells_a_missing_parent_package_from_a_present_one() -> None:
    assert peer_module._installed("no_such_package_here.core") is False
    assert peer_module._installed("ask_engine.bench") is True


# ---------------------------------------------------------------------------------------------- with the extra


@needs_llama_index
def test_peer_indexes_the_engines_passages_with_the_same_vectors_and_retrieves_what_dense_search_does(
    hash_engine: Any,
) -> None:
    questions = synthetic_questions(30, seed=11, count=8)
    embed_model = peer_module.engine_embedding(hash_engine.embedder)

    result = peer_module.bench_peer(hash_engine, questions, rounds=2, warmup=3, embed_model=embed_model)

    assert result["passages"] == len(hash_engine.index.passages) > 30
    assert result["embed_model"] == "EngineEmbedding" and result["build_embedded"] is True
    assert result["query_cache"] is False
    assert result["vectors_max_abs_diff"] < 1e-6  # LlamaIndex embedded each passage's text exactly as the engine did
    assert result["retrieve_ms"]["n"] == result["ask_ms"]["n"] == 16
    assert result["ask_over_retrieve_p50"] == round(result["ask_ms"]["p50"] / result["retrieve_ms"]["p50"], 3)
    assert result["top_k_same_as_dense"] == result["top_1_same_as_dense"] == 1.0
    assert result["versions"]["llama-index-core"]
    printed = _printed(result)
    assert "ask p50 / LlamaIndex retrieve p50" in printed and "embedding every passage" in printed


@needs_llama_index
def test_peer_from_stored_vectors_embeds_nothing_at_build_and_finds_each_passage_by_its_own_text(
    hash_engine: Any,
) -> None:

    class Counting(HashEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.documents = 0

        def embed_documents(self, texts: Any) -> Any:
            self.documents += len(texts)
            return super().embed_documents(texts)

    counting = Counting()
    passages = hash_engine.index.passages
    index, seconds = peer_module.build_peer(
        passages, peer_module.engine_embedding(counting), hash_engine.index.embeddings
    )
    retriever = index.as_retriever(similarity_top_k=3)

    assert counting.documents == 0 and seconds >= 0
    for passage in passages[:: max(1, len(passages) // 6)]:
        assert retriever.retrieve(passage.text)[0].node.node_id == passage.id
    with pytest.raises(ValueError, match="vectors for"):
        peer_module.build_peer(passages, peer_module.engine_embedding(counting), hash_engine.index.embeddings[:2])


@needs_llama_index
def test_an_engine_without_a_model_folder_gets_its_own_embedder_wrapped(hash_engine: Any) -> None:
    model = peer_module.default_embed_model(hash_engine)

    assert type(model).__name__ == "EngineEmbedding"
    query = "Is the tent waterproof?"
    assert model.get_query_embedding(query) == pytest.approx(hash_engine.embedder.embed_query(query).tolist())


@needs_llama_index
def test_no_questions_is_a_recorded_skip_not_a_crash(hash_engine: Any) -> None:
    assert peer_module.bench_peer(hash_engine, []) == {"skipped": "no questions to ask"}


@needs_hf_embedding
def test_the_peer_over_the_real_model_uses_llama_indexs_huggingface_embedding(engine: Any) -> None:
    """The bench's default: LlamaIndex's own HuggingFaceEmbedding over the engine's model folder, loaded from disk;
    its passage vectors are the index's."""
    from ask_engine.bench import SAMPLE_QUESTIONS

    result = peer_module.bench_peer(engine, SAMPLE_QUESTIONS[:3], warmup=1)

    assert result["embed_model"] == "HuggingFaceEmbedding"
    assert result["vectors_max_abs_diff"] < 1e-4 and result["top_1_same_as_dense"] == 1.0
    assert result["retrieve_ms"]["n"] == 3
