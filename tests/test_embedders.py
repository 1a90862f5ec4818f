"""SentenceTransformerEmbedder with the real all-MiniLM-L6-v2 model."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from ask_engine.config import Settings
from ask_engine.embedders import SentenceTransformerEmbedder, default_model_path, model_fingerprint
from ask_engine.errors import BackendError
from ask_engine.protocols import Embedder


def test_embedder_satisfies_the_protocol_and_has_384_dimensions(embedder: SentenceTransformerEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.dimension == 384
    assert embedder.name.startswith("all-MiniLM-L6-v2:")


def test_document_vectors_are_normalised_float32_rows(embedder: SentenceTransformerEmbedder) -> None:
    texts = ["Waterproof walking boots", "Free returns within 30 days", "Peanut butter, 340 g jar"]
    matrix = embedder.embed_documents(texts)
    assert matrix.dtype == np.float32
    assert matrix.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def test_embedding_is_deterministic_and_independent_of_batch_neighbours(embedder: SentenceTransformerEmbedder) -> None:
    alone = embedder.embed_documents(["Merino wool base layer"])
    with_others = embedder.embed_documents(["Tent pegs", "Merino wool base layer", "A much longer text " * 20])
    np.testing.assert_allclose(alone[0], with_others[1], atol=1e-5)
    np.testing.assert_allclose(embedder.embed_documents(["Merino wool base layer"]), alone, atol=1e-6)


def test_query_vector_equals_document_vector_of_same_text(embedder: SentenceTransformerEmbedder) -> None:
    query = embedder.embed_query("Do you ship to Norway?")
    assert query.shape == (384,)
    assert query.dtype == np.float32
    np.testing.assert_allclose(query, embedder.embed_documents(["Do you ship to Norway?"])[0], atol=1e-5)


def test_paraphrases_are_closer_than_unrelated_texts(embedder: SentenceTransformerEmbedder) -> None:
    query = embedder.embed_query("Can I send these boots back if they don't fit?")
    docs = embedder.embed_documents(
        [
            "You can return unworn footwear within 30 days of delivery for a full refund.",
            "Our peanut butter contains peanuts and is made in a factory that handles tree nuts.",
            "The tent sleeps two people and packs down to 2.1 kg.",
        ]
    )
    scores = docs @ query
    assert scores[0] > scores[1] + 0.1
    assert scores[0] > scores[2] + 0.1


def test_repeated_queries_come_from_the_cache(embedder: SentenceTransformerEmbedder) -> None:
    text = "Is the Tarn boot waterproof? (cache test)"
    before = embedder.query_count
    first = embedder.embed_query(text)
    assert embedder.query_count == before + 1
    first[:] = 0.0  # a caller mutating its copy must not corrupt the cache
    second = embedder.embed_query(text)
    assert embedder.query_count == before + 1
    np.testing.assert_allclose(np.linalg.norm(second), 1.0, atol=1e-5)


def test_query_cache_evicts_least_recently_used(embedder: SentenceTransformerEmbedder) -> None:
    small = SentenceTransformerEmbedder(query_cache_size=2)
    small.embed_query("one")
    small.embed_query("two")
    small.embed_query("one")  # "one" is now the most recent
    small.embed_query("three")  # evicts "two"
    assert small.query_count == 3
    small.embed_query("one")
    assert small.query_count == 3
    small.embed_query("two")
    assert small.query_count == 4


def test_count_tracks_document_texts_and_progress_reports_each_batch(embedder: SentenceTransformerEmbedder) -> None:
    batched = SentenceTransformerEmbedder(batch_size=2)
    seen: list[int] = []
    matrix = batched.embed_documents(["a", "b", "c", "d", "e"], progress=seen.append)
    assert matrix.shape == (5, 384)
    assert seen == [2, 2, 1]
    assert batched.count == 5
    assert batched.embed_documents([]).shape == (0, 384)
    assert batched.count == 5


def test_embedders_share_one_loaded_model_per_path(embedder: SentenceTransformerEmbedder) -> None:
    other = SentenceTransformerEmbedder(settings=Settings(embedding_batch_size=8))
    assert other._model is embedder._model
    assert other.batch_size == 8
    assert other.name == embedder.name


def test_model_name_is_machine_independent_and_tracks_model_content(tmp_path: Path) -> None:
    source = Path(default_model_path())
    copies = []
    for label in ("first", "second"):
        target = tmp_path / label / "my-model"
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.safetensors", "*.bin", "*.onnx"))
        copies.append(target)
    # Same files in two places: same name, no absolute path in it.
    assert model_fingerprint(str(copies[0])) == model_fingerprint(str(copies[1]))
    assert model_fingerprint(str(copies[0])).startswith("my-model:")
    assert str(tmp_path) not in model_fingerprint(str(copies[0]))
    config = copies[1] / "config.json"
    config.write_text(config.read_text().replace('"num_hidden_layers": 6', '"num_hidden_layers": 5'))
    assert model_fingerprint(str(copies[0])) != model_fingerprint(str(copies[1]))


def test_a_folder_without_a_model_raises_backend_error(tmp_path: Path) -> None:
    (tmp_path / "empty-model").mkdir()
    with pytest.raises(BackendError, match="cannot load embedding model"):
        SentenceTransformerEmbedder(str(tmp_path / "empty-model"))
