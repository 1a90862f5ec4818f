"""Readings six more blind probe shops (barbecue and smokers, bridal wear, watches, archery; off-grid solar and tiles
kept apart) found wanting. "What's the Mondphase 40 selling for now and what was it before?" said no price was recorded;
"how long will it keep going in a drawer?" asked for a shelf life; "Ventum 33 vs Lift 33, which one is faster?" read no
speed in "342 fps"; "need a left hand XL finger tab, got one?" missed the tab's "X-Large" and the stock asked; "Montec
vs Rage, whats the actual difference?" insisted on "actual"; "can I swim with the 1968 skin diver?" never met "Water
resistance is not guaranteed"; "do your pellets have flavor oils?" listed the pellets' flavors, and "…with briquette or
only lump charcoal?" the kamado's colours; "does it come in white?" of a veil said "Ivory only." was unrecorded; "bust
96cm, waist 78cm, hips 108cm, what size?" found nothing in a chart of one measure per size; "what wood should I use for
chicken?" insisted on "use"; "how do I season a brand new offset?" was about the "Pre-Seasoned" skillet; shipping to
Oklahoma got the rates of the "US Virgin Islands" for the lower 48's; "How does a drop veil stay on? Thinking about the
Margaux" answered "not recorded" to its second part; and a safety notice sharing "string" answered whether the warranty
covers one; "buckle or velcro strap, which should I get?" listed the two. An outdoor outfitter of another trade, indexed
with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest

from ask_engine.answering.addressing import asked_measures
from ask_engine.answering.measures import with_label_units
from ask_engine.answering.options import _named_sizes
from ask_engine.answering.query import _question_parts
from ask_engine.countries import country_codes_in
from ask_engine.engine import Engine
from ask_engine.guard.operations import detect_operation
from ask_engine.language import parse_query
from ask_engine.towns import code_lister, regions_named
from tests.shop_helpers import assert_says, inline_engine, options_product, single_variant_product, with_metafields

URL = "https://ridgeline.example/products/"
OWN = "Ridgeline Outfitters"


_product = partial(options_product, vendor=OWN)
_single = partial(single_variant_product, vendor=OWN)


PRODUCTS: list[dict[str, Any]] = [
    _product(
        1,
        "Switchback Fleece",
        "switchback-fleece",
        "<p>A midweight grid fleece for cold mornings on the trail.</p>",
        "Fleece",
        {"Colour": ["Moss", "Navy"], "Size": ["Small", "Medium", "Large", "X-Large"]},
        {
            ("Moss", "Small"): ("89.00", True),
            ("Moss", "Medium"): ("89.00", True),
            ("Moss", "Large"): ("89.00", True),
            ("Moss", "X-Large"): ("89.00", False),
            ("Navy", "Small"): ("89.00", True),
            ("Navy", "Medium"): ("89.00", True),
            ("Navy", "Large"): ("89.00", True),
            ("Navy", "X-Large"): ("89.00", True),
        },
    ),
    with_metafields(
        _single(
            2,
            "Cirrus 400 Headlamp",
            "cirrus-400-headlamp",
            "<p>A rechargeable headlamp with a red night mode.</p><p>On high it runs for about 6 hours; on low, 40 "
            "hours.</p>",
            "Headlamps",
            "59.00",
        ),
        beam_distance="90 m",
        weight="86 g",
        charging="USB-C, 3 hours; wall adapter not included",
    ),
    with_metafields(
        _single(
            3,
            "Pika 200 Headlamp",
            "pika-200-headlamp",
            "<p>A small headlamp that runs on three AAA batteries.</p>",
            "Headlamps",
            "29.00",
        ),
        beam_distance="45 m",
        weight="64 g",
    ),
    {
        **_single(
            4,
            "Canyon Field Watch",
            "canyon-field-watch",
            "<p>A hand-wound field watch on a canvas strap.</p><p>Water resistance is not guaranteed on this "
            "model; treat it as splash resistant at most.</p>",
            "Watches",
            "240.00",
        ),
        "variants": [
            {"id": 41, "title": "Default Title", "price": "199.00", "compare_at_price": "240.00", "available": True}
        ],
    },
    _product(
        5,
        "Camp Roast Coffee",
        "camp-roast-coffee",
        "<p>Whole-bean coffee roasted for the percolator.</p><p>No flavor syrups and no sweeteners - just roasted "
        "beans.</p>",
        "Coffee",
        {"Flavor": ["Original", "Hazelnut", "Maple"]},
        {("Original",): ("16.00", True), ("Hazelnut",): ("17.00", True), ("Maple",): ("17.00", True)},
    ),
    with_metafields(
        _product(
            6,
            "Ember Fire Pit",
            "ember-fire-pit",
            "<p>A steel fire pit with a cooking grate.</p>",
            "Fire Pits",
            {"Colour": ["Black", "Bronze"]},
            {("Black",): ("149.00", True), ("Bronze",): ("159.00", True)},
        ),
        fuel="Lump charcoal or dry wood (no briquettes)",
    ),
    _product(
        7,
        "Trail Bandana",
        "trail-bandana",
        "<p>A cotton bandana printed with a trail map.</p><p>Red only.</p>",
        "Accessories",
        {"Size": ["Regular", "Large"]},
        {("Regular",): ("12.00", True), ("Large",): ("14.00", True)},
    ),
    _single(
        8,
        "Pre-Seasoned Griddle Pan",
        "pre-seasoned-griddle-pan",
        "<p>A cast iron griddle for the camp stove, seasoned at the foundry.</p>",
        "Cookware",
        "49.00",
    ),
    with_metafields(
        _single(
            9,
            "Summit Trekking Pole",
            "summit-trekking-pole",
            "<p>A carbon trekking pole with a cork grip.</p>",
            "Poles",
            "79.00",
        ),
        notices={"safety": "Check the wrist strap before every hike and replace it if it is frayed."},
    ),
    _product(
        11,
        "Trail Gaiters",
        "trail-gaiters",
        "<p>Waterproof gaiters for muddy trails.</p><p>Zip gaiters seal better in deep snow; the Velcro ones go on "
        "faster over boots.</p>",
        "Gaiters",
        {"Closure": ["Zip", "Velcro"]},
        {("Zip",): ("45.00", True), ("Velcro",): ("45.00", True)},
    ),
    with_metafields(
        _single(10, "Canvas Tote", "canvas-tote", "<p>A roomy tote for the farmers market.</p>", "Bags", "34.00"),
        material="Unwaxed cotton canvas",
    ),
]

REFUNDS = """---
type: refund_policy
title: Returns
---
# Returns

