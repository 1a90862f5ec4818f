"""Readings six more blind probe shops (climbing gear, vinyl and hi-fi, car care, pottery supplies; dancewear and party
supplies kept apart) found wanting: "rocklock magnetron vs normal screwgate?" brought in the sale price of the
"Scarpa Instinct VS"; "is the Spot Off ok on a coated car? what's the pH" gave the pH of the "pH Neutral" shampoo too;
"is it dry treated?" answered "dry is not treated with the rope"; "does it come with a dust cover?" hedged and quoted
a recycling notice ("the disposal fee is included in the price"), and "iron content?" read as ironing; "how long do
I have to return stuff" quoted the refund's processing time; "how much does the 35cm pack weigh" listed the
diameters, and "dimensions of shape 1?" the shapes ("is blonde in stock and what comes in it" then found no contents);
"got a gold 7?" was no question of stock, and read "Rose Gold" for gold; "41 is sold out" was followed by "it comes in
41". A small British lighting shop of another trade, indexed
with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.answering.facts import _clause_label, _label
from ask_engine.answering.options import _match_options
from ask_engine.engine import Engine
from ask_engine.language import content_stems, parse_query
from ask_engine.types import Fact
from tests.shop_helpers import (
    assert_says,
    inline_engine,
    one_option_product,
    single_variant_product,
    with_metafields,
)

URL = "https://harbourlamp.example/products/"
OWN = "Harbour Lamp Co."


def _sold_out(product: dict[str, Any], *values: str) -> dict[str, Any]:
    """`product` with the variants titled by `values` sold out."""
    variants = [{**v, "available": v["title"] not in values} for v in product["variants"]]
    return {**product, "variants": variants}


RECYCLING = (
    "This product falls under the WEEE regulations. Do not dispose of it with household waste: bring it to a "
    "recycling point. The recycling fee is included in the price."
)

NIGHT_LIGHT: dict[str, Any] = {
    "id": 6,
    "title": "Number Night Light",
    "handle": "number-night-light",
    "body_html": "<p>A glowing number for a child's room.</p>",
    "product_type": "Night Lights",
    "vendor": OWN,
    "options": [{"name": "Colour", "values": ["Gold", "Rose Gold"]}, {"name": "Number", "values": ["1", "2"]}],
    "variants": [
        {
            "id": 60 + n,
            "title": f"{colour} / {number}",
            "option1": colour,
            "option2": number,
            "price": "18.00",
            "available": (colour, number) != ("Gold", "2"),
        }
        for n, (colour, number) in enumerate([("Gold", "1"), ("Gold", "2"), ("Rose Gold", "1"), ("Rose Gold", "2")])
    ],
}

PRODUCTS: list[dict[str, Any]] = [
    with_metafields(
        _sold_out(
            one_option_product(
                1,
                "Cove Outdoor Wall Light",
                "cove-outdoor-wall-light",
                "<p>A compact wall light for porches and paths.</p><p>In the box: wall plate; 2 screws; rubber gasket.</p>",
                "Wall Lights",
                vendor=OWN,
                option="Finish",
                prices={"Black": "45.00", "Brass": "65.00"},
            ),
            "Brass",
        ),
        notices={"weee": RECYCLING},
        ip_rating="IP44",
        powder_coated="yes",
    ),
    with_metafields(
        single_variant_product(
            2,
            "Garden IP Spike Light",
            "garden-ip-spike-light",
            "<p>A spike light for borders.</p>",
            "Garden Lights",
            "29.00",
            vendor=OWN,
        ),
        notices={"weee": RECYCLING},
        ip_rating="IP65",
    ),
    single_variant_product(
        3, "Beacon Lantern VS", "beacon-lantern-vs", "<p>A hurricane lantern.</p>", "Lanterns", "39.00", vendor=OWN
    ),
    one_option_product(
        4,
        "Harbour Pendant Shade",
        "harbour-pendant-shade",
        "<p>A linen drum shade for pendants.</p>",
        "Lampshades",
        vendor=OWN,
        option="Diameter",
        prices={"25cm": "22.00", "35cm": "32.00"},
    ),
    one_option_product(
        5,
        "Ripple Glass Shade",
        "ripple-glass-shade",
        "<p>Mouth-blown ripple glass. Shape 1 is the tall dome, Shape 2 the wide bowl.</p>",
        "Lampshades",
        vendor=OWN,
        option="Shape",
        prices={"Shape 1": "48.00", "Shape 2": "52.00"},
    ),
    NIGHT_LIGHT,
    with_metafields(
        single_variant_product(
            7,
            "Pebble Nursery Lamp",
            "pebble-nursery-lamp",
            "<p>A soft glow for feeds.</p>",
            "Table Lamps",
            "35.00",
            vendor=OWN,
        ),
        notices={"safety": "Not suitable for children under 3 years - small parts. Do not bite or chew the cable."},
    ),
]

REFUNDS = """---
type: refund_policy
title: Returns
---
# Returns

## Refunds {#refunds}

Once your return arrives and passes inspection we'll process your refund within 5 business days.

## Change of mind {#change-of-mind}

