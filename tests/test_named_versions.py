"""Readings six more blind probe shops (garden machinery, made-to-measure blinds, tyres, mobility aids; garden play
and fountain pens kept apart) found wanting. "price for the T92 with the mulch kit please" was read as the price of a
service and answered with the workshop's servicing rates; "do you have the K1 in 20 inch with the elevating leg rests"
found no "Elevating legrests" in the two words; "need the gel cushion for an 18 x 18 seat, do you have it?" asked no
stock and then named "18 x 16 in" too; "do you ship to Victoria on the island?" of a Canadian shop was read as
Australia's state; "My son is 16 - can he buy the brushcutter?" was "not recorded" beside "Not for sale to anyone under
18"; and "how heavy is the strada pro in 28mm" missed the 28 mm row's "Weight: 245 g". A Canadian home and garden
supplier of other trades, indexed with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest

from ask_engine.answering.facts import _names_other_concept
from ask_engine.answering.measures import in_inches, measures_in, ranges_in
from ask_engine.answering.options import _in_order
from ask_engine.answering.query import names_in_view
from ask_engine.answering.terms import asks_how_to
from ask_engine.engine import Engine
from ask_engine.language import as_product_price, parse_query
from ask_engine.spelling import spelled
from ask_engine.towns import names_town, place_written, town_named
from ask_engine.types import Document
from tests.shop_helpers import assert_says, inline_engine, options_product, single_variant_product, with_metafields

URL = "https://lakehead.example/products/"
OWN = "Lakehead Home Supply"

_product = partial(options_product, vendor=OWN)
_single = partial(single_variant_product, vendor=OWN)

PRODUCTS: list[dict[str, Any]] = [
    _product(
        1,
        "Fernhill F20 Garden Tractor",
        "fernhill-f20-garden-tractor",
        "<p>A 20 hp ride-on for lawns of an acre or more.</p>",
        "Ride-on Mowers",
        {"Package": ["Tractor only", "With bagger kit"]},
        {("Tractor only",): ("3199.00", True), ("With bagger kit",): ("3549.00", True)},
    ),
    _product(
        2,
        "Harbour Shower Stool",
        "harbour-shower-stool",
        "<p>An aluminium shower stool with a drainage seat.</p>",
        "Bath Aids",
        {"Seat height": ["16 in", "18 in"], "Frame": ["Standard", "Padded armrests"]},
        {
            ("16 in", "Standard"): ("69.00", True),
            ("16 in", "Padded armrests"): ("89.00", True),
            ("18 in", "Standard"): ("69.00", True),
            ("18 in", "Padded armrests"): ("89.00", False),
        },
    ),
    {
        **_product(
            3,
            "Gel Seat Cushion",
            "gel-seat-cushion",
            "<p>A gel and foam cushion for wheelchairs and office chairs.</p><p>The cover zips off for washing.</p>"
            "<p>Latex-free.</p>",
            "Cushions",
            {"Size": ["16 x 16 in", "18 x 16 in", "18 x 18 in", "20 x 18 in"]},
            {
                ("16 x 16 in",): ("79.00", True),
                ("18 x 16 in",): ("84.00", True),
                ("18 x 18 in",): ("89.00", False),
                ("20 x 18 in",): ("94.00", True),
            },
        ),
        "tags": ["wheelchair accessories", "cushion", "latex free"],
        "metafields": [
            {
                "namespace": "disclosures",
                "key": "safety",
                "type": "multi_line_text_field",
                "value": "This cushion is a comfort cushion, not a pressure-injury treatment product.",
            }
        ],
    },
    with_metafields(
        _single(
            4,
            "Brushmaster 43 Brushcutter",
            "brushmaster-43-brushcutter",
            "<p>A 43cc petrol brushcutter with a bike handle and a steel blade.</p>",
            "Brushcutters",
            "499.00",
        ),
        notices={"safety": "Always wear eye and ear protection.\nNot for sale to anyone under 18."},
    ),
    _product(
        5,
        "Gravelline Tyre",
        "gravelline-tyre",
        "<p>A fast gravel tyre with a file tread.</p><table><tr><th>Width</th><th>Weight</th><th>Pressure</th></tr>"
        "<tr><td>35 mm</td><td>440 g</td><td>2.5-4.5 bar</td></tr><tr><td>40 mm</td><td>520 g</td>"
        "<td>2-4 bar</td></tr></table>",
        "Tyres",
        {"Width": ["35 mm", "40 mm"], "Colour": ["Black", "Tan wall"]},
        {
            ("35 mm", "Black"): ("54.00", True),
            ("35 mm", "Tan wall"): ("58.00", True),
            ("40 mm", "Black"): ("56.00", True),
            ("40 mm", "Tan wall"): ("60.00", True),
        },
    ),
    with_metafields(
        _single(
            6,
            "Trekker Rollator",
            "trekker-rollator",
            "<p>A folding aluminium rollator with a padded seat.</p>",
            "Rollators",
            "249.00",
        ),
        weight_capacity="300 lbs (136 kg)",
        product_weight="7 kg",
        frame="Aluminium",
    ),
    with_metafields(
        _single(
            7,
            "Carbon Rollator",
            "carbon-rollator",
            "<p>Our lightest rollator, for taking everywhere.</p>",
            "Rollators",
            "599.00",
        ),
        weight_capacity="250 lbs (113 kg)",
        product_weight="5.9 kg",
        frame="Carbon fibre",
    ),
    with_metafields(
        _single(
            8,
            "Reclining Bath Lift",
            "reclining-bath-lift",
            "<p>A battery bath lift that lowers you into the water and back up.</p>",
            "Bath Aids",
            "899.00",
        ),
        weight_capacity="140 kg (308 lbs)",
        weight="10.5 kg",
    ),
    _product(
        10,
        "Lakeside Roller Blind",
        "lakeside-roller-blind",
        "<p>A made-to-measure roller blind. Prices are for blinds up to 120 cm wide.</p><p>121-180 cm wide adds $30 "
        "and 181-240 cm adds $60; the price updates when you enter your width.</p>",
        "Roller Blinds",
        {"Colour": ["White", "Grey"]},
        {("White",): ("89.00", True), ("Grey",): ("89.00", True)},
    ),
    _product(
        9,
        "Harbour Riser Recliner",
        "harbour-riser-recliner",
        "<p>A dual motor riser recliner.</p><table><tr><th>Size</th><th>Your height</th><th>Seat height</th></tr>"
        "<tr><td>Petite</td><td>5'0\u2033 \u2013 5'4\u2033</td><td>18 in</td></tr>"
        "<tr><td>Standard</td><td>5'5\u2033 \u2013 5'10\u2033</td><td>19.5 in</td></tr>"
        "<tr><td>Large</td><td>5'11\u2033 \u2013 6'3\u2033</td><td>20.5 in</td></tr></table>",
        "Riser Recliners",
        {"Size": ["Petite", "Standard", "Large"]},
        {("Petite",): ("1299.00", True), ("Standard",): ("1299.00", True), ("Large",): ("1399.00", True)},
    ),
    with_metafields(
        _single(
            12,
            "Birchwood Venetian Blind",
            "birchwood-venetian-blind",
            "<p>A 50mm venetian blind in real basswood.</p><p>Please don't put these in a bathroom. For wet rooms go "
            "for our faux wood venetian.</p>",
            "Venetian Blinds",
            "119.00",
        ),
        material="Basswood",
    ),
    {
        **_single(
            11,
            "Cedar Single Motor Recliner",
            "cedar-single-motor-recliner",
            "<p>A single motor riser recliner at a very good price.</p><p>Fabric covers are a soft polyester; the "
            "Chestnut cover is a polyurethane faux leather (no animal products) that wipes clean.</p>",
            "Riser Recliners",
            "899.00",
        ),
        "tags": ["riser recliner", "clearance", "final sale"],
    },
]
SHIPPING = """---
type: shipping_policy
title: Shipping
---
# Shipping
We ship from our warehouse in Thunder Bay, Ontario.
| Zone | Cost | Time |
|---|---|---|
| Ontario and Quebec | $12.95, free over $150 | 2-4 business days |
| British Columbia, Alberta, Saskatchewan and Manitoba | $19.95, free over $200 | 4-7 business days |

