"""Disclosure notices as facts the answer can quote, the energy and count measures, and the reading fixes that came
with them (a product's own words for itself, a page title in the key-word check, a product's head noun)."""

from __future__ import annotations

from typing import Any

import pytest

from ask_engine.answering.addressing import addressed_by, asked_measures
from ask_engine.answering.product import _reference_stems
from ask_engine.answering.query import _head, _heads
from ask_engine.answering.units import Unit
from ask_engine.language import content_stems
from ask_engine.types import Document


def unit(text: str) -> Unit:
    return Unit(text, "description", value=text)


def answer(engine: Any, query: str, ids: list[str] | None = None) -> str:
    body: dict[str, Any] = {"query": query, **({"ids": ids} if ids else {})}
    return str(engine.ask(body).to_json()["answer"]["plain"])


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("How many calories are in it?", {"energy"}),
        ("How many bars are in a box?", {"count"}),
        ("How much gas is in this one?", {"weight", "volume"}),
        ("How much is it?", set()),
    ],
)
def test_the_new_kinds_of_figure(question: str, kinds: set[str]) -> None:
    assert {m.name for m in asked_measures(question)} == kinds


def test_a_figure_of_the_asked_kind_next_to_another_attributes_cue_still_addresses() -> None:
    # "freeze-dried" is a warmth cue; the unit also names nutrition, the attribute asked about
    meal = unit("A hearty freeze-dried chilli with rice: 800 kcal and 38 g of protein per pouch.")
    assert "measure" in addressed_by("How many calories are in it?", meal)
    # a unit naming only another attribute still does not
    assert "measure" not in addressed_by("How many calories are in it?", unit("Rated to -5 °C, 800 g of down."))


def _doc(title: str, body: str = "", product_type: str = "", tags: tuple[str, ...] = ()) -> Document:
    return Document(
        id="product:x",
        kind="product",
        title=title,
        url="https://x.example/p",
        link_type="product",
        source="products.json",
        body=body,
        product_type=product_type,
        tags=tags,
    )


def test_words_next_to_the_name_that_the_product_uses_for_itself_name_it() -> None:
    doc = _doc("Fell Shield Sunscreen SPF 50", "High-protection sun cream for long days. Compatible with Shimano SLX.")
    assert _reference_stems("Is your SPF 50 sun cream vegan?", doc) == content_stems("sun cream")
    # a name is what is asked about, and an attribute word is never part of the name
    assert not _reference_stems("Is the SPF 50 Shimano SLX compatible?", doc) & content_stems("shimano slx")
    assert "vegan" not in _reference_stems("Is the SPF 50 vegan sun cream?", doc)


def test_what_a_product_is_is_the_last_word_of_its_title_type_or_tags() -> None:
    light = _doc("Beacon 800 Front Light", product_type="Bike Lights", tags=("lights", "commuting"))
    assert _head("electric bikes") == next(iter(content_stems("bike")))
    assert _head("bikes") not in _heads(light)
    assert _head("bike lights") in _heads(light)


def test_an_age_question_is_answered_from_the_age_notice(engine: Any) -> None:
    text = answer(engine, "Can my 16 year old buy the 12-function multitool?")
    assert "under 18" in text and "not recorded" not in text, text


def test_an_allergen_question_is_answered_from_the_allergen_notice(engine: Any) -> None:
    text = answer(engine, "Are the energy bars safe for a peanut allergy?")
    assert "also handles peanuts" in text, text


def test_an_unrecorded_attribute_offers_the_notice_that_speaks_of_it(engine: Any) -> None:
    text = answer(engine, "Is the midge spray OK for my toddler?")
    assert "children under 2 years" in text, text


def test_calories_are_answered_from_the_description(engine: Any) -> None:
    assert "800 kcal" in answer(engine, "How many calories in the beef chilli expedition meal?")


def test_a_product_called_by_its_description_is_not_the_answer_to_an_attribute(engine: Any) -> None:
    text = answer(engine, "Is your SPF 50 sun cream vegan?")
    assert "not recorded" in text and "vegan" in text, text


def test_a_store_section_answers_under_its_page_title(engine: Any) -> None:
    text = answer(engine, "What are the opening hours of the Fort William store?")
    assert "9:00am - 6:00pm" in text, text
    assert "couldn't find" not in answer(engine, "What time does the Betws-y-Coed shop open on Sunday?")