You have 30 days from the day your order is delivered to return it for a change of mind.

## Lampshades {#lampshades}

Lampshades can be returned within 14 days, unused and in their box.
"""

SHIPPING = """---
type: shipping_policy
title: Delivery
---
# Delivery

Orders to the UK mainland are £4.95, free over £60, and arrive in 2-3 working days.
"""

ABOUT = """---
title: About us
---
# About us

We make and sell lamps from our workshop by the harbour.

## Visit the showroom {#showroom}

Harbour Lamp Co.
12 Quay Street
Falmouth TR11 3HH
"""

SHOP = {
    "shop.toml": f'[shop]\nname = "{OWN}"\nurl = "https://harbourlamp.example"\ncurrency = "GBP"\ncountry = "GB"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/refunds.md": REFUNDS,
    "policies/shipping.md": SHIPPING,
    "pages/about.md": ABOUT,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("harbourlamp") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def test_a_yes_no_label_of_what_comes_with_it_differs_from_one_describing_it() -> None:
    assert _clause_label("batteries included") == ("batteries", "included")
    assert _clause_label("dry treated") is None  # the rope itself is treated: "it is not dry treated"
    assert _label(Fact("ph", "pH", "5.5", "metafield")) == "pH"
    assert _label(Fact("gsm", "GSM", "1100", "metafield")) == "GSM"
    assert _label(Fact("dry_treated", "Dry Treated", "no", "metafield")) == "dry treated"


def test_how_much_before_a_measuring_verb_and_iron_as_a_noun() -> None:
    assert not parse_query("how much does the 35cm pack weigh").price
    assert parse_query("how much does the big red one cost").price
    assert "care" not in parse_query("what's the iron content of the clay?").concepts
    assert "care" in parse_query("can I iron it?").concepts
    assert "vs" not in content_stems("magnetron vs screwgate")
    assert parse_query("got a gold 7?").yes_no


def test_a_colour_word_names_the_value_written_in_full_not_one_holding_it() -> None:
    options = [("Colour", ("Gold", "Rose Gold")), ("Number", ("1", "2"))]
    chosen, _ = _match_options(parse_query("got a gold 2?"), options)
    assert chosen["Colour"] == ["Gold"]
    chosen, _ = _match_options(parse_query("rose gold 2?"), options)
    assert chosen["Colour"] == ["Rose Gold"]


# ------------------------------------------------------------------------------------------ through the engine


# (question, product handles (comma-separated) or "", what the answer must say, what it must not)
CASES = [
    # "vs" is no word of a product's name
    ("cove wall light black vs brass - which is cheaper?", "", ["£45.00"], ["Beacon"]),
    # a later part naming no product asks about the one the part before named
    ("is the cove wall light ok by the front door? what's the ip rating", "", ["IP44"], ["IP65", "Spike"]),
    # a yes/no label describing the product, not a thing coming with it
    ("is it powder coated?", "cove-outdoor-wall-light", ["is powder coated"], ["powder is coated"]),
    # a notice using the word "included" says nothing of what comes in the box
    ("does it come with a bulb?", "garden-ip-spike-light", ["has not recorded"], ["WEEE", "does not say exactly"]),
    # ... and a list of what is in the box answers it
    ("does it come with a bulb?", "cove-outdoor-wall-light", ["In the box: wall plate"], ["WEEE"]),
    # ... where a notice about what is asked still comes closest
    ("is it ok if my toddler chews it?", "pebble-nursery-lamp", ["Not suitable for children under 3"], []),
    # the time the buyer has to return, not the time the refund takes; not a rule for another kind of goods
    ("how long do I have to return stuff", "", ["30 days"], ["5 business days"]),
    ("how long do I have to return a night light?", "", ["30 days"], ["14 days"]),
    # an option the question names a value of says which variant is meant, and answers nothing asked
    ("how much does the 35cm one weigh", "harbour-pendant-shade", ["has not recorded the weight"], ["25cm", "£"]),
    ("what are the dimensions of shape 1", "ripple-glass-shade", ["has not recorded the dimensions"], ["Shape 2"]),
    # "got a …?" asks whether it is had; "gold" is Gold, not Rose Gold
    ("got a gold 2?", "number-night-light", ["Gold / 2 is sold out"], ["Rose Gold", "comes in"]),
    # ... and a yes/no part about a value asks nothing of what it comes with
    ("is brass in stock and what comes in it", "cove-outdoor-wall-light", ["Brass is sold out", "2 screws"], []),
    # "where are you guys located?" is answered by the street address a page states
    ("where are you guys located", "", ["12 Quay Street"], ["couldn't find"]),
    ("what's your address?", "", ["12 Quay Street", "Falmouth TR11 3HH"], ["couldn't find"]),
    # a sold-out value said to be sold out is not also said to be what it comes in
    ("do you have it in brass?", "cove-outdoor-wall-light", ["Brass is sold out"], ["comes in"]),
]


@pytest.mark.parametrize(("question", "handle", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_asked_as_meant_through_the_engine(
    engine: Engine, question: str, handle: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + h for h in handle.split(",") if h], wanted, unwanted)
