"""Readings six more blind probe shops (fountain pens in New Zealand, eyewear in the United States, supplements in
Australia, wooden toys in Ireland, art supplies in the Netherlands; car parts in South Africa kept apart) found
wanting. "how do I care for the pen case" quoted the pen care page's "Storing pens", and "how do I look after the
wooden pen case" the engraving FAQ ("Do you engrave pens?"), both "headed by" the case's name for sharing the shop's
kind word "pen", where the case records its own care; "is the sage eco in stock" of the TWSBI ECO also said its
sustainability details were not recorded; "what's the grip diameter?" answered with "Length capped: 140 mm"; "my son is
6, which size?" chose the "Ages (approx.): 8–12" row; "Where is your physical shop located?" found nothing beside
"where is your shop?"; "What's your Christmas returns deadline?" found nothing where its section says "… can be
returned up to 15 January"; "Do you offer a discount for creches?" insisted on "offer"; "book a consult online or by
video?" insisted on "online" beside "… also available by video call"; "my parcel arrived and the canvas corner is
crushed" was about "canvas corner"; "Can I return an opened tub of protein if I don't like the taste?" quoted "Single
protein bars and sample sachets"; "Does the shape sorter come with a guarantee?" quoted the balance bike's row of a
makers' guarantee table; and "do you ship to Australia?" quoted only the GST line of the "Australia" section. A
running travel-goods shop, indexed with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest

from ask_engine.answering.absence import _alternatives, names_other_title
from ask_engine.answering.addressing import asked_lengths, other_length
from ask_engine.answering.measures import ranges_in, with_label_units
from ask_engine.answering.sizing import asked_figures
from ask_engine.answering.terms import _headed_by
from ask_engine.engine import Engine
from ask_engine.language import content_stems, stem
from ask_engine.types import Document
from tests.shop_helpers import assert_says, inline_engine, options_product, single_variant_product, with_metafields

URL = "https://northpack.example/products/"
OWN = "Northpack Travel Co"

_single = partial(single_variant_product, vendor=OWN)

WEEKENDER = _single(
    1,
    "Waxed Canvas Weekender Bag",
    "waxed-canvas-weekender",
    "<p>A 45 litre holdall in waxed cotton canvas with leather handles.</p>",
    "Bags",
    "189.00",
    care="Brush off dry mud, then re-wax once a season with our bar wax.",
    capacity="45 litres",
)
CUBES = options_product(
    2,
    "Eco Packing Cubes (Set of 3)",
    "eco-packing-cubes",
    "<p>Three zip cubes sewn from recycled bottles.</p>",
    "Packing Cubes",
    {"Colour": ["Grey", "Teal"]},
    {("Grey",): ("39.00", False), ("Teal",): ("39.00", True)},
    vendor=OWN,
)
CARRY_ON = _single(
    3,
    "Polycarbonate Carry-On Case",
    "polycarbonate-carry-on",
    "<p>A four-wheeled cabin case that fits most airlines' overhead lockers.</p>",
    "Suitcases",
    "249.00",
    length="55 cm",
    weight="2.9 kg",
)
KIDS_PACK = options_product(
    4,
    "Trail Kids Backpack",
    "trail-kids-backpack",
    "<p>A light daypack with a chest strap and a reflective strip.</p>"
    "<table><tr><th>Size</th><th>Ages (approx.)</th><th>Volume</th></tr>"
    "<tr><td>Small</td><td>3–6</td><td>8 L</td></tr>"
    "<tr><td>Large</td><td>7–11</td><td>14 L</td></tr></table>",
    "Backpacks",
    {"Size": ["Small", "Large"]},
    {("Small",): ("45.00", True), ("Large",): ("52.00", True)},
    vendor=OWN,
)
ENERGY_BAR = _single(
    5, "Oat Energy Bar", "oat-energy-bar", "<p>A chewy oat bar for the trail.</p>", "Energy Bars", "3.50"
)
ENERGY_POWDER = _single(
    6,
    "Electrolyte Energy Powder 500g",
    "electrolyte-energy-powder",
    "<p>A lemon drink powder with sodium and potassium.</p>",
    "Energy Powders",
    "29.00",
)
LOCK = with_metafields(
    _single(7, "Combination Luggage Lock", "combination-luggage-lock", "<p>A three-dial lock.</p>", "Locks", "19.00"),
    material="Zinc alloy",
)
SUNGLASSES = with_metafields(
    _single(
        8,
        "Harbour Square Sunglasses",
        "harbour-square-sunglasses",
        "<p>Square acetate sunglasses with polarized lenses.</p><p>Heads up: Harbour is non-prescription only.</p>",
        "Sunglasses",
        "95.00",
    ),
    lens="Polarized TAC, category 3",
    frame_material="Acetate",
)
INK_SET = _single(
    9,
    "Travel Watercolour Set 12",
    "travel-watercolour-set",
    "<p><strong>Paint anywhere!</strong> Twelve bright, creamy colours in a tin that fits a jacket pocket - perfect "
    "for sketching on the go.</p><p>Colours: lemon yellow, vermilion, crimson, ultramarine, sap green, burnt umber, "
    "payne's grey, yellow ochre, cobalt blue, violet, orange, white.</p>",
    "Art Sets",
    "34.00",
)
PRODUCTS: list[dict[str, Any]] = [
    WEEKENDER,
    CUBES,
    CARRY_ON,
    KIDS_PACK,
    ENERGY_BAR,
    ENERGY_POWDER,
    LOCK,
    SUNGLASSES,
    INK_SET,
]
SHIPPING = """---
type: shipping_policy
title: Shipping Policy
---
# Shipping Policy
## Canada
Free standard shipping on orders over C$75, otherwise C$9.95. We offer express delivery for C$19.95.
## Wrong address
Please check your address at checkout. A parcel returned to us because of a wrong address is re-sent once you pay the
shipping again.
## Signature on delivery
Parcels over C$500 need a signature on delivery.
## Australia
Tracked airmail, 6–10 working days.
C$25 flat rate, free over C$300.
Australian GST is charged at checkout on orders under A$1,000, so there's nothing more to pay on delivery.
"""
REFUNDS = """---
type: refund_policy
title: Returns & Refunds
---
# Returns & Refunds
## Returns window
Return unused items within 30 days of delivery for a refund.
## Holiday returns
Anything bought between 15 November and 24 December can be returned until 31 January.
## Food and drink
Because our trail foods are eaten, we can't accept change-of-mind returns on anything that has been opened.
## Items we can't take back
- Gift cards
- Single energy bars and sample sachets
"""
PAGE = """---
type: page
title: Visit Our Store
---
# Visit Our Store
## Address
Northpack Travel Co
1120 Granville Street
Vancouver BC V6Z 1M1
## Luggage fittings
Our staff fit backpacks and measure carry-on cases in store. Fittings can be booked by phone.
Order online and collect in store the same day.
"""
CARE = """---
type: page
title: Care Guide
---
# Care Guide
## Storing bags
Store bags stuffed with paper, out of direct sunlight.
## Hard cases
Wipe a polycarbonate case with a damp cloth, and never leave the carry-on case in a hot car: the shell can warp.
"""
GUARANTEES = """---
type: page
title: Guarantees
---
# Guarantees
## Makers' guarantees
Every product is covered by your statutory rights. On top of that, some makers offer their own guarantee:

