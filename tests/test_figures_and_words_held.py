"""Readings six more blind probe shops (PC parts, a children's bookshop, kayaks and paddle boards, craft beer; a home
gym and a wig shop kept apart) found wanting. A figure the asker gives was read as the attribute asked: "how much is 6
months for a 7 year old?" gave the price and "has not recorded the age requirement", where the option "Age: 6-8 years"
holds 7; "she weighs 17kg, which one?" said no weight is recorded, where "Child 15–25 kg" holds it. Words were misread:
"amex" was no "American Express", and "American Express" was the United States; "cals" was corrected to the shop's
"calls"; "loo" found no "toilet"; "sent" no "dispatched"; "try a few boards" insisted on "few"; "can my 17 yr old son
collect it?" on "son" and "old". Evidence was missing: "wheres your store located" shares no word with the page's
"Address"; "I opened it, can I send it back?" never met the restocking table's row naming the product's kind; "can you
send books to Japan?" met no shipping passage, so could not say Japan is not listed. Lines answered for another
place or thing: Wellington got the "Australia" section's "only to Australia – no kayaks"; "can I put a kayak seat on
this board?" got the returns of "kayaks and paddle boards" over the board's own "D-rings for a kayak seat"; "what year
is blue?" got the Yellow row beside the Blue one; "which of your coolers come in white?" said white is not recorded.
A small New Zealand children's swim and surf shop of another trade, indexed with the real embedding model and asked
through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest

from ask_engine.answering.measures import measures_in, ranges_in
from ask_engine.answering.options import _holding_values
from ask_engine.answering.sizing import _Entry, _fitting
from ask_engine.countries import country_codes_in, elsewhere_only
from ask_engine.engine import Engine
from ask_engine.language import informal_synonyms, parse_query, with_shop_synonyms
from ask_engine.spelling import spelled
from tests.shop_helpers import (
    assert_says,
    inline_engine,
    one_option_product,
    options_product,
    single_variant_product,
)

URL = "https://harboursidekids.example/products/"
OWN = "Harbourside Kids"


_options_product = partial(options_product, vendor=OWN)


PRODUCTS: list[dict[str, Any]] = [
    _options_product(
        1,
        "Little Dolphins Swim Club",
        "little-dolphins-swim-club",
        "<p>Weekly lessons in our warm pool, in small groups by age.</p>",
        "Lessons",
        {"Age": ["2-3 years", "4-5 years", "6-8 years"], "Term": ["3 months", "6 months"]},
        {
            ("2-3 years", "3 months"): ("90.00", False),
            ("2-3 years", "6 months"): ("170.00", False),
            ("4-5 years", "3 months"): ("99.00", True),
            ("4-5 years", "6 months"): ("185.00", True),
            ("6-8 years", "3 months"): ("109.00", True),
            ("6-8 years", "6 months"): ("199.00", True),
        },
    ),
    _options_product(
        2,
        "Puddle Jumper Swim Vest",
        "puddle-jumper-swim-vest",
        "<p>A foam swim vest with a crotch strap. Choose by your child's weight.</p>",
        "Swim Aids",
        {"Size": ["Infant 8–15 kg", "Child 15–25 kg", "Youth 25–40 kg"]},
        {
            ("Infant 8–15 kg",): ("49.00", True),
            ("Child 15–25 kg",): ("55.00", False),
            ("Youth 25–40 kg",): ("59.00", True),
        },
    ),
    _options_product(
        3,
        "Shorty Kids Wetsuit",
        "shorty-kids-wetsuit",
        "<p>A 2 mm neoprene shorty for summer swims.</p>",
        "Wetsuits",
        {"Colour": ["Black", "Navy"], "Size": ["6", "8", "10"]},
        {
            ("Black", "6"): ("89.00", True),
            ("Black", "8"): ("89.00", True),
            ("Navy", "6"): ("89.00", True),
            ("Navy", "8"): ("89.00", False),
        },
    ),
    {
        **single_variant_product(
            4,
            "Anti-Fog Kids Swim Goggles",
            "anti-fog-kids-swim-goggles",
            "<p>Soft silicone seals and a split strap.</p>",
            "Eyewear",
            "19.00",
            vendor=OWN,
        ),
        "tags": ["swim goggles", "pool"],
    },
    single_variant_product(
        5,
        "Junior Foam Bodyboard",
        "junior-foam-bodyboard",
        "<p>A 33 inch foam bodyboard for first waves.</p><p>Features:</p><ul><li>Plug for a wrist leash (leash "
        "sold separately).</li><li>Slick bottom for speed.</li></ul>",
        "Surf",
        "79.00",
        vendor=OWN,
    ),
    single_variant_product(
        6,
        "Beach Oat Bar",
        "beach-oat-bar",
        "<p>A chewy oat bar for after the swim. Only 90 calories per bar.</p>",
        "Snacks",
        "3.50",
        vendor=OWN,
    ),
    one_option_product(
        8,
        "Bodyboard Leash",
        "bodyboard-leash",
        "<p>A coiled leash with a swivel.</p><table><tr><th>Leash</th><th>Cuff</th><th>Examples</th></tr><tr><td>Wrist"
        "</td><td>Velcro wrist cuff</td><td>Junior Foam Bodyboard, smaller boards</td></tr><tr><td>Bicep"
        "</td><td>Neoprene arm cuff</td><td>Drop-knee riding, longer boards</td></tr></table>",
        "Surf",
        vendor=OWN,
        option="Leash",
        prices={"Wrist": "25.00", "Bicep": "29.00"},
    ),
    _options_product(
        9,
        "Foamie Kids Surfboard",
        "foamie-kids-surfboard",
        "<p>A soft-top surfboard for first green waves.</p><p>Fins option: if you go without now, a fin set can be "
        "fitted later – bring it in, fitting is $15.</p>",
        "Surf",
        {"Fins": ["No fins", "Fins fitted"]},
        {("No fins",): ("199.00", True), ("Fins fitted",): ("229.00", True)},
    ),
    single_variant_product(
        10,
        "Mouldable Swim Earplugs",
        "mouldable-swim-earplugs",
        "<p>Soft silicone earplugs that keep water out of little ears.</p>",
        "Swim Aids",
        "9.00",
        vendor=OWN,
    ),
    one_option_product(
        7,
        "Rash Vest",
        "rash-vest",
        "<p>UPF 50 rash vest for sunny days.</p>",
        "Swimwear",
        vendor=OWN,
        option="Size",
        prices={"4": "35.00", "6": "35.00", "8": "35.00"},
    ),
]

VISIT = """---
title: Visit Us
---
# Visit Us

