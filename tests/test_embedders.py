"""SentenceTransformerEmbedder with the real all-MiniLM-L6-v2 model."""

from __future__ import annotations

import logging
import shutil
import sys
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


# --------------------------------------------------------------------------------------------- ONNX backend
# The ONNX backend (optimum-onnx, onnxruntime) is a dependency of ask-engine: these tests run everywhere, and the
# fallback tests hide it per test (sys.modules) to check what happens where it cannot be imported.

_TEXTS = [
    "Is the Tarn Wellington Boot waterproof?",
    "Do you ship to Norway?",
    "You can return unworn footwear within 30 days of delivery for a full refund.",
    "¿Hacéis envíos a España?",
    "Merino wool base layer, 200 g/m², machine washable at 30 °C. " * 12,  # long: padding and truncation
    "x",
]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def exported_cache(onnx_cache: Path) -> Path:
    """`onnx_cache` holding the fp32 export (exported once for the module)."""
    from ask_engine.embedders import OnnxEmbedder

    OnnxEmbedder(cache_dir=onnx_cache).load()
    return onnx_cache


@pytest.fixture
def without_onnx_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """onnxruntime and optimum.onnxruntime cannot be imported for this test (a None entry makes `import` fail)."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    monkeypatch.setitem(sys.modules, "optimum.onnxruntime", None)
    monkeypatch.setattr("ask_engine.embedders._FELL_BACK", [])


def test_the_default_embedder_is_onnx_fp32() -> None:
    from ask_engine import registry
    from ask_engine.embedders import OnnxEmbedder

    settings = Settings()
    assert settings.embedder == "onnx" and settings.onnx_int8 is False
    made = registry.create("embedder", settings.embedder, settings)
    assert isinstance(made, OnnxEmbedder) and made.int8 is None and not made.loaded


def test_onnx_fp32_gives_pytorchs_vectors_and_pytorchs_name(
    embedder: SentenceTransformerEmbedder, onnx_cache: Path
) -> None:
    from ask_engine.embedders import OnnxEmbedder

    onnx = OnnxEmbedder(cache_dir=onnx_cache)
    assert isinstance(onnx, Embedder)
    assert not onnx.loaded  # exporting waits for the first embedding
    got, want = onnx.embed_documents(_TEXTS), embedder.embed_documents(_TEXTS)
    assert onnx.backend == "onnx"  # ran on ONNX Runtime, not the PyTorch fallback
    cosines = (got * want).sum(axis=1)
    assert cosines.min() >= 1 - 1e-5, cosines
    np.testing.assert_allclose(onnx.embed_query(_TEXTS[1]), embedder.embed_query(_TEXTS[1]), atol=1e-5)
    # Same vectors, same fingerprint: an index built by either backend is served by the other.
    assert onnx.name == embedder.name
    assert onnx.dimension == embedder.dimension == 384
    from ask_engine.testing import check_embedder

    check_embedder(onnx)  # the contract every embedder keeps


def test_an_onnx_query_goes_straight_through_the_session_with_encodes_vector(exported_cache: Path) -> None:
    from ask_engine.embedders import OnnxEmbedder
    from ask_engine.query_encoder import QueryEncoder

    onnx = OnnxEmbedder(cache_dir=exported_cache, query_cache_size=0)
    model = onnx.load()
    assert isinstance(onnx._query_encoder, QueryEncoder)  # the hot path is taken, not encode()
    for text in [*_TEXTS, ""]:
        want = model.encode([text], normalize_embeddings=True, convert_to_numpy=True)[0]
        got = onnx.embed_query(text)
        assert got.dtype == np.float32 and got.shape == (384,)
        np.testing.assert_allclose(got, want, atol=1e-6, err_msg=text[:40])


def test_a_pipeline_the_query_encoder_cannot_reproduce_keeps_encode(exported_cache: Path) -> None:
    from ask_engine.embedders import OnnxEmbedder
    from ask_engine.query_encoder import QueryEncoder

    model = OnnxEmbedder(cache_dir=exported_cache).load()
    transformer, pooling, normalize = list(model)
    assert QueryEncoder.of([transformer, pooling]) is None  # no Normalize: vectors would not be unit length
    assert QueryEncoder.of([transformer, normalize]) is None  # no pooling
    assert QueryEncoder.of(object()) is None


def test_onnx_export_is_cached_once_per_model_and_leaves_no_temporary_folder(exported_cache: Path) -> None:
    from ask_engine.embedders import ONNX_FILE, default_model_path, onnx_model_folder

    folder, file_name = onnx_model_folder(default_model_path(), exported_cache)
    assert file_name == ONNX_FILE
    exported = folder / ONNX_FILE
    stamp = exported.stat().st_mtime_ns
    again, _ = onnx_model_folder(default_model_path(), exported_cache)  # found, not exported again
    assert again == folder and exported.stat().st_mtime_ns == stamp
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".tmp-")]


def test_onnx_int8_has_its_own_name_and_vectors_close_to_fp32(
    embedder: SentenceTransformerEmbedder, exported_cache: Path
) -> None:
    from ask_engine.embedders import OnnxEmbedder

    int8 = OnnxEmbedder(settings=Settings(embedder="onnx", onnx_int8=True, onnx_cache_dir=str(exported_cache)))
    assert int8.name != embedder.name and "int8" in int8.name  # other vectors: an fp32 index refuses it
    cosines = (int8.embed_documents(_TEXTS) * embedder.embed_documents(_TEXTS)).sum(axis=1)
    assert 0.9 < cosines.min() < 1 - 1e-4, cosines  # close, but not the same vectors


def test_an_unwritable_cache_dir_says_which_setting_and_leaves_nothing(tmp_path: Path) -> None:
    from ask_engine.embedders import OnnxCacheUnwritable, default_model_path, onnx_model_folder

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")  # even root cannot make a folder under a file
    with pytest.raises(OnnxCacheUnwritable, match="onnx_cache_dir"):
        onnx_model_folder(default_model_path(), blocker / "cache")
    assert blocker.read_text() == "not a folder"


def test_an_unwritable_cache_dir_falls_back_to_a_private_temporary_folder_with_a_warning(
    embedder: SentenceTransformerEmbedder,
    exported_cache: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from ask_engine.embedders import OnnxEmbedder

    fallback = tmp_path / "fallback"
    shutil.copytree(exported_cache, fallback)  # holds the export already: nothing is exported again here
    monkeypatch.setattr("ask_engine.embedders.fallback_cache_dir", lambda: fallback)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    onnx = OnnxEmbedder(cache_dir=blocker / "cache")
    with caplog.at_level(logging.WARNING, logger="ask_engine.embedders"):
        vector = onnx.embed_query(_TEXTS[0])
    assert onnx.cache_dir == fallback and onnx.backend == "onnx"
    assert [r for r in caplog.records if "onnx_cache_dir" in r.getMessage() and str(fallback) in r.getMessage()]
    assert fallback.stat().st_mode & 0o077 == 0  # readable by this user only
    np.testing.assert_allclose(vector, embedder.embed_query(_TEXTS[0]), atol=1e-5)


@pytest.mark.usefixtures("without_onnx_backend")
def test_onnx_fp32_without_its_backend_falls_back_to_pytorch_with_one_warning(
    embedder: SentenceTransformerEmbedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from ask_engine.embedders import OnnxEmbedder

    with caplog.at_level(logging.WARNING, logger="ask_engine.embedders"):
        first, second = OnnxEmbedder(cache_dir=tmp_path), OnnxEmbedder(cache_dir=tmp_path)
        vectors = first.embed_documents(_TEXTS)
        second.embed_query(_TEXTS[0])
    assert first.backend == second.backend == "torch"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings  # once per process, not once per embedder
    assert 'embedder = "sentence-transformers"' in warnings[0] and "PyTorch" in warnings[0]
    np.testing.assert_allclose(vectors, embedder.embed_documents(_TEXTS), atol=1e-6)
    assert first.name == embedder.name  # an index built with either still fits
    assert not list(tmp_path.iterdir())  # nothing half-exported


@pytest.mark.usefixtures("without_onnx_backend")
def test_onnx_int8_without_its_backend_fails_naming_the_setting(tmp_path: Path) -> None:
    from ask_engine.embedders import OnnxEmbedder

    int8 = OnnxEmbedder(cache_dir=tmp_path, int8=True)  # created cheaply: the error comes when the model is needed
    with pytest.raises(BackendError, match=r"onnx_int8.*ASK_ENGINE_EMBEDDER"):
        int8.embed_query("x")
    assert not int8.loaded and not list(tmp_path.iterdir())


def test_the_onnx_embedder_is_a_registered_builtin_chosen_by_settings(tmp_path: Path) -> None:
    from ask_engine import registry
    from ask_engine.embedders import OnnxEmbedder

    settings = Settings(embedder="onnx", onnx_cache_dir=str(tmp_path), embedding_threads=2)
    made = registry.create("embedder", settings.embedder, settings)
    assert isinstance(made, OnnxEmbedder)
    assert made.cache_dir == tmp_path and made.threads == 2 and made.int8 is None
