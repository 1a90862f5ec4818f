"""Shoppers' words, as four blind probe shops (camping gear, a cheese and deli counter, eyewear, power tools) found
them: "are these polarized?" was read without its one word, which the product's name ("… Polarised Round
Sunglasses") also says, and the shop writes it the British way; "veggie", "xmas" and "sunnies" were words the shop
never uses; "block blue light" and "gone off the colour" were read as asking for a colour; "going outside and back
in" and "left it in the tent" as stock questions; "it froze" never met "if the filter freezes"; "when are you getting
more?" found no stock question, and "next shipment expected in May" was not read as the answer; "what's the weight
limit?" was answered "not recorded" because the product's own weight ranked first, and "max user weight" with that
weight; a product bought in the sale was given the full-price returns rule; "what's in this?" of a bundle asked for
ingredients; "+2.5" named no "+2.50"; "Munich, Germany" brought no shipping passage, since the policy never names
Munich; "got any X in?" was no stock question; "half a kilo" was no "500g"; a description's own question ("Need a
bigger size?") was quoted as the answer; and "at your Falmouth shop" was insisted on where the shop's page names
Falmouth only in its address (here a unit seam: a town is told from a common word). A small outdoor kitchen and
camping shop of another trade, indexed with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.answering.options import _same_number
from ask_engine.engine import Engine
from ask_engine.language import content_stems, informal_synonyms, parse_query, stem, with_shop_synonyms
from ask_engine.spelling import spelled
from ask_engine.towns import is_town
from tests.shop_helpers import assert_says, inline_engine, one_option_product, single_variant_product

URL = "https://harbourhearth.example/products/"

PRODUCTS: list[dict[str, Any]] = [
    single_variant_product(
        1,
        "Coastline Polarised Sunglasses",
        "coastline-sunglasses",
        "<p>Our bestselling pair for days on the water.</p><p>Fitted with polarised lenses (category 3, UV400) that "
        "cut the glare off wet rocks and water.</p>",
        "Sunglasses",
        "65.00",
        vendor="Harbour & Hearth",
        frame_material="Recycled acetate",
    ),
    single_variant_product(
        2,
        "Halden Titanium",
        "halden-titanium",
        "<p>Machined from pure titanium. A light, strong frame.</p>",
        "Sunglasses",
        "140.00",
        vendor="Harbour & Hearth",
        country_of_origin="Japan",
    ),
    single_variant_product(
        3,
        "Quarry Farmhouse Cheddar",
        "quarry-farmhouse-cheddar",
        "<p>A crumbly clothbound cheddar aged for 14 months.</p><p>Traditional animal rennet is used, so this one is "
        "not suitable for vegetarians.</p>",
        "Cheese",
        "9.50",
        vendor="Harbour & Hearth",
    ),
    single_variant_product(
        4,
        "Harbour Readers",
        "harbour-readers",
        "<p>Reading glasses with sprung hinges.</p><p>The lenses darken in sunlight in about 30 seconds and clear "
        "again indoors within 2 minutes.</p>",
        "Reading Glasses",
        "25.00",
        vendor="Harbour & Hearth",
    ),
    single_variant_product(
        5,
        "Brookside Squeeze Water Filter",
        "brookside-filter",
        "<p>Filters up to 1,000 litres. Fits standard 28 mm bottles.</p>",
        "Water Filters",
        "39.00",
        vendor="Harbour & Hearth",
    ),
    single_variant_product(
        6,
        "Lakeside Family Tent",
        "lakeside-family-tent",
        "<p>A six-person cabin tent with two bedrooms.</p><p>SOLD OUT for now - next shipment expected in May.</p>",
        "Tents",
        "420.00",
        vendor="Harbour & Hearth",
    ),
    single_variant_product(
        7,
        "Dune Camp Chair",
        "dune-camp-chair",
        "<p>A low chair for the beach and the campsite.</p><p>Holds up to 120 kg.</p><p>Seat height 28 cm.</p>",
        "Camp Furniture",
        "49.00",
        vendor="Harbour & Hearth",
        weight="950 g",
    ),
    single_variant_product(
        8,
        "Ridge Carbon Trekking Poles",
        "ridge-carbon-poles",
        "<p>Three-section carbon poles that adjust from 100 to 130 cm.</p>",
        "Trekking Poles",
        "89.00",
        vendor="Harbour & Hearth",
        weight="470 g",
    ),
    single_variant_product(
        9,
        "Ember Cast Iron Skillet",
        "ember-skillet",
        "<p>A 26 cm pre-seasoned cast iron skillet for the fire or the hob.</p>",
        "Cookware",
        "45.00",
        vendor="Harbour & Hearth",
    ),
    single_variant_product(
        10,
        "Fireside Starter Bundle",
        "fireside-starter-bundle",
        "<p>Everything you need for your first cookout:</p><ul><li>a cast iron skillet</li><li>a pair of "
        "leather gloves</li><li>a bag of kindling</li></ul><p>Limited stock at this price.</p>",
        "Bundles",
        "79.00",
        vendor="Harbour & Hearth",
    ),
    single_variant_product(
        11,
        "Highland Oatcakes",
        "highland-oatcakes",
        "<p>Rough oatcakes baked in small batches.</p>",
        "Crackers",
        "3.50",
        vendor="Harbour & Hearth",
    ),
    one_option_product(
        12,
        "Smoked Sea Salt",
        "smoked-sea-salt",
        "<p>Flaky sea salt cold-smoked over oak.</p>",
        "Pantry",
        vendor="Harbour & Hearth",
        option="Size",
        prices={"250g": "6.00", "500g": "10.50", "1kg": "18.00"},
    ),
    single_variant_product(
        13,
        "Tarp Shelter Lining",
        "tarp-shelter-lining",
        "<p>A clip-in mesh lining for our tarp shelters.</p><p>Need a bigger size? Ask for the XL lining (+£5) "
        "when you order and we'll cut it to fit.</p>",
        "Shelters",
        "35.00",
        vendor="Harbour & Hearth",
    ),
]
# the readers come in two colours and three strengths; black +2.50 is sold out
PRODUCTS[3]["options"] = [
    {"name": "Colour", "values": ["Black", "Tortoise"]},
    {"name": "Strength", "values": ["+1.00", "+1.50", "+2.50"]},
]
PRODUCTS[3]["variants"] = [
    {"id": 400 + n, "title": f"{c} / {s}", "option1": c, "option2": s, "price": "25.00", "available": avail}
    for n, (c, s, avail) in enumerate(
        [
            (c, s, not (c == "Black" and s == "+2.50"))
            for c in ("Black", "Tortoise")
            for s in ("+1.00", "+1.50", "+2.50")
        ]
    )
]
PRODUCTS[4]["metafields"].append(
    {
        "namespace": "disclosures",
        "key": "safety",
        "type": "multi_line_text_field",
        "value": "Does not remove viruses. If the filter freezes it may be damaged without visible signs - replace it.",
    }
)
PRODUCTS[5]["variants"][0]["available"] = False
PRODUCTS[8]["variants"][0]["compare_at_price"] = "60.00"  # the skillet is in the sale
PRODUCTS[10]["variants"][0]["available"] = False

SHIPPING = """---
type: shipping_policy
title: Delivery
---
# Delivery

