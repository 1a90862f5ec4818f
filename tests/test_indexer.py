"""Building and incrementally updating index folders from real shop folders, atomically, with the real model."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ask_engine.chunking as chunking
from ask_engine.cli import main
from ask_engine.errors import IndexUnusable, SourceError
from ask_engine.indexer import BuildReport, build_index
from ask_engine.indexes import ShopIndex
from ask_engine.sources import alias_key
from ask_engine.types import Document, Passage, ShopInfo

PRODUCTS = {
    1: ("Tarn Wellington Boot", "Natural rubber wellington boots, fully waterproof to the ankle.", "TARN-BLK-42"),
    2: ("Ridge Down Jacket", "A warm 700-fill goose down jacket for cold winter days.", "RIDGE-RED-M"),
    3: ("Trail Peanut Butter", "Crunchy peanut butter in a 340 g jar. Contains peanuts.", "PB-340"),
    4: ("Fell Trekking Poles", "Carbon fibre trekking poles with cork handles, 230 g each.", "POLE-CF-120"),
    5: ("Beck Camping Stove", "A compact gas stove that boils a litre of water in four minutes.", "STOVE-GAS-1"),
}
REFUND_POLICY = """---
type: refund_policy
title: Refund Policy
url: https://test.example/policies/refund-policy
---
# Refund Policy

## Returns window

You can return unworn items within 30 days of delivery for a full refund to your original payment method.

## Sale items