## Address {#address}

14 Marine Parade, Napier 4110.

## Facilities {#facilities}

We don't have a customer toilet, sorry – the nearest public toilets are on the Parade, opposite the shop.

## Try-on evenings {#try-on}

Every Thursday from 5pm we run free try-on evenings for wetsuits and swim vests. Booking is not needed.

## Click & collect {#collect}

Choose "Collect in store" at checkout. The person collecting must be 16 or over and bring the order email.
"""

STAGES = """---
title: Swim Stages
---
# Swim Stages

## Our stages {#stages}

Every Little Dolphins class follows our coloured swim stages. This is how they line up:

| Stage | Usual age | Can do |
| --- | --- | --- |
| Red | 2-3 years | Blows bubbles, kicks with support |
| Blue | 4-5 years | Floats alone, swims 5 m |
| Green | 6-8 years | Swims 25 m freestyle |
"""

BOARDS = """---
title: Kickboard Guide
---
# Kickboard Guide

## Kickboard length {#length}

Pick the board by the rider's height first, then by weight.

| Rider height | Under 30 kg | 30–45 kg | Over 45 kg |
| --- | --- | --- | --- |
| Under 120 cm | 33 inch | 33 inch | 36 inch |
| 120–150 cm | 36 inch | 36 inch | 38 inch |
| Over 150 cm | 38 inch | 40 inch | 42 inch |
"""

CANOES = """---
title: Canoe Paddle Guide
---
# Canoe Paddle Guide

## Canoe paddle length {#paddles}

Your paddle length depends mostly on how wide your canoe is, then on your height.

| Canoe width | Paddler under 140 cm | 140–160 cm | Over 160 cm |
| --- | --- | --- | --- |
| Under 58 cm | 120 cm | 125 cm | 130 cm |
| 58–71 cm | 125 cm | 130 cm | 135 cm |
| Over 81 cm | 135 cm | 140 cm | 145 cm |
"""

REFUNDS = """---
type: refund_policy
title: Returns
---
# Returns

## Change of mind {#change-of-mind}

You can return most unused items within 30 days of delivery for a refund. Bodyboards and surfboards must be arranged
with us first before you send them back.

## How to return {#how}

Email returns@harboursidekids.example with your order number, then post the item to 14 Marine Parade, Napier.

## Gift cards {#gift-cards}

Gift cards can't be refunded.

## Hygiene {#hygiene}

