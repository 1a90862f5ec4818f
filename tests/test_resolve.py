"""resolve.py: ids in every form, products named by title in the query, and follow-ups resolved from history."""

from __future__ import annotations

from pathlib import Path

import pytest

from ask_engine.indexes import ShopIndex
from ask_engine.resolve import expand_follow_up, mentioned_products, refers_back, resolve
from ask_engine.spelling import english_word
from ask_engine.types import Document, Turn, Unresolved


@pytest.fixture(scope="module")
def index(sample_index: Path) -> ShopIndex:
    return ShopIndex.open(sample_index)


def _product(index: ShopIndex, handle: str) -> Document:
    return next(d for d in index.documents.values() if d.kind == "product" and d.handle == handle)


def test_every_id_form_resolves_to_its_product(index: ShopIndex) -> None:
    tarn = _product(index, "tarn-wellington-boot")
    variant = tarn.variants[1]
    assert tarn.gid and variant.sku
    forms = [
        tarn.gid,
        variant.gid,
        variant.sku,
        variant.sku.lower(),
        "tarn-wellington-boot",
        "https://fjordandfell.example/products/tarn-wellington-boot",
        "https://www.other-host.example/en-gb/products/tarn-wellington-boot?variant=1&utm_source=x#reviews",
        "/products/tarn-wellington-boot/",
    ]
    for form in forms:
        resolution = resolve([form], index)
        assert resolution.doc_ids == (tarn.id,), form
        assert resolution.unresolved == ()
        assert not resolution.from_history
    assert resolve([variant.gid], index).variant_gids == (variant.gid,)
    assert resolve([variant.sku], index).variant_gids == (variant.gid,)
    assert resolve([tarn.gid], index).variant_gids == ()


def test_unknown_ids_are_reported_by_position_and_known_ones_still_resolve(index: ShopIndex) -> None:
    tarn = _product(index, "tarn-wellington-boot")
    resolution = resolve(["no-such-thing", "tarn-wellington-boot", "gid://fjordandfell/Product/1"], index)
    assert resolution.doc_ids == (tarn.id,)
    assert resolution.unresolved == (
        Unresolved(path="$.ids[0]", value="no-such-thing"),
        Unresolved(path="$.ids[2]", value="gid://fjordandfell/Product/1"),
    )


def test_faq_and_policy_urls_resolve_to_their_entry_and_page(index: ShopIndex) -> None:
    faq = next(d for d in index.documents.values() if d.kind == "faq")
    anchor = faq.url.split("#", 1)[1]
    assert resolve([f"https://fjordandfell.example/pages/faq#{anchor}"], index).doc_ids == (faq.id,)
    refund = resolve(["https://fjordandfell.example/policies/refund-policy"], index)
    assert refund.doc_ids == ("policy:refund_policy",)
    # the FAQ page URL alone names no single entry
    assert resolve(["https://fjordandfell.example/pages/faq"], index).doc_ids == ()


def test_ids_naming_the_same_product_twice_resolve_once_in_request_order(index: ShopIndex) -> None:
    tarn = _product(index, "tarn-wellington-boot")
    skiddaw = _product(index, "skiddaw-3l-waterproof-jacket-mens")
    assert tarn.gid and skiddaw.gid
    resolution = resolve([skiddaw.gid, "tarn-wellington-boot", tarn.gid, skiddaw.handle or ""], index)
    assert resolution.doc_ids == (skiddaw.id, tarn.id)


@pytest.mark.parametrize(
    "query",
    [
        "Is the Tarn Wellington Boot waterproof?",
        "is the tarn wellington boot waterproof",
        "Are Tarn wellington boots any good in snow?",
        "What's the Tarn Wellington Boot's warranty?",
    ],
)
def test_a_product_named_by_title_is_resolved_without_ids(index: ShopIndex, query: str) -> None:
    tarn = _product(index, "tarn-wellington-boot")
    resolution = resolve([], index, query=query)
    assert resolution.doc_ids == (tarn.id,)
    assert resolution.mentioned_doc_ids == (tarn.id,)


def test_the_closest_title_wins_over_a_sibling_with_fewer_matching_words(index: ShopIndex) -> None:
    mens = _product(index, "langdale-leather-hiking-boot-mens")
    womens = _product(index, "langdale-leather-hiking-boot-womens")
    assert mentioned_products("Do the women's Langdale boots run small?", index) == [womens.id]
    assert mentioned_products("Do the men's Langdale boots run small?", index) == [mens.id]
    # Without the distinguishing word both siblings are named.
    assert set(mentioned_products("Are the Langdale hiking boots waterproof?", index)) == {mens.id, womens.id}