## UK delivery {#uk}

Everything goes by DPD for £4.95, free on orders over £60.

## International delivery {#international}

We ship to Ireland and all EU countries by tracked courier for £14.95.

## Oversize items {#oversize}

The Lakeside Family Tent is oversize: it ships to UK mainland addresses only.
"""

REFUNDS = """---
type: refund_policy
title: Returns
---
# Returns

## Returns window {#window}

You can return unused items within 30 days of delivery for a full refund.

## Sale and clearance items {#sale}

Items bought at a reduced price can be returned within 14 days for store credit only. Anything marked "Final Sale"
can't be returned.
"""

VISIT = """---
title: Visit us
---
# Visit us

Our shop is at 4 Quay Street in Padstow, open Tuesday to Saturday.
"""

SHOP = {
    "shop.toml": '[shop]\nname = "Harbour & Hearth"\nurl = "https://harbourhearth.example"\ncurrency = "GBP"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/shipping.md": SHIPPING,
    "policies/refunds.md": REFUNDS,
    "pages/visit-us.md": VISIT,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("hearth") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def test_a_spelling_from_the_other_side_of_the_atlantic_is_read_as_the_shops() -> None:
    uses = {"polarised": 3, "aluminium": 2, "colour": 4, "centre": 1, "grey": 1}
    said = spelled("are these polarized? aluminum, any color, gray, center", lambda w: uses.get(w, 0))
    assert said == "are these polarised? aluminium, any colour, grey, centre"
    # a word the shop uses itself stays as typed
    assert spelled("polarized or polarised?", lambda w: {"polarized": 1, "polarised": 1}.get(w, 0)) == (
        "polarized or polarised?"
    )


def test_an_informal_word_gets_the_shops_word_written_after_it() -> None:
    uses = {"vegetarian": 5, "christmas": 2}.get
    pairs = informal_synonyms("ok for my veggie sister? and the xmas hamper?", lambda w: uses(w, 0))
    assert dict(pairs) == {"vegetarian": ("veggie",), "christmas": ("xmas",)}
    assert with_shop_synonyms("ok for my veggie sister?", pairs) == "ok for my veggie (vegetarian) sister?"
    # not where the shop uses the shopper's word itself
    assert informal_synonyms("veggie?", lambda w: {"veggie": 1, "vegetarian": 1}.get(w, 0)) == ()
    assert stem("veggie") == stem("vegetarian") and stem("froze") == stem("freezes") == stem("frozen")


def test_words_that_name_no_colour_or_stock() -> None:
    assert parse_query("do they block blue light?").colours == ()
    assert parse_query("do they come in blue?").colours == ("blue",)
    assert not parse_query("how fast do the lenses change going outside and back in?").stock
    assert not parse_query("left it in the tent and it froze, still ok?").stock
    assert parse_query("when will it be back in?").stock
    assert parse_query("got any oatcakes in?").stock and parse_query("when are you getting more of the tent?").stock
    assert content_stems(parse_query("price for half a kilo?").lower) >= {"500g"}


def test_a_number_names_the_same_number_however_written() -> None:
    assert _same_number("+2.50", "+2.5") and _same_number("+2.50", "2.5") and _same_number("10", "10.0")
    assert not _same_number("-2.50", "2.5") and not _same_number("+2.50", "2.25")


# ------------------------------------------------------------------------------------------ through the engine


# (question, product handle or "", what the answer must say, what it must not)
CASES = [
    # one word of the name is what is asked, spelled the shop's way
    ("are these polarized?", "coastline-sunglasses", ["polarised lenses"], ["bestselling"]),
    # informal words
    (
        "is this ok for my veggie sister?",
        "quarry-farmhouse-cheddar",
        ["not suitable for vegetarians"],
        ["not recorded"],
    ),
    ("where are the halden titanium sunnies made", "", ["Japan"], ["not recorded"]),
    # no colour, no stock
    ("do these block blue light?", "harbour-readers", [], ["Black", "Tortoise"]),
    ("how fast do the harbour readers change going outside and back in?", "", ["30 seconds"], ["in stock"]),
    # a past tense meets the notice
    ("left it in the tent and it froze last night. still ok to use?", "brookside-filter", ["freezes"], ["in stock"]),
    # the description says when stock returns
    ("When are you getting more of the family tent?", "lakeside-family-tent", ["expected in May"], ["not recorded"]),
    # a weight limit is not the weight
    ("what's the weight limit on the dune chair?", "", ["120 kg"], ["not recorded"]),
    ("What's the max user weight for the ridge trekking poles?", "", ["not recorded"], []),
    # a product bought in the sale has the sale rule
    ("can I return it if I don't like it?", "ember-skillet", ["store credit"], ["full refund"]),
    # what's in a bundle is its list
    ("what's in this and how much?", "fireside-starter-bundle", ["leather gloves"], ["ingredients"]),
    # a number written shorter names the option value
    ("have you got the black harbour readers in +2.5?", "", ["+2.50 is sold out"], ["not recorded"]),
    # a town the policy never names brings its country's passages and the product's own rule
    ("Can you send this to Munich, Germany?", "lakeside-family-tent", ["UK mainland addresses only"], ["not recorded"]),
    ("got any highland oatcakes in?", "", ["sold out"], []),
    ("price for half a kilo?", "smoked-sea-salt", ["£10.50"], []),
    # a description's own question is quoted with the sentence it leads into
    ("can i get the lining bigger?", "tarp-shelter-lining", ["Need a bigger size? Ask for the XL lining"], []),
]


@pytest.mark.parametrize(("question", "handle", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_shoppers_words_through_the_engine(
    engine: Engine, question: str, handle: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + handle] if handle else [], wanted, unwanted)


def test_a_town_is_told_from_a_common_word() -> None:
    # "at your Falmouth shop" need not be said by the sentence that answers, where the shop's page names the town
    # (its address); "next" in "free next-day delivery" must be, whatever the page capitalises
    assert is_town("falmouth") and is_town("Padstow")
    assert not is_town("next") and not is_town("express")