Unopened items in sealed packaging are refunded in full. Opened items follow this table:

| Category | Unopened | Opened |
| --- | --- | --- |
| Wetsuits and rash vests | Full refund | Full refund if unworn |
| Swim goggles and earplugs | Full refund | Not returnable once opened |
"""

SHIPPING = """---
type: shipping_policy
title: Shipping
---
# Shipping

We ship New Zealand wide from our shop in Napier.

## Dispatch {#dispatch}

Orders placed at the weekend are dispatched on Monday.

## Parcels {#parcels}

| Destination | Cost |
| --- | --- |
| North Island | $8.90 |
| South Island | $11.90 |

## Australia {#australia}

We ship parcels only to Australia – no bodyboards, sorry. Flat rate $25 per order.
"""

FAQ = """[
  {"question": "Which cards do you take?", "answer": "Visa, Mastercard, American Express and PayPal.",
   "anchor": "cards"},
  {"question": "Do you return phone calls?", "answer": "Yes, we return calls within one working day.",
   "anchor": "calls"},
  {"question": "Do you run swim lessons?", "answer": "Yes, the Little Dolphins Swim Club meets every week.",
   "anchor": "lessons"},
  {"question": "Do you sell spare straps?", "answer": "We keep a few spare goggle straps in store; ask at the counter.",
   "anchor": "straps"},
  {"question": "How old do you have to be to buy online?", "answer": "You must be 18 or over to place an order.",
   "anchor": "age"}
]
"""

TERMS = """---
type: terms_of_service
title: Terms
---
# Terms

## Orders {#orders}

You can cancel an order within one hour of placing it.

## Swim Club {#swim-club}

