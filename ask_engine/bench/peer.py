"""The LlamaIndex peer: a `VectorStoreIndex` over the passages the engine's index holds, embedded with the same
model, timed retrieval-only (`as_retriever(similarity_top_k=5).retrieve(query)`) next to the engine's whole answer
to the same questions, interleaved in one process.

LlamaIndex is the optional `bench` extra (`pip install -e '.[bench]'`, which `make bench` installs): without it
`bench_peer` returns `{"skipped": reason}` and the rest of the benchmark runs as before.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from ask_engine.bench.measure import _ratio, _version, percentiles

if TYPE_CHECKING:
    from ask_engine.engine import Engine
    from ask_engine.types import Passage

TOP_K = 5  # the measurement: LlamaIndex retrieval-only top-5
_EXTRA = "install the optional `bench` extra: pip install -e '.[bench]' (make bench does)"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a missing parent package (llama_index itself)
        return False


def peer_unavailable() -> str | None:
    """Why the LlamaIndex peer cannot run here (llama-index-core missing), or None when it can."""
    if not _installed("llama_index.core"):
        return f"llama-index-core is not installed; {_EXTRA}"
    return None


@cache
def _engine_embedding_class() -> type:
    """`llama_index.core.embeddings.BaseEmbedding` over any ask-engine embedder (`embed_query`/`embed_documents`).

    Built on first use, since LlamaIndex is optional. The bench uses it only where llama-index-embeddings-huggingface
    is absent, and the tests use it with the hash embedder.
    """
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.embeddings import BaseEmbedding

    class EngineEmbedding(BaseEmbedding):
        _embedder: Any = PrivateAttr()

        def __init__(self, embedder: Any, **kwargs: Any) -> None:
            super().__init__(model_name=str(getattr(embedder, "name", type(embedder).__name__)), **kwargs)
            self._embedder = embedder

        @classmethod
        def class_name(cls) -> str:
            return "AskEngineEmbedding"

        def _get_query_embedding(self, query: str) -> list[float]:
            return [float(x) for x in self._embedder.embed_query(query)]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embeddings([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            rows: list[list[float]] = np.asarray(self._embedder.embed_documents(texts), dtype=np.float32).tolist()
            return rows

    return EngineEmbedding


def engine_embedding(embedder: Any) -> Any:
    """A LlamaIndex embedding model that embeds with `embedder` (the very vectors the engine's index holds)."""
    return _engine_embedding_class()(embedder, embed_batch_size=getattr(embedder, "batch_size", 64))


def default_embed_model(engine: Engine) -> Any:
    """LlamaIndex's own `HuggingFaceEmbedding` over the engine's model folder (loaded from disk, on the CPU), or the
    engine's embedder wrapped when that integration is not installed or the engine has no model folder."""
    model_path = getattr(engine.embedder, "model_path", None)
    if model_path and _installed("llama_index.embeddings.huggingface"):
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding
        from transformers.utils import logging as hf_logging

        device = getattr(engine.embedder, "device", "cpu")
        batch = getattr(engine.embedder, "batch_size", 64)
        bars_were_on = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # no "Loading weights" bar in the bench's output
        try:
            return HuggingFaceEmbedding(model_name=str(model_path), device=device, embed_batch_size=batch)
        finally:
            if bars_were_on:
                hf_logging.enable_progress_bar()
    return engine_embedding(engine.embedder)


def build_peer(passages: Sequence[Passage], embed_model: Any, vectors: Any = None) -> tuple[Any, float]:
    """A `VectorStoreIndex` of one `TextNode` per passage (its text only, so LlamaIndex embeds exactly what the
    engine embedded); with `vectors` (rows in passage order) the nodes carry them and nothing is embedded.
    Returns (index, build seconds)."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    if vectors is not None and len(vectors) != len(passages):
        raise ValueError(f"{len(vectors)} vectors for {len(passages)} passages")
    rows: list[Any] = [None] * len(passages) if vectors is None else np.asarray(vectors, dtype=np.float32).tolist()
    nodes = [TextNode(id_=p.id, text=p.text, embedding=row) for p, row in zip(passages, rows, strict=True)]
    start = time.perf_counter()
    index = VectorStoreIndex(nodes, embed_model=embed_model, show_progress=False)
    return index, time.perf_counter() - start


def _stored_vectors(index: Any, ids: Sequence[str]) -> np.ndarray:
    store = index.vector_store
    return np.asarray([store.get(i) for i in ids], dtype=np.float32)


def bench_peer(
    engine: Engine,
    questions: Sequence[dict[str, Any]],
    *,
    rounds: int = 1,
    warmup: int = 8,
    embed_model: Any = None,
    reuse_vectors: bool = False,
    top_k: int = TOP_K,
) -> dict[str, Any]:
    """LlamaIndex retrieval-only latency over the engine's passages next to the engine's whole answer.

    Each timed question is answered by the engine (`ask`, the caller's embedder: query cache off) and retrieved by
    LlamaIndex back to back, the order alternating, so both share the machine's load; the first `warmup` questions
    go through both once untimed. `reuse_vectors`: the nodes carry the index's stored passage vectors instead of
    being embedded again (a cheap build for large catalogues; the figure then times no embedding at build).
    Returns `{"skipped": reason}` when LlamaIndex is not installed.
    """
    reason = peer_unavailable()
    if reason is not None:
        return {"skipped": reason}
    if not questions:
        return {"skipped": "no questions to ask"}
    index = engine.index
    passages = index.passages
    embed_model = embed_model if embed_model is not None else default_embed_model(engine)
    stored = index.embeddings
    peer, build_s = build_peer(passages, embed_model, stored if reuse_vectors else None)
    ids = [p.id for p in passages]
    # Same model, same vectors: LlamaIndex's passage vectors against the engine's index.
    diff = float(np.abs(_stored_vectors(peer, ids) - stored).max()) if ids else 0.0
    retriever = peer.as_retriever(similarity_top_k=top_k)

    for request in questions[:warmup]:
        engine.ask(request)
        retriever.retrieve(request["query"])
    ask_ms: list[float] = []
    retrieve_ms: list[float] = []
    for round_ in range(rounds):
        for n, request in enumerate(questions):
            for step in ("ask", "retrieve") if (n + round_) % 2 == 0 else ("retrieve", "ask"):
                start = time.perf_counter()
                if step == "ask":
                    engine.ask(request)
                    ask_ms.append((time.perf_counter() - start) * 1000)
                else:
                    retriever.retrieve(request["query"])
                    retrieve_ms.append((time.perf_counter() - start) * 1000)

    # The same retrieval as the engine's dense half (exact search over the same vectors)? Untimed.
    same_top = same_first = 0
    for request in questions:
        got = [hit.node.node_id for hit in retriever.retrieve(request["query"])]
        dense = [hit.passage_id for hit in index.vectors.search(engine.embedder.embed_query(request["query"]), top_k)]
        same_top += set(got) == set(dense)
        same_first += bool(got) and bool(dense) and got[0] == dense[0]
    ask, retrieve = percentiles(ask_ms), percentiles(retrieve_ms)
    return {
        "library": "llama-index-core",
        "versions": {name: _version(name) for name in ("llama-index-core", "llama-index-embeddings-huggingface")},
        "embed_model": type(embed_model).__name__,
        "query_cache": getattr(embed_model, "embeddings_cache", None) is not None,  # LlamaIndex's default: none
        "top_k": top_k,
        "passages": len(passages),
        "questions": len(questions),
        "rounds": rounds,
        "warmup": min(warmup, len(questions)),
        "build_seconds": round(build_s, 3),
        "build_embedded": not reuse_vectors,
        "vectors_max_abs_diff": diff,
        "retrieve_ms": retrieve,
        "ask_ms": ask,
        "ask_over_retrieve_p50": _ratio(ask.get("p50"), retrieve.get("p50")),
        "top_k_same_as_dense": round(same_top / len(questions), 3),
        "top_1_same_as_dense": round(same_first / len(questions), 3),
    }