Items bought in the sale can be exchanged for store credit only.
"""


def _product_json(n: int, title: str, body: str, sku: str) -> dict[str, Any]:
    handle = title.lower().replace(" ", "-")
    return {
        "id": 9000 + n,
        "title": title,
        "handle": handle,
        "body_html": f"<p>{body}</p>",
        "vendor": "Test Outfitters",
        "product_type": "Outdoor",
        "tags": ["outdoor"],
        "options": [{"name": "Title", "values": ["Default Title"]}],
        "variants": [
            {
                "id": (9000 + n) * 100 + 1,
                "product_id": 9000 + n,
                "title": "Default Title",
                "sku": sku,
                "price": "49.00",
                "available": True,
                "option1": "Default Title",
            }
        ],
    }


def write_shop(folder: Path, products: dict[int, tuple[str, str, str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "shop.toml").write_text(
        '[shop]\nname = "Test Outfitters"\nurl = "https://test.example"\ncurrency = "EUR"\ngid_namespace = "test"\n'
    )
    rows = [_product_json(n, *fields) for n, fields in sorted(products.items())]
    (folder / "products.json").write_text(json.dumps({"products": rows}))
    (folder / "policies").mkdir(exist_ok=True)
    (folder / "policies" / "refund-policy.md").write_text(REFUND_POLICY)
    return folder


def doc_id(n: int) -> str:
    return f"product:gid://test/Product/{9000 + n}"


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its content, to prove a failed build changed nothing."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class Wrapped:
    """An Embedder seam: delegates to the real model, can fail after `fail_after` calls or claim another name."""

    def __init__(
        self,
        inner: Any,
        *,
        name: str | None = None,
        fail_after: int | None = None,
        exc: type[BaseException] = RuntimeError,
    ) -> None:
        self.inner = inner
        self.name = name or inner.name
        self.dimension = inner.dimension
        self.batch_size = 1
        self.fail_after = fail_after
        self.exc = exc
        self.calls = 0

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise self.exc("embedder crashed")
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(text)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return write_shop(tmp_path / "shop", {n: PRODUCTS[n] for n in (1, 2, 3, 4)})


@pytest.fixture
def built(shop: Path, tmp_path: Path, embedder: Any) -> tuple[Path, BuildReport]:
    out = tmp_path / "index"
    return out, build_index(shop, out, embedder=embedder, progress=False)


# ------------------------------------------------------------------------------------------------ first build


def test_first_build_writes_a_live_version_that_opens(built: tuple[Path, BuildReport], embedder: Any) -> None:
    out, report = built
    index = ShopIndex.open(out, expected_model=embedder.name)
    assert report.version == ShopIndex.current_version(out) == index.path.name
    assert report.path == index.path
    assert (report.documents, report.added, report.changed, report.removed, report.unchanged) == (5, 5, 0, 0, 0)
    assert report.passages == len(index.passages) == report.embedded_passages
    assert report.reembedded_all == "first build"
    assert dict(report.documents_by_kind) == {"product": 4, "policy": 1}
    assert set(index.documents) == {doc_id(n) for n in (1, 2, 3, 4)} | {"policy:refund_policy"}
    manifest = index.manifest
    assert manifest["model"] == embedder.name and manifest["dimension"] == 384
    assert manifest["counts"]["passages"] == len(index.passages)
    assert manifest["shop"]["name"] == "Test Outfitters"
    assert manifest["documents"][doc_id(1)]["hash"] == index.documents[doc_id(1)].content_hash()
    assert manifest["documents"][doc_id(1)]["passages"] == [p.id for p in index.passages_of(doc_id(1))]
    assert sorted(p.name for p in (out / "versions").iterdir()) == [report.version]
    assert not (out / "CURRENT.tmp").exists()


def test_built_index_resolves_ids_to_documents_and_variants(built: tuple[Path, BuildReport]) -> None:
    index = ShopIndex.open(built[0])
    sku_key = alias_key("tarn-blk-42")
    assert sku_key is not None
    assert index.aliases[sku_key] == (doc_id(1), "gid://test/ProductVariant/900101")
    url_key = alias_key("https://test.example/products/ridge-down-jacket?variant=1")
    assert url_key is not None
    assert index.aliases[url_key] == (doc_id(2), None)
    assert index.aliases["gid://test/Product/9004"] == (doc_id(4), None)


def test_built_index_answers_dense_lexical_and_subset_searches(built: tuple[Path, BuildReport], embedder: Any) -> None:
    index = ShopIndex.open(built[0])
    dense = index.vectors.search(embedder.embed_query("can I send something back and get my money?"), 3)
    assert index.passage_by_id[dense[0].passage_id].doc_id == "policy:refund_policy"
    wellies = index.vectors.search(embedder.embed_query("wellies for muddy fields"), 1)
    assert index.passage_by_id[wellies[0].passage_id].doc_id == doc_id(1)
    lexical = index.lexical.search("POLE-CF-120", 3)
    assert index.passage_by_id[lexical[0].passage_id].doc_id == doc_id(4)
    jacket_rows = {p.id for p in index.passages_of(doc_id(2))}
    restricted = index.vectors.search(embedder.embed_query("wellies for muddy fields"), 3, where=jacket_rows)
    assert restricted and {h.passage_id for h in restricted} <= jacket_rows


# ------------------------------------------------------------------------------------------------ incremental


def test_incremental_build_embeds_only_new_and_changed_documents(
    built: tuple[Path, BuildReport], shop: Path, embedder: Any
) -> None:
    out, first = built
    before = ShopIndex.open(out)
    products = {n: PRODUCTS[n] for n in (1, 2, 4, 5)}  # 3 removed, 5 added
    products[2] = ("Ridge Down Jacket", "Now filled with recycled 800-fill down, still warm in winter.", "RIDGE-RED-M")
    write_shop(shop, products)

    count = embedder.count
    report = build_index(shop, out, embedder=embedder, progress=False)
    after = ShopIndex.open(out)

    assert (report.added, report.changed, report.removed, report.unchanged) == (1, 1, 1, 2 + 1)
    expected = len(after.passages_of(doc_id(2))) + len(after.passages_of(doc_id(5)))
    assert report.embedded_passages == expected
    assert report.embedded_passages + report.embedded_units == embedder.count - count
    assert 0 < report.embedded_units < report.unit_texts  # the unchanged documents' answer texts are reused
    assert report.reembedded_all is None
    assert report.version != first.version
    # Unchanged documents keep exactly the vectors they had.
    for kept in (doc_id(1), doc_id(4), "policy:refund_policy"):
        old_rows = [before.passages.index(p) for p in before.passages_of(kept)]
        new_rows = [after.passages.index(p) for p in after.passages_of(kept)]
        assert np.array_equal(before.embeddings[old_rows], after.embeddings[new_rows])
    # The removed product is gone from documents, passages, aliases and both searches.
    assert doc_id(3) not in after.documents
    assert after.passages_of(doc_id(3)) == []
    assert all(target != doc_id(3) for target, _ in after.aliases.values())
    assert alias_key("PB-340") not in after.aliases
    assert all(after.passage_by_id[h.passage_id].doc_id != doc_id(3) for h in after.lexical.search("peanut butter", 5))
    dense = after.vectors.search(embedder.embed_query("peanut butter"), len(after.passages))
    assert all(after.passage_by_id[h.passage_id].doc_id != doc_id(3) for h in dense)
    assert "recycled 800-fill" in " ".join(p.text for p in after.passages_of(doc_id(2)))


def test_rebuilding_unchanged_sources_writes_no_new_version(
    built: tuple[Path, BuildReport], shop: Path, embedder: Any
) -> None:
    out, first = built
    count = embedder.count
    report = build_index(shop, out, embedder=embedder, progress=False)
    assert report.up_to_date
    assert report.version == first.version
    assert report.embedded_passages == 0 and embedder.count == count
    assert report.unchanged == 5


def test_full_build_re_embeds_everything(built: tuple[Path, BuildReport], shop: Path, embedder: Any) -> None:
    out, first = built
    count = embedder.count
    report = build_index(shop, out, embedder=embedder, full=True, progress=False)
    assert report.embedded_passages == first.passages
    assert report.embedded_units == report.unit_texts == first.unit_texts
    assert report.embedded_passages + report.embedded_units == embedder.count - count
    assert report.reembedded_all == "full rebuild requested"
    assert report.version != first.version


def test_an_unchanged_document_whose_passage_text_changed_is_re_embedded(
    built: tuple[Path, BuildReport], shop: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A newer chunker can change passages of documents whose sources did not change.
    original = chunking.passages

    def reworded(doc: Document, info: ShopInfo) -> list[Passage]:
        made = original(doc, info)
        if doc.id == doc_id(1):
            made = [Passage(**{**p.to_dict(), "text": p.text + " Reworded."}) for p in made]
        return made

    monkeypatch.setattr(chunking, "passages", reworded)
    report = build_index(shop, built[0], embedder=embedder, progress=False)
    index = ShopIndex.open(built[0])
    assert report.unchanged == 5
    assert report.embedded_passages == len(index.passages_of(doc_id(1)))


def test_a_passage_text_seen_in_the_live_version_keeps_its_vector_in_another_document(
    built: tuple[Path, BuildReport], shop: Path, embedder: Any
) -> None:
    out, _ = built
    before = ShopIndex.open(out)
    # product 4 is removed and the same product comes back under a new id: a new document with the old texts
    write_shop(shop, {1: PRODUCTS[1], 2: PRODUCTS[2], 3: PRODUCTS[3], 6: PRODUCTS[4]})
    count = embedder.count
    report = build_index(shop, out, embedder=embedder, progress=False)
    after = ShopIndex.open(out)
    assert (report.added, report.removed) == (1, 1)
    moved = after.passages_of(doc_id(6))
    assert moved and [p.text for p in moved] == [p.text for p in before.passages_of(doc_id(4))]
    assert report.embedded_passages == 0  # every passage text had a vector already
    assert embedder.count - count == report.embedded_texts == report.embedded_units
    old_rows = [before.passages.index(p) for p in before.passages_of(doc_id(4))]
    new_rows = [after.passages.index(p) for p in moved]
    assert np.array_equal(after.embeddings[new_rows], before.embeddings[old_rows])
    # ...and a reused vector is the one a fresh build computes for that text
    fresh = build_index(shop, out, embedder=embedder, full=True, progress=False)
    assert fresh.embedded_passages == fresh.passages
    rebuilt = ShopIndex.open(out)
    np.testing.assert_allclose(
        rebuilt.embeddings[[rebuilt.passages.index(p) for p in rebuilt.passages_of(doc_id(6))]],
        after.embeddings[new_rows],
        atol=1e-5,
    )
    assert after.unit_vectors is not None and rebuilt.unit_vectors is not None
    texts = after.unit_vectors.texts
    np.testing.assert_allclose(
        np.vstack([rebuilt.unit_vectors.matrix[rebuilt.unit_vectors.row(t)] for t in texts]),
        np.asarray(after.unit_vectors.matrix),
        atol=1e-5,
    )


def test_a_text_that_is_both_a_passage_and_an_answer_text_is_embedded_once(
    shop: Path, tmp_path: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ask_engine.answering import embedded

    original = embedded.own_texts

    def with_passages(doc: Document, passages: Sequence[Passage]) -> tuple[list[str], list[str]]:
        own, of_passages = original(doc, passages)
        return own, [*of_passages, *(p.text for p in passages)]

    monkeypatch.setattr(embedded, "own_texts", with_passages)
    count = embedder.count
    report = build_index(shop, tmp_path / "index", embedder=embedder, progress=False)
    index = ShopIndex.open(tmp_path / "index")
    assert report.embedded_passages == report.passages and report.embedded_units == report.unit_texts
    assert report.embedded_texts == report.unit_texts == embedder.count - count  # the passages were among them
    assert index.unit_vectors is not None
    for i, p in enumerate(index.passages):
        stored = np.asarray(index.unit_vectors.matrix[index.unit_vectors.row(p.text)])
        np.testing.assert_allclose(index.embeddings[i], stored / np.linalg.norm(stored), atol=1e-6)


def test_another_embedding_model_forces_a_full_rebuild(
    built: tuple[Path, BuildReport], shop: Path, embedder: Any
) -> None:
    out, first = built
    other = Wrapped(embedder, name="other-model:0123456789ab")
    report = build_index(shop, out, embedder=other, progress=False)
    assert report.embedded_passages == first.passages
    assert report.reembedded_all is not None and "embedding model changed" in report.reembedded_all
    assert report.unchanged == 5  # the documents did not change, only the model
    assert ShopIndex.open(out, expected_model="other-model:0123456789ab").model == "other-model:0123456789ab"
    with pytest.raises(IndexUnusable, match="other-model"):
        ShopIndex.open(out, expected_model=embedder.name)


def test_only_the_live_and_previous_versions_are_kept(
    built: tuple[Path, BuildReport], shop: Path, embedder: Any
) -> None:
    out, first = built
    versions = [first.version]
    for n in (5, 3):
        products = {k: PRODUCTS[k] for k in (1, 2, 4, n)}
        write_shop(shop, products)
        versions.append(build_index(shop, out, embedder=embedder, progress=False).version)
    assert sorted(p.name for p in (out / "versions").iterdir()) == sorted(versions[-2:])


# ------------------------------------------------------------------------------------------------ atomicity


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_a_crash_while_embedding_leaves_the_live_version_untouched(
    built: tuple[Path, BuildReport], shop: Path, embedder: Any, exc: type[BaseException]
) -> None:
    out, first = built
    snapshot = tree(out)
    products = dict(PRODUCTS)
    products[1] = ("Tarn Wellington Boot", "Changed: now with a steel shank.", "TARN-BLK-42")
    write_shop(shop, products)  # 1 changed, 5 added: several embedding batches
    with pytest.raises(exc, match="embedder crashed"):
        build_index(shop, out, embedder=Wrapped(embedder, fail_after=1, exc=exc), progress=False)
    assert tree(out) == snapshot
    index = ShopIndex.open(out)
    assert index.path.name == first.version
    assert index.passage_by_id[index.lexical.search("TARN-BLK-42", 1)[0].passage_id].doc_id == doc_id(1)


def test_a_crash_during_a_first_build_leaves_no_folder(shop: Path, tmp_path: Path, embedder: Any) -> None:
    out = tmp_path / "new" / "index"
    with pytest.raises(RuntimeError):
        build_index(shop, out, embedder=Wrapped(embedder, fail_after=0), progress=False)
    assert not (tmp_path / "new").exists()


def test_a_bad_source_file_writes_nothing(shop: Path, tmp_path: Path, embedder: Any) -> None:
    (shop / "products.json").write_text('{"products": [{"title": "No closing brace"')
    out = tmp_path / "index"
    with pytest.raises(SourceError, match=r"products\.json"):
        build_index(shop, out, embedder=embedder, progress=False)
    assert not out.exists()


def test_a_bad_source_file_leaves_an_existing_index_unchanged(
    built: tuple[Path, BuildReport], shop: Path, embedder: Any
) -> None:
    out, _ = built
    snapshot = tree(out)
    (shop / "policies" / "refund-policy.md").write_text("---\ntype: refund_policy\ntitle: [unclosed\n---\n# Hi\n")
    count = embedder.count
    with pytest.raises(SourceError, match=r"refund-policy\.md"):
        build_index(shop, out, embedder=embedder, progress=False)
    assert tree(out) == snapshot
    assert embedder.count == count


def test_an_open_index_keeps_answering_after_rebuilds_remove_its_folder(
    built: tuple[Path, BuildReport], shop: Path, embedder: Any
) -> None:
    out, first = built
    opened = ShopIndex.open(out)
    for n in (5, 3):  # two rebuilds: the first version is garbage-collected
        write_shop(shop, {k: PRODUCTS[k] for k in (1, 2, 4, n)})
        build_index(shop, out, embedder=embedder, progress=False)
    assert not first.path.exists()
    assert opened.passage_by_id[opened.lexical.search("PB-340", 1)[0].passage_id].doc_id == doc_id(3)
    hits = opened.vectors.search(embedder.embed_query("nut butter"), 1)
    assert opened.passage_by_id[hits[0].passage_id].doc_id == doc_id(3)


@pytest.mark.skipif(os.name != "posix", reason="flock is POSIX")
def test_a_second_concurrent_build_fails_clearly(built: tuple[Path, BuildReport], shop: Path, embedder: Any) -> None:
    import fcntl

    out, _ = built
    with (out / ".lock").open("a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with pytest.raises(IndexUnusable, match="another `ask-engine index` run is updating"):
            build_index(shop, out, embedder=embedder, full=True, progress=False)


def test_refuses_to_write_into_a_folder_that_holds_something_else(shop: Path, tmp_path: Path, embedder: Any) -> None:
    out = tmp_path / "documents"
    out.mkdir()
    (out / "thesis.txt").write_text("precious")
    with pytest.raises(IndexUnusable, match="holds no index"):
        build_index(shop, out, embedder=embedder, progress=False)
    assert tree(out) == {"thesis.txt": b"precious"}


# ------------------------------------------------------------------------------------------------ CLI


def test_cli_index_prints_a_summary(shop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli-index"
    assert main(["index", str(shop), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "5 documents (1 policy, 4 products)" in printed
    assert "added 5, changed 0, removed 0, unchanged 0" in printed
    index = ShopIndex.open(out)
    assert f"{len(index.passages)} passages" in printed
    assert main(["index", str(shop), "--out", str(out), "--quiet"]) == 0
    assert "already up to date" in capsys.readouterr().out


def test_cli_index_reports_model_loading_apart_from_embedding(
    shop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, embedder: Any
) -> None:
    import re
    import time

    import ask_engine.embedders as embedders

    shared = embedders._shared

    def slow_load(key: tuple[str, ...], build: Any) -> Any:  # a cold start: the model (either backend) loads slowly
        time.sleep(3.0)
        return shared(key, build)

    monkeypatch.setattr(embedders, "_shared", slow_load)
    single = write_shop(tmp_path / "one-product", {3: PRODUCTS[3]})
    assert main(["index", str(single), "--out", str(tmp_path / "one"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    embedded = re.search(r"embedded (\d+) (passages?) and \d+ answer texts? in ([\d.]+) s", printed)
    assert embedded, printed
    count, noun, seconds = int(embedded[1]), embedded[2], float(embedded[3])
    assert noun == ("passage" if count == 1 else "passages")
    # the model's loading is not counted as embedding (passages and answer texts: two model calls, on busy cores
    # about a second each with torch's two threads)...
    assert seconds < 3.0
    loading = re.search(r"loading the embedding model took ([\d.]+) s; ([\d.]+) s in all", printed)
    assert loading, printed
    assert float(loading[1]) >= 3.0 and float(loading[2]) >= float(loading[1])  # ...but reported on its own


def test_index_report_pluralises() -> None:
    from ask_engine.indexer import format_report

    report = BuildReport(
        version="v1",
        documents=1,
        passages=1,
        added=1,
        changed=0,
        removed=0,
        unchanged=0,
        embedded_passages=1,
        seconds=28.2,
        path=Path("x"),
        documents_by_kind=(("faq", 1),),
        model_seconds=27.9,
        embed_seconds=0.3,
    )
    text = format_report(report, "indexes/x")
    assert "1 document (1 FAQ entry), 1 passage," in text
    assert "embedded 1 passage and 0 answer texts in 0.3 s" in text
    assert "loading the embedding model took 27.9 s; 28.2 s in all" in text


def test_cli_index_refuses_to_write_into_a_shop_folder(shop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = tree(shop)
    assert main(["index", str(shop), "--out", str(shop), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "is a shop folder (it has shop.toml)" in err and f"--out indexes/{shop.name}" in err
    assert tree(shop) == before


def test_cli_index_reports_a_bad_shop_with_exit_code_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shop = write_shop(tmp_path / "bad-shop", {1: PRODUCTS[1]})
    (shop / "products.json").write_text("[1, 2")
    out = tmp_path / "cli-index"
    assert main(["index", str(shop), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "ask-engine: error: products.json" in err
    assert not out.exists()


# ------------------------------------------------------------------------------------------------ the sample shop


def test_sample_shop_index_resolves_every_sku_and_finds_it_lexically(sample_index: Path) -> None:
    index = ShopIndex.open(sample_index)
    products = [d for d in index.documents.values() if d.kind == "product"]
    assert products and index.manifest["counts"]["passages"] == len(index.passages)
    for doc in products:
        for variant in doc.variants:
            if not variant.sku:
                continue
            key = alias_key(variant.sku)
            assert key is not None and index.aliases[key] == (doc.id, variant.gid)
        sku = next((v.sku for v in doc.variants if v.sku), None)
        if sku:
            top = index.lexical.search(sku, 1)
            assert index.passage_by_id[top[0].passage_id].doc_id == doc.id, sku


def test_an_id_naming_two_products_resolves_to_neither_and_is_reported(tmp_path: Path, embedder: Any) -> None:
    shop = write_shop(tmp_path / "shop", {1: PRODUCTS[1], 2: (*PRODUCTS[2][:2], "TARN-BLK-42")})
    report = build_index(shop, tmp_path / "index", embedder=embedder, progress=False)
    index = ShopIndex.open(tmp_path / "index")
    assert alias_key("TARN-BLK-42") not in index.aliases
    assert any("'id:tarn-blk-42' names 2 products" in w for w in report.warnings)
    assert index.manifest["warnings"] == list(report.warnings)
    assert index.aliases[alias_key("tarn-wellington-boot") or ""] == (doc_id(1), None)


# ------------------------------------------------------------------------------------------------ integrity

TINY_SHOP = Path(__file__).parent / "fixtures" / "shops" / "tiny-shop"
# Every file of a built index, relative to the index folder ("V/" is the live version folder).
INDEX_FILES = (
    "CURRENT",
    "V/manifest.json",
    "V/documents.jsonl",
    "V/passages.jsonl",
    "V/vectors.faiss",
    "V/embeddings.npy",
    "V/aliases.json",
    "V/unit_vectors.npy",
    "V/unit_texts.json",
    "V/unit_sources.json",
    "V/bm25/data.csc.index.npy",
    "V/bm25/indices.csc.index.npy",
    "V/bm25/indptr.csc.index.npy",
    "V/bm25/params.index.json",
    "V/bm25/vocab.index.json",
    "V/bm25/tokenizer.json",
)


def _truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _zero(data: bytes) -> bytes:
    return bytes(len(data))


def _flip(data: bytes) -> bytes:
    """One bit flipped, past any header (the middle of the file)."""
    at = len(data) // 2
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


DAMAGES = {"truncated": _truncate, "zeroed": _zero, "bit-flipped": _flip, "deleted": None}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    """The tiny shop indexed once for the module; every damage case works on a copy."""
    out = tmp_path_factory.mktemp("pristine") / "index"
    build_index(TINY_SHOP, out, embedder=embedder, progress=False)
    return out


def _resolve(root: Path, name: str) -> Path:
    version = ShopIndex.current_version(root)
    assert version is not None
    return root / name.replace("V/", f"versions/{version}/", 1)


def test_the_damage_cases_cover_every_file_of_an_index(pristine: Path) -> None:
    version = pristine / "versions" / str(ShopIndex.current_version(pristine))
    on_disk = {"CURRENT"} | {f"V/{p.relative_to(version).as_posix()}" for p in version.rglob("*") if p.is_file()}
    assert on_disk == set(INDEX_FILES)


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("name", INDEX_FILES)
def test_a_damaged_index_file_is_a_clean_error_and_index_rebuilds_it(
    pristine: Path, tmp_path: Path, embedder: Any, name: str, damage: str
) -> None:
    root = tmp_path / "index"
    shutil.copytree(pristine, root)
    target = _resolve(root, name)
    change = DAMAGES[damage]
    if change is None:
        target.unlink()
    else:
        target.write_bytes(change(target.read_bytes()))

    with pytest.raises(IndexUnusable, match=r"rebuild|build one"):
        ShopIndex.open(root, expected_model=embedder.name)

    report = build_index(TINY_SHOP, root, embedder=embedder, progress=False)
    assert not report.up_to_date
    rebuilt = ShopIndex.open(root, expected_model=embedder.name)
    good = ShopIndex.open(pristine)
    assert [p.to_dict() for p in rebuilt.passages] == [p.to_dict() for p in good.passages]
    # The vectors are the model's own, not a copy of damaged rows.
    on_disk = np.load(rebuilt.path / "embeddings.npy")
    np.testing.assert_allclose(on_disk, np.load(good.path / "embeddings.npy"), atol=1e-5)
    np.testing.assert_allclose(rebuilt.embeddings, on_disk, atol=1e-6)
    assert rebuilt.lexical.search("MUG-350", 1)[0].passage_id == good.lexical.search("MUG-350", 1)[0].passage_id


def test_damaged_vectors_are_re_embedded_not_copied(pristine: Path, tmp_path: Path, embedder: Any) -> None:
    root = tmp_path / "index"
    shutil.copytree(pristine, root)
    embeddings = _resolve(root, "V/embeddings.npy")
    matrix = np.load(embeddings)
    matrix[0] = -matrix[0]  # still a valid .npy file of unit rows: only the checksum can tell
    np.save(embeddings, matrix)
    wrapped = Wrapped(embedder)
    report = build_index(TINY_SHOP, root, embedder=wrapped, progress=False)
    assert report.embedded_passages == report.passages
    assert report.reembedded_all is not None and "damaged" in report.reembedded_all
    assert any("damaged" in w for w in report.warnings)
    np.testing.assert_allclose(
        np.load(ShopIndex.open(root).path / "embeddings.npy"),
        np.load(_resolve(pristine, "V/embeddings.npy")),
        atol=1e-5,
    )


def test_a_damaged_lexical_file_is_rewritten_while_intact_vectors_are_reused(
    pristine: Path, tmp_path: Path, embedder: Any
) -> None:
    root = tmp_path / "index"
    shutil.copytree(pristine, root)
    target = _resolve(root, "V/bm25/data.csc.index.npy")
    target.write_bytes(_flip(target.read_bytes()))
    report = build_index(TINY_SHOP, root, embedder=Wrapped(embedder), progress=False)
    assert not report.up_to_date
    assert report.embedded_passages == 0
    ShopIndex.open(root)


@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage", b"\x00" * 30, b"\x80"])
def test_a_non_utf8_current_is_a_clean_error_in_every_command_and_index_recovers(
    pristine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    root = tmp_path / "index"
    shutil.copytree(pristine, root)
    (root / "CURRENT").write_bytes(content)
    for argv in (
        ["ask", "--index", str(root), "Is the mug dishwasher safe?"],
        ["serve", "--index", str(root), "--port", "0"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "CURRENT is corrupt" in err and "rebuild" in err
        assert "Traceback" not in err
    assert main(["index", str(TINY_SHOP), "--out", str(root), "--quiet"]) == 0
    assert "unreadable" in capsys.readouterr().out
    assert ShopIndex.open(root).shop.name == "Tiny Test Shop"


def test_an_index_build_embeds_on_every_core_unless_the_settings_name_the_threads() -> None:
    from ask_engine.config import Settings
    from ask_engine.indexer import _build_settings, build_threads

    assert build_threads() == max(1, min(os.cpu_count() or 1, 8))
    assert _build_settings(Settings()).embedding_threads == build_threads()
    assert _build_settings(Settings(embedding_threads=1)).embedding_threads == 1