Swim Club terms are paid up front. You can cancel at any time and we'll refund the lessons not yet taken, minus a $10
admin fee.
"""

SHOP = {
    "shop.toml": f'[shop]\nname = "{OWN}"\nurl = "https://harboursidekids.example"\ncurrency = "NZD"\ncountry = "NZ"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/refunds.md": REFUNDS,
    "policies/shipping.md": SHIPPING,
    "policies/terms.md": TERMS,
    "pages/visit.md": VISIT,
    "pages/stages.md": STAGES,
    "pages/boards.md": BOARDS,
    "pages/canoes.md": CANOES,
    "faq.json": FAQ,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("harbourside") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def test_a_value_whose_range_holds_the_figure_is_the_one() -> None:
    assert ranges_in("6-8 years") == ((72.0, 96.0, "month"),)
    months = [(84.0, "month")]  # "a 7 year old"
    assert _holding_values(["2-3 years", "4-5 years", "6-8 years"], months) == "6-8 years"
    assert _holding_values(["Up to 15 kg", "Up to 25 kg"], [(12.0, "kg")]) == "Up to 15 kg"  # the tightest
    assert _holding_values(["Infant 8–15 kg", "Child 15–25 kg"], [(50.0, "kg")]) is None
    assert _holding_values(["S", "M", "L"], months) is None


def test_informal_words_and_phrases() -> None:
    uses = {"american": 2, "express": 3, "calories": 1, "calls": 2, "toilet": 1}.get

    def used(word: str) -> int:
        return uses(word) or 0

    # "cals" is read as "calories", not corrected to the shop's "calls"
    assert spelled("how many cals in a bar", used) == "how many cals in a bar"
    text = with_shop_synonyms("do u take amex", informal_synonyms("do u take amex", used))
    assert text == "do u take amex (american express)"
    assert "US" not in country_codes_in("do you take American Express?", query=True)
    assert "US" in country_codes_in("do you ship to America?", query=True)


def test_each_figure_is_held_in_the_column_its_own_words_name() -> None:
    rows = [
        "Kayak width: Under 58 cm (sea kayaks), Paddler under 165 cm: 210 cm, 165–183 cm: 215–220 cm.",
        "Kayak width: 58–71 cm (day tourers), Paddler under 165 cm: 220 cm, 165–183 cm: 220–230 cm.",
        "Kayak width: Over 81 cm (fishing), Paddler under 165 cm: 240 cm, 165–183 cm: 240–250 cm.",
    ]
    entries = [_Entry(row.split(":")[1].split(",")[0], row, ranges_in(row)) for row in rows]
    text = "what length kayak paddle? im 178cm and my kayak is 61cm wide"
    # 178 cm is the paddler's, which no "Kayak width" of "Over 81 cm" holds; 61 cm the kayak's
    assert [e.text for e in _fitting(entries, text, measures_in(text))] == [rows[1]]


def test_comparisons_and_strength_read_as_meant() -> None:
    assert parse_query("how much wider is the aoraki than the rangitoto").comparison
    assert not parse_query("how much is shipping to the UK?").comparison
    assert "strength" in parse_query("whats stronger, the pale ale or the stout?").concepts
    assert "strength" in parse_query("what abv is it?").concepts
    assert "strength" not in parse_query("is the bag strong enough for 10kg?").concepts
    assert "strength" not in parse_query("what's the yield strength on this bar").concepts  # another attribute


def test_a_section_headed_by_other_countries_is_theirs() -> None:
    assert elsewhere_only("Shipping — Australia", "NZ")
    assert not elsewhere_only("Shipping — Australia", "AU")
    assert not elsewhere_only("Shipping — Parcels", "NZ")  # names no country: anyone's


# ------------------------------------------------------------------------------------------ through the engine


# (question, product handles (comma-separated), what the answer must say, what it must not)
CASES = [
    # an option value holding the asker's figure names the variant, and answers the attribute the figure suggests
    (
        "how much is 6 months for a 5 year old?",
        "little-dolphins-swim-club",
        ["$185.00"],
        ["$170.00", "has not recorded"],
    ),
    ("which one for a 7 year old?", "little-dolphins-swim-club", ["6-8 years"], ["has not recorded"]),
    ("my son weighs 20kg, which one?", "puddle-jumper-swim-vest", ["Child 15–25 kg", "sold out"], ["has not recorded"]),
    # a value asked for across the catalogue: the product comes in it
    ("which of your wetsuits come in navy", "", ["comes in Navy"], ["has not recorded"]),
    # the shop's address, which shares no word with the question
    ("wheres your store located", "", ["14 Marine Parade"], []),
    # the hygiene table's row naming the product's kind, not how to return
    (
        "opened these but my kid hates them, can I return them?",
        "anti-fog-kids-swim-goggles",
        ["Not returnable once opened"],
        ["Email returns@", "Unopened items in sealed packaging are refunded in full."],
    ),
    # informal words and phrases
    ("do u take amex", "", ["American Express"], ["couldn't find"]),
    ("do you take american express", "", ["American Express"], ["United States"]),
    ("how many cals in one", "beach-oat-bar", ["90 calories"], ["has not recorded"]),
    ("is there a loo in the shop?", "", ["customer toilet"], []),
    ("if i order on saturday when will it be sent", "", ["dispatched on Monday"], ["couldn't find"]),
    # a vague word and the asker's child are no topic of the question
    ("do you do try on nights where i can try a few wetsuits", "", ["try-on evenings"], ["couldn't find"]),
    ("can my 14 yr old son pick up my click and collect order", "", ["16 or over"], ["couldn't find"]),
    # a destination the policy never names, though retrieval finds none of the policy
    ("can you send swim goggles to Japan?", "", ["Japan is not listed"], ["couldn't find anything"]),
    # a home town is not answered by another country's section
    ("how much to send a bodyboard to my house in wellington", "", [], ["only to Australia"]),
    # the product's own line naming what is asked, over a policy naming only the product's kind
    ("can i attach a wrist leash to this bodyboard?", "junior-foam-bodyboard", ["wrist leash"], ["arranged with us"]),
    # the row of the product's own table naming what the question names beyond the product
    ("which leash do i need for drop-knee riding?", "bodyboard-leash", ["Bicep"], ["Wrist"]),
    # the value the question names says which variant is meant: the line after it answers
    (
        "if i buy the no fins one now can i add fins later",
        "foamie-kids-surfboard",
        ["fitted later"],
        ["has not recorded"],
    ),
    # "noise cancelling" is no cancelling of an order; cancelling a product is asked of the terms' section for it
    ("are these noise cancelling?", "mouldable-swim-earplugs", [], ["cancel an order"]),
    ("if I cancel the swim club halfway do I get money back?", "", ["$10"], []),
    # the asker's figures after the question are its measurements, each held in the column its own words name
    ("what length canoe paddle? im 150cm and my canoe is 61cm wide", "", ["58–71 cm"], ["Over 81 cm", "Under 58"]),
    # the table's row the question names, after the line saying what the rows are
    ("what age is the blue stage usually?", "", ["Blue", "4-5 years"], ["Red"]),
]


@pytest.mark.parametrize(("question", "ids", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_figures_and_words_held_through_the_engine(
    engine: Engine, question: str, ids: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + i for i in ids.split(",") if i], wanted, unwanted)
