"""Readings six more blind probe shops (loose-leaf tea, ski and snowboard, 12V camping power, guitars and pedals;
biltong and bedding kept apart) found wanting. A disclosure notice answered what a description sentence answers
plainly better ("is it all solid wood or just the top?" and Prop 65's "wood dust", by a word of its web address;
"how many waxes will I get out of the bar?" and "keep out of reach of children", by "out"); "where is the store?"
named a service "(In-Store Drop-Off)" by half a hyphenated word, "where exactly is the shop?" and "do you have a
store in Brisbane I can visit?" were no address questions, and "712 Bow Valley Trail" no street; "which caddy size for
a 250g bag?" found no "Large (holds 250g)"; a Europe row listing "EU countries, Norway, Switzerland, Iceland" was read
as Norway's, Switzerland's and Iceland's only, and a product's own "UK addresses only" came after France's rate; "max
delay time?" went unanswered beside "Delay time: 40 – 620 ms"; "what time do you close on Saturday?" quoted the
holiday closures; "is there a ski swap this year?" missed the FAQ "When is the Ski Swap?"; "how much to mount tech
bindings?" asked no price; "how many amps do they pull?" no figure; "what's your returns policy?" quoted "here's how
returns work."; and "what size fuse for the dcdc 40?" quoted the DCDC-25's row for its "40A" fuse. An Irish camera and
film shop of another trade, indexed with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest

from ask_engine.answering.destinations import bars, bars_only_others, lists_other_members
from ask_engine.answering.measures import ranges_in
from ask_engine.answering.query import _kind_stems, _unsaid_compound_parts
from ask_engine.answering.sizing import _figure_of
from ask_engine.engine import Engine
from ask_engine.language import content_stems, parse_query, text_cue
from ask_engine.types import Document
from tests.shop_helpers import assert_says, inline_engine, one_option_product, single_variant_product, with_metafields

URL = "https://corkcamera.example/products/"
OWN = "Cork Camera Co"

_single = partial(single_variant_product, vendor=OWN)
_one = partial(one_option_product, vendor=OWN)

PRODUCTS: list[dict[str, Any]] = [
    with_metafields(
        _single(
            1,
            "Walnut 4x5 Field Camera",
            "walnut-field-camera",
            "<p>A folding large-format camera for landscapes.</p><p>The 4x5 has a solid walnut front standard and a"
            " solid walnut rear standard and bed — all-solid, at a weight that honestly surprised us when the first"
            " one came in.</p><p>Ships with a ground glass and a fresnel screen.</p>",
            "Large Format Cameras",
            "1450.00",
        ),
        notices={
            "prop65": "WARNING: This product can expose you to chemicals including wood dust, which is known to the"
            " State of California to cause cancer. For more information go to www.P65Warnings.ca.gov/wood."
        },
    ),
    with_metafields(
        _one(
            2,
            "Film Developer Kit",
            "film-developer-kit",
            "<p>Everything to develop black and white film at home: developer, stop bath and fixer.</p>"
            "<p>Rough guide: a 500 ml kit does about 12 to 16 rolls of 35mm, a bit fewer of 120.</p>",
            "Darkroom Chemistry",
            option="Size",
            prices={"500 ml": "24.00", "1 litre": "39.00"},
        ),
        notices={"chemical_safety": "Irritant. Keep out of reach of children. Wear gloves when mixing."},
    ),
    _one(
        3,
        "Sensor Clean (In-Store Drop-Off)",
        "sensor-clean",
        "<p>We clean your camera's sensor by hand while you wait, usually within the hour.</p>",
        "Services",
        option="Camera",
        prices={"Mirrorless": "45.00", "DSLR": "55.00"},
    ),
    _one(
        4,
        "Daylight Developing Tank",
        "developing-tank",
        "<p>A light-tight tank with reels for 35mm and 120 film.</p>",
        "Darkroom",
        option="Size",
        prices={"Small (holds 500 ml)": "29.00", "Large (holds 1000 ml)": "42.00"},
    ),
    _single(
        5,
        "Analog Delay Flash Trigger",
        "flash-trigger",
        "<p>A radio trigger for off-camera flash.</p><ul><li>Delay time: 40 – 620 ms</li>"
        "<li>Range: up to 100 m</li></ul>",
        "Flash Accessories",
        "79.00",
    ),
    {
        **_single(
            7,
            "Film Starter Box",
            "film-starter-box",
            "<p>Five rolls of film in a gift box: </p><ul><li>Portra 400</li><li>HP5 Plus</li><li>Gold 200</li>"
            "<li>Ektar 100</li><li>Delta 3200</li></ul><p>Sorry, we can't swap the films around – the boxes are"
            " packed in advance.</p>",
            "Gift Sets",
            "59.00",
        ),
        "category": "Cameras & Optics > Photography > Film",
    },
    _single(
        8,
        "Camera Battery Grip",
        "battery-grip",
        "<p>A vertical grip holding two batteries for twice the shots.</p>",
        "Batteries",
        "89.00",
    ),
    _single(
        9,
        "Negative Film Scanner",
        "film-scanner",
        "<p>Scans 35mm negatives and slides at 3600 dpi.</p><p><b>What's in the box:</b> scanner, USB-C cable,"
        " film holder for 35mm strips, slide holder.</p>",
        "Scanners",
        "249.00",
    ),
    _single(
        10,
        "Cotton Camera Strap",
        "camera-strap",
        "<p>A soft woven strap that gets better with age.</p><ul><li>Machine wash cold.</li><li>Lay flat to dry — do"
        " not tumble dry, it will shrink.</li></ul>",
        "Straps",
        "35.00",
    ),
    with_metafields(
        _single(
            12,
            "Weekend Camera Hire",
            "camera-hire",
            "<p>Try a medium-format camera for a weekend. Bring everything back by the return date.</p>",
            "Hire",
            "60.00",
        ),
        return_by="2026-03-02",
    ),
    _single(11, "Cork Camera Gift Card", "gift-card", "<p>An e-gift card for the shop.</p>", "Gift Card", "50.00"),
    _single(
        6,
        "Bi-Colour LED Panel",
        "led-panel",
        "<p>A slim light for video and stills, dimmable from 10% to 100%.</p>"
        "<p>Draw: about 2.5A at full power, 1.2A at half.</p>",
        "Lighting",
        "149.00",
    ),
]
SHIPPING = """---
type: shipping_policy
title: Shipping Policy
---
# Shipping Policy
Orders placed before 2 pm on a business day leave the same day.
## Rates
| Zone | Countries | Price |
|---|---|---|
| Ireland | Republic of Ireland | €6.50 |
| Europe | EU countries, Norway, Switzerland, Iceland | €14.95 |
## Customs
On EU orders over €150 we pay any import VAT for you.
## Items with their own delivery rules
- Darkroom chemistry – Irish addresses only. Couriers will not carry it abroad.
- We can't send batteries to the United Kingdom.
"""
REFUNDS = """---
type: refund_policy
title: Refund Policy
---
# Refund Policy
We want you to love your kit. If something isn't right, here's how returns work.
## Returns window
Unused cameras, lenses and accessories can be returned within 30 days of delivery for a full refund.
## Refunds
We refund to the original payment method within 5 working days of receiving the return.
"""
VISIT = """---
type: store_locations
title: Visit the Shop
---
# Visit the Shop
Cork Camera Co
5 Coal Quay
Cork T12 XY34