| Product | Guarantee |
|---|---|
| Atlas polycarbonate carry-on | 10 years on the shell and wheels |
"""
FAQ = """entries:
  - question: Do you monogram bags?
    anchor: monogram
    answer: >-
      Not at the moment, but a leather worker two doors down does.
  - question: Do you have student or teacher discounts?
    anchor: discounts
    answer: >-
      We give teachers and nurses 10% off in store with a staff card.
  - question: Can I change or cancel my order?
    anchor: change-order
    answer: >-
      Email us as soon as you can. Until your order is packed we can change the delivery address or cancel it; once it
      has shipped we can't.
  - question: What do I do if my parcel arrives damaged?
    anchor: damaged
    answer: >-
      Email us a photo of the item and the box within 48 hours of delivery and we'll send a replacement.
"""
SHOP = {
    "shop.toml": f'[shop]\nname = "{OWN}"\nurl = "https://northpack.example"\ncurrency = "CAD"\ncountry = "CA"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/shipping.md": SHIPPING,
    "policies/returns.md": REFUNDS,
    "pages/store.md": PAGE,
    "pages/care.md": CARE,
    "pages/guarantees.md": GUARANTEES,
    "faq.yaml": FAQ,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("northpack") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def _product(title: str) -> Document:
    return Document(id="product:1", kind="product", title=title, url="", link_type="product", source="products.json")


def test_a_heading_names_a_product_by_more_than_the_shops_kind_word() -> None:
    case = _product("Reclaimed Rimu Three-Pen Case")
    kinds = content_stems("Fountain Pens Pen Cases")
    assert not _headed_by("Storing pens", case, kinds) and not _headed_by("Do you engrave pens?", case, kinds)
    assert _headed_by("Rimu case care", case, kinds)
    assert _headed_by("Storing pens", case)  # (no kinds given: the old reading)


def test_an_age_column_and_a_childs_age_said_bare() -> None:
    assert with_label_units("Size: Small, Ages (approx.): 4–7") == "Size: Small, Ages (approx.): 4–7 years"
    assert ranges_in("Ages (approx.): 4–7") == ((48.0, 84.0, "month"),)
    assert asked_figures("my son is 6, which size?") == [(72.0, "month")]
    assert asked_figures("my son is 6 ft tall") == [(182.88, "cm")]  # (a figure with a unit of its own is no age)
    assert asked_figures("my daughter is 110cm") == [(110.0, "cm")]


def test_a_length_label_is_another_side_of_a_diameter() -> None:
    assert other_length("Length capped", asked_lengths("what's the grip diameter?"))
    assert not other_length("Length capped", asked_lengths("how long is it capped?"))


def test_the_words_a_question_offers_in_place_of_another() -> None:
    assert _alternatives("can i book online or by video?", stem("online")) == {stem("video")}
    assert _alternatives("can i book online or by video?", stem("book")) == frozenset()


def test_a_line_naming_another_products_name() -> None:
    sorter = _product("Wooden Shape Sorter Cube")
    others = ['Wooden Balance Bike 12"']
    assert names_other_title("Product: Ridgeway wooden balance bike, Guarantee: 2 years", [sorter], others)
    assert not names_other_title("Every wooden toy is covered by your statutory rights.", [sorter], others)


# ------------------------------------------------------------------------------------------ through the engine

# (question, product handle, what the answer must say, what it must not); a "guard" held before these changes too, on
# this small shop: the probe shops' own questions, which failed, are in eval/README
CASES = [
    # a how-to question of a product recording its own care: its care, not a section sharing the shop's kind word
    ("how do I care for the weekender bag?", "waxed-canvas-weekender", ["re-wax"], ["Store bags", "monogram"]),
    # a concept the product's own name says, asked something else
    ("is the eco set in stock in grey?", "eco-packing-cubes", ["Grey"], ["sustainability"]),  # (guard: held before)
    # a length is another side than a diameter
    ("what's the wheel diameter on the carry-on?", "polycarbonate-carry-on", ["not recorded"], ["55 cm"]),
    # an age column with a note, and a child's age said bare
    ("my son is 9, which size should i get?", "trail-kids-backpack", ["7–11"], ["3–6"]),
    ("which size for a 9 year old?", "trail-kids-backpack", ["7–11"], ["3–6"]),
    # where the shop is, asked with an adjective
    ("Where is your physical store located?", "", ["1120 Granville Street"], ["couldn't find"]),
    # a returns deadline stated as a date
    ("what's your holiday returns deadline?", "", ["31 January"], ["couldn't find"]),  # (guard: held before)
    # "do you offer …?" insists on no "offer"
    ("Do you offer a discount for teachers?", "", ["10% off"], ["couldn't find"]),  # (guard: held before)
    # "online or by phone": either alternative said answers
    ("can I book a fitting online or by phone?", "", ["booked by phone"], ["couldn't find"]),  # (guard)
    # what arrived damaged is no thing asked about
    (
        "my parcel arrived and the bag corner is crushed, what should I do?",
        "",
        ["48 hours"],
        ["couldn't find"],
    ),  # (guard)
    # the asker's reason for a return is no topic, and an entry naming goods of another kind is not their rule (guard:
    # this shop's short policy answered before too)
    (
        "Can I return an opened tub of energy drink if I don't like the taste?",
        "",
        ["anything that has been opened"],
        ["energy bars"],
    ),
    # a guarantee table's row naming another product is not this one's
    ("Does the luggage lock come with a guarantee?", "combination-luggage-lock", [], ["10 years"]),  # (guard)
    # an FAQ entry both retrievers rank first stays among the evidence, however many of the shipping policy's
    # sections the question's "delivery" counts again; "is that possible?" and "an hour ago" insist on nothing (guards:
    # this shop's four sections let the entry in before too)
    ("can I change my delivery address after I've placed my order?", "", ["Until your order is packed"], []),
    ("I ordered an hour ago and need to change my delivery address, is that possible?", "", ["packed"], []),
    # a guide page's line naming the product in view answers what the product does not record (guard: its words
    # cleared the bar before too)
    ("can I leave the carry-on in a hot car?", "polycarbonate-carry-on", ["the shell can warp"], ["not recorded"]),
    # a line denying the asked word by a prefix answers a yes/no question, ranked however close
    (
        "can the harbour sunglasses be made with prescription lenses?",
        "harbour-square-sunglasses",
        ["non-prescription"],
        [],
    ),
    # a description line led by the label the question says, before one only using the word
    ("what colours come in the 12 colour travel tin?", "travel-watercolour-set", ["ultramarine"], ["jacket pocket"]),
    # a section headed by the destination is its answer, from its opening lines
    ("do you ship to australia?", "", ["6–10 working days"], []),
    ("how much is shipping to australia?", "", ["C$25"], []),
    ("how long does delivery to australia take?", "", ["6–10 working days"], []),  # (guard: found before too)
]


@pytest.mark.parametrize(("question", "handle", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_headings_ages_and_alternatives_through_the_engine(
    engine: Engine, question: str, handle: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + handle] if handle else [], wanted, unwanted)
