"""retrieve.py: hybrid ranking with the dense floor, resolved resources first, numbered evidence, baselines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ask_engine.config import Settings
from ask_engine.indexes import ShopIndex
from ask_engine.resolve import resolve
from ask_engine.retrieve import Retriever, policy_intents
from ask_engine.types import Resolution


@pytest.fixture(scope="module")
def index(sample_index: Path) -> ShopIndex:
    return ShopIndex.open(sample_index)


@pytest.fixture(scope="module")
def retriever(index: ShopIndex, embedder: Any) -> Retriever:
    return Retriever(index, embedder, Settings())


def _doc_of(index: ShopIndex, handle: str) -> str:
    return next(d.id for d in index.documents.values() if d.handle == handle)


def test_evidence_is_numbered_from_one_and_capped_at_retrieval_k(retriever: Retriever) -> None:
    evidence = retriever.retrieve("How long does UK delivery take?", Resolution())
    assert [e.number for e in evidence] == list(range(1, Settings().retrieval_k + 1))
    assert len({e.passage.id for e in evidence}) == len(evidence)
    assert all(0.0 < e.score <= 1.0 for e in evidence)
    assert evidence[0].passage.link_type in {"shipping_policy", "faq"}
    assert len(retriever.retrieve("How long does UK delivery take?", Resolution(), k=2)) == 2


def test_empty_and_off_topic_queries_find_no_evidence(retriever: Retriever) -> None:
    assert retriever.retrieve("", Resolution()) == []
    assert retriever.retrieve("   ", Resolution()) == []
    assert retriever.retrieve("What is the capital of France?", Resolution()) == []
    assert retriever.rank("Who won the 1966 football world cup?").fused == ()


def test_dense_only_candidates_must_clear_the_floor(retriever: Retriever) -> None:
    floor = retriever.settings.min_dense_score
    ranking = retriever.rank("Which stove should I take camping?")
    lexical = {h.passage_id for h in ranking.lexical}
    assert ranking.fused
    for hit in ranking.fused:
        assert hit.passage_id in lexical or ranking.cosine[hit.passage_id] >= floor
    dense_only = retriever.rank("Which stove should I take camping?", mode="dense")
    assert all(h.score >= floor for h in dense_only.fused)


def test_resolved_product_comes_first_but_the_refund_policy_still_makes_it(
    retriever: Retriever, index: ShopIndex
) -> None:
    tarn = _doc_of(index, "tarn-wellington-boot")
    resolution = resolve(["https://fjordandfell.example/products/tarn-wellington-boot"], index)
    evidence = retriever.retrieve("Can I return these if they don't fit?", resolution)
    assert evidence[0].passage.doc_id == tarn and evidence[0].resolved
    assert any(e.passage.link_type == "refund_policy" for e in evidence)
    assert all(e.resolved == (e.passage.doc_id == tarn) for e in evidence)
    # resolved passages are ranked among themselves by similarity to the question
    resolved_scores = [e.score for e in evidence if e.resolved]
    assert resolved_scores == sorted(resolved_scores, reverse=True)


def test_a_resolved_resource_is_evidence_even_for_a_vague_follow_up(retriever: Retriever, index: ShopIndex) -> None:
    tarn = _doc_of(index, "tarn-wellington-boot")
    evidence = retriever.retrieve("and how much is it?", Resolution(doc_ids=(tarn,), from_history=True))
    assert evidence and evidence[0].passage.doc_id == tarn


def test_several_resolved_products_each_get_their_best_passage_first(retriever: Retriever, index: ShopIndex) -> None:
    mens = _doc_of(index, "langdale-leather-hiking-boot-mens")
    womens = _doc_of(index, "langdale-leather-hiking-boot-womens")
    evidence = retriever.retrieve("Which is lighter?", Resolution(doc_ids=(mens, womens)), k=4)
    assert [e.passage.doc_id for e in evidence[:2]] == [mens, womens]


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_each_retrieval_mode_finds_the_shipping_destinations(retriever: Retriever, mode: Any) -> None:
    ids = retriever.retrieve_ranked("Do you ship to Germany?", mode=mode, k=5)
    assert "policy:shipping_policy" in {retriever.index.passage_by_id[p].doc_id for p in ids}


def test_lexical_baseline_is_pure_bm25_order(retriever: Retriever, index: ShopIndex) -> None:
    query = "gas canister Northern Ireland"
    ranking = retriever.rank(query, mode="lexical")
    assert [h.passage_id for h in ranking.fused] == [h.passage_id for h in index.lexical.search(query, 30)]


def test_policy_intent_reads_plain_english() -> None:
    assert policy_intents("Can I send them back for a refund?") == ["refund_policy"]
    assert policy_intents("Do you deliver to Ireland?") == ["shipping_policy"]
    assert policy_intents("What do you do with my personal data?") == ["privacy_policy"]
    assert policy_intents("Where are your terms and conditions?") == ["terms_of_service"]
    assert policy_intents("Is the jacket warm?") == []


def test_policy_intent_boost_ranks_the_right_policy_higher_on_average(index: ShopIndex, embedder: Any) -> None:
    cases = [
        ("how long do refunds take", "refund_policy"),
        ("Are sale items returnable?", "refund_policy"),
        ("how much is express delivery", "shipping_policy"),
        ("When will my order be dispatched?", "shipping_policy"),
        ("do I have to pay customs in the US", "shipping_policy"),
        ("How do I delete my data?", "privacy_policy"),
        ("Can I get my money back on a faulty tent?", "refund_policy"),
    ]

    def mrr(boost: bool) -> float:
        retriever = Retriever(index, embedder, Settings(), intent_boost=boost)
        total = 0.0
        for query, link_type in cases:
            ids = retriever.retrieve_ranked(query, k=30)
            rank = next((i for i, p in enumerate(ids, 1) if index.passage_by_id[p].link_type == link_type), None)
            total += 1.0 / rank if rank else 0.0
        return total / len(cases)

    plain, boosted = mrr(False), mrr(True)
    assert boosted > plain
    assert boosted >= 0.9