Come in and try any camera on the shelves.
## Opening hours
| Day | Hours |
|---|---|
| Monday | Closed |
| Tuesday to Friday | 10:00 am to 6:00 pm |
| Saturday | 9:30 am to 5:00 pm |
| Sunday | 12:00 pm to 4:00 pm |
## Holiday closures
We are closed on St Stephen's Day and New Year's Day, and we close at 2:00 pm on Christmas Eve. In December we
are open until 8:00 pm Thursday through Saturday.
"""
FAQ = """url: https://corkcamera.example/pages/faq
entries:
  - question: When is the Cork Camera Swap?
    anchor: camera-swap
    answer: >-
      Every year on the second Sunday of March at the City Hall, 10 am to 3 pm. Bring the gear you want to sell.
  - question: Do you buy used cameras?
    anchor: used
    answer: >-
      Yes, bring it in and we will make you an offer on the spot.
"""
SHOP = {
    "shop.toml": f'[shop]\nname = "{OWN}"\nurl = "https://corkcamera.example"\ncurrency = "EUR"\ncountry = "IE"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/shipping.md": SHIPPING,
    "policies/refunds.md": REFUNDS,
    "pages/visit-the-shop.md": VISIT,
    "faq.yaml": FAQ,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("corkcamera") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def test_half_a_hyphenated_word_names_nothing() -> None:
    title, store = "Sensor Clean (In-Store Drop-Off)", content_stems("store")
    assert store <= _unsaid_compound_parts(title, "where is the store?")
    assert not store & _unsaid_compound_parts(title, "is the in store clean quick?")
    assert not store & _unsaid_compound_parts(title, "can i book an instore clean?")
    assert not store & _unsaid_compound_parts(title, "can i book an in-store clean?")


def test_a_vague_word_is_no_kind_of_goods() -> None:
    kettle = Document(
        id="p",
        kind="product",
        title="Pour-Over Kettle",
        url="u",
        link_type="product",
        source="t",
        product_type="Kettles",
    )
    assert "over" not in _kind_stems(kettle)
    assert "kettl" in _kind_stems(kettle)


def test_asking_where_the_shop_is() -> None:
    asks = text_cue("asks_address", re.IGNORECASE)
    for question in (
        "where exactly is the shop",
        "whereabouts is your store?",
        "where is the workshop",
        "do you have a store in Galway I can visit?",
        "do you guys have a physical shop?",
    ):
        assert asks.search(question), question
    assert not asks.search("do you have a store credit policy?")
    street = text_cue("street_address")
    assert street.search("88 Lakeshore Trail")
    assert street.search("5 Coal Quay")


def test_a_container_holds_up_to_its_figure() -> None:
    assert ranges_in("Large (holds 1000 ml)") == ((0.0, 1000.0, "ml"),)


def test_a_group_named_whole_is_the_line_for_its_members() -> None:
    # "EU countries, Norway, Switzerland, Iceland" is Germany's line too, for the EU it names whole
    assert not lists_other_members("Zone: Europe, Countries: EU countries, Norway, Switzerland, Iceland", "DE")
    assert lists_other_members("Rest of Europe: Norway, Switzerland, Iceland", "DE")


def test_a_limit_to_other_countries_bars_the_destination() -> None:
    assert bars("Darkroom chemistry – Irish addresses only.", "FR")
    assert not bars("Darkroom chemistry – Irish addresses only.", "IE")
    assert not bars("We can't send lithium batteries to NZ.", "AU")  # it bars New Zealand only
    assert bars_only_others("We can't send lithium batteries to NZ.", "AU")
    assert not bars_only_others("We can't send lithium batteries to NZ.", "NZ")
    assert not bars_only_others("Meat needs import permits, so we can't send it outside South Africa.", "NA")


def test_a_figure_naming_a_value() -> None:
    own = frozenset({"25a", "40a", "dcdc"})
    assert _figure_of("40", own)
    assert not _figure_of("60", own)
    assert not _figure_of("4", own)


def test_how_much_to_do_something_asks_a_price() -> None:
    # a service's price, read as the product's where the service names the product in view ("Sensor Clean": the
    # engine case below)
    intent = parse_query("how much to clean a DSLR sensor?")
    assert intent.service_object == "clean" and not intent.price
    assert not parse_query("how much to use per roll?").price
    assert parse_query("how much to use per roll?").service_object is None


# ------------------------------------------------------------------------------------------ through the engine

# (question, product handle, what the answer must say, what it must not)
CASES = [
    # a description sentence plainly closer than a notice sharing a word (of its web address here)
    ("is it all solid wood or just the front?", "walnut-field-camera", ["solid walnut"], ["P65Warnings", "wood dust"]),
    # ... and a vague word ties a notice to nothing ("out of" the kit, "out of reach")
    ("how many rolls will I get out of the 500 ml kit?", "film-developer-kit", ["12 to 16 rolls"], ["reach of"]),
    # half a hyphenated word names no product; the shop's address answers
    ("where is the store?", "", ["5 Coal Quay"], ["Sensor Clean", "within the hour"]),
    ("where exactly is the shop?", "", ["5 Coal Quay"], []),
    ("do you have a shop in Galway I can visit?", "", ["5 Coal Quay"], ["couldn't find"]),
    # the size whose value holds the figure the question gives
    ("which tank size do I need for 800 ml of developer?", "developing-tank", ["Large (holds 1000 ml)"], ["Small"]),
    # a group named whole: Germany's rate
    ("how much to post the tank to Germany?", "developing-tank", ["€14.95"], []),
    # a product's own "Irish addresses only": no European rate
    ("do you ship the developer kit to France?", "film-developer-kit", ["Irish addresses only"], ["€14.95"]),
    # a labelled line whose label the question says
    ("max delay time on the trigger?", "flash-trigger", ["40 – 620 ms"], ["not recorded", "not say exactly"]),
    # the row of the day asked, not the holiday closures
    ("what time do you close on saturday?", "", ["5:00 pm"], ["St Stephen", "Monday"]),
    # an FAQ entry's question folds as the question does ("swap" reads as "exchange")
    ("is there a camera swap this year?", "", ["second Sunday of March"], ["couldn't find"]),
    # "how much to …" asks a price: the variant's
    ("how much to clean a DSLR sensor?", "sensor-clean", ["€55.00"], ["not recorded"]),
    # "how many amps" asks a current
    ("how many amps does it draw?", "led-panel", ["2.5A"], ["not recorded"]),
    # what is in a box: its list, not its category ("Cameras & Optics > … > Film")
    ("what films are in the starter box?", "film-starter-box", ["HP5 Plus"], ["Cameras & Optics"]),
    # the terms of the product in view by id, where the question names another product too
    (
        "can I swap the HP5 in the box for the developer kit?",
        "film-starter-box",
        ["can't swap the films around"],
        ["refund", "30 days"],
    ),
    # a bar naming only other countries is no rule for the destination
    ("how much to post the battery grip to Germany?", "battery-grip", ["€14.95"], ["United Kingdom"]),
    # a line labelled as the box's contents answers whether a thing comes with it, the thing unnamed there
    ("does the scanner come with a holder for 120 film?", "film-scanner", ["What's in the box"], ["the contents"]),
    # "dryer" and "tumble dry" are one word apart
    ("can the strap go in the dryer?", "camera-strap", ["do not tumble dry"], ["not recorded that"]),
    # the name counted ("two gift cards") is not the product said back as the subject
    ("can I use two gift cards on one order?", "gift-card", [], ["two the"]),
    # a returns question answered by the product's own terms: the one stating the date asked for
    ("when does the hire camera have to be returned?", "camera-hire", ["2026-03-02"], []),
    # a sentence pointing at what follows says nothing
    ("what's your returns policy?", "", ["refund"], ["here's how returns work"]),
]


@pytest.mark.parametrize(("question", "handle", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_notices_and_rows_through_the_engine(
    engine: Engine, question: str, handle: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + handle] if handle else [], wanted, unwanted)