Unused gear can be returned within 60 days.
"""

SHIPPING = """---
type: shipping_policy
title: Shipping
---
# Shipping

Everything ships from our warehouse in Bend, Oregon.

| Zone | Cost | Time |
|---|---|---|
| Contiguous US | $7.95, free over $99 | 2-5 business days |
| Alaska and Hawaii | $19.95 | 5-9 business days |
| Puerto Rico, Guam and US Virgin Islands | $24.95 | 7-14 business days |

Fire pits only ship within the contiguous US.
"""

SIZES = """---
type: size_guide
title: Size Guide
---
# Size Guide

If you are between sizes, choose the larger one.

## Fleece and jackets {#jackets}

| Size | Chest (cm) | Waist (cm) |
|---|---|---|
| Small | 92 | 78 |
| Medium | 100 | 86 |
| Large | 108 | 94 |
| X-Large | 116 | 102 |
"""

CARE = """---
title: Gear Care
---
# Gear Care

## Seasoning a new dutch oven {#dutch-oven}

Wash it once with hot soapy water and dry it over a flame. Rub a thin coat of vegetable oil on every surface and bake
it upside down at 450°F for an hour.

## Griddle pan care {#griddle}

Scrape it while warm, rinse with hot water and dry it on the stove.

## Camp stove fuel {#fuel}

| Fuel | Best for |
|---|---|
| Propane | Car camping and cooking for a group |
| White gas | Winter trips and high altitude |

