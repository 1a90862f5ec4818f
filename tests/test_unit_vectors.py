"""Answer-unit vectors stored with the index (ask_engine.unit_vectors, answering.embedded): after indexing, answers
embed only the question's own probes; reindexing embeds only new texts; answers are the same with and without them;
an index built before them still answers."""

from __future__ import annotations

import json
import logging
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ask_engine.answering.embedded import answer_texts, document_texts, passage_texts
from ask_engine.bench.latency import SAMPLE_QUESTIONS
from ask_engine.engine import Engine
from ask_engine.evaluation.cases import load_cases
from ask_engine.guard import sanitize_document
from ask_engine.indexer import build_index
from ask_engine.indexes import ShopIndex
from ask_engine.integrity import CHECKSUM, FILES, manifest_checksum
from ask_engine.unit_vectors import UNIT_TEXTS, UNIT_VECTORS
from tests.conftest import ROOT, SAMPLE_SHOP
from tests.embedder_helpers import RecordingEmbedder

EVAL_CASES = ROOT / "eval" / "fjord-fell.jsonl"


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w'-]+", text.lower()))


def _without_unit_vectors(index_dir: Path) -> None:
    """Make the live version look like one built before unit vectors existed: no files, no manifest entries."""
    version = ShopIndex.open(index_dir).path
    (version / UNIT_VECTORS).unlink()
    (version / UNIT_TEXTS).unlink()
    manifest = json.loads((version / "manifest.json").read_text("utf-8"))
    for name in (UNIT_VECTORS, UNIT_TEXTS):
        del manifest[FILES][name]
    manifest[CHECKSUM] = manifest_checksum(manifest)
    (version / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2), "utf-8")


