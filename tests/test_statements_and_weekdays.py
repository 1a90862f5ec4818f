"""Readings six more blind probe shops (beekeeping, climbing gear, knitting yarn, vinyl and hi-fi; seeds and hot
sauces kept apart) found wanting. "What's your return policy on a turntable I've already opened and set up?" found
nothing, insisting on a line saying "up"; "a discount for first-time customers?" insisted on "time", then on
"customer", beside "10% off your first order"; "what time does the Westport shop open on saturday?" quoted the
Friday restock at 8pm, not "Saturday: 10:00 – 16:00"; "whats your phone number" quoted a line asking for the buyer's
phone number; "how much to resole a pair of climbing shoes?" priced one of the two climbing shoes; "are the bellows
real leather? I'm vegan" and "how thick are the walls? Winters get cold here" asked a second, unasked question; "is
the tweed itchy?" missed "a bit scratchy"; "can I rip my records over USB?" asked about batteries; and "is the
pattern available in German?" said it was in stock. A fountain pen shop of another trade, indexed with the real
embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest

from ask_engine.answering.query import _question_parts
from ask_engine.answering.sentences import _days
from ask_engine.countries import country_codes_in
from ask_engine.engine import Engine
from ask_engine.language import parse_query
from tests.shop_helpers import (
    assert_says,
    inline_engine,
    one_option_product,
    options_product,
    single_variant_product,
    with_metafields,
)

URL = "https://nibquill.example/products/"
OWN = "Nib & Quill"

_single = partial(single_variant_product, vendor=OWN)

PRODUCTS: list[dict[str, Any]] = [
    one_option_product(
        1,
        "Lamy Safari Fountain Pen",
        "safari-fountain-pen",
        "<p>The classic school pen in tough ABS, with a steel nib and a clip that holds in any pocket.</p>",
        "Fountain Pens",
        option="Nib",
        prices={"EF": "25.00", "F": "25.00", "M": "25.00"},
        vendor="Lamy",
    ),
    one_option_product(
        2,
        "Kaweco Sport Fountain Pen",
        "sport-fountain-pen",
        "<p>A pocket pen that posts to full length, with an octagonal cap.</p>",
        "Fountain Pens",
        option="Nib",
        prices={"F": "23.00", "M": "23.00", "B": "23.00"},
        vendor="Kaweco",
    ),
    with_metafields(
        _single(
            3,
            "Pen Case for Two",
            "pen-case",
            "<p>Real leather, tanned in Portugal, with a soft lining and room for two pens.</p>",
            "Cases",
            "39.00",
        ),
        material="Vegetable-tanned cowhide",
    ),
    _single(
        4,
        "Merino Pen Wrap",
        "merino-pen-wrap",
        "<p>Rolls up around six pens.</p><p>Soft merino felt: a bit scratchy at first, it softens with use.</p>",
        "Cases",
        "29.00",
    ),
    _single(
        5,
        "Calligraphy Workbook",
        "calligraphy-workbook",
        "<p>Ninety-six pages of drills for the italic hand, printed on 120 gsm paper.</p>",
        "Books",
        "18.00",
    ),
    _single(
        6,
        "LED Desk Lamp",
        "led-desk-lamp",
        "<p>A warm, flicker-free light for long evenings at the desk.</p>"
        "<p>Plugs into the mains with the adapter supplied.</p>",
        "Lighting",
        "59.00",
    ),
    options_product(
        8,
        "Brass Ruler",
        "brass-ruler",
        "<p>A solid ruler with etched markings in both units.</p>",
        "Desk Tools",
        {"Length": ['150mm (6")', '300mm (12")'], "Finish": ["Brass", "Black"]},
        {
            ('150mm (6")', "Brass"): ("14.00", True),
            ('150mm (6")', "Black"): ("14.00", True),
            ('300mm (12")', "Brass"): ("22.00", True),
        },
        vendor=OWN,
    ),
    with_metafields(
        _single(
            7,
            "Dot Grid Notebook A5",
            "dot-grid-notebook",
            "<p>A lay-flat notebook for fountain pens.</p>",
            "Notebooks",
            "16.00",
        ),
        paper="100 gsm, ivory",
    ),
]
REFUNDS = """---
type: refund_policy
title: Refund Policy
---
# Refund Policy
## Returns window
You have 30 days from delivery to return unused items for a refund.
## Electronics
Unopened: full refund within 30 days.
Opened and working: returnable within 30 days in the original box, with a 15% restocking fee.
## Sale items
Items bought with a discount code are refunded at the price paid.
"""
CONTACT = """---
type: contact
title: About us & Contact
---
# About us & Contact
## Visit the shop
Rua das Flores 12, Porto.

Thursday & Friday: 10:00 – 17:00
Saturday: 10:00 – 16:00
Sunday – Wednesday: closed

In December we're also open Sundays 12:00 – 16:00.
## Get in touch
Email: ola@nibquill.example
Phone: +351 22 555 0142 (during opening hours)