@pytest.mark.parametrize(
    ("query", "handle"),
    [
        ("Where is the Blencathra made?", "blencathra-minus-5-down-sleeping-bag"),
        ("How long is the Cairngorm guaranteed for?", "cairngorm-mountain-shell"),
        ("Is the Wasdale heavy?", "wasdale-4-family-tent"),
    ],
)
def test_a_model_name_written_as_a_name_is_enough(index: ShopIndex, query: str, handle: str) -> None:
    assert mentioned_products(query, index) == [_product(index, handle).id]
    # the same word in lower case names it too where no English word list holds it ("blencathra", "wasdale"); one
    # the list holds ("cairngorm", a place) names nothing on its own in lower case
    lower = mentioned_products(query.lower(), index)
    assert lower == ([] if english_word(handle.split("-")[0]) else [_product(index, handle).id])


@pytest.mark.parametrize(
    "query",
    [
        "Is it good for mountain walking?",
        "Do you do gift wrapping?",
        "What is a tarn?",
        "Do you sell hiking boots?",
        "What's your refund policy?",
        "Which men's jacket is warmest?",
        "Do you ship to Norway?",
        "",
    ],
)
def test_generic_words_do_not_name_a_product(index: ShopIndex, query: str) -> None:
    assert mentioned_products(query, index) == []


def test_mentions_come_after_ids_and_are_not_repeated(index: ShopIndex) -> None:
    tarn = _product(index, "tarn-wellington-boot")
    pike = _product(index, "pike-mini-gas-stove")
    resolution = resolve(["pike-mini-gas-stove"], index, query="Is this lighter than the Tarn Wellington Boot?")
    assert resolution.doc_ids == (pike.id, tarn.id)
    assert resolution.mentioned_doc_ids == (tarn.id,)
    resolution = resolve(["tarn-wellington-boot"], index, query="Is the Tarn Wellington Boot waterproof?")
    assert resolution.doc_ids == (tarn.id,)
    assert resolution.mentioned_doc_ids == ()


def test_words_an_id_already_explains_do_not_name_its_siblings(index: ShopIndex) -> None:
    womens = _product(index, "skiddaw-3l-waterproof-jacket-womens")
    mens = _product(index, "skiddaw-3l-waterproof-jacket-mens")
    resolution = resolve([womens.handle or ""], index, query="Is the Skiddaw jacket warm enough for winter?")
    assert resolution.doc_ids == (womens.id,)
    assert resolution.mentioned_doc_ids == ()
    assert set(resolve([], index, query="Is the Skiddaw jacket warm enough?").doc_ids) == {womens.id, mens.id}


def test_a_follow_up_of_small_words_gets_its_subject_and_one_with_words_of_its_own_is_kept() -> None:
    assert expand_follow_up("and how much is it?", ["Tarn Wellington Boot"]) == (
        "and how much is the Tarn Wellington Boot?"
    )
    assert expand_follow_up("how much are they?", ["A", "B"]) == "how much are the A and the B?"
    assert expand_follow_up("does it come in purple?", ["Skiddaw Waterproof Jacket"]) == "does it come in purple?"
    assert expand_follow_up("how much is it?", []) == "how much is it?"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("and how much is it?", True),
        ("Does it come in navy?", True),
        ("What about the kids' ones?", True),
        ("In black?", True),
        ("price?", True),
        ("Do you ship to Norway?", False),
        ("What payment methods do you accept?", False),
        ("", False),
    ],
)
def test_follow_up_questions_are_recognised(query: str, expected: bool) -> None:
    assert refers_back(query) is expected


def test_a_follow_up_resolves_to_the_products_of_the_last_turn(index: ShopIndex) -> None:
    tarn = _product(index, "tarn-wellington-boot")
    history = [
        Turn(query="Do you ship to Germany?", answer="Yes.", doc_ids=("policy:shipping_policy",)),
        Turn(query="Is the Tarn Wellington Boot waterproof?", answer="…", doc_ids=(tarn.id, "policy:refund_policy")),
    ]
    resolution = resolve([], index, query="and how much is it?", history=history)
    assert resolution.doc_ids == (tarn.id,)
    assert resolution.from_history


def test_a_new_question_or_explicit_ids_do_not_inherit_history(index: ShopIndex) -> None:
    tarn = _product(index, "tarn-wellington-boot")
    pike = _product(index, "pike-mini-gas-stove")
    history = [Turn(query="Is the Tarn Wellington Boot waterproof?", answer="…", doc_ids=(tarn.id,))]
    assert resolve([], index, query="What payment methods do you accept?", history=history).doc_ids == ()
    explicit = resolve(["pike-mini-gas-stove"], index, query="how much is it?", history=history)
    assert explicit.doc_ids == (pike.id,)
    assert not explicit.from_history


def test_history_without_products_carries_its_policy_and_skips_unknown_documents(index: ShopIndex) -> None:
    history = [
        Turn(query="What is your refund policy?", answer="…", doc_ids=("policy:refund_policy",)),
        Turn(query="thanks", answer="…", doc_ids=("product:gone-after-a-rebuild",)),
    ]
    resolution = resolve([], index, query="how long do I have for it?", history=history)
    assert resolution.doc_ids == ("policy:refund_policy",)
    assert resolution.from_history