@pytest.fixture(scope="module")
def old_index(sample_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("old-index") / "fjord-fell"
    shutil.copytree(sample_index, out)
    _without_unit_vectors(out)
    return out


@pytest.fixture
def fresh(embedder: Any) -> Iterator[Any]:
    """Opens engines with an empty sentence cache over a recording embedder; closes them afterwards."""
    opened: list[Engine] = []

    def open_engine(index_dir: Path) -> tuple[Engine, RecordingEmbedder]:
        recording = RecordingEmbedder(embedder)
        engine = Engine.open(index_dir, embedder=recording)
        opened.append(engine)
        return engine, recording

    yield open_engine
    for engine in opened:
        engine.close()


def test_the_index_stores_a_vector_for_every_text_the_answerer_compares(sample_index: Path, embedder: Any) -> None:
    index = ShopIndex.open(sample_index)
    stored = index.unit_vectors
    assert stored is not None
    docs = list(index.documents.values())
    assert stored.texts == answer_texts(docs, index.passages)
    assert isinstance(stored.matrix, np.memmap)  # mapped, not read into each process
    products = [d for d in docs if d.kind == "product"]
    assert all(t in stored for d in products for t in document_texts(sanitize_document(d)))
    # the rows are the model's vectors of those very texts
    sample = [stored.texts[i] for i in range(0, len(stored), max(1, len(stored) // 20))]
    np.testing.assert_allclose(
        np.vstack([stored.matrix[stored.row(t)] for t in sample]), embedder.embed_documents(sample), atol=1e-5
    )


def test_answers_embed_only_probes_made_from_the_question(sample_index: Path, old_index: Path, fresh: Any) -> None:
    engine, recording = fresh(sample_index)
    for request in SAMPLE_QUESTIONS:
        before = len(recording.texts)
        engine.ask(request)
        embedded = recording.texts[before:]
        assert len(embedded) <= 2, (request, embedded)
        # a probe is the question itself or the question without the product's name ("it" in its place)
        assert all(_words(text) <= _words(request["query"]) | {"it"} for text in embedded), (request, embedded)
    with_store = len(recording.texts)

    old, old_recording = fresh(old_index)
    for request in SAMPLE_QUESTIONS:
        old.ask(request)
    assert len(old_recording.texts) > 10 * max(1, with_store)  # without them, the sentences are embedded per question


def test_answers_are_the_same_with_and_without_stored_unit_vectors(
    sample_index: Path, old_index: Path, fresh: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="ask_engine.indexes"):
        old, _ = fresh(old_index)
    assert old.index.unit_vectors is None
    assert any("no stored unit vectors" in r.getMessage() for r in caplog.records)
    new, _ = fresh(sample_index)
    assert new.index.unit_vectors is not None
    cases = load_cases(EVAL_CASES)
    assert len(cases) > 150
    for case in cases:
        request: dict[str, Any] = {"query": case.query}
        if case.ids:
            request["ids"] = list(case.ids)
        if case.context:
            request["context"] = dict(case.context)
        got, want = new.ask(request).to_json(), old.ask(request).to_json()
        assert (got["answer"], got.get("links"), got.get("messages")) == (
            want["answer"],
            want.get("links"),
            want.get("messages"),
        ), case.id


def test_an_index_without_unit_vectors_still_answers_and_a_reindex_adds_them(
    old_index: Path, tmp_path: Path, embedder: Any, fresh: Any
) -> None:
    engine, recording = fresh(old_index)
    data = engine.ask({"query": "Can I return these boots if they don't fit?"}).to_json()
    assert "returnable if they don't fit" in data["answer"]["plain"]
    assert recording.texts  # the evidence sentences, embedded at question time

    out = tmp_path / "index"
    shutil.copytree(old_index, out)
    count = embedder.count
    report = build_index(SAMPLE_SHOP, out, embedder=embedder, progress=False)
    assert not report.up_to_date  # an index without them is not up to date...
    assert report.embedded_passages == 0  # ...but its passage vectors are reused
    assert report.embedded_units == report.unit_texts == embedder.count - count
    assert ShopIndex.open(out).unit_vectors is not None


def test_reindexing_one_changed_product_embeds_only_its_new_texts(
    sample_index: Path, tmp_path: Path, embedder: Any
) -> None:
    shop = tmp_path / "shop"
    shutil.copytree(SAMPLE_SHOP, shop)
    out = tmp_path / "index"
    shutil.copytree(sample_index, out)
    before = ShopIndex.open(out)
    assert before.unit_vectors is not None

    catalogue = json.loads((shop / "products.json").read_text("utf-8"))
    product = catalogue["products"][0]
    product["body_html"] += "<p>Every jacket is seam-taped by hand in our Kendal workshop.</p>"
    (shop / "products.json").write_text(json.dumps(catalogue, ensure_ascii=False), "utf-8")

    recording = RecordingEmbedder(embedder)
    report = build_index(shop, out, embedder=recording, progress=False)
    after = ShopIndex.open(out)
    assert (report.changed, report.added, report.removed) == (1, 0, 0)
    changed = next(d for d in after.documents.values() if before.documents[d.id] != d)
    passages = after.passages_of(changed.id)
    own = set(document_texts(sanitize_document(changed)))
    for p in passages:
        own |= set(passage_texts(p, sanitize_document(changed)))
    new_texts = own - set(before.unit_vectors.texts)
    assert "Every jacket is seam-taped by hand in our Kendal workshop." in new_texts
    assert report.embedded_units == len(new_texts)
    # passages whose text is new: the others keep their vectors, like the answer texts
    new_passages = {p.text for p in passages} - {p.text for p in before.passages}
    assert new_passages and report.embedded_passages == len(new_passages) < len(passages)
    assert set(recording.texts) == new_passages | new_texts
    assert len(recording.texts) == report.embedded_texts == report.embedded_passages + report.embedded_units
    # only the changed product's answer texts were made again; the others came from the live version, in order
    assert report.text_documents == 1
    assert after.unit_vectors.texts == answer_texts(list(after.documents.values()), after.passages)
    # every other text keeps the vector it had
    assert after.unit_vectors is not None
    kept = [t for t in after.unit_vectors.texts if t not in new_texts][:200]
    np.testing.assert_array_equal(
        np.vstack([after.unit_vectors.matrix[after.unit_vectors.row(t)] for t in kept]),
        np.vstack([before.unit_vectors.matrix[before.unit_vectors.row(t)] for t in kept]),
    )

    again = RecordingEmbedder(embedder)
    report = build_index(shop, out, embedder=again, progress=False)
    assert report.up_to_date and again.texts == []


def test_answer_texts_are_made_again_when_the_code_that_makes_them_changed(
    sample_index: Path, tmp_path: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ask_engine.unit_texts as unit_texts

    shop = tmp_path / "shop"
    shutil.copytree(SAMPLE_SHOP, shop)
    out = tmp_path / "index"
    shutil.copytree(sample_index, out)
    catalogue = json.loads((shop / "products.json").read_text("utf-8"))
    catalogue["products"][0]["body_html"] += "<p>Packed in recycled card.</p>"
    (shop / "products.json").write_text(json.dumps(catalogue, ensure_ascii=False), "utf-8")
    monkeypatch.setattr(unit_texts, "code_digest", lambda: "another-version-of-the-code")
    report = build_index(shop, out, embedder=embedder, progress=False)
    assert report.changed == 1
    assert report.text_documents == report.documents  # a record made by other code is not trusted
    index = ShopIndex.open(out)
    assert index.unit_vectors is not None
    assert index.unit_vectors.texts == answer_texts(list(index.documents.values()), index.passages)
    # the next reindex, by the same code, makes none again
    again = build_index(shop, out, embedder=embedder, full=False, progress=False)
    assert again.up_to_date and again.text_documents == 0
    full = build_index(shop, out, embedder=embedder, full=True, progress=False)
    assert full.text_documents == full.documents  # --full makes everything again