Pick up your order from the shop for free.
"""
ENGRAVING = """---
type: page
title: Engraving Service
---
# Engraving Service
We engrave any fountain pen, bought here or not.
## Prices
Engraving one pen costs €12.00, and turnaround is usually 5 working days.
## How to send your pens
Clean them, put a note in the box with your name, phone number, email and the text you want, and post them to the shop address.
"""
FAQ = """- question: When is the next shop update?
  answer: We restock the website on the first Friday of every month at 8pm Lisbon time.
- question: Do you have any discounts?
  answer: Sign up to our newsletter and you'll get a code for 10% off your first order.
"""
SHOP = {
    "shop.toml": f'[shop]\nname = "{OWN}"\nurl = "https://nibquill.example"\ncurrency = "EUR"\ncountry = "PT"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/refunds.md": REFUNDS,
    "pages/contact.md": CONTACT,
    "pages/engraving.md": ENGRAVING,
    "faq.yaml": FAQ,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("nibquill") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def test_the_days_a_line_of_hours_names() -> None:
    assert _days("Saturday: 10:00 – 16:00") == {5}
    assert _days("Tuesday to Thursday: 11 am - 7 pm") == {1, 2, 3}
    assert _days("Sunday – Wednesday: closed") == {6, 0, 1, 2}  # a range wraps round the week
    assert _days("Mon-Fri 9am-5pm") == {0, 1, 2, 3, 4}  # shortened at the ends of a range
    assert _days("Sat 9-5, sun closed") == set()  # ... and nowhere else ("sat", "sun" are words)


def test_a_statement_beside_a_question_asks_nothing_of_its_own() -> None:
    assert parse_query("are the bellows real leather? I'm vegan").concepts == ("material",)
    assert "warmth" not in parse_query("How thick are the walls? Winters get cold here").concepts
    # a question asking no attribute of its own is asked by the statement beside it
    assert parse_query("I have a nut allergy. Is this ok for me?").concepts == ("allergens",)
    assert parse_query("I run cold at night. which sleeping bag?").concepts == ("warmth",)
    assert _question_parts("are the bellows real leather? I'm vegan", in_view=True) == [
        "are the bellows real leather? I'm vegan"
    ]
    assert len(_question_parts("can I use it? I'm vegan", in_view=True)) == 2


def test_a_verb_before_its_object_is_no_place() -> None:
    assert country_codes_in("are the bristles nylon? i dont want to polish the holds", query=True) == ()
    assert country_codes_in("do you ship to polish addresses?", query=True) == ("PL",)


def test_a_port_is_no_battery() -> None:
    assert "battery" not in parse_query("can I rip my records to my laptop over USB?").concepts
    assert "battery" in parse_query("is it USB-C rechargeable?").concepts


# ------------------------------------------------------------------------------------------ through the engine

# (question, product handle, what the answer must say, what it must not)
CASES = [
    # a particle ("set up") is no word a line must say
    (
        "what's your return policy on electronics I've already opened and set up? they work fine I just don't like them",
        "",
        ["15% restocking fee"],
        ["couldn't find"],
    ),
    # neither is a part of a hyphenated word, nor "customers"
    ("Is there a discount for first-time customers?", "", ["10% off your first order"], ["couldn't find"]),
    # the hours of the day asked, not a time on another day
    ("what time does the porto shop open on saturday", "", ["10:00 – 16:00"], ["restock"]),
    # a phone number is answered by a line stating one
    ("whats your phone number", "", ["+351 22 555 0142"], ["note in the box"]),
    # the words two products' names share name their kind, not one of them
    (
        "how much to engrave a pair of fountain pens and how long does it take",
        "",
        ["engrave"],
        ["price of the", "Lamy", "Kaweco"],
    ),
    # the asker's situation is no second question
    ("is the pen case real leather? I'm vegan", "pen-case", ["leather"], ["vegan"]),
    (
        "what's the paper weight of the notebook? My inks are really wet and bleed",
        "dot-grid-notebook",
        ["100 gsm"],
        ["waterproof"],
    ),
    # a word shoppers use for the shop's ("itchy" for "scratchy")
    ("is the pen wrap itchy?", "merino-pen-wrap", ["a bit scratchy"], ["not recorded", "not say exactly"]),
    # a port is no battery
    ("can I run the desk lamp off my laptop over USB?", "led-desk-lamp", ["not recorded"], ["battery"]),
    # a value written in two units is named in either ('300mm (12")' by "12 inch")
    ("do you have the 12 inch one in black?", "brass-ruler", ['does not come in 300mm (12") and Black'], []),
    # "available in" a thing that is no option asks no stock
    ("Is the calligraphy workbook available in German?", "calligraphy-workbook", ["German"], ["in stock"]),
]


@pytest.mark.parametrize(("question", "handle", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_statements_and_weekdays_through_the_engine(
    engine: Engine, question: str, handle: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + handle] if handle else [], wanted, unwanted)