Never use a stove inside a tent.
"""

FAQ = """[
  {"question": "Do you price match?", "answer": "No, our prices are already as low as we can make them.",
   "anchor": "price-match"}
]
"""

SHOP = {
    "shop.toml": f'[shop]\nname = "{OWN}"\nurl = "https://ridgeline.example"\ncurrency = "USD"\ncountry = "US"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/refunds.md": REFUNDS,
    "policies/shipping.md": SHIPPING,
    "pages/size-guide.md": SIZES,
    "pages/care.md": CARE,
    "faq.json": FAQ,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("ridgeline") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def test_words_of_price_speed_and_stock() -> None:
    assert parse_query("what's it selling for now and what was it before?").price
    assert not parse_query("is it selling well?").price
    assert parse_query("need a left hand XL finger tab, got one?").stock
    assert parse_query("have you got a 45 lb one ready to go or do I have to wait?").stock
    assert "speed" in {k.name for k in asked_measures("which one is faster?")}
    assert "speed" not in {k.name for k in asked_measures("which arrives faster?")}
    assert "duration" in {k.name for k in asked_measures("Margot or Juno, which one arrives quicker?")}
    assert any(k.states.search("IBO speed: 342 fps") for k in asked_measures("how fast is it?"))
    # "keep going" is how long it runs, not how long it keeps
    assert "shelf_life" not in parse_query("how long will it keep going in a drawer?").concepts
    assert "shelf_life" in parse_query("how long will it keep once opened?").concepts
    assert "waterproof" in parse_query("can I swim with it?").concepts


def test_a_colour_word_naming_a_thing_asks_for_no_colour() -> None:
    assert parse_query("can it be used with briquettes or only lump charcoal?").colours == ()
    assert parse_query("does it froth heavy cream?").colours == ()
    assert parse_query("do you have it in charcoal?").colours == ("charcoal",)
    assert parse_query("is the dark charcoal in stock?").colours == ("charcoal",)
    assert parse_query("do you have it in navy or olive?").colours == ("navy", "olive")


def test_a_size_written_as_a_letter_names_the_size_written_out() -> None:
    values = ("Small", "Medium", "Large", "X-Large")
    assert _named_sizes("need a left hand XL, got one?", values) == ["X-Large"]
    assert _named_sizes("is the extra large in stock?", values) == ["X-Large"]
    assert _named_sizes("is the xl in stock?", ("S", "M", "L", "XL")) == ["XL"]
    assert _named_sizes("is it 2 m long?", values) == []  # "m" is no Medium


def test_a_part_naming_only_the_product_asks_nothing_of_its_own() -> None:
    parts = _question_parts("How does a drop veil stay on? Thinking about the Margaux", in_view=True)
    assert parts == ["How does a drop veil stay on"]
    two = _question_parts("is it lined? and what about the Margaux", in_view=True)
    assert len(two) == 2


def test_the_lower_48_holds_every_state_but_alaska_and_hawaii() -> None:
    named, _ = regions_named("Rest of the lower 48 states: $12.95", "US")
    assert "Oklahoma" in named and "Alaska" not in named and "Hawaii" not in named
    lister = code_lister("US", "Oklahoma")
    assert lister is not None and lister("Contiguous US: $7.95")
    hawaii = code_lister("US", "Hawaii")
    assert hawaii is not None and not hawaii("Contiguous US: $7.95")
    assert country_codes_in("Puerto Rico, Guam and US Virgin Islands") == ("PR", "GU", "VI")


def test_a_service_asked_for_is_no_operation() -> None:
    assert detect_operation("bought a bow elsewhere, will you set it up for me? cost?") is None
    assert detect_operation("can you gift wrap it and add a note?") is None
    assert detect_operation("can you put one aside for me?") is not None
    assert detect_operation("add a large one to my cart") is not None
    assert detect_operation("please add 2 more") is not None


def test_a_fraction_after_a_figure_stays_with_it() -> None:
    assert with_label_units("Bust (in): 32¼, Bust (cm): 82") == "Bust (in): 32¼, Bust: 82 cm"


# ------------------------------------------------------------------------------------------ through the engine


# (question, product handles (comma-separated), what the answer must say, what it must not)
CASES = [
    # a price asked as what it sells for, and what it was
    ("What's the Canyon watch selling for now and what was it before?", "", ["$199.00", "$240.00"], ["not recorded"]),
    # a size written as a letter, and stock asked as "got one?"
    ("need an XL in moss, got one?", "switchback-fleece", ["Moss / X-Large is sold out"], ["has not recorded"]),
    # two products compared with nothing named but "the actual difference": their prices and a differing fact
    (
        "Cirrus vs Pika, whats the actual difference?",
        "cirrus-400-headlamp,pika-200-headlamp",
        ["$59.00", "$29.00"],
        ["has not recorded"],
    ),
    # swimming asks whether it is waterproof, which the description speaks of
    ("can I swim with it?", "canyon-field-watch", ["not guaranteed"], ["has not recorded"]),
    # an option's name as the first word of a thing the description names
    ("do your coffees have flavor syrups in them?", "camp-roast-coffee", ["No flavor syrups"], ["Hazelnut"]),
    # a colour word naming a thing, of a product sold in colours
    ("can I burn briquettes in it or only lump charcoal?", "ember-fire-pit", ["no briquettes"], ["Bronze"]),
    # a colour asked of a product sold in no colours, which its description says
    ("does it come in blue?", "trail-bandana", ["Red only"], ["has not recorded any colours"]),
    # body measurements against a chart of one measure per size: the size at or above each, the largest of them
    (
        "my chest is 101 cm and my waist is 84 cm, what size fleece?",
        "",
        ["Size: Large"],
        ["Size: Small", "Size: Medium"],
    ),
    # a verb after "how do I" names no product, and a guide's section heading answers
    ("How do I season a brand new dutch oven?", "", ["450°F"], ["foundry"]),
    # a state of the lower 48 is in the contiguous US, not in the territories' zone
    ("how much is shipping to Ohio?", "", ["$7.95"], ["$24.95"]),
    # ... or, asked whether a thing comes with it, says it is not included
    ("does it come with a wall adapter?", "cirrus-400-headlamp", ["not included"], ["has not recorded"]),
    # a choice between two of a product's versions named with "or": what the description says of each
    ("zip or velcro, which should I get?", "trail-gaiters", ["seal better in deep snow"], ["comes in"]),
    # a fact saying the asked word with a prefix denying it answers no
    ("is it waxed?", "canvas-tote", ["Unwaxed cotton canvas"], ["has not recorded"]),
    # ... and a line limiting goods to that group bars a town outside it
    ("can you ship the fire pit to Honolulu?", "ember-fire-pit", ["only ship within the contiguous US"], []),
    # a notice sharing a word of the question answers no question about a warranty the shop does not record
    (
        "does the warranty cover the wrist strap if it frays?",
        "summit-trekking-pole",
        ["has not recorded the warranty"],
        ["Safety for the Summit"],
    ),
]


@pytest.mark.parametrize(("question", "ids", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_measured_and_mainland_through_the_engine(
    engine: Engine, question: str, ids: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + i for i in ids.split(",") if i], wanted, unwanted)
