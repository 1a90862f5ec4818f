"""Reading search constraints from a question and judging one product against them (no model, no index)."""

from __future__ import annotations

import pytest

from ask_engine.catalog.constraints import read_constraints, remember
from ask_engine.catalog.verdicts import judge
from ask_engine.types import Document, Fact, Variant


@pytest.mark.parametrize(
    ("query", "low", "high", "stated"),
    [
        ("waterproof boots under £100", None, 10000, None),
        ("between 20 and 40 euros", 2000, 4000, "EUR"),
        ("tents from £250 to £300", 25000, 30000, None),
        ("a £30 fleece", None, 3000, None),
        ("poles over £50", 5000, None, None),
        ("£80 or less", None, 8000, None),
        ("2-person tent", None, None, None),
        ("boots under $100", None, 10000, "USD"),
    ],
)
def test_prices_are_read_in_minor_units_and_a_foreign_currency_is_reported_not_applied(
    query: str, low: int | None, high: int | None, stated: str | None
) -> None:
    understood = read_constraints(query, "GBP")
    assert (understood.min_price_minor, understood.max_price_minor) == (low, high)
    assert understood.stated_currency == stated
    assert understood.degraded == (stated is not None)


def test_attributes_apply_to_what_they_were_said_of_and_negations_are_read() -> None:
    two = read_constraints("a waterproof jacket and warm gloves", "GBP")
    assert [(p.kind, [(a.key, a.wanted) for a in p.attributes]) for p in two.passes] == [
        ("jacket", [("waterproof", "true")]),
        ("gloves", [("warmth", "true")]),
    ]
    one = read_constraints("waterproof and breathable jacket", "GBP")
    assert len(one.passes) == 1 and {a.key for a in one.passes[0].attributes} == {"waterproof", "breathability"}
    negated = read_constraints("trousers that are not waterproof", "GBP").passes[0].attributes[0]
    assert (negated.key, negated.wanted, negated.negated) == ("waterproof", "false", True)
    options = read_constraints("jacket in black size 10", "GBP").passes[0].options
    assert {(o.kind, o.value) for o in options} == {("colour", "black"), ("size", "10")}


def test_a_for_phrase_is_context_and_a_follow_up_fills_its_gaps_from_the_conversation() -> None:
    understood = read_constraints("waterproof boots for a wet week in Iceland", "GBP")
    assert understood.context == ("a wet week in iceland",)
    assert [a.key for a in understood.passes[0].attributes] == ["waterproof"]
    earlier = read_constraints("boots under £70", "GBP")
    now = remember(read_constraints("what about waterproof ones?", "GBP"), [earlier])
    assert now.max_price_minor == 7000 and now.passes[0].kind == "boots"
    assert {r.constraint for r in now.remembered} == {"max_price", "kind"}
    stated = remember(read_constraints("boots under £90", "GBP"), [earlier])
    assert stated.max_price_minor == 9000 and not stated.remembered


def _doc(facts: tuple[Fact, ...] = (), tags: tuple[str, ...] = (), title: str = "Trail Thing") -> Document:
    variants = (
        Variant(
            "gid://t/ProductVariant/1",
            "Black / 9",
            price="80.00",
            available=True,
            options=(("Colour", "Black"), ("Size", "9")),
        ),
        Variant(
            "gid://t/ProductVariant/2",
            "Red / 10",
            price="120.00",
            available=False,
            options=(("Colour", "Red"), ("Size", "10")),
        ),
    )
    return Document(
        id="product:1",
        kind="product",
        title=title,
        url="https://t.example/products/t",
        link_type="product",
        source="products.json",
        gid="gid://t/Product/1",
        facts=facts,
        variants=variants,
        tags=tags,
        options=(("Colour", ("Black", "Red")), ("Size", ("9", "10"))),
        currency="GBP",
    )


def test_verdicts_name_their_source_and_never_turn_not_recorded_into_a_no() -> None:
    asked = read_constraints("waterproof boots under £100", "GBP")
    part = asked.passes[0]
    bare = judge(_doc(), 0, part, asked)
    assert [(v.constraint, v.outcome, v.source) for v in bare.verdicts] == [
        ("attribute", "not_assessed", "unenriched"),
        ("max_price", "satisfied", "live_price"),
    ]
    other = judge(_doc(facts=(Fact("material", "Material", "rubber"),)), 0, part, asked)
    assert other.verdicts[0].source == "not_recorded" and other.verdicts[0].outcome == "not_assessed"
    no = judge(_doc(facts=(Fact("waterproof", "Waterproof", "no"),)), 0, part, asked)
    assert (no.verdicts[0].outcome, no.verdicts[0].found) == ("failed", ["false"])
    yes = judge(_doc(facts=(Fact("waterproof", "Waterproof", "yes"),)), 0, part, asked)
    assert yes.qualifies and yes.price_minor == 8000
    red = read_constraints("red boots under £100", "GBP")
    sold_out = judge(_doc(), 0, red.passes[0], red)
    first = sold_out.verdicts[0]
    assert (first.constraint, first.outcome, first.source) == ("option", "failed", "inventory")


def test_a_product_is_the_kind_asked_for_only_when_the_last_word_asked_names_what_it_is() -> None:
    from ask_engine.catalog.search import CatalogSearch

    lights = _doc(title="Beacon 800 Bike Lights")
    assert not CatalogSearch.names_kind("bikes", lights)  # every word is the product's, but it is lights
    assert CatalogSearch.names_kind("bike lights", lights)
    assert CatalogSearch.names_kind("lights", lights)
    assert CatalogSearch.names_kind("bikes", _doc(title="Gravel Bike", tags=("Bikes",)))