Riser chairs get free white-glove delivery to Thunder Bay, Kitchener-Waterloo-Cambridge and Ottawa.

## Islands
Wolfe Island and Pelee Island orders go by ferry: add $15 to the Ontario rate.

## Northern territories
Yukon, Northwest Territories and Nunavut: $39.95, 7-14 business days. No customs or duty applies.

## United States
Orders to the United States: $24.95, 5-8 business days. US duties and the carrier's brokerage fee may be collected on
delivery.
"""
CARE = """---
title: Care Guide
---
# Care Guide
## Rollator brakes {#rollator-brakes}
If the brakes stop holding, turn the barrel adjuster at the brake lever anticlockwise until the wheel locks.
## Shower stools {#shower-stools}
Rinse with warm water after use and let it dry.
"""
REFUNDS = """---
type: refund_policy
title: Returns
---
# Returns
You can return most items within 30 days of delivery.
## What we can't take back
For hygiene reasons, these can only be returned sealed in their original packaging:
- Shower stools and commodes
- Seat cushions

These cannot be returned at all:
- Walking sticks cut to length
- Clearance and final-sale items
"""
SERVICING = """---
title: Servicing
---
# Servicing
| Machine | Service price |
|---|---|
| Walk-behind mower | $89 |
| Ride-on mower | $229 |
"""
SHOP = {
    "shop.toml": f'[shop]\nname = "{OWN}"\nurl = "https://lakehead.example"\ncurrency = "CAD"\ncountry = "CA"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/shipping.md": SHIPPING,
    "policies/refunds.md": REFUNDS,
    "pages/servicing.md": SERVICING,
    "pages/care.md": CARE,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("lakehead") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def _doc(title: str, handle: str) -> Document:
    return Document(id=f"product:{handle}", kind="product", title=title, url="", link_type="product", source="")


def test_a_price_asked_for_a_product_in_view_is_its_price() -> None:
    intent = parse_query("price for the T92 with the mulch kit please")
    assert intent.service_object == "t92" and not intent.price
    tractor = _doc("Thornbury T92H Hydrostatic Lawn Tractor", "thornbury-t92h-lawn-tractor")
    assert names_in_view(intent.service_object, [tractor])
    assert as_product_price(intent).price and not as_product_price(intent).policy
    # a service's price stays a service's: "sharpening" names no product in view
    sharpening = parse_query("how much do you charge for sharpening?")
    assert not names_in_view(sharpening.service_object, [tractor]) and not sharpening.price
    assert not names_in_view(None, [tractor])


def test_have_it_after_a_comma_asks_for_stock() -> None:
    assert parse_query("need the gel cushion for an 18 x 18 seat, do you have it?").stock
    assert parse_query("the blue one, have you got them in?").stock
    assert not parse_query("do you have it in blue?").stock  # whether it comes in blue, as before


def test_a_child_of_an_age_asks_an_age() -> None:
    assert "age" in parse_query("My son is 16 and wants one - can he buy it?").concepts
    assert "age" in parse_query("she's 12, is it ok for her?").concepts
    assert "age" not in parse_query("he is 180 cm, which size?").concepts
    assert "age" not in parse_query("my son is 16 kg, which seat?").concepts


def test_figures_in_their_order_name_one_value() -> None:
    assert _in_order(["18", "18"], ["18", "18"])
    assert not _in_order(["18", "16"], ["18", "18"])
    assert not _in_order(["18"], ["18", "18"])  # one figure is no order


def test_feet_and_inches_read_as_inches() -> None:
    assert in_inches("I'm 5'7, which size?") == "I'm 67 in, which size?"
    assert ranges_in("Your height: 5'5\u2033 \u2013 5'10\u2033") == ((165.1, 177.8, "cm"),)
    assert in_inches("the kids' 3 trampoline") == "the kids' 3 trampoline"  # no figure after the mark
    assert measures_in("he's 6 ft 2") == [(pytest.approx(187.96), "cm")]


def test_towns_joined_by_hyphens_are_each_named() -> None:
    line = "Free delivery to Guelph, Kitchener-Waterloo-Cambridge and Ottawa."
    assert names_town("Kitchener", line) and names_town("Waterloo", line) and names_town("Cambridge", line)
    assert not names_town("Stoke", "We deliver to Stoke-on-Trent.")
    assert not names_town("London", "We deliver to East London.")


def test_words_of_comparison_refund_weight_and_how_to() -> None:
    assert parse_query("whats the diff between the trekker and the carbon?").comparison
    assert "refund" in parse_query("how long til I see my money").stems
    assert parse_query("I weigh 150 kg, is the bath lift ok for me").concepts[0] == "capacity"
    assert parse_query("I weigh 80kg, what size?").concepts == ("weight",)
    assert "age" not in parse_query("id like the fort with the blue slide pls").concepts
    assert "age" in parse_query("do I need ID to buy it?").concepts
    assert asks_how_to(parse_query("the brakes on my rollator dont hold anymore, how to fix?"))
    assert not asks_how_to(parse_query("the blue one, how much is it?"))


def test_places_in_lower_case_and_places_the_data_lacks() -> None:
    # a town in lower case, where only "I" takes a capital, is still read; a lower-case word going on is not
    manchester = town_named("shipping to manchester, will I get hit with customs?", ["IE"])
    assert manchester is not None and manchester.country == "GB"
    assert town_named("Do you deliver to mobile homes?", ["US"]) is None
    # a place the gazetteer lacks, written with a capital by the shop's shipping lines
    lines = ["Wolfe Island and Pelee Island orders go by ferry: add $15 to the Ontario rate."]
    wolfe = place_written("do you ship to Wolfe Island?", lines, "CA")
    assert wolfe is not None and wolfe.name == "Wolfe Island" and wolfe.country == "CA"
    assert place_written("do you ship to the ferry?", lines, "CA") is None  # the lines write it in lower case
    assert parse_query("how soon would it get to me in Sligo?").shipping
    assert not parse_query("can I buy the roof blinds and put them up myself?").stock


def test_a_function_word_without_its_apostrophe_is_no_slip() -> None:
    def uses(word: str) -> int:
        return 3 if word in ("don", "rollator") else 0  # "don" of a shop writing "don't"

    assert spelled("the brakes on my rollator dont hold", uses) == "the brakes on my rollator dont hold"


def test_a_key_naming_another_attribute_answers_after_the_asked_one() -> None:
    assert _names_other_concept("weight_capacity", ("weight",))
    assert not _names_other_concept("product_weight", ("weight",))
    assert not _names_other_concept("weight_capacity", ("capacity", "weight"))


# ------------------------------------------------------------------------------------------ through the engine

# (question, product handles (comma-separated), what the answer must say, what it must not)
CASES = [
    # a price asked "for" the product in view is the price of its version, not a service's
    ("price for the F20 with the bagger kit please", "fernhill-f20-garden-tractor", ["$3,549.00"], ["$229", "$89"]),
    # ... while a service's price is asked of the servicing page
    ("how much do you charge to service a ride-on mower?", "", ["$229"], ["$3,549.00"]),
    # two words of the question written as one word of a version ("arm rests", "Padded armrests")
    ("do you have the shower stool in 18 inch with padded arm rests?", "harbour-shower-stool", ["sold out"], []),
    # stock asked after a comma, of the version whose figures the question gives in order
    (
        "need the gel cushion for an 18 x 18 seat, do you have it?",
        "gel-seat-cushion",
        ["18 x 18 in is sold out"],
        ["18 x 16 in", "has not recorded"],
    ),
    # a state abroad sharing its name with a town at home is the town
    ("do you ship to Victoria? what does it cost", "", ["British Columbia", "$19.95"], ["Australia"]),
    # a notice naming the attribute asked answers it without a shared word
    (
        "My son is 16 and wants to clear the allotment - can he buy the brushcutter?",
        "brushmaster-43-brushcutter",
        ["under 18"],
        ["has not recorded", "does not say exactly"],
    ),
    # a row of the product's own table, its heading the attribute asked
    ("how heavy is the gravelline in 40mm", "gravelline-tyre", ["520 g"], ["has not recorded", "440 g"]),
    # a fact whose key names another attribute answers after the one naming only the asked one
    ("which is lighter, the carbon rollator or the trekker?", "", ["7 kg", "5.9 kg"], ["300 lbs", "250 lbs"]),
    # the asker's own weight with "is it ok" asks the product's load limit
    ("I weigh 150 kg, is the bath lift ok for me", "reclining-bath-lift", ["140 kg"], ["10.5 kg"]),
    # a height in feet and inches finds the row of a chart written in feet and inches
    ("I'm 5'7, which size should I get", "harbour-riser-recliner", ["Standard"], ["Petite", "Large"]),
    # a town written in a hyphenated list of towns is named there
    ("do you deliver riser chairs to Waterloo?", "", ["Kitchener-Waterloo-Cambridge"], []),
    # a how-to after a comma finds the guide section its heading names
    ("the brakes on my rollator dont hold anymore, how to fix?", "", ["barrel adjuster"], ["couldn't find"]),
    # a town in lower case beside a capital "I", its own customs line in a later part
    (
        "shipping to seattle - how much and will I get hit with customs?",
        "",
        ["$24.95", "brokerage"],
        ["No customs"],
    ),
    # a sentence saying the product is free of a thing the question names answers, however far it is ranked
    ("I have a latex allergy is the gel cushion safe", "gel-seat-cushion", ["Latex-free"], ["has not recorded"]),
    # a price asked with a figure no version holds, and the description's line for the range that holds it
    (
        "price for the roller blind in white, window is 160cm wide",
        "lakeside-roller-blind",
        ["$89.00", "adds $30"],
        [],
    ),
    # ... or has an imitation of it
    ("is the chestnut one real leather? I'm vegan", "cedar-single-motor-recliner", ["faux leather"], ["not recorded"]),
    # ... but only where the question asks whether it is real
    ("is the wood in the birchwood blind FSC certified", "birchwood-venetian-blind", ["has not recorded"], ["faux"]),
    # a policy line naming the product's own tags, every word of one
    (
        "If I get the cedar chair on sale and it doesn't work out can I send it back?",
        "cedar-single-motor-recliner",
        ["final-sale"],
        ["hygiene"],
    ),
    # a place the gazetteer lacks, named by the shipping lines
    ("do you ship to Wolfe Island and is there an extra charge?", "", ["add $15"], []),
    # "diff" asks the difference, and a statement after the comparison adds no "not recorded"
    (
        "whats the diff between the trekker and the carbon? both say rollator",
        "",
        ["$249.00", "$599.00"],
        ["has not recorded"],
    ),
]


@pytest.mark.parametrize(("question", "ids", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_named_versions_through_the_engine(
    engine: Engine, question: str, ids: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + i for i in ids.split(",") if i], wanted, unwanted)
