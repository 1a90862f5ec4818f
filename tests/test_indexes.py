"""Index format and in-memory index: FAISS vectors, BM25 terms, ShopIndex loading and its errors."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ask_engine.indexes as indexes
from ask_engine.errors import IndexUnusable
from ask_engine.indexes import FaissVectorIndex, ShopIndex, write_version
from ask_engine.lexical import Bm25Index, Tokenizer
from ask_engine.protocols import LexicalIndex, VectorIndex
from ask_engine.types import Document, Passage, ShopInfo, Variant

SHOP = ShopInfo(name="Test Outfitters", url="https://test.example", currency="EUR", gid_namespace="test")


def _product(n: int, title: str, text: str, sku: str) -> tuple[Document, Passage]:
    gid = f"gid://test/Product/{n}"
    variant = Variant(gid=f"gid://test/ProductVariant/{n}01", title="Default", sku=sku, price="10.00")
    doc = Document(
        id=f"product:{gid}",
        kind="product",
        title=title,
        url=f"https://test.example/products/p{n}",
        link_type="product",
        source="products.json",
        gid=gid,
        handle=f"p{n}",
        body=text,
        variants=(variant,),
        aliases=(gid, variant.gid, sku, f"p{n}"),
    )
    passage = Passage(
        id=f"{doc.id}#0",
        doc_id=doc.id,
        text=f"{title}. {text} SKU {sku}.",
        title=title,
        url=doc.url,
        kind="product",
        link_type="product",
        gid=gid,
    )
    return doc, passage


def _corpus() -> tuple[list[Document], list[Passage]]:
    docs, passages = [], []
    for n, (title, text, sku) in enumerate(
        [
            ("Tarn Wellington Boot", "Natural rubber wellies that keep your feet dry in puddles.", "TARN-BLK-42"),
            ("Ridge Down Jacket", "A warm 700-fill goose down jacket for cold winter days.", "RIDGE-RED-M"),
            ("Trail Peanut Butter", "Crunchy peanut butter in a 340 g jar. Contains peanuts.", "PB-340"),
            ("Tarn Wellington Boot Kids", "Natural rubber wellies for children.", "TARN-BLK-30"),
        ],
        start=1,
    ):
        doc, passage = _product(n, title, text, sku)
        docs.append(doc)
        passages.append(passage)
    policy = Document(
        id="policy:refund_policy",
        kind="policy",
        title="Refund Policy",
        url="https://test.example/policies/refund-policy",
        link_type="refund_policy",
        source="policies/refund-policy.md",
    )
    docs.append(policy)
    for i, (heading, text) in enumerate(
        [
            ("Returns window", "Returns are accepted within 30 days of delivery for a full refund."),
            ("Sale items", "Items bought in the sale can be exchanged for store credit only."),
        ]
    ):
        passages.append(
            Passage(
                id=f"{policy.id}#{i}",
                doc_id=policy.id,
                text=text,
                title=f"Refund Policy — {heading}",
                url=f"{policy.url}#{heading.lower().replace(' ', '-')}",
                kind="policy",
                link_type="refund_policy",
            )
        )
    return docs, passages


def _write(root: Path, embedder: Any, name: str = "v1", **overrides: Any) -> Path:
    docs, passages = _corpus()
    aliases = {"id:tarn-blk-42": (docs[0].id, docs[0].variants[0].gid), "handle:p2": (docs[1].id, None)}
    manifest = {"model": embedder.name, "dimension": embedder.dimension, "shop": asdict(SHOP), **overrides}
    folder = root / indexes.VERSIONS / name
    write_version(
        folder,
        manifest=manifest,
        documents=docs,
        passages=passages,
        embeddings=embedder.embed_documents([p.text for p in passages]),
        aliases=aliases,
    )
    (root / indexes.CURRENT).write_text(name + "\n")
    return folder


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    root = tmp_path_factory.mktemp("shop-index")
    _write(root, embedder)
    return root


@pytest.fixture(scope="module")
def index(built: Path, embedder: Any) -> ShopIndex:
    return ShopIndex.open(built, expected_model=embedder.name)


# ------------------------------------------------------------------------------------------------ ShopIndex


def test_open_reads_the_live_version_completely(index: ShopIndex, built: Path) -> None:
    docs, passages = _corpus()
    assert index.path == built / "versions" / "v1"
    assert ShopIndex.current_version(built) == "v1"
    assert index.shop == SHOP
    assert list(index.documents) == [d.id for d in docs]
    assert index.documents[docs[0].id] == docs[0]
    assert index.passages == passages
    assert index.passage_by_id[passages[1].id] == passages[1]
    assert index.aliases["id:tarn-blk-42"] == (docs[0].id, "gid://test/ProductVariant/101")
    assert index.aliases["handle:p2"] == (docs[1].id, None)
    assert [p.id for p in index.passages_of("policy:refund_policy")] == [
        "policy:refund_policy#0",
        "policy:refund_policy#1",
    ]
    assert index.passages_of("product:unknown") == []
    assert index.manifest["format_version"] == indexes.FORMAT_VERSION
    assert index.manifest["vector_index"]["type"] == "flat"
    assert index.embeddings.shape == (len(passages), 384)


def test_embeddings_on_disk_match_the_vector_index(index: ShopIndex) -> None:
    on_disk = np.load(index.path / indexes.EMBEDDINGS)
    np.testing.assert_allclose(index.embeddings, on_disk, atol=1e-6)


def test_dense_search_finds_a_paraphrase(index: ShopIndex, embedder: Any) -> None:
    hits = index.vectors.search(embedder.embed_query("can I send things back for my money?"), 3)
    assert hits[0].passage_id == "policy:refund_policy#0"
    assert [h.rank for h in hits] == [1, 2, 3]
    assert all(h.source == "dense" for h in hits)
    assert hits[0].score >= hits[1].score >= hits[2].score


def test_dense_search_restricted_to_a_subset(index: ShopIndex, embedder: Any) -> None:
    query = embedder.embed_query("rubber boots for the rain")
    unrestricted = index.vectors.search(query, 1)
    assert unrestricted[0].passage_id.startswith("product:gid://test/Product/1")
    subset = {"product:gid://test/Product/2#0", "product:gid://test/Product/3#0", "not-a-passage"}
    hits = index.vectors.search(query, 5, where=subset)
    assert {h.passage_id for h in hits} == subset - {"not-a-passage"}
    assert index.vectors.search(query, 5, where=set()) == []


def test_lexical_search_finds_an_exact_sku(index: ShopIndex) -> None:
    hits = index.lexical.search("Do you have TARN-BLK-42 in stock?", 3)
    assert hits[0].passage_id == "product:gid://test/Product/1#0"
    assert hits[0].source == "lexical"
    # The kids' boot shares the SKU's parts, not the whole code: it must rank below.
    assert hits[0].score > hits[1].score


def test_lexical_search_stems_words(index: ShopIndex) -> None:
    hits = index.lexical.search("returning", 2)
    assert hits and hits[0].passage_id == "policy:refund_policy#0"


@pytest.mark.parametrize("query", ["", "   ", "the and of", "zyxxy qwerty", "?!"])
def test_lexical_search_without_known_terms_returns_nothing(index: ShopIndex, query: str) -> None:
    assert index.lexical.search(query, 5) == []


def test_open_index_keeps_working_after_its_folder_is_deleted(tmp_path: Path, embedder: Any) -> None:
    _write(tmp_path, embedder)
    opened = ShopIndex.open(tmp_path)
    shutil.rmtree(tmp_path)
    assert opened.lexical.search("peanut", 1)[0].passage_id == "product:gid://test/Product/3#0"
    assert (
        opened.vectors.search(embedder.embed_query("nut butter"), 1)[0].passage_id == "product:gid://test/Product/3#0"
    )
    assert opened.embeddings.shape[0] == len(opened.passages)


# ------------------------------------------------------------------------------------------------ errors


def test_open_a_missing_folder_says_how_to_build_one(tmp_path: Path) -> None:
    with pytest.raises(IndexUnusable, match=r"no index at .*ask-engine index"):
        ShopIndex.open(tmp_path / "nowhere")


def test_open_a_folder_without_current_says_so(tmp_path: Path) -> None:
    assert ShopIndex.current_version(tmp_path) is None
    with pytest.raises(IndexUnusable, match="no live index"):
        ShopIndex.open(tmp_path)


@pytest.mark.parametrize("content", ["../../etc\n", "\n", ".tmp-x\n"])
def test_a_corrupt_current_file_is_an_index_error(tmp_path: Path, content: str) -> None:
    (tmp_path / "CURRENT").write_text(content)
    with pytest.raises(IndexUnusable, match="CURRENT is corrupt"):
        ShopIndex.open(tmp_path)


def test_current_naming_a_missing_version_is_an_index_error(tmp_path: Path) -> None:
    (tmp_path / "CURRENT").write_text("gone\n")
    with pytest.raises(IndexUnusable, match="missing"):
        ShopIndex.open(tmp_path)


def test_model_mismatch_is_an_index_error_naming_both_models(built: Path) -> None:
    with pytest.raises(IndexUnusable, match=r"all-MiniLM-L6-v2.*other-model:123.*rebuild"):
        ShopIndex.open(built, expected_model="other-model:123")


def _resealed(folder: Path, name: str, text: str) -> None:
    """Rewrite a file and record its new checksum, as a buggy writer would: only the content checks can tell."""
    (folder / name).write_text(text)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"] = indexes.file_checksums(folder)
    manifest["checksum"] = indexes.manifest_checksum(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda f: (f / "vectors.faiss").unlink(), "incomplete .*vectors.faiss"),
        (lambda f: (f / "manifest.json").write_text("{not json"), "manifest.json is unreadable"),
        (lambda f: (f / "passages.jsonl").write_text('{"id": "x"}\n'), "corrupt"),
        (lambda f: (f / "aliases.json").write_text('{"id:x": {"doc_id": "product:nope"}}'), "corrupt .*aliases.json"),
        (lambda f: _resealed(f, "aliases.json", '{"id:x": {"doc_id": "product:nope"}}'), "unknown documents"),
        (lambda f: (f / "bm25" / "vocab.index.json").unlink(), "corrupt"),
    ],
)
def test_damaged_version_files_are_index_errors(tmp_path: Path, embedder: Any, damage: Any, message: str) -> None:
    folder = _write(tmp_path, embedder)
    damage(folder)
    with pytest.raises(IndexUnusable, match=message):
        ShopIndex.open(tmp_path)


def test_another_format_version_is_an_index_error(tmp_path: Path, embedder: Any) -> None:
    folder = _write(tmp_path, embedder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["format_version"] = 999
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexUnusable, match="format 999"):
        ShopIndex.open(tmp_path)


# ------------------------------------------------------------------------------------------------ components


def _unit_rows(n: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_vector_index_satisfies_protocol_and_round_trips(tmp_path: Path) -> None:
    rows = _unit_rows(50)
    ids = [f"p{i}" for i in range(50)]
    vectors = FaissVectorIndex(8)
    assert isinstance(vectors, VectorIndex)
    vectors.add(ids[:20], rows[:20])
    vectors.add(ids[20:], rows[20:])
    expected = np.argsort(-(rows @ rows[7]))[:5]
    assert [h.passage_id for h in vectors.search(rows[7], 5)] == [ids[i] for i in expected]
    vectors.save(tmp_path)
    loaded = FaissVectorIndex.load(tmp_path, ids)
    assert [h.passage_id for h in loaded.search(rows[7], 5)] == [ids[i] for i in expected]
    np.testing.assert_allclose(loaded.vectors(), rows, atol=1e-6)


@pytest.mark.parametrize("small_subset_limit", [2048, 1])
def test_vector_subset_search_is_exact_on_both_paths(monkeypatch: pytest.MonkeyPatch, small_subset_limit: int) -> None:
    monkeypatch.setattr(indexes, "_SMALL_SUBSET", small_subset_limit)
    rows = _unit_rows(40, seed=1)
    ids = [f"p{i}" for i in range(40)]
    vectors = FaissVectorIndex(8)
    vectors.add(ids, rows)
    subset = {f"p{i}" for i in range(0, 40, 3)}
    members = np.array(range(0, 40, 3))
    expected = members[np.argsort(-(rows[members] @ rows[5]))][:4]
    hits = vectors.search(rows[5], 4, where=subset)
    assert [h.passage_id for h in hits] == [ids[i] for i in expected]
    np.testing.assert_allclose([h.score for h in hits], rows[expected] @ rows[5], atol=1e-5)


def test_vector_index_switches_to_hnsw_at_the_threshold(tmp_path: Path) -> None:
    rows = _unit_rows(30, seed=2)
    ids = [f"p{i}" for i in range(30)]
    vectors = FaissVectorIndex(8, hnsw_threshold=25)
    vectors.add(ids[:10], rows[:10])
    assert vectors.kind == "flat"
    vectors.add(ids[10:], rows[10:])
    assert vectors.kind == "hnsw"
    assert vectors.search(rows[12], 1)[0].passage_id == "p12"
    assert vectors.search(rows[12], 1, where={"p3", "p4"})[0].passage_id in {"p3", "p4"}
    vectors.save(tmp_path)
    assert FaissVectorIndex.load(tmp_path, ids).kind == "hnsw"


def test_vector_index_rejects_bad_input() -> None:
    vectors = FaissVectorIndex(8)
    vectors.add(["a"], _unit_rows(1))
    with pytest.raises(ValueError, match="duplicate"):
        vectors.add(["a"], _unit_rows(1))
    with pytest.raises(ValueError, match="matrix"):
        vectors.add(["b"], np.zeros((1, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="dimensions"):
        vectors.search(np.zeros(4, dtype=np.float32), 1)
    assert vectors.search(_unit_rows(1)[0], 0) == []
    assert FaissVectorIndex(8).search(_unit_rows(1)[0], 3) == []


def test_tokenizer_keeps_codes_whole_and_drops_stopwords() -> None:
    tokens = Tokenizer()("Is the TB-42-BLK in size 3.5 WATERPROOF?")
    assert "tb-42-blk" in tokens and "42" in tokens and "3.5" in tokens
    assert "the" not in tokens and "is" not in tokens
    assert "waterproof" in tokens


def test_bm25_of_no_passages_is_empty_and_round_trips(tmp_path: Path) -> None:
    empty = Bm25Index.build([])
    assert isinstance(empty, LexicalIndex)
    assert empty.search("anything", 3) == []
    empty.save(tmp_path)
    assert Bm25Index.load(tmp_path, []).search("anything", 3) == []


def test_bm25_handles_passages_without_terms_and_subsets(tmp_path: Path) -> None:
    _docs, passages = _corpus()
    blank = Passage(id="x#0", doc_id="x", text="", title="", url="u", kind="page", link_type="page")
    lexical = Bm25Index.build([*passages, blank])
    lexical.save(tmp_path)
    loaded = Bm25Index.load(tmp_path, [p.id for p in [*passages, blank]])
    assert loaded.search("peanut", 3)[0].passage_id == "product:gid://test/Product/3#0"
    restricted = loaded.search("rubber wellies", 5, where={"product:gid://test/Product/4#0"})
    assert [h.passage_id for h in restricted] == ["product:gid://test/Product/4#0"]
